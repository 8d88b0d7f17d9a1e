/**
 * A stop bounded by `UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS`: the graceful path (no new work, running jobs
 * finish, connections close) gets most of the bound; the rest is kept for handing back the jobs
 * still running, so another worker takes them at once rather than after their locks expire.
 */
import { toUserError } from "../errors.js";
import type { Logger } from "../log.js";
import { settlesWithin } from "../util/deadline.js";

/** The most of the bound kept for the hand-back (and never more than a quarter of it). */
export const HAND_BACK_RESERVE_MS = 2_000;

/** A job running here, with its lock token (a BullMQ job). */
export interface RunningJob {
  readonly queueName: string;
  readonly id?: string | undefined;
  readonly name: string;
  readonly token?: string | undefined;
  moveToWait(token?: string): Promise<unknown>;
}

/** Running jobs back to waiting, their locks released (a job already finished or lost is skipped). */
export async function handBack(jobs: Iterable<RunningJob>, log: Logger): Promise<void> {
  await Promise.all(
    [...jobs].map(async (job) => {
      if (job.token === undefined) return;
      try {
        await job.moveToWait(job.token);
        log.warn({ queue: job.queueName, jobId: job.id, job: job.name }, "job handed back on shutdown");
      } catch (err) {
        log.warn(
          { queue: job.queueName, jobId: job.id, err: { message: toUserError(err).message } },
          "could not hand a job back; it is re-run once its lock expires",
        );
      }
    }),
  );
}

export interface BoundedStopDeps {
  readonly timeoutMs: number;
  readonly log: Logger;
  /** The graceful path, already under way. */
  readonly graceful: Promise<unknown>;
  /** Hands back what still runs. */
  readonly handBack: () => Promise<void>;
  /** Stops waiting for what hangs (force-closes the workers); the caller then exits the process. */
  readonly abandon: () => void;
}

export async function boundedStop(deps: BoundedStopDeps): Promise<void> {
  // The last part of the bound is kept for handing back what is still running.
  const reserve = Math.min(HAND_BACK_RESERVE_MS, Math.floor(deps.timeoutMs / 4));
  const finished = await settlesWithin(deps.graceful, deps.timeoutMs - reserve);
  if (finished) return;
  deps.log.warn({ timeoutMs: deps.timeoutMs }, "graceful stop timed out; not waiting any longer");
  // Jobs still running: hand them back rather than leave them locked until their lock expires
  // (30 s) and a stalled check finds them. The executor re-reads the object before any write,
  // so the attempt that takes over resumes this one's work, never repeats a write blindly.
  await settlesWithin(deps.handBack(), reserve);
  // A dependency hangs (a job stuck on the API server, Redis not answering): stop waiting for
  // it; the caller exits the process. A job that could not be handed back is re-run by BullMQ's
  // stalled check. The Redis connection is left to the graceful path, which still finishes
  // if Redis comes back: cutting it under BullMQ's workers makes their loops spin on the
  // closed connection instead of ending.
  deps.abandon();
}
