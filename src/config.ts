/**
 * Configuration, read once at start-up from the environment and validated. No other module reads
 * `process.env`; everything else receives a typed `Config`.
 */
import type { KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { ErrorCode, UnstuckError } from "./errors.js";
import { parsePrivateKey, parsePublicKey } from "./trust/keys.js";

const idList = z
  .string()
  .optional()
  .transform((v) =>
    (v ?? "")
      .split(/[\s,]+/)
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );

const EnvSchema = z.object({
  SLACK_BOT_TOKEN: z.string().optional(),
  SLACK_SIGNING_SECRET: z.string().optional(),
  SLACK_APP_TOKEN: z.string().optional(),
  SLACK_API_URL: z.url().optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  UNSTUCK_LISTEN_HOST: z
    .string()
    .regex(/^[0-9a-fA-F.:]+$|^localhost$/, "an IP address (e.g. 127.0.0.1 or ::1) or localhost")
    .optional(),
  REDIS_URL: z
    .string()
    .regex(
      /^rediss?(\+cluster|\+sentinel)?:\/\//,
      "must start with redis:// or rediss:// (TLS), redis+cluster:// / rediss+cluster:// for a Redis Cluster, or redis+sentinel:// / rediss+sentinel:// for Redis Sentinel",
    )
    .default("redis://127.0.0.1:6379"),
  /** DNS servers (`host[:port]`, comma-separated) the path waits resolve through; default: the system's. */
  UNSTUCK_DNS_RESOLVERS: idList,
  /** Send the path waits' HTTP probes to this base URL with the hostname as Host (a proxy; the sandbox's front). */
  UNSTUCK_HTTP_PROBE_VIA: z.url().optional(),
  /** Paths probed on each repaired hostname after a repair (comma-separated, default `/`). */
  UNSTUCK_HEALTH_PATHS: z
    .string()
    .default("/")
    .transform((v) =>
      v
        .split(",")
        .map((p) => p.trim())
        .filter((p) => p.length > 0),
    )
    .refine((paths) => paths.every((p) => p.startsWith("/") && !/\s/.test(p)), "each path must start with /"),
  /** PEM bundle of the CA that signed a TLS Redis's certificate, when it is not a public one. */
  REDIS_TLS_CA_FILE: z.string().optional(),
  KUBECONFIG: z.string().optional(),
  UNSTUCK_CHANNELS: idList,
  /** Channel-name patterns (`inc-*`, `incident-*`): channels an incident tool creates per incident. */
  UNSTUCK_CHANNEL_PATTERNS: idList.refine(
    (patterns) => patterns.every((p) => /^[a-z0-9_*-]{1,80}$/.test(p)),
    "channel-name patterns use lowercase letters, digits, '-', '_' and '*' (e.g. inc-*)",
  ),
  UNSTUCK_APPROVERS: idList,
  /**
   * The bot's Ed25519 private key (`npm run unstuck -- keys` makes a pair): it signs requests, votes
   * and the calls it sends to workers. Only the Slack-facing process (`bot`, `all`) holds it.
   */
  UNSTUCK_BOT_SIGNING_KEY: z.string().optional(),
  /** The bot's public keys (base64url, comma-separated): every process verifies the bot's signatures with them. */
  UNSTUCK_BOT_PUBLIC_KEYS: idList,
  /** This cluster's workers' Ed25519 private key: it signs what they execute and answer. Workers only. */
  UNSTUCK_WORKER_SIGNING_KEY: z.string().optional(),
  /** A single-cluster install's workers' public keys (a fleet lists each cluster's in the clusters file). */
  UNSTUCK_WORKER_PUBLIC_KEYS: idList,
  /**
   * The HMAC key every process shared before approvals were signed with Ed25519: set on the bot alone
   * while records signed with it may still be live, so they are recognised and ended (never executed).
   */
  UNSTUCK_APPROVAL_KEY: z
    .string()
    .refine((v) => Buffer.byteLength(v, "utf8") >= 32, {
      error: "must be at least 32 bytes of secret (the shared key of before the upgrade)",
    })
    .optional(),
  UNSTUCK_APPROVALS_REQUIRED: z.coerce.number().int().min(1).max(10).default(1),
  UNSTUCK_REQUEST_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(1800),
  UNSTUCK_AUDIT_CHANNEL: z.string().optional(),
  /** Default `unstuck`; `{unstuck}` on a Redis Cluster, where it must hold a hash tag. */
  UNSTUCK_REDIS_PREFIX: z.string().min(1).optional(),
  UNSTUCK_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  UNSTUCK_COMMAND: z.string().default("/unstuck"),
  /**
   * What this process runs: `all` (the Slack app and the workers), `bot` (the Slack app and the
   * queues, no workers) or `worker` (the workers and the approval sweep, no Slack receiver).
   */
  UNSTUCK_ROLE: z.enum(["all", "bot", "worker"], { error: "must be all, bot or worker" }).default("all"),
  /** Terminating longer than this with finalizers remaining counts as blocked, not slow. */
  UNSTUCK_BLOCKED_AFTER_SECONDS: z.coerce.number().int().min(0).default(300),
  /** Channel the watcher posts namespaces stuck past the threshold to; unset = no watcher. */
  UNSTUCK_WATCH_CHANNEL: z.string().optional(),
  /** Life of the watcher's leader lease: how soon another replica takes over from a dead leader. */
  UNSTUCK_WATCH_LEASE_SECONDS: z.coerce.number().positive().max(600).default(15),
  /** EKS cluster name (AWS tags `elbv2.k8s.aws/cluster`); read from the controller's args when unset. */
  UNSTUCK_CLUSTER_NAME: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, "must be an EKS cluster name")
    .optional(),
  /** YAML file mapping cluster names to AWS settings: `clusters: { <name>: { region, profile?, endpoint? } }`. */
  UNSTUCK_CLUSTERS_FILE: z.string().optional(),
  AWS_REGION: z.string().optional(),
  AWS_DEFAULT_REGION: z.string().optional(),
  AWS_PROFILE: z.string().optional(),
  AWS_ENDPOINT_URL: z.url().optional(),
  AWS_ACCESS_KEY_ID: z.string().optional(),
  AWS_SECRET_ACCESS_KEY: z.string().optional(),
  AWS_SESSION_TOKEN: z.string().optional(),
  /** How long a "namespace gone" wait runs before it reports what still blocks. */
  UNSTUCK_WAIT_TIMEOUT_SECONDS: z.coerce.number().int().min(10).max(86_400).default(1800),
  UNSTUCK_WAIT_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(600).default(15),
  /** How long an approved namespace deletion stays open (the guard's annotation) before the bot closes it. */
  UNSTUCK_DELETION_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600),
  /**
   * Most Kubernetes requests in flight at the API server across every bot and worker replica on
   * this Redis prefix (a lease per request, in Redis); unset = each process's own bound only.
   */
  UNSTUCK_KUBE_REQUEST_BUDGET: z.coerce.number().int().min(1).max(10_000).optional(),
  /** Bound on one Kubernetes request (fractions allowed, for tests). */
  UNSTUCK_KUBE_TIMEOUT_SECONDS: z.coerce.number().positive().max(300).default(10),
  /** Bound on one AWS call, retries included. */
  UNSTUCK_AWS_TIMEOUT_SECONDS: z.coerce.number().positive().max(300).default(10),
  /** A diagnosis answers by then with what it has, marked partial. */
  UNSTUCK_DIAGNOSIS_DEADLINE_SECONDS: z.coerce.number().positive().max(600).default(20),
  /** Bound on the start-up reachability checks (Redis, Slack, Kubernetes, AWS). */
  UNSTUCK_STARTUP_TIMEOUT_SECONDS: z.coerce.number().positive().max(600).default(20),
  /** Bound on a graceful stop; after it the process exits anyway. */
  UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number().positive().max(600).default(15),
  /** Start on a Redis that may evict keys or lose them on restart (local sandbox, tests). */
  UNSTUCK_ALLOW_VOLATILE_REDIS: z
    .enum(["true", "false", "1", "0"], { error: "must be true or false" })
    .default("false")
    .transform((v) => v === "true" || v === "1"),
});

/** Every variable `loadConfig` reads: the README's configuration table documents each, and no other. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(EnvSchema.shape);

/** An IAM role ARN, as STS AssumeRole takes it. */
const RoleArnSchema = z
  .string()
  .regex(
    /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/,
    "must be an IAM role ARN (arn:aws:iam::<12-digit account>:role/<name>)",
  );
/** STS `ExternalId`: 2 to 1224 characters of `[\w+=,.@:/-]`. */
const ExternalIdSchema = z
  .string()
  .regex(/^[\w+=,.@:/-]{2,1224}$/, "must be 2 to 1224 characters of letters, digits and +=,.@:/-");

const ClustersFileSchema = z.object({
  clusters: z.record(
    z.string(),
    z.object({
      region: z.string().min(1),
      profile: z.string().optional(),
      endpoint: z.url().optional(),
      /** Assumed for this cluster's account (with the pod's credentials, the profile or static keys). */
      roleArn: RoleArnSchema.optional(),
      externalId: ExternalIdSchema.optional(),
      /** The account holding Route 53 and CloudFront: its role is assumed with the cluster's credentials. */
      edge: z.strictObject({ roleArn: RoleArnSchema, externalId: ExternalIdSchema.optional() }).optional(),
      /** Slack channel ids whose commands go to this cluster (a fleet's routing; see `src/fleet/`). */
      channels: z.array(z.string().regex(/^[CG][A-Z0-9]{2,}$/, "must be a Slack channel id (C…)")).optional(),
      /** The public keys of this cluster's workers (base64url): what they sign verifies only under these. */
      publicKeys: z.array(z.string()).optional(),
    }),
  ),
});

export interface AwsTarget {
  readonly region: string;
  readonly profile?: string;
  readonly endpoint?: string;
  /** Role assumed for the cluster's account (clusters file `roleArn`), with its external id. */
  readonly roleArn?: string;
  readonly externalId?: string;
  /** Role of the account holding Route 53 and CloudFront (clusters file `edge`); absent = the cluster's. */
  readonly edge?: { readonly roleArn: string; readonly externalId?: string };
  /** Static keys from the environment; absent = the SDK's chain (profile, IRSA, Pod Identity). */
  readonly credentials?: {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly sessionToken?: string;
  };
}

/** One cluster of a fleet: its name (`UNSTUCK_CLUSTER_NAME` of its workers) and the channels mapped to it. */
export interface FleetCluster {
  readonly name: string;
  /** Slack channel ids whose commands go to this cluster when they name none (`--cluster`). */
  readonly channels: readonly string[];
}

/**
 * A fleet: one Slack-facing bot and per-cluster workers on one Redis, present when
 * `UNSTUCK_CLUSTERS_FILE` lists more than one cluster (every release of a fleet mounts the same file).
 */
export interface FleetConfig {
  readonly clusters: readonly FleetCluster[];
}

/** A Redis Cluster (`REDIS_URL=redis+cluster://[user:password@]host:port,host:port…`). */
export interface RedisClusterTarget {
  /** Seed nodes; the client learns the others from them. */
  readonly nodes: readonly { readonly host: string; readonly port: number }[];
  /** `rediss+cluster://`: TLS to every node. */
  readonly tls: boolean;
  readonly username?: string;
  /** AUTH; never logged. */
  readonly password?: string;
}

/**
 * A Redis behind Sentinel (`REDIS_URL=redis+sentinel://[user:password@]host:port,host:port…/master`):
 * the client asks the sentinels for the master's address, and again after a failover.
 */
export interface RedisSentinelTarget {
  /** The sentinels (port 26379 when the URL names none). */
  readonly sentinels: readonly { readonly host: string; readonly port: number }[];
  /** The master group name the sentinels monitor (`sentinel monitor <name> …`). */
  readonly masterName: string;
  /** `?db=N`; default 0. */
  readonly db?: number;
  /** `rediss+sentinel://`: TLS to the sentinels and to the master. */
  readonly tls: boolean;
  /** AUTH for the master (and its replicas); never logged. */
  readonly username?: string;
  readonly password?: string;
  /** AUTH for the sentinels themselves (`?sentinelUsername=…&sentinelPassword=…`); never logged. */
  readonly sentinelUsername?: string;
  readonly sentinelPassword?: string;
}

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
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue?.path[0] ?? "environment");
    throw new UnstuckError(ErrorCode.Config, `Invalid ${variable}: ${issue?.message ?? "invalid value"}.`, {
      variable,
    });
  }
  const e = parsed.data;
  if (e.UNSTUCK_APPROVAL_KEY !== undefined && e.UNSTUCK_ROLE === "worker") {
    throw new UnstuckError(
      ErrorCode.Config,
      "Invalid UNSTUCK_APPROVAL_KEY: workers hold no shared key any more (it let one pod approve for everyone); unset it on workers and keep it on the bot only while requests signed with it may be live.",
      { variable: "UNSTUCK_APPROVAL_KEY" },
    );
  }
  const missingSlack: string[] = [];
  // A worker receives nothing from Slack: the bot token is all it needs.
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

function keyConfig(
  e: z.infer<typeof EnvSchema>,
  file: z.infer<typeof ClustersFileSchema> | undefined,
  fleet: FleetConfig | undefined,
): KeyConfig {
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

/** The cluster's AWS settings: from the clusters file when it names the cluster, else the AWS_* variables. */
function redisCa(e: z.infer<typeof EnvSchema>, readFile: (path: string) => string): string | undefined {
  const file = e.REDIS_TLS_CA_FILE;
  if (file === undefined) return undefined;
  if (!e.REDIS_URL.startsWith("rediss")) {
    throw new UnstuckError(
      ErrorCode.Config,
      "REDIS_TLS_CA_FILE is set but REDIS_URL is not rediss:// (or rediss+cluster://, rediss+sentinel://): the CA would never be used; use rediss:// for TLS.",
      { variable: "REDIS_TLS_CA_FILE" },
    );
  }
  let pem: string;
  try {
    pem = readFile(file);
  } catch (err) {
    throw new UnstuckError(
      ErrorCode.Config,
      `Invalid REDIS_TLS_CA_FILE: cannot read ${file} (${err instanceof Error ? err.message : String(err)}).`,
      { variable: "REDIS_TLS_CA_FILE" },
    );
  }
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) {
    throw new UnstuckError(ErrorCode.Config, `Invalid REDIS_TLS_CA_FILE: ${file} holds no PEM certificate.`, {
      variable: "REDIS_TLS_CA_FILE",
    });
  }
  return pem;
}

/**
 * `redis+cluster://[user:password@]host:port[,host:port…]` (or `rediss+cluster://` for TLS): the
 * seed nodes of a Redis Cluster and the AUTH every node takes.
 */
export function parseRedisClusterUrl(url: string): RedisClusterTarget {
  const invalid = (why: string): UnstuckError =>
    new UnstuckError(
      ErrorCode.Config,
      `Invalid REDIS_URL: ${why} (a Redis Cluster is redis+cluster://[user:password@]host:port,host:port…, rediss+cluster:// for TLS).`,
      { variable: "REDIS_URL" },
    );
  const match = /^(rediss?)\+cluster:\/\/(.*)$/.exec(url);
  if (!match) throw invalid("not a cluster URL");
  let rest = match[2] ?? "";
  const at = rest.lastIndexOf("@");
  let username: string | undefined;
  let password: string | undefined;
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = userinfo.indexOf(":");
    const user = decodeURIComponent(colon >= 0 ? userinfo.slice(0, colon) : userinfo);
    const pass = colon >= 0 ? decodeURIComponent(userinfo.slice(colon + 1)) : "";
    // As ioredis reads redis://user:password@host: an empty user is the default user.
    if (user !== "") username = user;
    if (pass !== "") password = pass;
  }
  rest = rest.replace(/\/$/, "");
  if (rest.includes("/") || rest.includes("?")) throw invalid("a cluster has no database number or options");
  const nodes = rest.split(",").map((node) => {
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(node.trim());
    const port = Number(m?.[2]);
    if (!m?.[1] || !(port > 0 && port < 65536)) throw invalid(`"${node}" is not host:port`);
    return { host: m[1].replace(/^\[(.*)\]$/, "$1"), port };
  });
  return {
    nodes,
    tls: match[1] === "rediss",
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
  };
}

/** `user:password` of a Redis URL, decoded; an empty user is the default user (as ioredis reads it). */
function redisUserinfo(userinfo: string): { username?: string; password?: string } {
  const colon = userinfo.indexOf(":");
  const user = decodeURIComponent(colon >= 0 ? userinfo.slice(0, colon) : userinfo);
  const pass = colon >= 0 ? decodeURIComponent(userinfo.slice(colon + 1)) : "";
  return { ...(user !== "" ? { username: user } : {}), ...(pass !== "" ? { password: pass } : {}) };
}

/** The options a Sentinel URL takes after `?`. */
const SENTINEL_OPTIONS = ["db", "sentinelUsername", "sentinelPassword"] as const;

/**
 * `redis+sentinel://[user:password@]host[:port][,host[:port]…]/<masterName>[?db=N&sentinelUsername=…&sentinelPassword=…]`
 * (or `rediss+sentinel://` for TLS to the sentinels and the master): the sentinels, the master group
 * they monitor, the master's AUTH (user info) and the sentinels' own (query). Port default 26379.
 */
export function parseRedisSentinelUrl(url: string): RedisSentinelTarget {
  const invalid = (why: string): UnstuckError =>
    new UnstuckError(
      ErrorCode.Config,
      `Invalid REDIS_URL: ${why} (Redis Sentinel is redis+sentinel://[user:password@]host:26379,host:26379/<masterName>[?db=0&sentinelPassword=…], rediss+sentinel:// for TLS).`,
      { variable: "REDIS_URL" },
    );
  const match = /^(rediss?)\+sentinel:\/\/([^/?#]*)(?:\/([^?#]*))?(?:\?([^#]*))?$/.exec(url);
  if (!match) throw invalid("not a Sentinel URL");
  let hosts = match[2] ?? "";
  const at = hosts.lastIndexOf("@");
  let auth: { username?: string; password?: string } = {};
  if (at >= 0) {
    try {
      auth = redisUserinfo(hosts.slice(0, at));
    } catch {
      throw invalid("the user or password is not valid percent-encoding");
    }
    hosts = hosts.slice(at + 1);
  }
  if (hosts === "") throw invalid("no sentinel host");
  const sentinels = hosts.split(",").map((node) => {
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(node.trim());
    const port = m?.[2] !== undefined ? Number(m[2]) : 26379;
    if (!m?.[1] || !(port > 0 && port < 65536)) throw invalid(`"${node}" is not host or host:port`);
    return { host: m[1].replace(/^\[(.*)\]$/, "$1"), port };
  });
  let masterName: string;
  try {
    masterName = decodeURIComponent((match[3] ?? "").replace(/\/$/, ""));
  } catch {
    throw invalid("the master name is not valid percent-encoding");
  }
  if (masterName === "") throw invalid("no master name after the sentinels (…:26379/mymaster)");
  if (masterName.includes("/")) throw invalid(`"${masterName}" is not one master name`);
  const query = new URLSearchParams(match[4] ?? "");
  for (const key of new Set(query.keys())) {
    if (!(SENTINEL_OPTIONS as readonly string[]).includes(key)) {
      throw invalid(`unknown option "${key}" (known: ${SENTINEL_OPTIONS.join(", ")})`);
    }
    if (query.getAll(key).length > 1) throw invalid(`option "${key}" given twice`);
  }
  const dbText = query.get("db");
  const db = dbText !== null ? Number(dbText) : undefined;
  if (dbText !== null && !/^\d{1,5}$/.test(dbText)) {
    throw invalid(`db "${dbText}" is not a database number`);
  }
  const sentinelUsername = query.get("sentinelUsername") ?? "";
  const sentinelPassword = query.get("sentinelPassword") ?? "";
  return {
    sentinels,
    masterName,
    ...(db !== undefined ? { db } : {}),
    tls: match[1] === "rediss",
    ...auth,
    ...(sentinelUsername !== "" ? { sentinelUsername } : {}),
    ...(sentinelPassword !== "" ? { sentinelPassword } : {}),
  };
}

/**
 * On a Redis Cluster a Lua script or a BullMQ queue may only touch keys of one slot: the prefix must
 * hold a hash tag (`{…}`), so every key of the bot hashes by it. Unset, the cluster default is `{unstuck}`.
 */
function redisKeyPrefix(prefix: string | undefined, cluster: boolean): string {
  if (!cluster) return prefix ?? "unstuck";
  if (prefix === undefined) return "{unstuck}";
  if (!/^[^{]*\{[^}]+\}/.test(prefix)) {
    throw new UnstuckError(
      ErrorCode.Config,
      `Invalid UNSTUCK_REDIS_PREFIX: "${prefix}" has no hash tag, and on a Redis Cluster (REDIS_URL redis+cluster://) every key of the bot must hash to one slot; set UNSTUCK_REDIS_PREFIX={${prefix.replace(/[{}]/g, "") || "unstuck"}}.`,
      { variable: "UNSTUCK_REDIS_PREFIX" },
    );
  }
  return prefix;
}

function awsTarget(
  e: z.infer<typeof EnvSchema>,
  file: z.infer<typeof ClustersFileSchema> | undefined,
): AwsTarget | undefined {
  const target = awsLocation(e, file);
  if (!target) return undefined;
  if (e.AWS_ACCESS_KEY_ID === undefined && e.AWS_SECRET_ACCESS_KEY === undefined) return target;
  if (!e.AWS_ACCESS_KEY_ID || !e.AWS_SECRET_ACCESS_KEY) {
    const variable = e.AWS_ACCESS_KEY_ID ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID";
    throw new UnstuckError(
      ErrorCode.Config,
      `Invalid ${variable}: set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or neither.`,
      {
        variable,
      },
    );
  }
  return {
    ...target,
    credentials: {
      accessKeyId: e.AWS_ACCESS_KEY_ID,
      secretAccessKey: e.AWS_SECRET_ACCESS_KEY,
      ...(e.AWS_SESSION_TOKEN ? { sessionToken: e.AWS_SESSION_TOKEN } : {}),
    },
  };
}

function awsLocation(
  e: z.infer<typeof EnvSchema>,
  file: z.infer<typeof ClustersFileSchema> | undefined,
): AwsTarget | undefined {
  if (file !== undefined) {
    const names = Object.keys(file.clusters);
    const name = e.UNSTUCK_CLUSTER_NAME ?? (names.length === 1 ? names[0] : undefined);
    const entry = name !== undefined ? file.clusters[name] : undefined;
    // A fleet's bot holds no cluster's credentials: it routes each command to that cluster's workers.
    if (!entry && name === undefined && e.UNSTUCK_ROLE === "bot") return undefined;
    if (!entry) {
      throw new UnstuckError(
        ErrorCode.Config,
        `Invalid UNSTUCK_CLUSTER_NAME: ${name ?? "(unset)"} is not one of the clusters in UNSTUCK_CLUSTERS_FILE (${names.join(", ")}).`,
        { variable: "UNSTUCK_CLUSTER_NAME" },
      );
    }
    return {
      region: entry.region,
      ...(entry.profile ? { profile: entry.profile } : {}),
      ...((entry.endpoint ?? e.AWS_ENDPOINT_URL) ? { endpoint: entry.endpoint ?? e.AWS_ENDPOINT_URL } : {}),
      ...(entry.roleArn !== undefined ? { roleArn: entry.roleArn } : {}),
      ...(entry.externalId !== undefined ? { externalId: entry.externalId } : {}),
      ...(entry.edge !== undefined
        ? {
            edge: {
              roleArn: entry.edge.roleArn,
              ...(entry.edge.externalId !== undefined ? { externalId: entry.edge.externalId } : {}),
            },
          }
        : {}),
    };
  }
  const region = e.AWS_REGION ?? e.AWS_DEFAULT_REGION;
  if (!region) return undefined;
  return {
    region,
    ...(e.AWS_PROFILE ? { profile: e.AWS_PROFILE } : {}),
    ...(e.AWS_ENDPOINT_URL ? { endpoint: e.AWS_ENDPOINT_URL } : {}),
  };
}

/** `UNSTUCK_CLUSTERS_FILE` read and checked; `undefined` when it is not set. */
function parseClustersFile(
  e: z.infer<typeof EnvSchema>,
  readFile: (path: string) => string,
): z.infer<typeof ClustersFileSchema> | undefined {
  if (!e.UNSTUCK_CLUSTERS_FILE) return undefined;
  let parsed: unknown;
  try {
    parsed = parseYaml(readFile(e.UNSTUCK_CLUSTERS_FILE));
  } catch (err) {
    throw new UnstuckError(
      ErrorCode.Config,
      `Invalid UNSTUCK_CLUSTERS_FILE: cannot read ${e.UNSTUCK_CLUSTERS_FILE} (${err instanceof Error ? err.message : String(err)}).`,
      { variable: "UNSTUCK_CLUSTERS_FILE" },
    );
  }
  const file = ClustersFileSchema.safeParse(parsed);
  if (!file.success) {
    const issue = file.error.issues[0];
    throw new UnstuckError(
      ErrorCode.Config,
      `Invalid UNSTUCK_CLUSTERS_FILE: ${issue?.path.join(".") ?? ""} ${issue?.message ?? "invalid"}.`,
      { variable: "UNSTUCK_CLUSTERS_FILE" },
    );
  }
  return file.data;
}

/**
 * The fleet a clusters file with more than one cluster describes. Its cluster names become queue
 * names (so they follow the `UNSTUCK_CLUSTER_NAME` rule), a channel maps to one cluster at most, and a
 * process that runs workers (`worker`, `all`) names the cluster it serves.
 */
function fleetOf(
  e: z.infer<typeof EnvSchema>,
  file: z.infer<typeof ClustersFileSchema> | undefined,
): FleetConfig | undefined {
  if (file === undefined) return undefined;
  const names = Object.keys(file.clusters);
  if (names.length < 2) return undefined;
  const invalid = (why: string, variable = "UNSTUCK_CLUSTERS_FILE"): UnstuckError =>
    new UnstuckError(ErrorCode.Config, `Invalid ${variable}: ${why}.`, { variable });
  const mapped = new Map<string, string>();
  const clusters: FleetCluster[] = [];
  for (const name of names) {
    if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/.test(name)) {
      throw invalid(
        `cluster name "${name.slice(0, 80)}" must be an EKS cluster name (letters, digits, - and _)`,
      );
    }
    const channels = [...new Set(file.clusters[name]?.channels ?? [])];
    for (const channel of channels) {
      const other = mapped.get(channel);
      if (other !== undefined) {
        throw invalid(
          `channel ${channel} is mapped to both ${other} and ${name}; a channel goes to one cluster`,
        );
      }
      mapped.set(channel, name);
    }
    clusters.push({ name, channels });
  }
  if (e.UNSTUCK_ROLE !== "bot" && e.UNSTUCK_CLUSTER_NAME === undefined) {
    throw invalid(
      `a ${e.UNSTUCK_ROLE === "all" ? "bot-and-worker" : "worker"} process of a fleet serves one cluster: set it to one of ${names.join(", ")}`,
      "UNSTUCK_CLUSTER_NAME",
    );
  }
  return { clusters };
}
