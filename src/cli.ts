/**
 * The terminal form: `npm run --silent unstuck -- <command> [--json] [--kubeconfig <path>]`.
 * Same grammar, same handlers as Slack; renders text, or JSON with `--json`.
 * Exit codes: 0 answered, 1 the command failed (API error …), 2 bad input.
 */
import { enableCompileCache } from "node:module";
import { userInfo } from "node:os";
import type { Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import type { ApprovalServices, CommandServices } from "./command-contract.js";
import type { CommandResult } from "./command-result.js";
import type { Config } from "./config.js";
import { ErrorCode, UnstuckError, toUserError } from "./errors.js";
import { isNamespaceName } from "./kube/names.js";
import { delay } from "./util/concurrency.js";
import { jsonChunks } from "./util/json-chunks.js";
import { silentLogger } from "./log-silent.js";

// Start-up (≤ 1 s, docs/design.md): what only some commands need is imported when one does — the
// configuration (zod, yaml), the clients (@kubernetes/client-node, the AWS SDK) once the command
// line parses, Redis and the approval engine only for the commands that read them. Slack and BullMQ
// are never loaded here. Imported after the compile cache is on, so their compiled code is reused.
// The parser, the diagnosis and the renderers are imported by `runCli` too: for `ns <name>` they
// load while the namespace's first reads travel.

/** The code every command line needs: its parser and commands, and the renderers of an answer. */
function loadTerminal(): Promise<
  [
    typeof import("../commands/index.js"),
    typeof import("./render/text.js"),
    typeof import("./render/diagnosis-prose.js"),
  ]
> {
  return Promise.all([
    import("../commands/index.js"),
    import("./render/text.js"),
    import("./render/diagnosis-prose.js"),
  ]);
}

/** The configuration a command runs with and its services (nothing read yet). */
interface Prepared {
  readonly config: Config;
  readonly base: Omit<CommandServices, "approvals">;
}

async function prepare(
  kubeconfig: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Prepared> {
  const { loadConfig } = await import("./config.js");
  const config = loadConfig(kubeconfig !== undefined ? { ...env, KUBECONFIG: kubeconfig } : env);
  // Logs go to stderr and are off unless asked for, so `--json` output stays machine-readable;
  // pino is loaded only when they are.
  const log = env.UNSTUCK_LOG_LEVEL
    ? (await import("./log.js")).createLogger({ level: config.logLevel, name: "unstuck-cli", fd: 2 })
    : silentLogger();
  const { createServices } = await import("./services.js");
  return { config, base: createServices(config, log) };
}

/**
 * `ns <name>` with nothing else to check: its configuration and services, with the namespace and
 * discovery already asked for (`primeNamespaceReads`). Only a line the parser cannot refuse starts
 * early, so bad input still reaches nothing; a configuration that does not load is left for the
 * usual path to report.
 */
async function prepareAhead(
  rest: readonly string[],
  timeoutSeconds: number,
  kubeconfig: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Prepared | undefined> {
  const [verb, namespace, ...more] = rest;
  if (verb !== "ns" || namespace === undefined || more.length > 0 || !isNamespaceName(namespace))
    return undefined;
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) return undefined;
  try {
    // The Kubernetes client's module is loaded here, not on the first read, so that nothing else is
    // being loaded while the adapter is built and the reads are sent.
    const [prepared, { primeNamespaceReads }] = await Promise.all([
      prepare(kubeconfig, env),
      import("./kube/primed.js"),
      import("./kube/client-node-adapter.js"),
    ]);
    const kube = primeNamespaceReads(prepared.base.kube, namespace);
    // Building the adapter and sending takes a few promise turns (kubeconfig, connection, limiter):
    // one turn of the event loop lets them finish before the rest of the terminal starts loading,
    // which would otherwise interleave with them and hold the requests back (~15 ms).
    await new Promise((resolve) => setImmediate(resolve));
    return { ...prepared, base: { ...prepared.base, kube } };
  } catch {
    return undefined;
  }
}

export interface CliIo {
  /** One line of output. */
  readonly out: (s: string) => void;
  /** One line of errors. */
  readonly err: (s: string) => void;
  /** One `--json` answer, given in pieces to write as they come, then a line break. */
  readonly json: (chunks: Iterable<string>) => Promise<void>;
}

/**
 * `chunks` written to `stream`, each made once the one before has been taken: Node queues in memory
 * what a pipe cannot take yet, so a reader slower than the answer is made (`| jq`, a pager) would
 * otherwise have all of a big namespace's answer queued in the process (tens of MB at 80,000
 * objects). Ends with a line break.
 */
export async function writePieces(stream: Writable, chunks: Iterable<string>): Promise<void> {
  for (const chunk of chunks) {
    if (!stream.write(chunk)) await drained(stream);
    // A reader gone (`| head`): the stream's error says so; nothing more is made for it.
    if (stream.destroyed) return;
  }
  stream.write("\n");
}

/** Resolves once `stream` takes writes again, or has closed. */
function drained(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    const go = (): void => {
      stream.off("drain", go);
      stream.off("close", go);
      resolve();
    };
    stream.once("drain", go);
    stream.once("close", go);
  });
}

/** Split off the CLI's own options; everything else is the command line shared with Slack. */
function splitGlobal(argv: readonly string[]): {
  json: boolean;
  kubeconfig?: string;
  timeout?: string;
  rest: string[];
} {
  let json = false;
  let kubeconfig: string | undefined;
  let timeout: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? "";
    if (a === "--json") json = true;
    else if (a === "--kubeconfig") kubeconfig = argv[++i];
    else if (a.startsWith("--kubeconfig=")) kubeconfig = a.slice("--kubeconfig=".length);
    else if (a === "--timeout") timeout = argv[++i];
    // `unstuck --help` is `help`; after a command, the registry gives that command's help.
    else if ((a === "--help" || a === "-h") && rest.length === 0) rest.push("help");
    else rest.push(a);
  }
  return {
    json,
    ...(kubeconfig !== undefined ? { kubeconfig } : {}),
    ...(timeout !== undefined ? { timeout } : {}),
    rest,
  };
}

/**
 * `keys`: a fresh Ed25519 key pair — the private seed for `UNSTUCK_BOT_SIGNING_KEY` or
 * `UNSTUCK_WORKER_SIGNING_KEY` (a Secret), the public key for the lists every process verifies with.
 */
async function printKeyPair(io: CliIo, json: boolean, indent: 0 | 2): Promise<number> {
  const { generateKeyText } = await import("./trust/keys.js");
  const pair = generateKeyText();
  if (json) io.out(JSON.stringify(pair, null, indent || undefined));
  else
    io.out(
      [
        `private key (keep it in a Secret, for one role only): ${pair.privateKey}`,
        `public key (list it where the others verify it):       ${pair.publicKey}`,
        "",
        "The bot's pair: UNSTUCK_BOT_SIGNING_KEY on the bot, its public key in UNSTUCK_BOT_PUBLIC_KEYS everywhere.",
        "A cluster's pair: UNSTUCK_WORKER_SIGNING_KEY on its workers, its public key in UNSTUCK_WORKER_PUBLIC_KEYS",
        "(one cluster) or the clusters file's clusters.<name>.publicKeys (a fleet).",
      ].join("\n"),
    );
  return 0;
}

/** Quote words so the shared tokenizer sees exactly the argv the shell gave us. */
function toCommandLine(words: readonly string[]): string {
  return words.map((w) => (/[\s"']/.test(w) ? `"${w.replace(/"/g, "'")}"` : w)).join(" ");
}

/**
 * `--json` is indented for a person at a terminal and compact for a program reading a pipe: a big
 * namespace's answer is megabytes, and indenting it costs a third more bytes and most of the time
 * spent writing it.
 */
export async function runCli(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: CliIo,
  layout: { readonly indent: 0 | 2 } = { indent: 0 },
): Promise<number> {
  const { json, kubeconfig, timeout, rest } = splitGlobal(argv);
  const timeoutSeconds = timeout === undefined ? 600 : Number(timeout);
  const ahead = await prepareAhead(rest, timeoutSeconds, kubeconfig, env);
  const [{ defaultRegistry }, { renderText }, prose] = await loadTerminal();
  const registry = defaultRegistry("unstuck");
  const emit = async (result: CommandResult): Promise<number> => {
    if (json) {
      const body = result.type === "error" ? { error: result.error } : jsonBody(result, prose.causeSentence);
      await io.json(layout.indent ? [JSON.stringify(body, null, layout.indent)] : jsonChunks(body));
    } else (result.type === "error" ? io.err : io.out)(renderText(result));
    if (result.type !== "error") return 0;
    const bad: string[] = [
      ErrorCode.BadInput,
      ErrorCode.UnknownCommand,
      ErrorCode.InvalidName,
      ErrorCode.Config,
    ];
    return bad.includes(result.error.code) ? 2 : 1;
  };
  // A terminal-only verb: a fresh key pair to configure a bot or a cluster's workers with. Never a
  // Slack command (a private key must not be posted in a channel).
  if (rest.length === 1 && rest[0] === "keys") return printKeyPair(io, json, layout.indent);
  try {
    // Parse first: bad input is answered without touching configuration or the network.
    const { command } = registry.parse(toCommandLine(rest));
    if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        `--timeout takes a number of seconds (got "${timeout ?? ""}").`,
      );
    }
    const { config, base } = ahead ?? (await prepare(kubeconfig, env));
    // `approvals` and `audit` read the bot's Redis; nothing else in the terminal needs it.
    const reader = READS_REDIS.has(command.syntax.path[0] ?? "")
      ? await approvalReader(config, base)
      : undefined;
    const services: CommandServices = reader ? { ...base, approvals: reader.approvals } : base;
    let result: CommandResult;
    try {
      result = await registry.dispatch(
        toCommandLine(rest),
        {
          actor: { userId: `cli:${userInfo().username}`, teamId: "local", surface: "cli" },
          services,
        },
        "unstuck",
      );
    } finally {
      await reader?.close();
    }
    if (result.type === "watch" && result.diagnosis.verdict !== "not-found") {
      if (!json) io.out(renderText(result));
      return await watchInTerminal(services, result.namespace, io, {
        intervalMs: 2000,
        timeoutMs: timeoutSeconds * 1000,
        json,
      });
    }
    return await emit(result);
  } catch (err) {
    // The terminal user is the operator: an unexpected error is shown, not only logged.
    const error =
      err instanceof Error && toUserError(err).code === ErrorCode.Internal
        ? { ...toUserError(err), message: `Internal error: ${err.message}` }
        : toUserError(err);
    return emit(
      error.code === ErrorCode.UnknownCommand
        ? { type: "error", error, help: registry.help("unstuck") }
        : { type: "error", error },
    );
  }
}

const READS_REDIS = new Set(["approvals", "audit", "timeline"]);

/**
 * The approval engine over the bot's Redis, for the terminal's reads (`approvals`, `audit`). It is
 * the real store and audit log; requesting or executing a change from here is refused (identities
 * are verified only in Slack).
 */
async function approvalReader(
  config: Config,
  base: Omit<CommandServices, "approvals">,
): Promise<{ approvals: ApprovalServices; close: () => Promise<void> }> {
  const [
    { ApprovalPolicy },
    { ApprovalStore },
    { ApprovalWorkflow },
    { AuditLog },
    { createRedisConnection },
    { RedisKeys },
  ] = await Promise.all([
    import("./approvals/policy.js"),
    import("./approvals/store.js"),
    import("./approvals/workflow.js"),
    import("./audit/log.js"),
    import("./redis-connection.js"),
    import("./redis/keys.js"),
  ]);
  const redis = createRedisConnection(config, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    reconnect: false,
  });
  redis.on("error", () => undefined);
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw new UnstuckError(
      ErrorCode.Unreachable,
      `Cannot reach the bot's Redis at REDIS_URL (${err instanceof Error ? err.message : String(err)}).`,
      { variable: "REDIS_URL" },
    );
  }
  const store = new ApprovalStore(redis, {
    prefix: RedisKeys.approvals(config.redisPrefix),
    auditKey: RedisKeys.audit(config.redisPrefix),
  });
  const audit = new AuditLog(redis, { key: RedisKeys.audit(config.redisPrefix) });
  const workflow = new ApprovalWorkflow({
    store,
    audit,
    kube: base.kube,
    policy: new ApprovalPolicy({ channels: config.channels, approvers: config.approvers, now: base.now }),
    enqueueExecution: () =>
      Promise.reject(
        new UnstuckError(
          ErrorCode.Forbidden,
          "Changes are approved and executed by the bot, not the terminal.",
        ),
      ),
    now: base.now,
    approvalsRequired: config.approvalsRequired,
    requestTtlSeconds: config.requestTtlSeconds,
  });
  return {
    approvals: { workflow, audit },
    close: () =>
      redis.quit().then(
        () => undefined,
        () => undefined,
      ),
  };
}

function jsonBody(
  result: Exclude<CommandResult, { type: "error" }>,
  causeSentence: (diagnosis: Extract<CommandResult, { type: "diagnosis" }>["diagnosis"]) => string,
): unknown {
  switch (result.type) {
    case "diagnosis":
      // The cause in one sentence for scripts, worded where every other reader's is.
      return { ...result.diagnosis, summary: causeSentence(result.diagnosis) };
    case "trace":
      return result.repair ? { ...result.trace, repair: result.repair } : result.trace;
    case "orphans":
    case "preflight":
      return result.report;
    case "help":
      return result.help;
    case "watch":
      return { namespace: result.namespace, diagnosis: result.diagnosis };
    case "approval-request":
      return result.request;
    case "approval-draft":
      return { unfiled: result.draft };
    case "approvals":
      return result.requests;
    case "audit":
      return result.entries;
    case "timeline":
      return { markdown: result.markdown, entries: result.entries };
  }
}

/**
 * The terminal's own wait for `watch ns`: no queue or Slack thread here, so poll the namespace
 * with a deadline and print one progress line per change.
 */
async function watchInTerminal(
  services: CommandServices,
  namespace: string,
  io: CliIo,
  options: { intervalMs: number; timeoutMs: number; json: boolean },
): Promise<number> {
  const started = Date.now();
  let last = "";
  for (let check = 1; ; check++) {
    const ns = await services.kube.getNamespace(namespace);
    if (!ns) {
      const seconds = Math.round((Date.now() - started) / 1000);
      io.out(
        options.json
          ? JSON.stringify({ namespace, outcome: "gone", checks: check, seconds })
          : `namespace ${namespace} is gone (after ${seconds}s)`,
      );
      return 0;
    }
    if (Date.now() - started >= options.timeoutMs) {
      const [{ diagnoseNamespace }, { blockerLine }] = await Promise.all([
        import("./diagnosis/diagnose.js"),
        import("./render/diagnosis-prose.js"),
      ]);
      const d = await diagnoseNamespace(services.kube, namespace, { now: services.now });
      const blockers = d.blockers.map(blockerLine);
      io.out(
        options.json
          ? JSON.stringify({ namespace, outcome: "timed-out", checks: check, blockers })
          : `namespace ${namespace} still ${ns.phase} at the deadline; blocked by: ${blockers.join("; ") || "nothing found"}`,
      );
      return 1;
    }
    const line = `still ${ns.phase}${ns.conditions
      .filter((c) => c.status === "True")
      .map((c) => ` — ${c.message ?? c.type}`)
      .join("")}`;
    if (line !== last && !options.json) io.out(line);
    last = line;
    await delay(options.intervalMs);
  }
}

// pathToFileURL percent-encodes what a file URL must (spaces, '#', non-ASCII), as import.meta.url does.
const isMain =
  process.argv[1] !== undefined &&
  (import.meta.url === pathToFileURL(process.argv[1]).href || process.argv[1].endsWith("src/cli.ts"));
if (isMain) {
  // V8's compiled code kept on disk (os.tmpdir()/node-compile-cache) for the modules imported from
  // here on; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
  enableCompileCache();
  // `unstuck ns x --json | head`: a reader that stops early ends the command quietly, as any Unix
  // tool does, not with a stack trace.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
    process.exit(typeof process.exitCode === "number" ? process.exitCode : 0);
  });
  const code = await runCli(
    process.argv.slice(2),
    process.env,
    {
      out: (s) => process.stdout.write(`${s}\n`),
      err: (s) => process.stderr.write(`${s}\n`),
      json: (chunks) => writePieces(process.stdout, chunks),
    },
    { indent: process.stdout.isTTY ? 2 : 0 },
  );
  process.exitCode = code;
  // The command is over once its answer is written: end then. Left to drain, the event loop would
  // also wait for V8's concurrent garbage collection to finish (~10 ms after a big answer). Each
  // stream's callback runs after every write queued before it, so a slow reader still gets it all.
  let unflushed = 2;
  const flushed = (): void => {
    if (--unflushed === 0) process.exit(code);
  };
  process.stdout.write("", flushed);
  process.stderr.write("", flushed);
}
