/**
 * The ops target of a running bot, wired: the readiness checks of Redis (the bot's own connection),
 * the Kubernetes API (`GET /version`, as at start-up) and Slack (`auth.test`), and the runtime's
 * queues and approval store as metric sources, handed to `src/ops/runtime-target.ts`.
 */
import { Queue } from "bullmq";
import { approvalIndexCounts } from "./approvals/store.js";
import type { Config } from "./config.js";
import { kubeVersion, loadKubeConfig } from "./kube/client-node-adapter.js";
import { runtimeOpsTarget } from "./ops/runtime-target.js";
import type { OpsTarget, ReadinessCheck } from "./ops/server.js";
import type { RedisConnection } from "./redis-connection.js";
import { slackReadinessCheck } from "./slack/readiness.js";

export interface RuntimeParts {
  readonly redis: Pick<RedisConnection, "ping" | "zcard" | "zcount">;
  /** The runtime's queues; every BullMQ `Queue` among its values is counted. */
  readonly queues: object;
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

  if (config.slack !== undefined) {
    checks.push(
      slackReadinessCheck(config.slack, { timeoutMs, cacheMs: options.slackCacheMs ?? 60_000, now }),
    );
  }

  return runtimeOpsTarget({
    checks,
    queues: Object.values(runtime.queues).filter((q): q is Queue => q instanceof Queue),
    // The approval store's prefix, as the runtime builds it.
    approvals: (at) => approvalIndexCounts(runtime.redis, `${config.redisPrefix}:approvals`, at),
    now,
  });
}
