/**
 * Executor of an approved `open-deletion-guard` request: sets `unstuck.dev/deletion-approved` on the
 * namespace — which the chart's ValidatingAdmissionPolicy requires before it admits the namespace's
 * DELETE, and lets only the bot's ServiceAccount set — then schedules the job that takes it off at the
 * end of the window (`jobs/deletion-guard.ts`). The value is signed and carries the request id and
 * the end of the window (`deletion-guard-token.ts`), so the reconcile loop (`jobs/guard-reconcile.ts`)
 * closes the guard on time even when that job is lost.
 *
 * Bound to the namespace as approved: the same uid (a namespace re-created under the same name is
 * another object, never opened on an old approval), the same resourceVersion, not Terminating.
 * The patch pins uid and resourceVersion with `test` operations, so the API server itself refuses
 * it if the namespace moved on between the check and the write. A resumed attempt that finds this
 * request's value already set completes (and schedules the close again: the job id collapses repeats).
 */
import { DELETION_APPROVED_ANNOTATION, type ApprovalRequest } from "../requests/model.js";
import type { OpenDeletionGuardAction } from "../requests/model.js";
import { ErrorCode, isUnstuckError, toUserError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import type { NamespaceSnapshot } from "../kube/types.js";
import type { Logger } from "../log.js";
import { parseGuardValue, type DeletionGuardSigner } from "../approvals/deletion-guard-token.js";
import { renderGuardOpened } from "../render/guard-status.js";

export interface GuardCloseData {
  readonly requestId: string;
  readonly namespace: string;
  /** The namespace's uid when the guard was opened (for the report: re-created or not). */
  readonly uid: string;
  readonly windowSeconds: number;
  /** The request's thread, when it was posted in Slack. */
  readonly channel?: string;
  readonly threadTs?: string;
}

export interface DeletionGuardDeps {
  readonly kube: Pick<KubePort, "getNamespace" | "annotateNamespace" | "removeNamespaceAnnotation">;
  readonly now: () => Date;
  /** Schedules the close at the end of the window; without it nothing is opened (FAILED). */
  readonly scheduleClose?: (data: GuardCloseData, delayMs: number) => Promise<void>;
  /** Signs the annotation's value (`UNSTUCK_APPROVAL_KEY`); without it nothing is opened (FAILED). */
  readonly signer?: DeletionGuardSigner;
  readonly log?: Logger;
}

export interface DeletionGuardOutcome {
  readonly state: "DONE" | "STALE" | "FAILED";
  readonly message: string;
}

/** Why the namespace as it is now is not the one approved; undefined when it is. */
export function judgeNamespace(
  action: OpenDeletionGuardAction,
  current: NamespaceSnapshot | null,
): string | undefined {
  const ns = action.namespace;
  if (current === null) return `Not applied: namespace ${ns} no longer exists.`;
  if (current.uid !== action.precondition.uid) {
    return `Not applied: namespace ${ns} is a different namespace now (re-created: uid ${current.uid ?? "(none)"}, approved ${action.precondition.uid}).`;
  }
  if (current.deletionTimestamp !== undefined) {
    return `Not applied: namespace ${ns} is already being deleted (since ${current.deletionTimestamp}).`;
  }
  if (current.resourceVersion !== action.precondition.resourceVersion) {
    return `Not applied: namespace ${ns} changed since approval (resourceVersion ${action.precondition.resourceVersion} → ${current.resourceVersion ?? "(none)"}); ask again so approvers see it as it is.`;
  }
  return undefined;
}

export async function applyOpenDeletionGuard(
  deps: DeletionGuardDeps,
  request: ApprovalRequest,
  action: OpenDeletionGuardAction,
): Promise<DeletionGuardOutcome> {
  const { kube, now, signer } = deps;
  const ns = action.namespace;
  const uid = action.precondition.uid;
  if (deps.scheduleClose === undefined || signer === undefined) {
    const cannot =
      signer === undefined ? "sign the guard's annotation (no approval key)" : "schedule the guard's close";
    return {
      state: "FAILED",
      message: `Failed: this bot cannot ${cannot}, so namespace ${ns} was not opened for deletion.`,
    };
  }
  const scheduleClose = deps.scheduleClose;
  const close: GuardCloseData = {
    requestId: request.id,
    namespace: ns,
    uid,
    windowSeconds: action.windowSeconds,
    ...(request.message !== undefined
      ? { channel: request.message.channel, threadTs: request.message.ts }
      : {}),
  };
  /** This request's value on the namespace, verified, when it carries it. */
  const ours = (seen: NamespaceSnapshot | null): Date | undefined => {
    if (seen?.uid !== uid) return undefined;
    const value = signer.verify(seen.annotations[DELETION_APPROVED_ANNOTATION], { namespace: ns, uid });
    return value?.requestId === request.id ? value.until : undefined;
  };
  const opened = (until: Date, already: boolean): DeletionGuardOutcome => ({
    state: "DONE",
    message: renderGuardOpened({
      namespace: ns,
      requestId: request.id,
      until,
      windowSeconds: action.windowSeconds,
      resumed: already,
    }),
  });
  const schedule = (until: Date): Promise<void> =>
    scheduleClose(close, Math.max(0, until.getTime() - now().getTime()));

  const current = await kube.getNamespace(ns);
  const resumed = ours(current);
  if (resumed !== undefined) {
    // An earlier attempt set it and died before recording the outcome: its window stands.
    await schedule(resumed);
    return opened(resumed, true);
  }
  const stale = judgeNamespace(action, current);
  if (stale !== undefined || current === null) return { state: "STALE", message: stale ?? "Not applied." };
  // The window runs from the approving vote (signed by the bot, verified before this runs), not from
  // this worker's clock: a late run, or a clock running fast, never opens it longer than approved.
  const approvedAt = Math.max(
    ...request.votes.filter((v) => v.decision === "approve").map((v) => Date.parse(v.at)),
  );
  const windowMs = action.windowSeconds * 1000;
  const closesAt = Number.isFinite(approvedAt) ? approvedAt + windowMs : now().getTime() + windowMs;
  if (closesAt <= now().getTime()) {
    return {
      state: "STALE",
      message: `Not applied: the approved window of ${String(action.windowSeconds)} s from the approval at ${new Date(approvedAt).toISOString()} has passed; namespace ${ns} was not opened for deletion. Ask again if it is still wanted.`,
    };
  }
  const until = new Date(Math.min(closesAt, now().getTime() + windowMs));
  const value = signer.sign({ namespace: ns, uid }, request.id, until);
  const written = parseGuardValue(value)?.until ?? until;
  try {
    await kube.annotateNamespace(
      ns,
      DELETION_APPROVED_ANNOTATION,
      value,
      {
        uid,
        resourceVersion: action.precondition.resourceVersion,
        annotations: current.annotations,
      },
      { requestId: request.id },
    );
  } catch (err) {
    if (isUnstuckError(err) && err.code === ErrorCode.Stale) {
      return {
        state: "STALE",
        message: `Not applied: namespace ${ns} changed between the check and the patch.`,
      };
    }
    // The answer may have been lost after the write: look before deciding.
    const seen = await kube.getNamespace(ns).catch(() => null);
    if (ours(seen) === undefined) throw err;
  }
  try {
    await schedule(written);
  } catch (err) {
    // An open guard with nothing to close it must not stay: take it off again at once.
    const why = toUserError(err).message;
    deps.log?.error({ requestId: request.id, err: { message: why } }, "could not schedule the guard's close");
    await kube.removeNamespaceAnnotation(
      ns,
      DELETION_APPROVED_ANNOTATION,
      { uid, value },
      { requestId: request.id },
    );
    return {
      state: "FAILED",
      message: `Failed: the close of the guard could not be scheduled (${why}), so ${DELETION_APPROVED_ANNOTATION} was taken off namespace ${ns} again; nothing is open.`,
    };
  }
  return opened(written, false);
}
