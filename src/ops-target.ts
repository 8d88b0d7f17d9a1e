/**
 * The ops target of a running bot, wired: the readiness checks of Redis (the bot's own connection),
 * the Kubernetes API (`GET /version`, as at start-up) and Slack (`auth.test`), and the runtime's
 * queues and approval store as metric sources, handed to `src/ops/runtime-target.ts`.
 *
 * What `/readyz` depends on follows the role: Redis and the Kubernetes API make any process unready.
 * A worker never checks Slack (it receives nothing from it, and a Slack outage must not take the
 * workers out: their jobs wait on Kubernetes and AWS). The Slack-facing roles (`bot`, `all`) check
 * it, but its failure only degrades them (`unstuck_dependency_up{dependency="slack"} 0`, `degraded`
 * in the body): an unready bot would not answer Slack any sooner once it is back.
 */
import { Queue } from "bullmq";
import { approvalIndexCounts } from "./approvals/store.js";
import type { Config, Role } from "./config.js";
import { kubeVersion, loadKubeConfig } from "./kube/client-node-adapter.js";
import { runtimeOpsTarget } from "./ops/runtime-target.js";
import type { OpsTarget, ReadinessCheck } from "./ops/server.js";
import type { RedisConnection } from "./redis-connection.js";
import { slackReadinessCheck } from "./slack/readiness.js";

export interface RuntimeParts {
  readonly redis: Pick<RedisConnection, "ping" | "zcard" | "zcount">;
  /** The runtime's queues; every BullMQ `Queue` among its values is counted. */
  readonly queues: object;
  /** What the process runs; default `config.role`. */
  readonly role?: Role;
}

export interface RuntimeTargetOptions {
  /** Bound on one request of a check (default 3 s). */
  readonly timeoutMs?: number;
  /** A passed Slack check is trusted this long (default 60 s): `auth.test` is rate-limited per workspace. */
  readonly slackCacheMs?: number;
  readonly now?: () => number;
}

export function runtimeTarget(
  config: Config,
  runtime: RuntimeParts,
  options: RuntimeTargetOptions = {},
): OpsTarget {
  const timeoutMs = options.timeoutMs ?? 3_000;
  const now = options.now ?? (() => Date.now());
  const checks: ReadinessCheck[] = [
    {
      name: "redis",
      async run() {
        await runtime.redis.ping();
      },
    },
  ];

  const kc = loadKubeConfig(config.kubeconfig !== undefined ? { path: config.kubeconfig } : undefined);
  checks.push({
    name: "kubernetes",
    async run() {
      await kubeVersion(kc, timeoutMs);
    },
  });

  const role = runtime.role ?? config.role;
  if (config.slack !== undefined && role !== "worker") {
    checks.push({
      ...slackReadinessCheck(config.slack, { timeoutMs, cacheMs: options.slackCacheMs ?? 60_000, now }),
      required: false,
    });
  }

  return runtimeOpsTarget({
    checks,
    queues: Object.values(runtime.queues).filter((q): q is Queue => q instanceof Queue),
    // The approval store's prefix, as the runtime builds it.
    approvals: (at) => approvalIndexCounts(runtime.redis, `${config.redisPrefix}:approvals`, at),
    now,
  });
}
