/**
 * The readiness checks and metric sources of a running bot: the checks it is handed (Redis, the
 * Kubernetes API, Slack: wired in `src/ops-target.ts`), BullMQ job counts by queue and state with the
 * age of the oldest waiting and active job, and approval requests by state from the store's indexes.
 * Everything that talks to a dependency is passed in, so this module imports no adapter.
 */
import type { Queue } from "bullmq";
import { gauge, type Family, type Sample } from "./metrics.js";
import type { OpsTarget, ReadinessCheck } from "./server.js";

/** Approval requests by indexed state, as the approval store counts them. */
export interface ApprovalCounts {
  readonly pending: number;
  readonly approved: number;
  readonly pendingOverdue: number;
}

export interface RuntimeTargetParts {
  /** The readiness checks, in the order `/readyz` runs them. */
  readonly checks: readonly ReadinessCheck[];
  /** The queues whose jobs are counted. */
  readonly queues: readonly Pick<Queue, "name" | "getJobCounts" | "getJobs">[];
  /** Approval requests by state at `now`. */
  readonly approvals: (now: Date) => Promise<ApprovalCounts>;
  readonly now: () => number;
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

export function runtimeOpsTarget(parts: RuntimeTargetParts): OpsTarget {
  const { queues, now } = parts;
  return {
    checks: parts.checks,
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
      const approvals = await parts.approvals(new Date(now()));
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
