/**
 * The registry: every slash subcommand and CLI verb is one module here. Parsing picks the module
 * whose path (or alias) matches the longest prefix of the words, so `diagnose namespace x` and
 * `ns x` reach the same handler.
 */
import { ErrorCode, UnstuckError, toUserError } from "../src/errors.js";
import { parseArgs, tokenize } from "./grammar.js";
import { buildHelp, helpCommand } from "./help.js";
import { approvalsCommand } from "./approvals.js";
import { approveDeleteCommand } from "./approve-delete.js";
import { auditCommand } from "./audit.js";
import { finalizeCommand } from "./finalize.js";
import { nsCommand } from "./ns.js";
import { orphansCommand } from "./orphans.js";
import { preflightCommand } from "./preflight.js";
import { repointCommand, repointNsCommand } from "./repoint.js";
import { traceCommand, traceNsCommand } from "./trace.js";
import { timelineCommand } from "./timeline.js";
import { watchCommand } from "./watch.js";
import type { CommandContext, CommandDispatcher, CommandModule, CommandResult, HelpDoc } from "./types.js";
import { metricSink } from "../src/ops/metric-sink.js";

/**
 * Command latency by verb (the grammar's path: a bounded set) and outcome, for `/metrics`; through
 * the sink, so the terminal CLI never loads prom-client.
 */
function observeCommand(verb: string, started: number, outcome: "ok" | "error"): void {
  metricSink()?.command(verb, outcome, (performance.now() - started) / 1000);
}

export interface Registry extends CommandDispatcher {
  readonly commands: readonly CommandModule[];
  help(prefix?: string): HelpDoc;
  /** Parse and validate without running (no I/O). Throws UnstuckError. */
  parse(text: string): { command: CommandModule; input: unknown };
  /** Parse, validate and run; never throws — errors become an `error` result. */
  dispatch(text: string, ctx: CommandContext, prefix?: string): Promise<CommandResult>;
}

export function createRegistry(modules: readonly CommandModule[], defaultPrefix = "/unstuck"): Registry {
  const all: CommandModule[] = [];
  const registry: Registry = {
    commands: all,
    help: (prefix = defaultPrefix) =>
      buildHelp(
        all.map((c) => c.syntax),
        prefix,
      ),
    parse(text) {
      const words = tokenize(text.trim());
      if (words.length === 0) return { command: helpModule, input: undefined };
      let best: { command: CommandModule; length: number } | undefined;
      for (const command of all) {
        for (const path of [command.syntax.path, ...(command.syntax.aliases ?? [])]) {
          const matches = path.every((w, i) => words[i]?.toLowerCase() === w);
          if (matches && (!best || path.length > best.length)) best = { command, length: path.length };
        }
      }
      if (!best) {
        const word = (words[0] ?? "").toLowerCase();
        const near = suggestLine(words, all);
        const verbKnown = all.some((c) =>
          [c.syntax.path, ...(c.syntax.aliases ?? [])].some((p) => p[0] === word),
        );
        throw new UnstuckError(
          ErrorCode.UnknownCommand,
          verbKnown && near
            ? `\`${clipWords(words)}\` is not a complete command. Did you mean \`${near}\`?`
            : `Unknown command "${word.slice(0, 40)}".${near ? ` Did you mean \`${near}\`?` : ""}`,
        );
      }
      const args = parseArgs(best.command.syntax, words.slice(best.length));
      return { command: best.command, input: best.command.build(args) };
    },
    async dispatch(text, ctx, prefix = defaultPrefix) {
      let parsed: { command: CommandModule; input: unknown };
      const started = performance.now();
      try {
        parsed = registry.parse(text);
      } catch (err) {
        const error = toUserError(err);
        observeCommand("unparsed", started, "error");
        return error.code === ErrorCode.UnknownCommand
          ? { type: "error", error, help: registry.help(prefix) }
          : { type: "error", error };
      }
      const verb = parsed.command.syntax.path.join(" ");
      try {
        const result = await parsed.command.run(parsed.input, ctx);
        observeCommand(verb, started, result.type === "error" ? "error" : "ok");
        return result;
      } catch (err) {
        const error = toUserError(err);
        if (error.code === ErrorCode.Internal) ctx.services.log.error({ err }, "command failed");
        observeCommand(verb, started, "error");
        return { type: "error", error };
      }
    },
  };
  const helpModule = helpCommand(() => registry.help()) as CommandModule;
  all.push(helpModule, ...modules);
  return registry;
}

/** The product's commands. */
export function defaultRegistry(prefix = "/unstuck"): Registry {
  return createRegistry(
    [
      nsCommand,
      finalizeCommand,
      watchCommand,
      traceCommand,
      traceNsCommand,
      repointCommand,
      repointNsCommand,
      orphansCommand,
      preflightCommand,
      approveDeleteCommand,
      approvalsCommand,
      auditCommand,
      timelineCommand,
    ],
    prefix,
  );
}

/** How many edits still read as the same word: one for short words, a third of longer ones. */
function tolerance(word: string): number {
  return Math.max(1, Math.floor(word.length / 3));
}

/** The user's words for a message: a few, each bounded (they are quoted back). */
function clipWords(words: readonly string[]): string {
  const line = words
    .slice(0, 8)
    .map((w) => (w.length > 63 ? `${w.slice(0, 62)}…` : w))
    .join(" ");
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

/**
 * The command line the user most likely meant: the verb (even mistyped) matched to a command, its
 * missing or mistyped sub-words filled in from the grammar, the rest of what was typed kept, so
 * `watch myapp` reads `watch ns myapp` and `preflight myapp` reads `preflight delete ns myapp`.
 */
function suggestLine(words: readonly string[], modules: readonly CommandModule[]): string | undefined {
  const typed = words.map((w) => w.toLowerCase());
  let best: { line: string; score: number } | undefined;
  for (const command of modules) {
    const paths = [command.syntax.path, ...(command.syntax.aliases ?? [])];
    paths.forEach((path, k) => {
      // A shortcut alias (`watch` for `watch ns`) works, but the suggestion teaches the full form.
      if (k > 0 && path.length < command.syntax.path.length) return;
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
      if (best === undefined || score < best.score) best = { line, score };
    });
  }
  return best?.line;
}

/** Levenshtein distance, for "did you mean" on a mistyped verb. */
function editDistance(a: string, b: string): number {
  if (a.length > 64) return a.length;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(
        (prev[j] ?? 0) + 1,
        (cur[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}
