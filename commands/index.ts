/**
 * The registry: every slash subcommand and CLI verb is one module here. Parsing picks the module
 * whose path (or alias) matches the longest prefix of the words, so `diagnose namespace x` and
 * `ns x` reach the same handler.
 */
import { ErrorCode, UnstuckError, toUserError } from "../src/errors.js";
import { clipWords, parseArgs, suggestCommand, tokenize, usageLine } from "./grammar.js";
import { buildHelp, helpCommand, selectedBy } from "./help.js";
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
  /** Every command's help, or (`words`) only the commands those words select. */
  help(prefix?: string, words?: readonly string[]): HelpDoc;
  /** Parse and validate without running (no I/O). Throws UnstuckError. */
  parse(text: string): { command: CommandModule; input: unknown };
  /** Parse, validate and run; never throws — errors become an `error` result. */
  dispatch(text: string, ctx: CommandContext, prefix?: string): Promise<CommandResult>;
}

export function createRegistry(modules: readonly CommandModule[], defaultPrefix = "/unstuck"): Registry {
  const all: CommandModule[] = [];
  const registry: Registry = {
    commands: all,
    help: (prefix = defaultPrefix, words = []) =>
      buildHelp(
        all.map((c) => c.syntax).filter((s) => selectedBy(s, words)),
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
        const suggested = suggestCommand(
          words,
          all.map((c) => c.syntax),
        );
        const verbKnown = all.some((c) =>
          [c.syntax.path, ...(c.syntax.aliases ?? [])].some((p) => p[0] === word),
        );
        // A suggestion comes with the one usage line it needs, never the whole help.
        const near = suggested?.line;
        const usage = suggested ? ` Usage: \`${usageLine(suggested.syntax)}\`` : "";
        throw new UnstuckError(
          ErrorCode.UnknownCommand,
          verbKnown && near
            ? `\`${clipWords(words)}\` is not a complete command. Did you mean \`${near}\`?${usage}`
            : `Unknown command "${word.slice(0, 40)}".${near ? ` Did you mean \`${near}\`?${usage}` : ""}`,
          near !== undefined ? { suggestion: near } : {},
        );
      }
      const rest = words.slice(best.length);
      // `<command> --help`: that command's help, whatever else was typed.
      if (best.command !== helpModule && rest.some((w) => w === "--help" || w === "-h"))
        return { command: helpModule, input: best.command.syntax.path };
      const args = parseArgs(best.command.syntax, rest);
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
        // The whole help only when nothing typed was near a command (a typo gets its one usage line).
        return error.code === ErrorCode.UnknownCommand && error.details["suggestion"] === undefined
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
  const helpModule = helpCommand((words) => registry.help(undefined, words)) as CommandModule;
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
