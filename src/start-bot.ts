/**
 * What `npm start` runs once its entry point (`main.ts`) listens for a stop: configuration → the
 * runtime (Redis, approvals, queues, workers, Bolt app) → run until SIGTERM/SIGINT. A stop that
 * comes during start-up stops it between steps, or stops the runtime as soon as it has started.
 */
import type { StopRequest } from "./early-signals.js";
import { loadConfig, type Config } from "./config.js";
import { isUnstuckError } from "./errors.js";
import { createLogger, type Logger } from "./log.js";
import { loadOpsConfig, type OpsConfig } from "./ops/config.js";
import { runtimeTarget } from "./ops-target.js";
import { startOpsServer, type OpsServer } from "./ops/server.js";
import { createRuntime, type Runtime } from "./runtime.js";
import { checkStartup, StartupError, type StartupReport } from "./startup.js";

/** The message for a machine with no Slack credentials: which variables, and what each is for. */
export function missingSlackMessage(config: Config): string {
  return [
    `unstuck: Slack is not configured — missing ${config.missingSlack.join(", ")}.`,
    "",
    "Set these to run the bot:",
    "  SLACK_BOT_TOKEN        xoxb-… bot token of the Slack app (deploy/slack-app-manifest.yaml)",
    ...(config.role === "worker"
      ? ["  (UNSTUCK_ROLE=worker receives nothing from Slack: the bot token is all it needs)"]
      : [
          "  SLACK_SIGNING_SECRET   the app's signing secret (HTTP mode, requests to PORT at /slack/events)",
          "  SLACK_APP_TOKEN        optional xapp-… token: Socket Mode instead of HTTP",
        ]),
    "  KUBECONFIG             optional; in-cluster configuration or ~/.kube/config otherwise",
    "",
    "Without Slack, the same commands run from a terminal: npm run --silent unstuck -- help",
    "From a source checkout, `npm start` without these runs the local sandbox (simulated cluster, AWS and Slack).",
  ].join("\n");
}

/** The message for a half-set Slack environment: what is set, what is missing. */
export function partialSlackMessage(config: Config): string {
  const missing = config.missingSlack.map((v) =>
    v === "SLACK_SIGNING_SECRET" ? "SLACK_SIGNING_SECRET (or SLACK_APP_TOKEN for Socket Mode)" : v,
  );
  return (
    `unstuck: Slack is partly configured: ${config.slackSet.join(", ")} ${config.slackSet.length === 1 ? "is" : "are"} set, ` +
    `but ${missing.join(" and ")} ${missing.length === 1 ? "is" : "are"} missing. ` +
    "Set the missing variables, or unset all Slack variables to run the local sandbox."
  );
}

/** Start the bot (or, from a checkout without Slack, the sandbox); resolves with the exit code. */
export async function startBot(stopRequest: StopRequest): Promise<number> {
  const loaded = loadSettings();
  if (typeof loaded === "number") return loaded;
  const { config, opsConfig } = loaded;
  if (!config.slack) return withoutSlack(config);
  const log = createLogger({ level: config.logLevel });
  // /healthz, /readyz and /metrics (src/ops), from now on: liveness holds during the checks below.
  const started = await opsServer(opsConfig, log);
  if (typeof started === "number") return started;
  const { ops } = started;
  // A stop asked for before anything holds work: nothing to hand over, exit at once.
  const stoppedEarly = async (): Promise<number> => {
    log.info({ signal: stopRequest.signal }, "stopped during start-up, before the bot took any work");
    await ops?.close();
    return 0;
  };
  if (stopRequest.signal !== undefined) return stoppedEarly();
  const failed = await startupChecks(config, log, stopRequest, stoppedEarly);
  if (failed !== undefined) return failed;
  if (stopRequest.signal !== undefined) return stoppedEarly();
  const runtime = await createRuntime({ config, log });
  // Once started, the workers may hold jobs: a stop asked for meanwhile goes through runtime.stop().
  const { port } = await runtime.start();
  ops?.attach(runtimeTarget(config, runtime));
  log.info(
    { role: runtime.role, mode: runtime.slack?.mode ?? "none", port, aws: config.aws?.region ?? "off" },
    "unstuck is running",
  );
  const clean = await stopped(runtime, { config, log, ops, stopRequest });
  await ops?.close();
  return clean ? 0 : 1;
}

/** The configuration and the ops server's, from the environment; the exit code when either is invalid. */
function loadSettings(): { config: Config; opsConfig: OpsConfig } | number {
  try {
    return { config: loadConfig(process.env), opsConfig: loadOpsConfig(process.env) };
  } catch (err) {
    process.stderr.write(`unstuck: ${oneLine(err)}\n`);
    return 2;
  }
}

/**
 * Without Slack credentials: the message saying which are missing, then, from a source checkout and
 * for the default role, the local sandbox; resolves with the exit code.
 */
async function withoutSlack(config: Config): Promise<number> {
  if (config.slackSet.length > 0) {
    // Half a Slack configuration is a mistake to fix, not a wish for the sandbox.
    process.stderr.write(`${partialSlackMessage(config)}\n`);
    return 2;
  }
  process.stderr.write(`${missingSlackMessage(config)}\n`);
  // The sandbox is the whole bot: only for the default role.
  if (config.role !== "all") return 2;
  // From a source checkout, run the local sandbox instead (the simulators live under test/, which a
  // production image does not ship: there the message above is the whole answer).
  let sandbox: typeof import("../test/sim/sandbox.js") | undefined;
  try {
    sandbox = await import("../test/sim/sandbox.js");
  } catch {
    return 2;
  }
  process.stderr.write("\nStarting the local sandbox instead.\n\n");
  return sandbox.runSandbox({
    out: (s) => process.stdout.write(`${s}\n`),
    input: process.stdin,
    interactive: process.stdin.isTTY,
    redisUrl: config.redisUrl,
  });
}

/** The ops server when `UNSTUCK_OPS_PORT` is set (none otherwise); exit code 1 when it cannot listen. */
async function opsServer(
  opsConfig: OpsConfig,
  log: Logger,
): Promise<{ ops: OpsServer | undefined } | number> {
  if (opsConfig.port === undefined) return { ops: undefined };
  try {
    return {
      ops: await startOpsServer({
        port: opsConfig.port,
        ...(opsConfig.host ? { host: opsConfig.host } : {}),
        log,
      }),
    };
  } catch (err) {
    process.stderr.write(
      `unstuck: cannot start: UNSTUCK_OPS_PORT ${String(opsConfig.port)}: ${oneLine(err)}\n`,
    );
    return 1;
  }
}

/**
 * Every dependency checked once, bounded, before anything retries in the background: a bot that cannot
 * work exits with one line saying what is missing, not a stream of reconnect logs. Resolves with the
 * exit code when start-up ends here (a failed check, or a stop meanwhile), undefined to go on.
 */
async function startupChecks(
  config: Config,
  log: Logger,
  stopRequest: StopRequest,
  stoppedEarly: () => Promise<number>,
): Promise<number | undefined> {
  try {
    // The checks bound themselves (UNSTUCK_STARTUP_TIMEOUT_SECONDS); a stop does not wait for them.
    const checked = await new Promise<StartupReport | undefined>((resolve, reject) => {
      checkStartup(config, log).then(resolve, reject);
      void stopRequest.requested.then(() => {
        resolve(undefined);
      });
    });
    if (checked === undefined) return await stoppedEarly();
    for (const warning of checked.warnings) log.warn({ startup: true }, warning);
    return undefined;
  } catch (err) {
    process.stderr.write(`unstuck: cannot start: ${oneLine(err)}\n`);
    return 1;
  }
}

/** What a running bot's stop works with. */
interface StopContext {
  readonly config: Config;
  readonly log: Logger;
  readonly ops: OpsServer | undefined;
  readonly stopRequest: StopRequest;
}

/**
 * Resolves once a stop was asked for and the runtime stopped: true when it stopped cleanly, false when
 * it failed or did not finish within the shutdown timeout (plus a margin).
 */
function stopped(runtime: Runtime, c: StopContext): Promise<boolean> {
  const { config, log, ops } = c;
  return new Promise<boolean>((resolve) => {
    const stop = (signal: string): void => {
      log.info({ signal }, "shutting down");
      ops?.drain();
      // runtime.stop() bounds itself; this is the last resort should it not.
      const hard = setTimeout(() => {
        log.error({ timeoutMs: config.shutdownTimeoutMs }, "shutdown did not finish in time; exiting");
        resolve(false);
      }, config.shutdownTimeoutMs + 2_000);
      hard.unref();
      runtime.stop().then(
        () => resolve(true),
        (err: unknown) => {
          log.error({ err }, "error while stopping");
          resolve(false);
        },
      );
    };
    void c.stopRequest.requested.then(stop);
  });
}

/**
 * An error as one line for stderr (no stack, no newlines). The bot's own errors say what is wrong;
 * anything else (a library's failure, a bug) is named by its class and message, since before the bot
 * runs no log holds it: "internal error, see the log" would point at nothing. Credentials in a URL
 * are masked and the line is bounded.
 */
export function oneLine(err: unknown): string {
  const message =
    err instanceof StartupError || isUnstuckError(err)
      ? err.message
      : `unexpected ${err instanceof Error ? err.name : typeof err}: ${err instanceof Error ? err.message : String(err)}`;
  return message
    .replace(/\/\/[^/\s@]*@/g, "//[redacted]@")
    .replace(/\s*\n\s*/g, " ")
    .slice(0, 500);
}
