/**
 * Start-up checks: before the bot builds anything, each dependency is tried once with a bounded
 * wait — Redis (and whether it is fit to be a system of record), Slack `auth.test`, the Kubernetes
 * API (`/version`) and AWS (one cheap read) — so that a bot that cannot work says so in one line and
 * exits, instead of retrying forever in a stream of JSON logs.
 */
import { LogLevel, WebClient, type Logger as WebClientLogger } from "@slack/web-api";
import type { Redis } from "ioredis";
import type { Config } from "./config.js";
import { parseRedisClusterUrl, parseRedisSentinelUrl } from "./config/redis.js";
import { createRedisConnection, redisPrimaries } from "./redis-connection.js";
import { ErrorCode, UnstuckError, toUserError } from "./errors.js";
import { kubeVersion, loadKubeConfig } from "./kube/client-node-adapter.js";
import type { Logger } from "./log.js";
import { boltLogger } from "./slack/bolt-logger.js";
import { withTimeout } from "./util/deadline.js";

/** A dependency the bot cannot start without, and why. */
export class StartupError extends Error {
  public constructor(message: string) {
    super(message);
    this.name = "StartupError";
  }
}

export interface StartupReport {
  /** Things that work but deserve attention (logged, not fatal). */
  readonly warnings: readonly string[];
  /** What was checked and found fine, for the start-up log line. */
  readonly ok: readonly string[];
}

/** `host:port` of a Redis URL (each seed node's for a cluster), never its password. */
export function redisAddress(url: string): string {
  try {
    if (url.includes("+cluster://")) {
      return `cluster ${parseRedisClusterUrl(url)
        .nodes.map((n) => `${n.host}:${String(n.port)}`)
        .join(",")}`;
    }
    if (/^rediss?\+sentinel:\/\//.test(url)) {
      const s = parseRedisSentinelUrl(url);
      return `master "${s.masterName}" via sentinels ${s.sentinels.map((n) => `${n.host}:${String(n.port)}`).join(",")}`;
    }
    const u = new URL(url);
    return `${u.hostname || "127.0.0.1"}:${u.port || "6379"}`;
  } catch {
    return "REDIS_URL";
  }
}

/** Why a connection failed, in the fewest words: the errno code when there is one. */
function reason(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return code;
  const message = err instanceof Error ? err.message : String(err);
  return message.split("\n")[0]?.slice(0, 200) ?? "unknown error";
}

const isText = (v: string | undefined): v is string => typeof v === "string" && v.length > 0;

const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(1))} s`;

/**
 * BullMQ and the approval store keep their state only in Redis: an evicting policy silently drops
 * jobs and requests under memory pressure, and without persistence a restart forgets pending
 * approvals and job schedules. Returns the problems found; CONFIG may be disabled (managed Redis),
 * in which case nothing can be verified and a warning says so.
 */
export async function redisDurability(
  redis: Pick<Redis, "call">,
): Promise<{ problems: string[]; warnings: string[] }> {
  const get = async (key: string): Promise<string | undefined> => {
    const reply = await redis.call("CONFIG", "GET", key);
    return Array.isArray(reply) && typeof reply[1] === "string" ? reply[1] : undefined;
  };
  let policy: string | undefined;
  let appendonly: string | undefined;
  let save: string | undefined;
  try {
    [policy, appendonly, save] = [await get("maxmemory-policy"), await get("appendonly"), await get("save")];
  } catch (err) {
    return {
      problems: [],
      warnings: [
        `Redis CONFIG is not available (${reason(err)}), as on managed Redis: cannot verify maxmemory-policy noeviction and persistence; make sure the service is configured with both.`,
      ],
    };
  }
  const problems: string[] = [];
  if (policy !== undefined && policy !== "noeviction") {
    problems.push(
      `maxmemory-policy is ${policy} (BullMQ and pending approvals need noeviction, or keys are evicted under memory pressure)`,
    );
  }
  const rdb = save !== undefined && save.trim() !== "";
  if (appendonly !== "yes" && !rdb) {
    problems.push("no persistence (appendonly no and no RDB save points: a restart loses pending approvals)");
  }
  const warnings =
    problems.length === 0 && appendonly !== "yes"
      ? [
          `Redis persists by RDB snapshots only (save "${save ?? ""}"): a crash loses the writes since the last one; appendonly yes is safer.`,
        ]
      : [];
  return { problems, warnings };
}

async function checkRedis(config: Config, timeoutMs: number): Promise<string[]> {
  const where = `Redis at ${redisAddress(config.redisUrl)}`;
  // One attempt, no offline queue: an unreachable Redis fails now instead of retrying forever.
  const redis = createRedisConnection(config, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    reconnect: false,
  });
  // The socket's own error (ECONNREFUSED, ENOTFOUND) says more than the rejection of connect().
  let socketError: unknown;
  redis.on("error", (err: unknown) => {
    socketError ??= err;
  });
  try {
    await withTimeout(
      redis.connect(),
      timeoutMs,
      () => new Error(`no answer within ${seconds(timeoutMs)}`),
    ).catch((err: unknown) => {
      throw new StartupError(`${where} is unreachable (${reason(socketError ?? err)})`);
    });
    // Each primary of a cluster keeps its own slots: each must be fit.
    const primaries = redisPrimaries(redis);
    const checked = await withTimeout(
      Promise.all(primaries.map((node) => redisDurability(node))),
      timeoutMs,
      () => new StartupError(`${where} did not answer CONFIG GET within ${seconds(timeoutMs)}`),
    );
    const named = (i: number, text: string): string =>
      primaries.length > 1
        ? `${primaries[i]?.options.host ?? "?"}:${String(primaries[i]?.options.port)}: ${text}`
        : text;
    const problems = [...new Set(checked.flatMap((c, i) => c.problems.map((p) => named(i, p))))];
    const warnings = [...new Set(checked.flatMap((c) => c.warnings))];
    if (problems.length === 0) return warnings;
    const what = `${where} is not fit to keep approvals and jobs: ${problems.join("; ")}`;
    if (!config.allowVolatileRedis) {
      throw new StartupError(`${what}; fix it or set UNSTUCK_ALLOW_VOLATILE_REDIS=true to start anyway`);
    }
    return [...warnings, `${what} (started anyway: UNSTUCK_ALLOW_VOLATILE_REDIS=true)`];
  } finally {
    redis.disconnect();
  }
}

/**
 * The start-up WebClient's own lines (its default console logger prints a WARN for a failed request
 * or a response warning) go to pino at debug, secrets scrubbed: the check's outcome is the one line
 * that matters, reported by `checkStartup`'s caller.
 */
function startupSlackLogger(log: Logger | undefined, secrets: readonly string[]): WebClientLogger {
  const bridged = log !== undefined ? boltLogger(log, secrets) : undefined;
  const quiet = (...msg: unknown[]): void => bridged?.debug(...msg);
  return {
    debug: quiet,
    info: quiet,
    warn: quiet,
    error: quiet,
    setLevel: () => undefined,
    getLevel: () => bridged?.getLevel() ?? LogLevel.ERROR,
    setName: () => undefined,
  };
}

async function checkSlack(config: Config, timeoutMs: number, log?: Logger): Promise<void> {
  const slack = config.slack;
  if (!slack) return;
  const client = new WebClient(slack.botToken, {
    logger: startupSlackLogger(log, [slack.botToken, slack.appToken, slack.signingSecret].filter(isText)),
    ...(slack.apiUrl !== undefined ? { slackApiUrl: slack.apiUrl } : {}),
    retryConfig: { retries: 0 },
    timeout: timeoutMs,
    rejectRateLimitedCalls: true,
  });
  // The client's own default when none is configured.
  const where = `Slack (${slack.apiUrl ?? client.slackApiUrl})`;
  try {
    await withTimeout(
      client.auth.test(),
      timeoutMs,
      () => new Error(`no answer within ${seconds(timeoutMs)}`),
    );
  } catch (err) {
    const slackError = (err as { data?: { error?: unknown } }).data?.error;
    if (typeof slackError === "string") {
      throw new StartupError(`${where} rejected SLACK_BOT_TOKEN in auth.test (${slackError})`);
    }
    const original = (err as { original?: unknown }).original;
    throw new StartupError(`${where} is unreachable (${reason(original ?? err)})`);
  }
}

async function checkKube(config: Config, timeoutMs: number): Promise<string> {
  let kc;
  try {
    kc = loadKubeConfig(config.kubeconfig !== undefined ? { path: config.kubeconfig } : undefined);
  } catch (err) {
    throw new StartupError(toUserError(err).message.replace(/\.$/, ""));
  }
  const server = kc.getCurrentCluster()?.server ?? "(unknown)";
  try {
    return await kubeVersion(kc, Math.min(timeoutMs, config.kubeTimeoutMs));
  } catch (err) {
    const e = toUserError(err);
    if (e.code === ErrorCode.Unauthorized || e.code === ErrorCode.Forbidden) {
      throw new StartupError(`the Kubernetes API at ${server} refused the bot's credentials (${e.message})`);
    }
    if (e.details.timedOut === true) {
      throw new StartupError(`the Kubernetes API at ${server} did not answer GET /version in time`);
    }
    // The adapter's message repeats the server; the errno code alone is the reason.
    const errno = /\b(E[A-Z]{4,})\b/.exec(e.message)?.[1];
    throw new StartupError(`the Kubernetes API at ${server} is unreachable (${errno ?? e.message})`);
  }
}

/**
 * One EC2 read the bot's policy already grants (security groups are how it finds what holds a
 * load balancer's group). A refusal still proves the endpoint answers, so it only warns. The AWS
 * SDK is imported here, only when AWS is configured: a bot without it never loads the SDK (about
 * 60 MiB of a ready bot's resident set, bench/rss.ts).
 */
async function checkAws(config: Config, timeoutMs: number): Promise<string[]> {
  const aws = config.aws;
  if (!aws) return [];
  const [{ createAwsClients, destroyAwsClients }, { mapAwsError, probeEc2 }] = await Promise.all([
    import("./aws/clients.js"),
    import("./aws/sdk-adapter.js"),
  ]);
  const clients = createAwsClients({
    region: aws.region,
    ...(aws.endpoint !== undefined ? { endpoint: aws.endpoint } : {}),
    ...(aws.profile !== undefined ? { profile: aws.profile } : {}),
    ...(aws.credentials !== undefined ? { credentials: aws.credentials } : {}),
    ...(aws.roleArn !== undefined ? { roleArn: aws.roleArn } : {}),
    ...(aws.externalId !== undefined ? { externalId: aws.externalId } : {}),
    ...(aws.edge !== undefined ? { edge: aws.edge } : {}),
    maxAttempts: 1,
    timeoutMs: Math.min(timeoutMs, config.awsTimeoutMs),
  });
  const where = `AWS (${aws.endpoint ?? `region ${aws.region}`})`;
  try {
    await probeEc2(clients.ec2);
    return [];
  } catch (err) {
    const e = mapAwsError(err, "ec2:DescribeSecurityGroups");
    if (e.code === ErrorCode.Forbidden || e.code === ErrorCode.Throttled) {
      return [`${where} answered, but ${e.message}`];
    }
    if (e.code === ErrorCode.Unauthorized)
      throw new StartupError(`${where}: ${e.message.replace(/\.$/, "")}`);
    throw new StartupError(`${where} is unreachable (${reason(err)})`);
  } finally {
    destroyAwsClients(clients);
  }
}

/** The bot of a fleet that serves no cluster itself (`UNSTUCK_CLUSTER_NAME` unset). */
function fleetBot(config: Config): boolean {
  return config.fleet !== undefined && config.clusterName === undefined;
}

/**
 * Every check at once, each within `config.startupTimeoutMs`. Throws one `StartupError` naming every
 * dependency that failed (joined), or returns the warnings to log.
 */
export async function checkStartup(config: Config, log?: Logger): Promise<StartupReport> {
  const ms = config.startupTimeoutMs;
  const timeout = (what: string) => () => new StartupError(`${what} did not answer within ${seconds(ms)}`);
  const results = await Promise.allSettled([
    withTimeout(checkRedis(config, ms), ms, timeout(`Redis at ${redisAddress(config.redisUrl)}`)),
    withTimeout(checkSlack(config, ms, log), ms, timeout("Slack auth.test")),
    // A fleet's bot holds no cluster's credentials: each cluster's workers check their own API.
    fleetBot(config)
      ? Promise.resolve("not checked: a fleet's bot reads no cluster")
      : withTimeout(checkKube(config, ms), ms, timeout("the Kubernetes API")),
    withTimeout(checkAws(config, ms), ms, timeout("AWS")),
  ]);
  const failures: string[] = [];
  const warnings: string[] = [];
  const ok: string[] = [];
  const names = ["redis", "slack", "kubernetes", "aws"];
  results.forEach((r, i) => {
    if (r.status === "rejected") {
      failures.push(
        r.reason instanceof StartupError || r.reason instanceof UnstuckError
          ? r.reason.message
          : `${names[i] ?? "check"}: ${reason(r.reason)}`,
      );
    } else {
      ok.push(names[i] ?? "check");
      if (Array.isArray(r.value)) warnings.push(...r.value);
    }
  });
  if (failures.length > 0) throw new StartupError(failures.join("; "));
  return { warnings, ok };
}
