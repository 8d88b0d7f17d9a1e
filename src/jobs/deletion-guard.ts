/**
 * Closing a namespace's deletion guard at the end of its window: one delayed job per approved
 * request (its id derives from the request), on the waits queue. It takes the annotation
 * `unstuck.dev/deletion-approved` off again only while it still carries this request's value (a
 * JSON-patch `test` on the exact value): a namespace deleted meanwhile, re-created, or opened again
 * by a later request is left alone, and the thread says which. Every outcome is audited.
 *
 * This job is the punctual path, with the thread report; it is not what bounds the window. Should it
 * be lost (deleted from Redis, Redis data lost), the reconcile loop (`guard-reconcile.ts`) takes the
 * annotation off all the same once the `until` it carries has passed.
 */
import type { WaitsQueue } from "./sealed-jobs.js";
import type { AuditLog } from "../audit/log.js";
import { DELETION_APPROVED_ANNOTATION } from "../requests/model.js";
import { ErrorCode, isUnstuckError, toUserError, UnstuckError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import type { Logger } from "../log.js";
import { guardRequestId } from "../approvals/deletion-guard-token.js";
import type { GuardCloseData } from "../actions/deletion-guard.js";
import { postKey, unrecordedPosts, type PostLedger } from "./post-once.js";
import { JobName, jobId } from "./queues.js";
import type { ThreadReporter } from "./waits.js";
import { renderGuardCloseStatus } from "../render/guard-status.js";

export interface GuardCloseResult {
  readonly outcome: "closed" | "left-alone" | "gone";
  readonly text: string;
}

export interface GuardCloseDeps {
  readonly kube: Pick<KubePort, "getNamespace" | "removeNamespaceAnnotation">;
  readonly audit: AuditLog;
  readonly reporter?: ThreadReporter;
  readonly now: () => Date;
  readonly log?: Logger;
  /** Records the thread reply under the request's key, so a close that runs again says it once. */
  readonly posted?: PostLedger;
}

export function guardCloseJobId(requestId: string): string {
  return jobId(JobName.DeletionGuardClose, requestId);
}

/**
 * Schedule the close `delayMs` from now. Idempotent: a resumed executor scheduling it again joins
 * the existing job (same id) and keeps its original time.
 */
export async function enqueueGuardClose(
  waits: WaitsQueue,
  data: GuardCloseData,
  delayMs: number,
): Promise<string> {
  const id = guardCloseJobId(data.requestId);
  await waits.add(JobName.DeletionGuardClose, data, {
    jobId: id,
    delay: Math.max(0, delayMs),
    removeOnComplete: { age: 86_400 },
    removeOnFail: { age: 7 * 86_400 },
    // A close that cannot reach the API server is retried: an open guard must not stay open.
    attempts: 10,
    backoff: { type: "exponential", delay: 5000 },
  });
  return id;
}

/** Re-reads before each attempt; a namespace that moves on between read and patch is read again. */
const PATCH_ATTEMPTS = 3;

/** One close. Throws (to be retried) only when the cluster could not be read or written. */
export async function closeDeletionGuard(
  data: GuardCloseData,
  deps: GuardCloseDeps,
): Promise<GuardCloseResult> {
  const { kube, now } = deps;
  const ns = data.namespace;
  const minutes = `${String(Math.round(data.windowSeconds / 60))} min`;
  let result: GuardCloseResult | undefined;
  for (let attempt = 1; result === undefined; attempt++) {
    const seen = await kube.getNamespace(ns);
    if (seen === null) {
      result = {
        outcome: "gone",
        text: renderGuardCloseStatus({ kind: "gone", namespace: ns, window: minutes }),
      };
      break;
    }
    const value = seen.annotations[DELETION_APPROVED_ANNOTATION];
    const carries = guardRequestId(value);
    if (value === undefined || carries !== data.requestId || seen.uid !== data.uid) {
      const at = { namespace: ns, window: minutes, recreated: seen.uid !== data.uid };
      result = {
        outcome: "left-alone",
        text: renderGuardCloseStatus(
          value === undefined
            ? { kind: "already-closed", ...at }
            : carries !== undefined && carries !== data.requestId
              ? { kind: "other-request", ...at, otherRequestId: carries }
              : { kind: "foreign-value", ...at },
        ),
      };
      break;
    }
    if (seen.uid === undefined || seen.resourceVersion === undefined) {
      throw new UnstuckError(
        ErrorCode.Upstream,
        `The API server returned namespace ${ns} without a uid or resourceVersion.`,
      );
    }
    const closed: GuardCloseResult = {
      outcome: "closed",
      text: renderGuardCloseStatus({
        kind: "closed",
        namespace: ns,
        window: minutes,
        deletionStarted: seen.deletionTimestamp !== undefined,
      }),
    };
    try {
      // Only this exact value: a value written meanwhile (another approval) makes the API refuse it.
      const outcome = await kube.removeNamespaceAnnotation(
        ns,
        DELETION_APPROVED_ANNOTATION,
        { uid: seen.uid, value },
        { requestId: data.requestId },
      );
      if (outcome === "changed" && attempt < PATCH_ATTEMPTS) continue;
      if (outcome === "changed") {
        throw new UnstuckError(
          ErrorCode.Stale,
          `Namespace ${ns} kept changing while the guard was being closed.`,
        );
      }
      result = outcome === "removed" ? closed : undefined;
      if (result === undefined) continue; // gone meanwhile: the next read says so
    } catch (err) {
      // Moved on between the read and the patch: read again (bounded), never patch blindly.
      if (isUnstuckError(err) && err.code === ErrorCode.Stale && attempt < PATCH_ATTEMPTS) continue;
      if (isUnstuckError(err) && err.code === ErrorCode.Stale) {
        // Still moving: a transient condition for the job's own retry, not a permanent refusal.
        throw new UnstuckError(ErrorCode.Upstream, toUserError(err).message, { ...err.details });
      }
      throw err;
    }
  }
  await deps.audit.append({
    at: now().toISOString(),
    actor: { kind: "system", component: "deletion-guard" },
    event: result.outcome === "closed" ? "deletion-guard.closed" : `deletion-guard.${result.outcome}`,
    requestId: data.requestId,
    action: "open-deletion-guard",
    target: `deletion guard of namespace ${ns}`,
    result: result.text,
  });
  const { channel, threadTs } = data;
  const reporter = deps.reporter;
  if (channel !== undefined && threadTs !== undefined && reporter !== undefined) {
    try {
      const text = result.text;
      await (deps.posted ?? unrecordedPosts).once(postKey("guard-close", data.requestId, "result"), () =>
        reporter.post(channel, threadTs, text),
      );
    } catch (err) {
      deps.log?.warn(
        { requestId: data.requestId, err: { message: toUserError(err).message } },
        "could not post the deletion guard's close in the thread",
      );
    }
  }
  return result;
}
