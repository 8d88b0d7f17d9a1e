/**
 * `--cluster NAME` (or `--cluster=NAME`) anywhere in a command line: which cluster of a fleet the
 * command is for. It is taken out before the line is parsed, so every verb accepts it and none
 * declares it; a quoted `--cluster` (inside a `--reason "…"`) is text, not the flag.
 */
import { ErrorCode, UnstuckError } from "../errors.js";

export interface ClusterFlag {
  /** The line without the flag (the rest of it byte for byte). */
  readonly text: string;
  /** The cluster named, when the line names one. */
  readonly cluster?: string;
}

interface Token {
  readonly start: number;
  readonly end: number;
  /** The token's text, unquoted. */
  readonly value: string;
  /** Whether any part of it was quoted (then it is never the flag). */
  readonly quoted: boolean;
}

function tokens(line: string): Token[] {
  // As the grammar reads them: typographic quotes are quotes (one code unit each, so offsets hold).
  const text = line.replace(/[\u201C\u201D\u201E\u201F]/g, '"').replace(/[\u2018\u2019]/g, "'");
  const out: Token[] = [];
  let start = -1;
  let value = "";
  let quoted = false;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charAt(i);
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
      else value += ch;
      continue;
    }
    if (/\s/.test(ch)) {
      if (start >= 0) out.push({ start, end: i, value, quoted });
      start = -1;
      value = "";
      quoted = false;
      continue;
    }
    if (start < 0) start = i;
    if (ch === '"' || ch === "'") {
      quote = ch;
      quoted = true;
      continue;
    }
    value += ch;
  }
  if (start >= 0) out.push({ start, end: text.length, value, quoted });
  return out;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

/** The line without `--cluster NAME`, and the name; a flag without a valid name is a clear error. */
export function takeClusterFlag(text: string): ClusterFlag {
  const all = tokens(text);
  const cut: { start: number; end: number }[] = [];
  const named = new Set<string>();
  for (let i = 0; i < all.length; i++) {
    const t = all[i];
    if (t === undefined || t.quoted) continue;
    let value: string | undefined;
    let end = t.end;
    if (t.value === "--cluster") {
      const next = all[i + 1];
      value = next?.value;
      if (next !== undefined) end = next.end;
      i++;
    } else if (t.value.startsWith("--cluster=")) {
      value = t.value.slice("--cluster=".length);
    } else continue;
    if (value === undefined || value === "" || value.startsWith("-")) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        "`--cluster` needs the name of a cluster: `--cluster NAME`.",
      );
    }
    if (!NAME.test(value)) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        `"${value.slice(0, 63)}" is not a cluster name (letters, digits, - and _).`,
      );
    }
    named.add(value);
    cut.push({ start: t.start, end });
  }
  if (named.size > 1) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      `Name one cluster per command; this one names ${[...named].join(" and ")}.`,
    );
  }
  const cluster = [...named][0];
  if (cluster === undefined) return { text };
  let rest = text;
  for (const c of cut.reverse()) rest = `${rest.slice(0, c.start)}${rest.slice(c.end)}`;
  return { text: rest.trim(), cluster };
}
