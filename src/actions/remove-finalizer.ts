/**
 * Executor for an approved `remove-finalizer` request. It acts only on the exact state that was
 * approved: it re-reads the object, compares resourceVersion and finalizers with the frozen
 * precondition, and sends a JSON patch whose `test` operations make the API server itself refuse
 * the change if anything moved in between. So a patch applies at most once, whoever retries.
 */
import type { AuditLog } from "../audit/log.js";
import { ErrorCode, isPermanent, isUnstuckError, toUserError, UnstuckError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import type { ObjectSnapshot, ResourceType } from "../kube/types.js";
import type { Logger } from "../log.js";
import { notifySafely, type ApprovalNotifier } from "../approvals/notifier.js";
import type { ApprovalStore } from "../approvals/store.js";
import type {
  ExecutionResult,
  ObjectTarget,
  RemoveFinalizerAction,
  RequestState,
} from "../approvals/types.js";
import { describeTarget, isTerminal } from "../approvals/types.js";

/** Test seams to stop a worker at a precise point (the killed-worker tests use them). */
export interface ExecutorHooks {
  /** After the request was claimed EXECUTING, before the object is read. */
  afterClaim?(requestId: string): Promise<void>;
  /** After the patch was accepted, before the outcome is recorded. */
  afterPatch?(requestId: string): Promise<void>;
}

export interface RemoveFinalizerDeps {
  readonly store: ApprovalStore;
  readonly kube: KubePort;
  readonly audit: AuditLog;
  readonly now: () => Date;
  readonly notifier?: ApprovalNotifier;
  readonly log?: Logger;
  readonly hooks?: ExecutorHooks;
}

export interface ExecutionAttempt {
  /** Unique per attempt; fences a taken-over attempt out of recording an outcome. */
  readonly token: string;
  /** True when the job will not be retried after this attempt (a transient error becomes FAILED). */
  readonly finalAttempt: boolean;
}

export type ExecutionOutcome =
  | {
      readonly kind: "finished";
      readonly state: "DONE" | "STALE" | "FAILED";
      readonly result: ExecutionResult;
    }
  /** Nothing to do: the request already ended (a duplicate job) or another attempt took over. */
  | { readonly kind: "skipped"; readonly state: RequestState | "" };

/** What to do after re-reading the object. */
export type Verdict =
  | { readonly kind: "apply" }
  | { readonly kind: "stale"; readonly message: string }
  | { readonly kind: "done"; readonly message: string };

function list(values: readonly string[]): string {
  return `[${values.join(", ")}]`;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/**
 * Compare the object as it is now with the approved precondition. `resumed` says an earlier
 * attempt claimed the request and died, so its patch may already have been applied.
 */
export function judge(
  action: RemoveFinalizerAction,
  current: ObjectSnapshot | null,
  resumed: boolean,
): Verdict {
  const { precondition, remove } = action;
  if (current === null) {
    return resumed
      ? {
          kind: "done",
          message:
            "Completed by the interrupted attempt: the object is gone, so its finalizers were released and deletion finished.",
        }
      : { kind: "stale", message: "Not applied: the object is gone." };
  }
  const rvNow = current.resourceVersion ?? "(none)";
  const rvSame = rvNow === precondition.resourceVersion;
  const finSame = sameList(current.finalizers, precondition.finalizers);
  if (rvSame && finSame) return { kind: "apply" };
  const expectedAfter = precondition.finalizers.filter((f) => !remove.includes(f));
  if (resumed && sameList(current.finalizers, expectedAfter)) {
    return {
      kind: "done",
      message: `Completed by the interrupted attempt: finalizers are now ${list(current.finalizers)}.`,
    };
  }
  const changes: string[] = [];
  if (!rvSame) changes.push(`resourceVersion ${precondition.resourceVersion} → ${rvNow}`);
  changes.push(
    finSame
      ? "finalizers unchanged"
      : `finalizers ${list(precondition.finalizers)} → ${list(current.finalizers)}`,
  );
  return {
    kind: "stale",
    message: `Not applied: the object changed since approval (${changes.join("; ")}).`,
  };
}

/** The `ResourceType` the kube port needs, rebuilt from the frozen target. */
export function resourceTypeOf(target: ObjectTarget): ResourceType {
  return {
    group: target.group,
    version: target.version,
    apiVersion: target.apiVersion,
    kind: target.kind,
    resource: target.resource,
    namespaced: true,
    verbs: ["get", "patch"],
  };
}

/**
 * Run one attempt. Returns how it ended; throws only when the job should retry (a transient
 * error on a non-final attempt) or fail without retry (a permanent error, already recorded).
 */
export async function executeRemoveFinalizer(
  deps: RemoveFinalizerDeps,
  requestId: string,
  attempt: ExecutionAttempt,
): Promise<ExecutionOutcome> {
  const { store, kube, audit, now } = deps;
  const claim = await store.claimExecution(requestId, attempt.token, now());
  if (claim.status === "NOT_FOUND") {
    throw new UnstuckError(ErrorCode.NotFound, "The approval request to execute does not exist.", {
      requestId,
    });
  }
  if (claim.status === "INVALID_STATE") {
    if (claim.state !== "" && isTerminal(claim.state)) return { kind: "skipped", state: claim.state };
    throw new UnstuckError(ErrorCode.InvalidState, `The request is ${claim.state}, not APPROVED.`, {
      requestId,
    });
  }
  const request = await store.get(requestId);
  if (!request) throw new UnstuckError(ErrorCode.NotFound, "The approval request vanished.", { requestId });
  const action = request.action;
  const target = describeTarget(action.target);
  const resumed = claim.status === "RESUMED";
  const system = { kind: "system", component: "executor" } as const;
  await audit.append({
    at: now().toISOString(),
    actor: system,
    event: resumed ? "execution.resumed" : "execution.claimed",
    requestId,
    action: action.type,
    target,
    before: resumed ? "EXECUTING" : "APPROVED",
    after: "EXECUTING",
    ...(resumed ? { result: `attempt ${claim.attempts} takes over from an interrupted attempt` } : {}),
  });
  if (!resumed) await notifySafely(deps.notifier, deps.log, { ...request, state: "EXECUTING" });

  const finish = async (
    state: "DONE" | "STALE" | "FAILED",
    message: string,
    after?: ObjectSnapshot,
  ): Promise<ExecutionOutcome> => {
    const result: ExecutionResult = {
      outcome: state === "DONE" ? "done" : state === "STALE" ? "stale" : "failed",
      message,
      at: now().toISOString(),
      ...(after?.resourceVersion ? { resourceVersionAfter: after.resourceVersion } : {}),
      ...(after ? { finalizersAfter: after.finalizers } : {}),
    };
    const done = await store.finishExecution(requestId, attempt.token, state, result, now());
    if (done.status !== "OK") {
      deps.log?.warn(
        { requestId, status: done.status },
        "execution outcome not recorded: another attempt owns it",
      );
      return { kind: "skipped", state: done.state };
    }
    await audit.append({
      at: result.at,
      actor: system,
      event: `execution.${result.outcome}`,
      requestId,
      action: action.type,
      target,
      before: "EXECUTING",
      after: state,
      result: message,
    });
    const latest = await store.get(requestId);
    await notifySafely(deps.notifier, deps.log, latest ?? { ...request, state, result }, message);
    return { kind: "finished", state, result };
  };

  try {
    await deps.hooks?.afterClaim?.(requestId);
    const type = resourceTypeOf(action.target);
    const { namespace, name } = action.target;
    const current = await kube.getObject(type, namespace, name);
    const verdict = judge(action, current, resumed);
    if (verdict.kind === "stale") return await finish("STALE", verdict.message);
    if (verdict.kind === "done") return await finish("DONE", verdict.message, current ?? undefined);
    let after: ObjectSnapshot;
    try {
      after = await kube.removeFinalizers(type, namespace, name, action.precondition, action.remove);
    } catch (err) {
      if (isUnstuckError(err) && err.code === ErrorCode.Stale) {
        return await finish("STALE", "Not applied: the object changed between the check and the patch.");
      }
      throw err;
    }
    await deps.hooks?.afterPatch?.(requestId);
    return await finish(
      "DONE",
      `Removed ${list(action.remove)} from ${target}; finalizers now ${list(after.finalizers)}.`,
      after,
    );
  } catch (err) {
    if (isPermanent(err) || attempt.finalAttempt) {
      const { message } = toUserError(err);
      await finish("FAILED", `Failed: ${message}`);
    }
    // Transient on a non-final attempt: stay EXECUTING; the retry resumes and re-reads.
    throw err;
  }
}
