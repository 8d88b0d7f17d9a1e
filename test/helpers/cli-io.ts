/**
 * The terminal CLI's output caught as lines, as a terminal shows them: each `out` or `err` call is
 * one line, and a `--json` answer (written in pieces) is one line too.
 */
import type { CliIo } from "../../src/cli.js";

export function linesIo(out: string[], err: string[] = out): CliIo {
  return {
    out: (s) => out.push(s),
    err: (s) => err.push(s),
    json: (chunks) => {
      let line = "";
      for (const chunk of chunks) line += chunk;
      out.push(line);
      return Promise.resolve();
    },
  };
}
