/**
 * The two BullMQ queues: `actions` (approved changes, run once) and `waits` (delayed checks that
 * hold no worker while waiting). Every key lives under one BullMQ prefix per environment, so
 * staging, production and each test never share a queue.
 */
import { Queue, type ConnectionOptions } from "bullmq";
import type { ApprovalRequest } from "../requests/model.js";
import type { EnqueueExecution, EnqueueOutcome } from "../approvals/workflow.js";

export const QueueName = {
  Actions: "actions",
  Waits: "waits",
  /** A fleet's remote commands: the bot's command lines run by a worker of the cluster (`src/wiring/fleet.ts`). */
  Commands: "commands",
} as const;
export type QueueName = (typeof QueueName)[keyof typeof QueueName];

/**
 * The name of a queue of one cluster. A single-cluster install (no `cluster`) keeps the plain names;
 * in a fleet each cluster has its own queues (`actions@prod-eu`), consumed only by that cluster's
 * workers. The name sits inside the BullMQ prefix, so on a Redis Cluster the prefix's hash tag still
 * keeps every key of every queue in one slot.
 */
export function clusterQueueName(name: QueueName, cluster?: string): string {
  return cluster === undefined ? name : `${name}@${cluster}`;
}

/**
 * Job names besides the execution jobs, which are named for their action type (`remove-finalizer`,
 * `repoint-path`, …: one per line of the executor table).
 */
export const JobName = {
  /** At the end of the window: take the guard's annotation off again (`deletion-guard.ts`). */
  DeletionGuardClose: "deletion-guard-close",
  /** After a namespace is gone: re-trace its paths until the controller re-created the stack. */
  PathRecheck: "path-recheck",
  NamespaceGone: "ns-gone",
  /** CloudFront Deployed, Route 53 INSYNC, DNS NXDOMAIN or HTTP 2xx (`edge-waits.ts`). */
  EdgeWait: "edge-wait",
  /** Periodic approvals housekeeping: expiry and repair of lost enqueues. */
  Sweep: "approvals-sweep",
} as const;
export type JobName = (typeof JobName)[keyof typeof JobName];

export interface QueueSetup {
  /** An ioredis instance (with `maxRetriesPerRequest: null`) or connection options. */
  readonly connection: ConnectionOptions;
  /** BullMQ key prefix, e.g. `unstuck:bull`; unique per environment (and per test). */
  readonly prefix: string;
  /** In a fleet: the cluster whose queues these are (see `clusterQueueName`); absent = single cluster. */
  readonly cluster?: string;
}

export interface Queues {
  readonly actions: Queue;
  readonly waits: Queue;
  close(): Promise<void>;
}

/**
 * A BullMQ queue on the process's shared connection. A queue re-emits its connection's errors, and
 * one without an `error` listener prints each of them raw to stderr (a Redis restart: a burst of
 * ECONNRESET stacks outside the structured log). The shared connection logs its errors itself
 * (`src/wiring/redis.ts`), so the queue's copies are dropped here.
 */
export function openQueue(name: string, options: { connection: ConnectionOptions; prefix: string }): Queue {
  const queue = new Queue(name, options);
  queue.on("error", () => undefined);
  return queue;
}

export function createQueues(setup: QueueSetup): Queues {
  const options = { connection: setup.connection, prefix: setup.prefix };
  const actions = openQueue(clusterQueueName(QueueName.Actions, setup.cluster), options);
  const waits = openQueue(clusterQueueName(QueueName.Waits, setup.cluster), options);
  return {
    actions,
    waits,
    async close() {
      await Promise.all([actions.close(), waits.close()]);
    },
  };
}

/**
 * A job id made from what the job does, so a repeated enqueue (a retried click, a restarted
 * process) collapses into the existing job. BullMQ 5 rejects ':' in custom ids (it reserves the
 * form `a:b:c` for legacy repeatable jobs), so parts are joined with '.', which neither request ids
 * nor namespace names contain; any ':' inside a part is replaced.
 */
export function jobId(...parts: readonly string[]): string {
  return parts.map((p) => p.replaceAll(":", "_")).join(".");
}

/** The one execution job of a request, whatever its action type. */
export function executionJobId(requestId: string): string {
  return jobId("execute", requestId);
}

/**
 * The id an execution job had before it was named for what it does: every kind was enqueued as
 * `remove-finalizer.<id>`. A job an earlier release enqueued under it may still wait or be kept
 * (completed jobs for a day), so the enqueuer consults it too: the sweep never adds a second job
 * beside one an older bot left. Such a job still runs: workers dispatch on the job's name (the
 * action type), not its id.
 */
export function legacyExecutionJobId(requestId: string): string {
  return jobId("remove-finalizer", requestId);
}

type JobState = Awaited<ReturnType<Queue["getJobState"]>>;

/** What the enqueuer makes of the states under the current and the legacy id. */
function enqueueVerdict(states: readonly JobState[]): EnqueueOutcome | "absent" {
  if (states.some((s) => s === "completed" || s === "failed")) return "ended";
  if (states.some((s) => s !== "unknown")) return "pending";
  return "absent";
}

/** Data of an execution job: only the id; the plan itself is read from the store. */
export interface ExecutionJobData {
  readonly requestId: string;
}

export interface ExecutionRetry {
  /** Attempts before a transient failure becomes FAILED (default 5). */
  readonly attempts?: number;
  /** First backoff delay in ms, doubled each retry (default 2000). */
  readonly backoffMs?: number;
}

/**
 * The `enqueueExecution` the workflow needs, bound to the actions queue. It says what it found: a
 * job still to run (`pending`), one that ran and ended (`ended`: adding it again would do nothing),
 * or none (`added`), so the sweep repairs a lost enqueue without looping on a job that exists.
 */
export function executionEnqueuer(actions: Queue, retry: ExecutionRetry = {}): EnqueueExecution {
  return async (request: ApprovalRequest): Promise<EnqueueOutcome> => {
    const data: ExecutionJobData = { requestId: request.id };
    const states = await Promise.all(
      [executionJobId(request.id), legacyExecutionJobId(request.id)].map((id) => actions.getJobState(id)),
    );
    const verdict = enqueueVerdict(states);
    if (verdict !== "absent") return verdict;
    await actions.add(request.action.type, data, {
      jobId: executionJobId(request.id),
      attempts: retry.attempts ?? 5,
      backoff: { type: "exponential", delay: retry.backoffMs ?? 2000 },
      // Kept a day so a duplicate enqueue within that window still finds the job and collapses.
      removeOnComplete: { age: 86_400 },
      removeOnFail: { age: 7 * 86_400 },
    });
    return "added";
  };
}

/**
 * Run the approvals sweep every `everyMs` on the actions queue. A job scheduler, not a timer in
 * each process: however many replicas run, one sweep job is produced per period.
 */
export async function scheduleApprovalSweep(actions: Queue, everyMs: number): Promise<void> {
  await actions.upsertJobScheduler(
    JobName.Sweep,
    { every: everyMs },
    { name: JobName.Sweep, data: {}, opts: { removeOnComplete: true, removeOnFail: 100 } },
  );
}
