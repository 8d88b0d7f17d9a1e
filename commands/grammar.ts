/**
 * The one grammar every surface shares. A command is declared once (path, positionals, flags,
 * examples); the parser and the help text are both generated from that declaration, so they
 * cannot drift apart.
 */
import { editDistance } from "../src/util/similar.js";
import { ErrorCode, UnstuckError } from "../src/errors.js";

export interface PositionalDef {
  readonly name: string;
  readonly description: string;
  readonly optional?: boolean;
}

export interface FlagDef {
  readonly name: string;
  readonly short?: string;
  readonly kind: "boolean" | "string" | "number";
  readonly description: string;
  /** Shown in help as `--flag <valueName>`. */
  readonly valueName?: string;
  /** May be given more than once (values collected in order). */
  readonly repeatable?: boolean;
  /** Must be given; help shows it without brackets. */
  readonly required?: boolean;
  /**
   * An unquoted value runs to the next option, as people type a sentence in Slack:
   * `--reason the old ALB is gone --to k8s-…` gives the reason "the old ALB is gone".
   */
  readonly restOfLine?: boolean;
}

export interface ParsedArgs {
  readonly positionals: readonly string[];
  readonly flags: Readonly<Record<string, string | boolean | number | readonly string[] | undefined>>;
}

export interface CommandSyntax {
  /** Words that select the command, e.g. `["ns"]` or `["watch", "ns"]`. */
  readonly path: readonly string[];
  /** Other word sequences that select the same command, e.g. `[["diagnose", "namespace"]]`. */
  readonly aliases?: readonly (readonly string[])[];
  readonly summary: string;
  readonly positionals: readonly PositionalDef[];
  readonly flags: readonly FlagDef[];
  readonly examples: readonly string[];
}

/**
 * Split a command line the way a shell would for the simple cases users type in Slack: spaces
 * separate words, single or double quotes (and Slack's “smart” quotes) group them.
 */
export function tokenize(text: string): string[] {
  const normalised = text.replace(/[\u201C\u201D\u201E\u201F]/g, '"').replace(/[\u2018\u2019]/g, "'");
  const tokens: string[] = [];
  let current = "";
  let inToken = false;
  let quote: '"' | "'" | undefined;
  for (const ch of normalised) {
    if (quote) {
      if (ch === quote) quote = undefined;
      else current += ch;
      continue;
    }
    if (ch === '"' || ch === "'") {
      quote = ch;
      inToken = true;
      continue;
    }
    if (/\s/.test(ch)) {
      if (inToken) tokens.push(current);
      current = "";
      inToken = false;
      continue;
    }
    current += ch;
    inToken = true;
  }
  if (quote) throw new UnstuckError(ErrorCode.BadInput, `Unclosed ${quote} quote in: ${text}`);
  if (inToken) tokens.push(current);
  return tokens;
}

/** Parse the words after the command path against a command's declaration. */
export function parseArgs(syntax: CommandSyntax, words: readonly string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags: FlagValues = {};
  const usage = `Usage: ${usageLine(syntax)}`;
  const byName = flagsByWord(syntax);
  for (let i = 0; i < words.length; i++) {
    const word = words[i] ?? "";
    if (!isOption(word)) {
      positionals.push(word);
      continue;
    }
    const eq = word.indexOf("=");
    const key = eq > 0 ? word.slice(0, eq) : word;
    const def = byName.get(key);
    if (!def) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        `Unknown option ${key} for \`${syntax.path.join(" ")}\`. ${usage}`,
      );
    }
    const { value, last } = readOption(def, words, i, usage);
    i = last;
    recordFlag(flags, def, value);
  }
  checkComplete(syntax, positionals, flags, usage);
  return { positionals, flags };
}

/** The flags parsed so far, by name: a repeatable one collects its values in order. */
type FlagValues = Record<string, string | boolean | number | string[] | undefined>;

/** A word that reads as an option (`--to`, `--to=x`, `-n`; not `-5`): where a value ends. */
function isOption(w: string): boolean {
  return w.startsWith("-") && w.length > 1 && !/^-\d/.test(w);
}

/** A command's flags by the words that name them: `--name`, and `-s` for those with a short form. */
function flagsByWord(syntax: CommandSyntax): Map<string, FlagDef> {
  const byName = new Map<string, FlagDef>();
  for (const f of syntax.flags) {
    byName.set(`--${f.name}`, f);
    if (f.short) byName.set(`-${f.short}`, f);
  }
  return byName;
}

/**
 * The value of the option at `words[i]`, declared by `def`, and the index of the last word it used:
 * a boolean takes none (or `=true|false`); the others take the text after `=` or the next word(s),
 * a number checked as one.
 */
function readOption(
  def: FlagDef,
  words: readonly string[],
  i: number,
  usage: string,
): { readonly value: string | boolean | number; readonly last: number } {
  const word = words[i] ?? "";
  const eq = word.indexOf("=");
  if (def.kind === "boolean") {
    if (eq <= 0) return { value: true, last: i };
    const raw = word.slice(eq + 1);
    if (raw !== "true" && raw !== "false") {
      throw new UnstuckError(ErrorCode.BadInput, `Option --${def.name} takes no value (or true/false).`);
    }
    return { value: raw === "true", last: i };
  }
  const { raw, last } = optionText(def, words, i, eq);
  if (raw === undefined || raw === "") {
    throw new UnstuckError(
      ErrorCode.BadInput,
      `Option --${def.name} needs a value (${def.valueName ?? def.kind}). ${usage}`,
    );
  }
  if (def.kind !== "number") return { value: raw, last };
  const n = Number(raw);
  if (!Number.isFinite(n)) {
    throw new UnstuckError(ErrorCode.BadInput, `Option --${def.name} needs a number, got "${raw}".`);
  }
  return { value: n, last };
}

/**
 * The text of a valued option at `words[i]` (`eq`: where its `=` is) and the index of its last word:
 * after `=`, else the next word, else (`restOfLine`) every word up to the next option.
 */
function optionText(
  def: FlagDef,
  words: readonly string[],
  i: number,
  eq: number,
): { readonly raw: string | undefined; readonly last: number } {
  if (eq > 0) return { raw: (words[i] ?? "").slice(eq + 1), last: i };
  let last = i + 1;
  let raw = words[last];
  if (def.restOfLine === true && raw !== undefined) {
    // An option where the sentence should start: the value is missing.
    if (isOption(raw)) raw = undefined;
    else
      while (last + 1 < words.length && !isOption(words[last + 1] ?? ""))
        raw = `${raw} ${words[++last] ?? ""}`;
  }
  return { raw, last };
}

/** Record a flag's value: appended when repeatable, refused when given twice otherwise. */
function recordFlag(flags: FlagValues, def: FlagDef, value: string | boolean | number): void {
  if (def.repeatable) {
    const list = (flags[def.name] as string[] | undefined) ?? [];
    list.push(String(value));
    flags[def.name] = list;
  } else if (flags[def.name] !== undefined) {
    throw new UnstuckError(ErrorCode.BadInput, `Option --${def.name} was given twice.`);
  } else flags[def.name] = value;
}

/** Refuse a command line missing a required flag or positional, or with positionals to spare. */
function checkComplete(
  syntax: CommandSyntax,
  positionals: readonly string[],
  flags: FlagValues,
  usage: string,
): void {
  for (const f of syntax.flags) {
    if (f.required && flags[f.name] === undefined) {
      throw new UnstuckError(ErrorCode.BadInput, `Missing ${flagLabel(f)} (${f.description}). ${usage}`);
    }
  }
  const required = syntax.positionals.filter((p) => !p.optional).length;
  if (positionals.length < required) {
    const missing = syntax.positionals[positionals.length];
    throw new UnstuckError(ErrorCode.BadInput, `Missing <${missing?.name ?? "argument"}>. ${usage}`);
  }
  if (positionals.length > syntax.positionals.length) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      `Unexpected argument "${positionals[syntax.positionals.length] ?? ""}". ${usage}`,
    );
  }
}

export function usageLine(syntax: CommandSyntax): string {
  const parts = [...syntax.path];
  for (const p of syntax.positionals) parts.push(p.optional ? `[<${p.name}>]` : `<${p.name}>`);
  for (const f of syntax.flags) parts.push(f.required ? flagLabel(f) : `[${flagLabel(f)}]`);
  return parts.join(" ");
}

function flagLabel(f: FlagDef): string {
  const name = f.short ? `-${f.short}|--${f.name}` : `--${f.name}`;
  return f.kind === "boolean" ? name : `${name} <${f.valueName ?? f.kind}>`;
}

/** How many edits still read as the same word: one for short words, a third of longer ones. */
function tolerance(word: string): number {
  return Math.max(1, Math.floor(word.length / 3));
}

/** The user's words for a message: a few, each bounded (they are quoted back). */
export function clipWords(words: readonly string[]): string {
  const line = words
    .slice(0, 8)
    .map((w) => (w.length > 63 ? `${w.slice(0, 62)}…` : w))
    .join(" ");
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

/**
 * The command line the user most likely meant: the verb (even mistyped) matched to a command, its
 * missing or mistyped sub-words filled in from the grammar, the rest of what was typed kept, so
 * `watch myapp` reads `watch ns myapp` and `preflight myapp` reads `preflight delete ns myapp`;
 * with the command's declaration, whose one usage line goes with the suggestion.
 */
export function suggestCommand(
  words: readonly string[],
  syntaxes: readonly CommandSyntax[],
): { readonly line: string; readonly syntax: CommandSyntax } | undefined {
  const typed = words.map((w) => w.toLowerCase());
  let best: { line: string; score: number; syntax: CommandSyntax } | undefined;
  for (const syntax of syntaxes) {
    const paths = [syntax.path, ...(syntax.aliases ?? [])];
    paths.forEach((path, k) => {
      // A shortcut alias (`watch` for `watch ns`) works, but the suggestion teaches the full form.
      if (k > 0 && path.length < syntax.path.length) return;
      const verb = path[0] ?? "";
      const d0 = editDistance(typed[0] ?? "", verb);
      if (d0 > tolerance(verb)) return;
      // An edit costs two, an inserted word three (a typed word is rather a typo of the one expected
      // there than an argument after a missing one); the primary path wins a tie over an alias.
      let score = d0 * 2 + (k > 0 ? 0.5 : 0);
      let i = 1;
      for (const w of path.slice(1)) {
        const u = typed[i];
        const d = u !== undefined ? editDistance(u, w) : Infinity;
        if (d <= tolerance(w)) {
          score += d * 2;
          i++;
        } else score += 3;
      }
      const line = clipWords([...path, ...words.slice(i)]);
      if (best === undefined || score < best.score) best = { line, score, syntax };
    });
  }
  return best !== undefined ? { line: best.line, syntax: best.syntax } : undefined;
}
