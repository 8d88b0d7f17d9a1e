/**
 * The readiness checks and metric sources of a running bot: Redis (the bot's own connection),
 * the Kubernetes API (`GET /version`, as at start-up) and Slack (`auth.test`), and BullMQ job
 * counts by queue and state with the age of the oldest waiting and active job, and approval requests
 * by state from the store's indexes.
 */
import { WebClient } from "@slack/web-api";
import { Queue } from "bullmq";
import type { RedisConnection } from "../redis-connection.js";
import { approvalIndexCounts } from "../approvals/store.js";
import type { Config } from "../config.js";
import { kubeVersion, loadKubeConfig } from "../kube/client-node-adapter.js";
import { slackErrorCode } from "../slack/slack-errors.js";
import { gauge, type Family, type Sample } from "./metrics.js";
import type { OpsTarget, ReadinessCheck } from "./server.js";

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

const JOB_STATES = [
  "waiting",
  "active",
  "delayed",
  "prioritized",
  "waiting-children",
  "failed",
  "completed",
] as const;

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

  const slack = config.slack;
  if (slack !== undefined) {
    const client = new WebClient(slack.botToken, {
      ...(slack.apiUrl !== undefined ? { slackApiUrl: slack.apiUrl } : {}),
      retryConfig: { retries: 0 },
      timeout: timeoutMs,
      rejectRateLimitedCalls: true,
    });
    const cacheMs = options.slackCacheMs ?? 60_000;
    let passedAt: number | undefined;
    checks.push({
      name: "slack",
      async run() {
        if (passedAt !== undefined && now() - passedAt < cacheMs) return;
        try {
          await client.auth.test();
        } catch (err) {
          // Rate limited: Slack answered, so it is reachable; anything else is not ready.
          const code = slackErrorCode(err);
          if ((err as { code?: unknown }).code !== "slack_webapi_rate_limited_error") {
            throw new Error(code !== undefined ? `auth.test: ${code}` : "Slack Web API unreachable", {
              cause: err,
            });
          }
        }
        passedAt = now();
      },
    });
  }

  const queues = Object.values(runtime.queues).filter((q): q is Queue => q instanceof Queue);
  return {
    checks,
    async metrics(): Promise<Family[]> {
      const counts: Sample[] = [];
      const ages: Sample[] = [];
      for (const queue of queues) {
        const byState = await queue.getJobCounts(...JOB_STATES);
        for (const state of JOB_STATES) {
          counts.push({ labels: { queue: queue.name, state }, value: byState[state] ?? 0 });
        }
        for (const state of ["waiting", "active"] as const) {
          const [oldest] = await queue.getJobs([state], 0, 0, true);
          const age = oldest !== undefined ? Math.max(0, (now() - oldest.timestamp) / 1000) : 0;
          ages.push({ labels: { queue: queue.name, state }, value: age });
        }
      }
      // The approval store's prefix, as the runtime builds it.
      const approvals = await approvalIndexCounts(
        runtime.redis,
        `${config.redisPrefix}:approvals`,
        new Date(now()),
      );
      return [
        gauge("unstuck_approvals", "Approval requests by state (the store's indexed states).", [
          { labels: { state: "PENDING" }, value: approvals.pending },
          { labels: { state: "APPROVED" }, value: approvals.approved },
        ]),
        gauge(
          "unstuck_approvals_pending_overdue",
          "Pending approval requests past their expiry that the sweep has not expired yet.",
          [{ value: approvals.pendingOverdue }],
        ),
        gauge("unstuck_jobs", "BullMQ jobs by queue and state.", counts),
        gauge(
          "unstuck_job_oldest_age_seconds",
          "Age of the oldest job by queue and state (0 when there is none).",
          ages,
        ),
      ];
    },
  };
}
