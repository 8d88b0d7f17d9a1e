/**
 * The ops target of a running bot, wired: the readiness checks of Redis (the bot's own connection),
 * the Kubernetes API (`GET /version`, as at start-up) and Slack (`auth.test`), and the runtime's
 * queues and approval store as metric sources, handed to `src/ops/runtime-target.ts`.
 *
 * What `/readyz` depends on follows the role: Redis makes any process unready, and so does the
 * Kubernetes API, except for a process that receives Slack over HTTP (`bot` or `all` without an app
 * token), which it only degrades: its readiness keeps Slack's requests flowing to it.
 * A worker never checks Slack (it receives nothing from it, and a Slack outage must not take the
 * workers out: their jobs wait on Kubernetes and AWS). The Slack-facing roles (`bot`, `all`) check
 * it, but its failure only degrades them (`unstuck_dependency_up{dependency="slack"} 0`, `degraded`
 * in the body): an unready bot would not answer Slack any sooner once it is back.
 *
 * A fleet's bot (`config.fleet`, serving no cluster) holds no cluster's credentials: it has no
 * Kubernetes API to check, so Redis alone (and Slack, degrading) decides its readiness. Its
 * `/metrics` count every cluster's queues (`actions@c1`, `waits@c1`, `commands@c1`, …) and say how
 * many live workers each cluster has (`unstuck_cluster_workers{cluster="c1"}`); a fleet's worker
 * counts its own cluster's queues and reports the same presence.
 */
import { Queue } from "bullmq";
import { approvalIndexCounts } from "./approvals/store.js";
import type { Config, Role } from "./config.js";
import type { ClusterPresence } from "./fleet/presence.js";
import { kubeVersion, loadKubeConfig } from "./kube/client-node-adapter.js";
import { gauge } from "./ops/metrics.js";
import { runtimeOpsTarget } from "./ops/runtime-target.js";
import type { OpsTarget, ReadinessCheck } from "./ops/server.js";
import type { RedisConnection } from "./redis-connection.js";
import { slackReadinessCheck } from "./slack/readiness.js";
import { RedisKeys } from "./redis/keys.js";

export interface RuntimeParts {
  readonly redis: Pick<RedisConnection, "ping" | "zcard" | "zcount">;
  /** The runtime's queues; every BullMQ `Queue` among its values is counted. */
  readonly queues: object;
  /** What the process runs; default `config.role`. */
  readonly role?: Role;
  /** In a fleet: every cluster's queues and the workers' presence (`Runtime.fleet`). */
  readonly fleet?: {
    readonly queues: { counted(clusters: readonly string[]): readonly Queue[] };
    readonly presence: { status(cluster: string, now: Date): Promise<ClusterPresence> };
  };
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

  // A fleet's bot serves no cluster: no kubeconfig, no Kubernetes API of its own to depend on.
  const fleet = config.fleet;
  const fleetBot = fleet !== undefined && config.clusterName === undefined;
  const role = runtime.role ?? config.role;
  if (!fleetBot) {
    const kc = loadKubeConfig(config.kubeconfig !== undefined ? { path: config.kubeconfig } : undefined);
    // Receiving Slack over HTTP, readiness is what keeps Slack's requests coming to the pod: a blip
    // of the API server would take every replica out of its Service and Slack would show
    // `dispatch_failed`, where a bot kept in answers that the cluster does not answer. There the
    // Kubernetes API only degrades it.
    const receivesOverHttp =
      config.slack !== undefined && config.slack.appToken === undefined && role !== "worker";
    checks.push({
      name: "kubernetes",
      async run() {
        await kubeVersion(kc, timeoutMs);
      },
      required: !receivesOverHttp,
    });
  }

  if (config.slack !== undefined && role !== "worker") {
    checks.push({
      ...slackReadinessCheck(config.slack, { timeoutMs, cacheMs: options.slackCacheMs ?? 60_000, now }),
      required: false,
    });
  }

  const own = Object.values(runtime.queues).filter((q): q is Queue => q instanceof Queue);
  const parts = runtime.fleet;
  const clusters = fleet?.clusters.map((c) => c.name) ?? [];
  // The bot counts every cluster's queues; a worker its own cluster's (with its commands queue).
  const queues =
    fleet === undefined || parts === undefined
      ? own
      : parts.queues.counted(
          fleetBot ? clusters : config.clusterName !== undefined ? [config.clusterName] : [],
        );
  const target = runtimeOpsTarget({
    checks,
    queues,
    // The approval store's prefix, as the runtime builds it.
    approvals: (at) => approvalIndexCounts(runtime.redis, RedisKeys.approvals(config.redisPrefix), at),
    now,
  });
  if (fleet === undefined || parts === undefined) return target;
  return {
    ...target,
    async metrics() {
      const families = (await target.metrics?.()) ?? [];
      const at = new Date(now());
      const presence = await Promise.all(clusters.map((c) => parts.presence.status(c, at)));
      return [
        ...families,
        gauge(
          "unstuck_cluster_workers",
          "Live worker processes of each cluster of the fleet (heartbeats not run out).",
          presence.map((p) => ({ labels: { cluster: p.cluster }, value: p.live })),
        ),
      ];
    },
  };
}
