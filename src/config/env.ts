/**
 * The environment `loadConfig` reads: every variable, its default and its check, and the parse
 * that turns an environment into those values or names the variable at fault.
 */
import * as z from "zod/mini";
import "./zod-messages.js";
import { ErrorCode, UnstuckError } from "../errors.js";

const idList = z.pipe(
  z.optional(z.string()),
  z.transform((v) =>
    (v ?? "")
      .split(/[\s,]+/)
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  ),
);

/** An IPv4 address in dotted-quad form, or an IPv6 address (as the URL parser reads one). */
function isIpAddress(host: string): boolean {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host)) return host.split(".").every((octet) => Number(octet) <= 255);
  if (!host.includes(":")) return false;
  try {
    new URL(`http://[${host}]/`);
    return true;
  } catch {
    return false;
  }
}

/** What `dns.Resolver#setServers` takes: `ip`, `ipv4:port`, `ipv6` or `[ipv6]:port`. */
function isResolverAddress(server: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(server);
  if (bracketed) return isIpAddress(bracketed[1] ?? "") && Number(bracketed[2] ?? 0) <= 65535;
  if (isIpAddress(server)) return true;
  const withPort = /^([\d.]+):(\d{1,5})$/.exec(server);
  return withPort !== null && isIpAddress(withPort[1] ?? "") && Number(withPort[2]) <= 65535;
}

const EnvSchema = z.object({
  SLACK_BOT_TOKEN: z.optional(z.string()),
  SLACK_SIGNING_SECRET: z.optional(z.string()),
  SLACK_APP_TOKEN: z.optional(z.string()),
  SLACK_API_URL: z.optional(z.url()),
  PORT: z._default(z.coerce.number().check(z.int(), z.minimum(0), z.maximum(65535)), 3000),
  UNSTUCK_LISTEN_HOST: z.optional(
    z
      .string()
      .check(z.regex(/^[0-9a-fA-F.:]+$|^localhost$/, "an IP address (e.g. 127.0.0.1 or ::1) or localhost")),
  ),
  REDIS_URL: z._default(
    z
      .string()
      .check(
        z.regex(
          /^rediss?(\+cluster|\+sentinel)?:\/\//,
          "must start with redis:// or rediss:// (TLS), redis+cluster:// / rediss+cluster:// for a Redis Cluster, or redis+sentinel:// / rediss+sentinel:// for Redis Sentinel",
        ),
      ),
    "redis://127.0.0.1:6379",
  ),
  /** DNS servers (`host[:port]`, comma-separated) the path waits resolve through; default: the system's. */
  UNSTUCK_DNS_RESOLVERS: idList.check(
    z.refine(
      (servers) => servers.every(isResolverAddress),
      "each DNS resolver is an IP address, optionally with a port (e.g. 10.0.0.2, 10.0.0.2:53 or [fd00::2]:53)",
    ),
  ),
  /** Send the path waits' HTTP probes to this base URL with the hostname as Host (a proxy; the sandbox's front). */
  UNSTUCK_HTTP_PROBE_VIA: z.optional(z.url()),
  /** Paths probed on each repaired hostname after a repair (comma-separated, default `/`). */
  UNSTUCK_HEALTH_PATHS: z
    .pipe(
      z._default(z.string(), "/"),
      z.transform((v) =>
        v
          .split(",")
          .map((p) => p.trim())
          .filter((p) => p.length > 0),
      ),
    )
    .check(
      z.refine(
        (paths) => paths.every((p) => p.startsWith("/") && !/\s/.test(p)),
        "each path must start with /",
      ),
    ),
  /** PEM bundle of the CA that signed a TLS Redis's certificate, when it is not a public one. */
  REDIS_TLS_CA_FILE: z.optional(z.string()),
  KUBECONFIG: z.optional(z.string()),
  UNSTUCK_CHANNELS: idList,
  /** Channel-name patterns (`inc-*`, `incident-*`): channels an incident tool creates per incident. */
  UNSTUCK_CHANNEL_PATTERNS: idList.check(
    z.refine(
      (patterns) => patterns.every((p) => /^[a-z0-9_*-]{1,80}$/.test(p)),
      "channel-name patterns use lowercase letters, digits, '-', '_' and '*' (e.g. inc-*)",
    ),
  ),
  UNSTUCK_APPROVERS: idList,
  /**
   * The bot's Ed25519 private key (`npm run unstuck -- keys` makes a pair): it signs requests, votes
   * and the calls it sends to workers. Only the Slack-facing process (`bot`, `all`) holds it.
   */
  UNSTUCK_BOT_SIGNING_KEY: z.optional(z.string()),
  /** The bot's public keys (base64url, comma-separated): every process verifies the bot's signatures with them. */
  UNSTUCK_BOT_PUBLIC_KEYS: idList,
  /** This cluster's workers' Ed25519 private key: it signs what they execute and answer. Workers only. */
  UNSTUCK_WORKER_SIGNING_KEY: z.optional(z.string()),
  /** A single-cluster install's workers' public keys (a fleet lists each cluster's in the clusters file). */
  UNSTUCK_WORKER_PUBLIC_KEYS: idList,
  /**
   * The HMAC key every process shared before approvals were signed with Ed25519: set on the bot alone
   * while records signed with it may still be live, so they are recognised and ended (never executed).
   */
  UNSTUCK_APPROVAL_KEY: z.optional(
    z.string().check(
      z.refine((v) => Buffer.byteLength(v, "utf8") >= 32, {
        error: "must be at least 32 bytes of secret (the shared key of before the upgrade)",
      }),
    ),
  ),
  UNSTUCK_APPROVALS_REQUIRED: z._default(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(10)), 1),
  UNSTUCK_REQUEST_TTL_SECONDS: z._default(
    z.coerce.number().check(z.int(), z.minimum(60), z.maximum(86_400)),
    1800,
  ),
  UNSTUCK_AUDIT_CHANNEL: z.optional(z.string()),
  /** Default `unstuck`; `{unstuck}` on a Redis Cluster, where it must hold a hash tag. */
  UNSTUCK_REDIS_PREFIX: z.optional(z.string().check(z.minLength(1))),
  UNSTUCK_LOG_LEVEL: z._default(
    z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
    "info",
  ),
  UNSTUCK_COMMAND: z._default(z.string(), "/unstuck"),
  /**
   * What this process runs: `all` (the Slack app and the workers), `bot` (the Slack app and the
   * queues, no workers) or `worker` (the workers and the approval sweep, no Slack receiver).
   */
  UNSTUCK_ROLE: z._default(z.enum(["all", "bot", "worker"], { error: "must be all, bot or worker" }), "all"),
  /** Terminating longer than this with finalizers remaining counts as blocked, not slow. */
  UNSTUCK_BLOCKED_AFTER_SECONDS: z._default(z.coerce.number().check(z.int(), z.minimum(0)), 300),
  /** Channel the watcher posts namespaces stuck past the threshold to; unset = no watcher. */
  UNSTUCK_WATCH_CHANNEL: z.optional(z.string()),
  /** Life of the watcher's leader lease: how soon another replica takes over from a dead leader. */
  UNSTUCK_WATCH_LEASE_SECONDS: z._default(z.coerce.number().check(z.positive(), z.maximum(600)), 15),
  /** EKS cluster name (AWS tags `elbv2.k8s.aws/cluster`); read from the controller's args when unset. */
  UNSTUCK_CLUSTER_NAME: z.optional(
    z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, "must be an EKS cluster name")),
  ),
  /** YAML file mapping cluster names to AWS settings: `clusters: { <name>: { region, profile?, endpoint? } }`. */
  UNSTUCK_CLUSTERS_FILE: z.optional(z.string()),
  AWS_REGION: z.optional(z.string()),
  AWS_DEFAULT_REGION: z.optional(z.string()),
  AWS_PROFILE: z.optional(z.string()),
  AWS_ENDPOINT_URL: z.optional(z.url()),
  AWS_ACCESS_KEY_ID: z.optional(z.string()),
  AWS_SECRET_ACCESS_KEY: z.optional(z.string()),
  AWS_SESSION_TOKEN: z.optional(z.string()),
  /** How long a "namespace gone" wait runs before it reports what still blocks. */
  UNSTUCK_WAIT_TIMEOUT_SECONDS: z._default(
    z.coerce.number().check(z.int(), z.minimum(10), z.maximum(86_400)),
    1800,
  ),
  UNSTUCK_WAIT_INTERVAL_SECONDS: z._default(
    z.coerce.number().check(z.int(), z.minimum(1), z.maximum(600)),
    15,
  ),
  /** How long an approved namespace deletion stays open (the guard's annotation) before the bot closes it. */
  UNSTUCK_DELETION_WINDOW_SECONDS: z._default(
    z.coerce.number().check(z.int(), z.minimum(1), z.maximum(86_400)),
    3600,
  ),
  /**
   * Most Kubernetes requests in flight at the API server across every bot and worker replica on
   * this Redis prefix (a lease per request, in Redis); unset = each process's own bound only.
   */
  UNSTUCK_KUBE_REQUEST_BUDGET: z.optional(z.coerce.number().check(z.int(), z.minimum(1), z.maximum(10_000))),
  /** Bound on one Kubernetes request (fractions allowed, for tests). */
  UNSTUCK_KUBE_TIMEOUT_SECONDS: z._default(z.coerce.number().check(z.positive(), z.maximum(300)), 10),
  /** Bound on one AWS call, retries included. */
  UNSTUCK_AWS_TIMEOUT_SECONDS: z._default(z.coerce.number().check(z.positive(), z.maximum(300)), 10),
  /** A diagnosis answers by then with what it has, marked partial. */
  UNSTUCK_DIAGNOSIS_DEADLINE_SECONDS: z._default(z.coerce.number().check(z.positive(), z.maximum(600)), 20),
  /** Bound on the start-up reachability checks (Redis, Slack, Kubernetes, AWS). */
  UNSTUCK_STARTUP_TIMEOUT_SECONDS: z._default(z.coerce.number().check(z.positive(), z.maximum(600)), 20),
  /** Bound on a graceful stop; after it the process exits anyway. */
  UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS: z._default(z.coerce.number().check(z.positive(), z.maximum(600)), 15),
  /** Start on a Redis that may evict keys or lose them on restart (local sandbox, tests). */
  UNSTUCK_ALLOW_VOLATILE_REDIS: z.pipe(
    z._default(z.enum(["true", "false", "1", "0"], { error: "must be true or false" }), "false"),
    z.transform((v) => v === "true" || v === "1"),
  ),
});

/** Every variable `loadConfig` reads: the README's configuration table documents each, and no other. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(EnvSchema.shape);

/** The environment, parsed: each variable typed and defaulted. */
export type Env = z.infer<typeof EnvSchema>;

/**
 * Parse an environment (unset and empty variables alike absent); throws `UnstuckError(Config)`
 * naming the first variable at fault, or a shared key set where only the bot may hold it.
 */
export function parseEnv(env: Readonly<Record<string, string | undefined>>): Env {
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
  return e;
}
