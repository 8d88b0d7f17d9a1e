/**
 * After a forced removal the namespace is gone and its load balancers with it; the names and
 * CloudFront origins that reached them stay stale until the namespace is re-created (Argo CD) and
 * the controller builds new load balancers. This wait re-traces the namespace's paths until a repair
 * can be planned (then it posts the card with *Fix the path*), the path is intact again, or the
 * deadline passes (then it says the stack was not re-created and how to repoint by hand). Like every
 * wait it holds no worker between checks and owns one status message in the thread; its posts (the
 * status, the card, the follow-ups) are recorded under its key, so a check that runs again posts
 * none of them twice.
 */
import { DelayedError } from "bullmq";
import type { WaitJob, WaitsQueue } from "./sealed-jobs.js";
import { isPermanent, toUserError } from "../errors.js";
import type { Logger } from "../log.js";
import { ObservationKind, type Observe } from "../audit/observation.js";
import { postKey, unrecordedPosts, type PostLedger } from "./post-once.js";
import { JobName, jobId } from "./queues.js";
import { renderPathRecheckStatus } from "../render/wait-status.js";
import { statusMessage, type ThreadCard, type ThreadReporter } from "./waits.js";

export interface PathRecheckData {
  readonly namespace: string;
  readonly channel: string;
  readonly threadTs: string;
  readonly startedAt: number;
  readonly deadline: number;
  readonly intervalMs: number;
  readonly checks: number;
  readonly statusTs?: string;
}

export interface PathRecheckResult {
  readonly outcome: "repairable" | "intact" | "timed-out";
  readonly checks: number;
}

/** What one re-trace found: a card to post, and whether a repair can be requested now. */
export interface Replanned {
  readonly state: "repairable" | "intact" | "waiting";
  /** One line for the status message: what is stale, or what is missing. */
  readonly summary: string;
  readonly card: ThreadCard;
  /**
   * Once the stack is back: what else to say in the thread (the orphan check again — the controller
   * has made new resources, and what the old stack left is now plain to see). Asked only then.
   */
  readonly followUps?: () => Promise<readonly string[]>;
}

export interface PathRecheckDeps {
  readonly replan: (namespace: string) => Promise<Replanned>;
  readonly reporter: ThreadReporter;
  readonly now: () => Date;
  readonly log?: Logger;
  /** Records re-checks that concluded, and the orphan checks after them, for the incident timeline. */
  readonly record?: Observe;
  /** Records each post under this re-check's key, so a check that runs again posts nothing twice. */
  readonly posted?: PostLedger;
}

export interface PathRecheckRequest {
  readonly namespace: string;
  readonly channel: string;
  readonly threadTs: string;
  /** How long to wait for the controller (default 30 min). */
  readonly timeoutMs?: number;
  /** Pause between re-traces (default 30 s). */
  readonly intervalMs?: number;
}

export async function enqueuePathRecheck(
  waits: WaitsQueue,
  req: PathRecheckRequest,
  now: Date,
): Promise<string> {
  const id = jobId(JobName.PathRecheck, req.namespace, req.channel, req.threadTs);
  const data: PathRecheckData = {
    namespace: req.namespace,
    channel: req.channel,
    threadTs: req.threadTs,
    startedAt: now.getTime(),
    deadline: now.getTime() + (req.timeoutMs ?? 30 * 60_000),
    intervalMs: req.intervalMs ?? 30_000,
    checks: 0,
  };
  await waits.add(JobName.PathRecheck, data, {
    jobId: id,
    // The first re-trace after one pause: the namespace's path was traced just now.
    delay: data.intervalMs,
    removeOnComplete: true,
    removeOnFail: { age: 86_400 },
    attempts: 3,
    backoff: { type: "exponential", delay: 5000 },
  });
  return id;
}

/** The idempotency key of one post of one re-check (one per namespace, thread and start). */
function recheckPostKey(data: PathRecheckData, what: string): string {
  return postKey("path-recheck", data.namespace, data.channel, data.threadTs, data.startedAt, what);
}

function minutes(ms: number): string {
  const m = Math.round(ms / 60_000);
  return m >= 1 ? `${String(m)} min` : `${String(Math.round(ms / 1000))} s`;
}

export async function checkPathRecheck(
  job: WaitJob<PathRecheckData>,
  token: string | undefined,
  deps: PathRecheckDeps,
): Promise<PathRecheckResult> {
  const data = job.data;
  const now = deps.now().getTime();
  const checks = data.checks + 1;
  const ns = data.namespace;
  let status: string;
  let result: PathRecheckResult | undefined;
  let card: ThreadCard | undefined;
  let followUps: Replanned["followUps"];
  try {
    const r = await deps.replan(ns);
    if (r.state !== "waiting") followUps = r.followUps;
    if (r.state === "repairable") {
      status = renderPathRecheckStatus({ kind: "repairable", namespace: ns });
      result = { outcome: "repairable", checks };
      card = r.card;
    } else if (r.state === "intact") {
      status = renderPathRecheckStatus({ kind: "intact", namespace: ns, check: checks });
      result = { outcome: "intact", checks };
    } else if (now >= data.deadline) {
      status = renderPathRecheckStatus({
        kind: "no-replacement",
        namespace: ns,
        after: minutes(now - data.startedAt),
        summary: r.summary,
      });
      result = { outcome: "timed-out", checks };
      card = r.card;
    } else {
      status = renderPathRecheckStatus({
        kind: "waiting",
        namespace: ns,
        summary: r.summary,
        check: checks,
        nextIn: minutes(data.intervalMs),
        givesUpAfter: minutes(data.deadline - data.startedAt),
      });
    }
  } catch (err) {
    if (isPermanent(err)) throw err;
    const { message } = toUserError(err);
    if (now >= data.deadline) {
      status = renderPathRecheckStatus({ kind: "unconfirmed", namespace: ns, message });
      result = { outcome: "timed-out", checks };
    } else {
      status = renderPathRecheckStatus({
        kind: "check-failed",
        namespace: ns,
        check: checks,
        message,
        retryIn: minutes(data.intervalMs),
      });
    }
  }
  const posted = deps.posted ?? unrecordedPosts;
  const statusTs = await statusMessage(deps.reporter, posted, recheckPostKey(data, "status"), data, status);
  const where = {
    channel: data.channel,
    threadTs: data.threadTs,
    component: "path-recheck",
    target: `namespace ${ns}`,
  };
  if (result)
    await deps.record?.({
      ...where,
      kind: ObservationKind.PathRecheck,
      result: `${result.outcome}: ${status}`,
    });
  if (card !== undefined) {
    const shown = card;
    await posted.once(recheckPostKey(data, "card"), () =>
      deps.reporter.postCard
        ? deps.reporter.postCard(data.channel, data.threadTs, shown)
        : deps.reporter.post(data.channel, data.threadTs, shown.text),
    );
  }
  if (followUps !== undefined) {
    const texts = await followUps().catch((err: unknown) => [
      `Could not check orphans again: ${toUserError(err).message.slice(0, 300)}`,
    ]);
    for (const [i, t] of texts.entries()) {
      await posted.once(recheckPostKey(data, `follow-up:${String(i)}`), () =>
        deps.reporter.post(data.channel, data.threadTs, t),
      );
    }
    if (texts.length > 0) {
      await deps.record?.({ ...where, kind: ObservationKind.OrphanCheck, result: texts.join(" ") });
    }
  }
  if (result) return result;
  await job.updateData({ ...data, checks, statusTs });
  await job.moveToDelayed(now + data.intervalMs, token);
  throw new DelayedError();
}
