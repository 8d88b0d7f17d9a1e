/**
 * Worker factories for the two queues. Processors translate our coded errors into BullMQ's
 * vocabulary: a permanent error becomes `UnrecoverableError` (no retry), anything else is thrown
 * as is and retried with backoff.
 */
import { randomUUID } from "node:crypto";
import { UnrecoverableError, Worker, type ConnectionOptions, type Job } from "bullmq";
import {
  executeApproved,
  runDueFollowUps,
  type ExecutionOutcome,
  type ExecutorDeps,
} from "../actions/execute.js";
import { isPermanent, toUserError } from "../errors.js";
import { metricSink } from "../ops/metric-sink.js";
import {
  checkPathRecheck,
  type PathRecheckData,
  type PathRecheckDeps,
  type PathRecheckResult,
} from "./path-recheck.js";
import { EXECUTORS } from "../actions/executors.js";
import type { GuardCloseData } from "../actions/deletion-guard.js";
import { closeDeletionGuard, type GuardCloseDeps, type GuardCloseResult } from "./deletion-guard.js";
import { checkEdgeWait, type EdgeWaitData, type EdgeWaitDeps, type EdgeWaitResult } from "./edge-waits.js";
import type { PostLedger } from "./post-once.js";
import { openedJob, type JobSeal, type WaitJob } from "./sealed-jobs.js";
import { clusterQueueName, JobName, QueueName, type ExecutionJobData } from "./queues.js";
import {
  checkNamespaceGone,
  type NamespaceGoneData,
  type NamespaceGoneResult,
  type WaitDeps,
} from "./waits.js";

export interface WorkerSetup {
  readonly connection: ConnectionOptions;
  /** BullMQ key prefix; the same one the queues use. */
  readonly prefix: string;
  /** In a fleet: the cluster whose queues this worker consumes (`clusterQueueName`); absent = single cluster. */
  readonly cluster?: string;
  readonly concurrency?: number;
  /**
   * How long a job's lock lives without renewal. A worker that dies loses its jobs after this
   * long; the stalled-job check then re-delivers them. BullMQ's default is 30 s.
   */
  readonly lockDuration?: number;
  /** How often this worker looks for stalled jobs (default 30 s). */
  readonly stalledInterval?: number;
  /** How often a job may stall before BullMQ fails it without running it (BullMQ default 1). */
  readonly maxStalledCount?: number;
  /** Do not start processing until `worker.run()` (tests attach listeners first). */
  readonly autorun?: boolean;
}

function workerOptions(setup: WorkerSetup) {
  return {
    connection: setup.connection,
    prefix: setup.prefix,
    concurrency: setup.concurrency ?? 1,
    autorun: setup.autorun ?? true,
    ...(setup.lockDuration !== undefined ? { lockDuration: setup.lockDuration } : {}),
    ...(setup.stalledInterval !== undefined ? { stalledInterval: setup.stalledInterval } : {}),
    ...(setup.maxStalledCount !== undefined ? { maxStalledCount: setup.maxStalledCount } : {}),
  };
}

function unrecoverable(err: unknown): never {
  if (isPermanent(err)) throw new UnrecoverableError(toUserError(err).message);
  throw err;
}

/** Job names of approved actions: each is an action type with an executor, run by the one verifying executor. */
const EXECUTABLE: ReadonlySet<string> = new Set(Object.keys(EXECUTORS));

export interface ActionsWorkerExtras {
  /** Runs on each `approvals-sweep` job (see `scheduleApprovalSweep`), e.g. `workflow.sweep()`. */
  readonly sweep?: () => Promise<unknown>;
  /** How old an unfinished follow-up must be before the sweep runs it (default 2 minutes). */
  readonly followUpGraceMs?: number;
}

/**
 * The sweep leaves a follow-up this long to the executor that recorded it (its outcome reply waits up
 * to 15 s for Slack), then runs it itself.
 */
const FOLLOW_UP_GRACE_MS = 120_000;

/** Count an action that ended (`unstuck_actions_executed_total`); a skipped run counts nothing. */
const ENDED = { DONE: "done", STALE: "stale", FAILED: "failed", TAMPERED: "tampered" } as const;
function counted(kind: string, outcome: ExecutionOutcome): ExecutionOutcome {
  if (outcome.kind === "finished") metricSink()?.action(kind, ENDED[outcome.state]);
  return outcome;
}

/** Runs approved actions; each job claims its request, so a duplicate delivery does nothing twice. */
export function createActionsWorker(
  setup: WorkerSetup,
  deps: ExecutorDeps,
  extras: ActionsWorkerExtras = {},
): Worker<ExecutionJobData, ExecutionOutcome | null> {
  const worker = new Worker<ExecutionJobData, ExecutionOutcome | null>(
    clusterQueueName(QueueName.Actions, setup.cluster),
    async (job: Job<ExecutionJobData, ExecutionOutcome | null>) => {
      if (job.name === JobName.Sweep) {
        await extras.sweep?.();
        // What followed an outcome and was not run (its worker died, or it failed): run it now.
        await runDueFollowUps(deps, extras.followUpGraceMs ?? FOLLOW_UP_GRACE_MS);
        return null;
      }
      // Job names are action types: every approved action runs through the same verifying executor.
      if (!EXECUTABLE.has(job.name)) throw new UnrecoverableError(`unknown action job "${job.name}"`);
      const attempts = job.opts.attempts ?? 1;
      try {
        return counted(
          job.name,
          await executeApproved(deps, job.data.requestId, {
            token: randomUUID(),
            finalAttempt: job.attemptsMade + 1 >= attempts,
          }),
        );
      } catch (err) {
        return unrecoverable(err);
      }
    },
    workerOptions(setup),
  );
  // A job that stalled more often than `maxStalledCount` is failed by BullMQ without running the
  // processor, which would leave its request EXECUTING for ever. Resolve it once more here: the
  // executor takes over, re-reads the object and ends in a definite state (DONE if the patch had
  // been applied, the one patch otherwise, or FAILED), never applying the patch twice.
  worker.on("failed", (job) => {
    if (job === undefined || !EXECUTABLE.has(job.name)) return;
    // 'failed' also fires for an attempt that will be retried: act only when no retry follows.
    const finalAttempt =
      job.attemptsMade >= (job.opts.attempts ?? 1) ||
      /stalled more than allowable limit/i.test(job.failedReason);
    if (!finalAttempt) return;
    const requestId = job.data.requestId;
    void (async () => {
      const request = await deps.store.get(requestId);
      if (request?.state !== "EXECUTING") return;
      deps.log?.warn(
        { requestId, reason: job.failedReason },
        "execution job failed while EXECUTING; resolving it",
      );
      counted(job.name, await executeApproved(deps, requestId, { token: randomUUID(), finalAttempt: true }));
    })().catch((err: unknown) => {
      deps.log?.error({ err, requestId }, "could not resolve an abandoned execution");
    });
  });
  return worker;
}

/**
 * Close a worker after its Redis connections have finished connecting. BullMQ's close() of a
 * connection still initializing (the worker's own blocking connection, its INFO version check in
 * flight) disconnects it and removes its listeners; the pending init then rejects with "Connection
 * is closed." into an 'error' emit nobody listens to any more: an unhandled rejection. A worker
 * stopped soon after it was created (a quick restart, a short test) hits this. Waiting for ready
 * makes close() quit cleanly instead. `force` does not wait (the caller has given up on Redis).
 */
export async function closeWorker(worker: Worker, force = false): Promise<void> {
  if (!force) await worker.waitUntilReady().catch(() => undefined);
  await worker.close(force);
}

/**
 * What the waits worker runs with: the namespace wait's deps, and the edge waits' when wired. Its
 * `posted` ledger (`post-once.ts`) also keys the posts of the edge waits, re-checks and guard closes
 * that were not given one of their own.
 */
export type WaitsWorkerDeps = WaitDeps & {
  /** Opens each wait's sealed data (the bot's or this cluster's workers') and seals its updates. */
  readonly seal: JobSeal;
  /** CloudFront, Route 53, DNS and HTTP waits; without it an edge wait job fails, unrecoverably. */
  readonly edge?: EdgeWaitDeps;
  /** Re-traces after a namespace is gone; without it a path re-check job fails, unrecoverably. */
  readonly pathRecheck?: PathRecheckDeps;
  /** Closes deletion guards at the end of their window; without it such a job fails, unrecoverably. */
  readonly deletionGuard?: GuardCloseDeps;
};

export type WaitJobData = NamespaceGoneData | EdgeWaitData | PathRecheckData | GuardCloseData;
export type WaitJobResult = NamespaceGoneResult | EdgeWaitResult | PathRecheckResult | GuardCloseResult;

/** The worker's post ledger for a part that has none of its own. */
function withPosted<D extends { readonly posted?: PostLedger }>(part: D, posted: PostLedger | undefined): D {
  return part.posted !== undefined || posted === undefined ? part : { ...part, posted };
}

/** Runs wait checks; a check that is not done re-delays its job and returns the slot at once. */
export function createWaitsWorker(setup: WorkerSetup, deps: WaitsWorkerDeps): Worker<unknown, WaitJobResult> {
  return new Worker<unknown, WaitJobResult>(
    clusterQueueName(QueueName.Waits, setup.cluster),
    async (raw: Job<unknown, WaitJobResult>, token?: string) => {
      // A wait written straight into Redis (unsealed, or sealed by no key of this install) runs nothing.
      const opened = deps.seal.open<WaitJobData>(raw.data);
      if (!opened.ok) {
        deps.log?.error(
          { job: raw.id, name: raw.name, why: opened.why },
          "refused a wait job not sealed by the bot or this cluster's workers",
        );
        throw new UnrecoverableError(`the wait is not sealed: ${opened.why}`);
      }
      const job = openedJob(raw, deps.seal, opened.data);
      try {
        switch (raw.name) {
          case JobName.NamespaceGone:
            return await checkNamespaceGone(job as WaitJob<NamespaceGoneData>, token, deps);
          case JobName.PathRecheck: {
            if (deps.pathRecheck === undefined) {
              throw new UnrecoverableError(
                `wait job "${raw.name}" needs the path re-check dependencies (AWS), which this worker was not given`,
              );
            }
            return await checkPathRecheck(
              job as WaitJob<PathRecheckData>,
              token,
              withPosted(deps.pathRecheck, deps.posted),
            );
          }
          case JobName.EdgeWait: {
            if (deps.edge === undefined) {
              throw new UnrecoverableError(
                `wait job "${raw.name}" needs the edge wait dependencies (AWS, DNS/HTTP probe), which this worker was not given`,
              );
            }
            return await checkEdgeWait(
              job as WaitJob<EdgeWaitData>,
              token,
              withPosted(deps.edge, deps.posted),
            );
          }
          case JobName.DeletionGuardClose: {
            if (deps.deletionGuard === undefined) {
              throw new UnrecoverableError(
                `wait job "${raw.name}" needs the deletion guard dependencies (audit log), which this worker was not given`,
              );
            }
            return await closeDeletionGuard(
              job.data as GuardCloseData,
              withPosted(deps.deletionGuard, deps.posted),
            );
          }
          default:
            throw new UnrecoverableError(`unknown wait job "${raw.name}"`);
        }
      } catch (err) {
        return unrecoverable(err);
      }
    },
    workerOptions(setup),
  );
}
