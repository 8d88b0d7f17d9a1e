/**
 * The terminal form: `npm run --silent unstuck -- <command> [--json] [--kubeconfig <path>]`.
 * Same grammar, same handlers as Slack; renders text, or JSON with `--json`.
 * Exit codes: 0 answered, 1 the command failed (API error …), 2 bad input.
 */
import { userInfo } from "node:os";
import { defaultRegistry } from "../commands/index.js";
import type { CommandResult } from "../commands/types.js";
import { loadConfig } from "./config.js";
import { ErrorCode, toUserError } from "./errors.js";
import { createLogger } from "./log.js";
import { renderText } from "./render/text.js";
import { createServices } from "./services.js";

interface CliIo {
  readonly out: (s: string) => void;
  readonly err: (s: string) => void;
}

/** Split off the CLI's own options; everything else is the command line shared with Slack. */
function splitGlobal(argv: readonly string[]): { json: boolean; kubeconfig?: string; rest: string[] } {
  let json = false;
  let kubeconfig: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? "";
    if (a === "--json") json = true;
    else if (a === "--kubeconfig") kubeconfig = argv[++i];
    else if (a.startsWith("--kubeconfig=")) kubeconfig = a.slice("--kubeconfig=".length);
    else if (a === "--help" || a === "-h") rest.push("help");
    else rest.push(a);
  }
  return { json, ...(kubeconfig !== undefined ? { kubeconfig } : {}), rest };
}

/** Quote words so the shared tokenizer sees exactly the argv the shell gave us. */
function toCommandLine(words: readonly string[]): string {
  return words.map((w) => (/[\s"']/.test(w) ? `"${w.replace(/"/g, "'")}"` : w)).join(" ");
}

export async function runCli(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: CliIo,
): Promise<number> {
  const { json, kubeconfig, rest } = splitGlobal(argv);
  const registry = defaultRegistry("unstuck");
  const emit = (result: CommandResult): number => {
    if (json)
      io.out(JSON.stringify(result.type === "error" ? { error: result.error } : jsonBody(result), null, 2));
    else (result.type === "error" ? io.err : io.out)(renderText(result));
    if (result.type !== "error") return 0;
    const bad: string[] = [
      ErrorCode.BadInput,
      ErrorCode.UnknownCommand,
      ErrorCode.InvalidName,
      ErrorCode.Config,
    ];
    return bad.includes(result.error.code) ? 2 : 1;
  };
  try {
    // Parse first: bad input is answered without touching configuration or the network.
    registry.parse(toCommandLine(rest));
    const config = loadConfig(kubeconfig !== undefined ? { ...env, KUBECONFIG: kubeconfig } : env);
    // Logs go to stderr and are off unless asked for, so `--json` output stays machine-readable.
    const log = createLogger({
      level: env.UNSTUCK_LOG_LEVEL ? config.logLevel : "silent",
      name: "unstuck-cli",
      fd: 2,
    });
    const services = createServices(config, log);
    const result = await registry.dispatch(
      toCommandLine(rest),
      {
        actor: { userId: `cli:${userInfo().username}`, teamId: "local", surface: "cli" },
        services,
      },
      "unstuck",
    );
    return emit(result);
  } catch (err) {
    const error = toUserError(err);
    return emit(
      error.code === ErrorCode.UnknownCommand
        ? { type: "error", error, help: registry.help("unstuck") }
        : { type: "error", error },
    );
  }
}

function jsonBody(result: Exclude<CommandResult, { type: "error" }>): unknown {
  switch (result.type) {
    case "diagnosis":
      return result.diagnosis;
    case "help":
      return result.help;
  }
}

const isMain =
  import.meta.url === `file://${process.argv[1] ?? ""}` || process.argv[1]?.endsWith("src/cli.ts");
if (isMain) {
  const code = await runCli(process.argv.slice(2), process.env, {
    out: (s) => process.stdout.write(`${s}\n`),
    err: (s) => process.stderr.write(`${s}\n`),
  });
  process.exitCode = code;
}
