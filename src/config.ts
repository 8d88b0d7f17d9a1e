/**
 * Configuration, read once at start-up from the environment and validated. No other module reads
 * `process.env`; everything else receives a typed `Config`. The variables and their checks are in
 * `src/config/env.ts`, Redis's settings in `src/config/redis.ts`, and the clusters file (AWS, the
 * fleet) in `src/config/clusters.ts`.
 */
import type { KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { parsePrivateKey, parsePublicKey } from "./trust/keys.js";
import {
  awsTarget,
  fleetOf,
  parseClustersFile,
  type AwsTarget,
  type ClustersFile,
  type FleetConfig,
} from "./config/clusters.js";
import { parseEnv, type Env } from "./config/env.js";
import {
  parseRedisClusterUrl,
  parseRedisSentinelUrl,
  redisCa,
  redisKeyPrefix,
  type RedisClusterTarget,
  type RedisSentinelTarget,
} from "./config/redis.js";

/** What one process runs (`UNSTUCK_ROLE`). */
export type Role = "all" | "bot" | "worker";

export interface SlackConfig {
  readonly botToken: string;
  /** "" in Socket Mode and for a worker (which receives nothing from Slack). */
  readonly signingSecret: string;
  readonly appToken?: string;
  readonly apiUrl?: string;
}

export interface Config {
  /**
   * Present only when both the bot token and the signing secret (or app token) are set; for the
   * `worker` role, which only posts through the Web API, when the bot token is.
   */
  readonly slack?: SlackConfig;
  /** `UNSTUCK_ROLE`: the Slack app, the workers, or both (default). */
  readonly role: Role;
  /** Slack variables that are missing (for the "what to set" message). */
  readonly missingSlack: readonly string[];
  /**
   * Slack credential variables that are set. Some set and `slack` absent is a half-configured
   * environment: an error, never a reason to fall back to the local sandbox.
   */
  readonly slackSet: readonly string[];
  readonly port: number;
  /** `UNSTUCK_LISTEN_HOST`: the address the Slack receiver listens on (default: every interface). */
  readonly listenHost?: string;
  readonly redisUrl: string;
  /** Present when `REDIS_URL` names a Redis Cluster (`redis+cluster://` or `rediss+cluster://`). */
  readonly redisCluster?: RedisClusterTarget;
  /** Present when `REDIS_URL` names a Redis behind Sentinel (`redis+sentinel://` or `rediss+sentinel://`). */
  readonly redisSentinel?: RedisSentinelTarget;
  /** How the path waits resolve names and probe URLs after a repair. */
  readonly edgeProbe: {
    readonly resolvers: readonly string[];
    readonly httpVia?: string;
    readonly healthPaths: readonly string[];
  };
  /** CA certificates (PEM) to trust for a `rediss://` Redis, from `REDIS_TLS_CA_FILE`. */
  readonly redisTlsCa?: string;
  readonly kubeconfig?: string;
  readonly channels: readonly string[];
  /** `UNSTUCK_CHANNEL_PATTERNS`: channel names (`*` matches any run of characters) also allowed. */
  readonly channelPatterns: readonly string[];
  readonly approvers: readonly string[];
  readonly approvalsRequired: number;
  /** The signing keys this process holds and the public keys it verifies with; never logged. */
  readonly keys: KeyConfig;
  /** `UNSTUCK_APPROVAL_KEY`: the shared key of before Ed25519, to recognise (and end) its live records; never logged. */
  readonly legacyApprovalKey?: string;
  readonly requestTtlSeconds: number;
  readonly auditChannel?: string;
  readonly redisPrefix: string;
  readonly logLevel: string;
  readonly command: string;
  readonly blockedAfterSeconds: number;
  /** The stuck-namespace watcher (`UNSTUCK_WATCH_CHANNEL`); absent = off. */
  readonly watch?: { readonly channel: string; readonly leaseMs: number };
  readonly clusterName?: string;
  /** The fleet this process is part of (clusters file with more than one cluster); absent = a single-cluster install. */
  readonly fleet?: FleetConfig;
  /** AWS account/region of the cluster; absent = the diagnosis does not look into AWS. */
  readonly aws?: AwsTarget;
  readonly waitTimeoutSeconds: number;
  readonly waitIntervalSeconds: number;
  /** How long `approve-delete` opens the namespace-deletion guard. */
  readonly deletionWindowSeconds: number;
  /** Bound on one Kubernetes request. */
  readonly kubeTimeoutMs: number;
  /** Kubernetes requests in flight at the API server across the fleet (`UNSTUCK_KUBE_REQUEST_BUDGET`). */
  readonly kubeRequestBudget?: number;
  /** Bound on one AWS call, retries included. */
  readonly awsTimeoutMs: number;
  /** A diagnosis returns what it has by then, marked partial. */
  readonly diagnosisDeadlineMs: number;
  /** Bound on the start-up reachability checks. */
  readonly startupTimeoutMs: number;
  /** Bound on a graceful stop. */
  readonly shutdownTimeoutMs: number;
  /** Start even when Redis may evict or lose keys (`UNSTUCK_ALLOW_VOLATILE_REDIS`). */
  readonly allowVolatileRedis: boolean;
}
/**
 * Parse an environment; throws `UnstuckError(Config)` naming the variable at fault.
 * `readFile` reads `UNSTUCK_CLUSTERS_FILE` (injected so tests need no files).
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  readFile: (path: string) => string = (path) => readFileSync(path, "utf8"),
): Config {
  const e = parseEnv(env);
  const { slack, missingSlack } = slackOf(e);
  // Read and checked once: the AWS target and the fleet both come from it.
  const clustersFile = parseClustersFile(e, readFile);
  const aws = awsTarget(e, clustersFile);
  const fleet = fleetOf(e, clustersFile);
  const keys = keyConfig(e, clustersFile, fleet);
  const redisTlsCa = redisCa(e, readFile);
  const redisCluster = e.REDIS_URL.includes("+cluster://") ? parseRedisClusterUrl(e.REDIS_URL) : undefined;
  const redisSentinel = /^rediss?\+sentinel:\/\//.test(e.REDIS_URL)
    ? parseRedisSentinelUrl(e.REDIS_URL)
    : undefined;
  const redisPrefix = redisKeyPrefix(e.UNSTUCK_REDIS_PREFIX, redisCluster !== undefined);
  return {
    ...(slack ? { slack } : {}),
    missingSlack,
    slackSet: (["SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN"] as const).filter(
      (v) => e[v] !== undefined,
    ),
    role: e.UNSTUCK_ROLE,
    port: e.PORT,
    ...(e.UNSTUCK_LISTEN_HOST !== undefined ? { listenHost: e.UNSTUCK_LISTEN_HOST } : {}),
    redisUrl: e.REDIS_URL,
    ...(redisCluster !== undefined ? { redisCluster } : {}),
    ...(redisSentinel !== undefined ? { redisSentinel } : {}),
    ...(redisTlsCa !== undefined ? { redisTlsCa } : {}),
    edgeProbe: {
      resolvers: e.UNSTUCK_DNS_RESOLVERS,
      ...(e.UNSTUCK_HTTP_PROBE_VIA !== undefined ? { httpVia: e.UNSTUCK_HTTP_PROBE_VIA } : {}),
      healthPaths: e.UNSTUCK_HEALTH_PATHS,
    },
    ...(e.KUBECONFIG ? { kubeconfig: e.KUBECONFIG } : {}),
    channels: e.UNSTUCK_CHANNELS,
    channelPatterns: e.UNSTUCK_CHANNEL_PATTERNS,
    approvers: e.UNSTUCK_APPROVERS,
    approvalsRequired: e.UNSTUCK_APPROVALS_REQUIRED,
    keys,
    ...(e.UNSTUCK_APPROVAL_KEY ? { legacyApprovalKey: e.UNSTUCK_APPROVAL_KEY } : {}),
    requestTtlSeconds: e.UNSTUCK_REQUEST_TTL_SECONDS,
    ...(e.UNSTUCK_AUDIT_CHANNEL ? { auditChannel: e.UNSTUCK_AUDIT_CHANNEL } : {}),
    redisPrefix,
    logLevel: e.UNSTUCK_LOG_LEVEL,
    command: e.UNSTUCK_COMMAND,
    blockedAfterSeconds: e.UNSTUCK_BLOCKED_AFTER_SECONDS,
    ...(e.UNSTUCK_WATCH_CHANNEL
      ? {
          watch: {
            channel: e.UNSTUCK_WATCH_CHANNEL,
            leaseMs: Math.round(e.UNSTUCK_WATCH_LEASE_SECONDS * 1000),
          },
        }
      : {}),
    ...(e.UNSTUCK_CLUSTER_NAME ? { clusterName: e.UNSTUCK_CLUSTER_NAME } : {}),
    ...(fleet !== undefined ? { fleet } : {}),
    ...(aws ? { aws } : {}),
    waitTimeoutSeconds: e.UNSTUCK_WAIT_TIMEOUT_SECONDS,
    waitIntervalSeconds: e.UNSTUCK_WAIT_INTERVAL_SECONDS,
    deletionWindowSeconds: e.UNSTUCK_DELETION_WINDOW_SECONDS,
    kubeTimeoutMs: Math.round(e.UNSTUCK_KUBE_TIMEOUT_SECONDS * 1000),
    ...(e.UNSTUCK_KUBE_REQUEST_BUDGET !== undefined
      ? { kubeRequestBudget: e.UNSTUCK_KUBE_REQUEST_BUDGET }
      : {}),
    awsTimeoutMs: Math.round(e.UNSTUCK_AWS_TIMEOUT_SECONDS * 1000),
    diagnosisDeadlineMs: Math.round(e.UNSTUCK_DIAGNOSIS_DEADLINE_SECONDS * 1000),
    startupTimeoutMs: Math.round(e.UNSTUCK_STARTUP_TIMEOUT_SECONDS * 1000),
    shutdownTimeoutMs: Math.round(e.UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS * 1000),
    allowVolatileRedis: e.UNSTUCK_ALLOW_VOLATILE_REDIS,
  };
}

/**
 * The Slack credentials this role needs, when all are set, and the variables missing otherwise. A
 * worker receives nothing from Slack: the bot token is all it needs.
 */
function slackOf(e: Env): { slack: SlackConfig | undefined; missingSlack: string[] } {
  const missingSlack: string[] = [];
  const receives = e.UNSTUCK_ROLE !== "worker";
  if (!e.SLACK_BOT_TOKEN) missingSlack.push("SLACK_BOT_TOKEN");
  if (receives && !e.SLACK_SIGNING_SECRET && !e.SLACK_APP_TOKEN) missingSlack.push("SLACK_SIGNING_SECRET");
  const slack: SlackConfig | undefined =
    e.SLACK_BOT_TOKEN && (!receives || e.SLACK_SIGNING_SECRET || e.SLACK_APP_TOKEN)
      ? {
          botToken: e.SLACK_BOT_TOKEN,
          signingSecret: e.SLACK_SIGNING_SECRET ?? "",
          ...(e.SLACK_APP_TOKEN ? { appToken: e.SLACK_APP_TOKEN } : {}),
          ...(e.SLACK_API_URL ? { apiUrl: e.SLACK_API_URL } : {}),
        }
      : undefined;
  return { slack, missingSlack };
}

/**
 * The keys of this process (`src/trust/keys.ts`), as configured: what it signs with and what it verifies
 * with. Parsed at load, so a bad key stops the process naming its variable; what each role needs is
 * checked by `processKeys`.
 */
export interface KeyConfig {
  readonly botSigningKey?: KeyObject;
  readonly botPublicKeys: readonly KeyObject[];
  readonly workerSigningKey?: KeyObject;
  /** Each cluster's workers' public keys (a single-cluster install's under {@link LOCAL_CLUSTER}). */
  readonly workerPublicKeys: ReadonlyMap<string, readonly KeyObject[]>;
}

/** The cluster a single-cluster install's requests and workers' keys are filed under. */
export const LOCAL_CLUSTER = "local";

function keyConfig(e: Env, file: ClustersFile | undefined, fleet: FleetConfig | undefined): KeyConfig {
  const publicKeys = (texts: readonly string[], variable: string): KeyObject[] =>
    texts.map((t) => parsePublicKey(t, variable));
  const workerPublicKeys = new Map<string, KeyObject[]>();
  if (fleet !== undefined && file !== undefined) {
    for (const c of fleet.clusters) {
      workerPublicKeys.set(
        c.name,
        publicKeys(
          file.clusters[c.name]?.publicKeys ?? [],
          `UNSTUCK_CLUSTERS_FILE (clusters.${c.name}.publicKeys)`,
        ),
      );
    }
  } else {
    const fromFile = Object.entries(file?.clusters ?? {}).flatMap(([name, c]) =>
      publicKeys(c.publicKeys ?? [], `UNSTUCK_CLUSTERS_FILE (clusters.${name}.publicKeys)`),
    );
    workerPublicKeys.set(LOCAL_CLUSTER, [
      ...publicKeys(e.UNSTUCK_WORKER_PUBLIC_KEYS, "UNSTUCK_WORKER_PUBLIC_KEYS"),
      ...fromFile,
    ]);
  }
  return {
    ...(e.UNSTUCK_BOT_SIGNING_KEY !== undefined
      ? { botSigningKey: parsePrivateKey(e.UNSTUCK_BOT_SIGNING_KEY, "UNSTUCK_BOT_SIGNING_KEY") }
      : {}),
    botPublicKeys: publicKeys(e.UNSTUCK_BOT_PUBLIC_KEYS, "UNSTUCK_BOT_PUBLIC_KEYS"),
    ...(e.UNSTUCK_WORKER_SIGNING_KEY !== undefined
      ? { workerSigningKey: parsePrivateKey(e.UNSTUCK_WORKER_SIGNING_KEY, "UNSTUCK_WORKER_SIGNING_KEY") }
      : {}),
    workerPublicKeys,
  };
}
