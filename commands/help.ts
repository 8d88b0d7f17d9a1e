import type { CommandModule, HelpDoc, HelpEntry } from "./types.js";
import { ErrorCode, UnstuckError } from "../src/errors.js";
import { usageLine, type CommandSyntax } from "./grammar.js";

export const PRODUCT = "unstuck";

/** Help generated from the same declarations the parser uses. */
export function buildHelp(syntaxes: readonly CommandSyntax[], prefix: string): HelpDoc {
  const entries: HelpEntry[] = syntaxes.map((s) => ({
    usage: usageLine(s),
    summary: s.summary,
    aliases: (s.aliases ?? []).map((a) => a.join(" ")),
    flags: s.flags.map((f) => ({
      flag:
        (f.short ? `-${f.short}, ` : "") +
        `--${f.name}` +
        (f.kind === "boolean" ? "" : ` <${f.valueName ?? f.kind}>`),
      description: f.description,
    })),
    examples: s.examples,
  }));
  return { product: PRODUCT, prefix, entries };
}

export const helpSyntax: CommandSyntax = {
  path: ["help"],
  summary:
    "Show the commands and their options; with a command's words, only that command (also `<command> --help`).",
  positionals: [
    { name: "command", description: "A command's first word, e.g. repoint", optional: true },
    { name: "subcommand", description: "Its second word, e.g. ns in trace ns", optional: true },
  ],
  flags: [],
  examples: ["help", "help repoint", "help trace ns"],
};

/** Whether a command is selected by `words` (its path or an alias starts with them). */
export function selectedBy(syntax: CommandSyntax, words: readonly string[]): boolean {
  return [syntax.path, ...(syntax.aliases ?? [])].some((p) =>
    words.every((w, i) => p[i] === w.toLowerCase()),
  );
}

/**
 * `help [<command words>]`. It needs the registry's list, so the registry supplies it at run time
 * (`getHelp(words)`: the entries those words select, every entry for none).
 */
export function helpCommand(
  getHelp: (words: readonly string[]) => HelpDoc,
): CommandModule<readonly string[]> {
  return {
    syntax: helpSyntax,
    build: (args) => args.positionals,
    run: (words) => {
      const help = getHelp(words);
      if (help.entries.length === 0)
        throw new UnstuckError(
          ErrorCode.UnknownCommand,
          `No command starts with \`${words.join(" ").slice(0, 60)}\`; \`help\` lists every command.`,
        );
      return Promise.resolve({ type: "help", help });
    },
  };
}
