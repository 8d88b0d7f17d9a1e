/**
 * Executor for an approved `remove-finalizer` request. It verifies, it does not trust: before any
 * write it checks the record's MACs and re-derives the approval from the signed votes (see
 * `approvals/verify.ts`); a record that fails is refused (FAILED, nothing written) and raised in
 * the audit log and the request's thread. It acts only on the exact state that was approved: it
 * re-reads the object, requires it to be the same object (uid) and being deleted, compares
 * resourceVersion and finalizers with the frozen precondition, and sends a JSON patch whose `test`
 * operations make the API server itself refuse the change if anything moved in between.
 *
 * A record signed with a key the bot no longer holds (rotated out: neither `UNSTUCK_APPROVAL_KEY`
 * nor `UNSTUCK_APPROVAL_KEY_PREVIOUS`) is not executed either, but ends FAILED saying so, not
 * TAMPERED. A request that ended already and is found put back to APPROVED is refused by the claim
 * (`lua/finished.lua`): never executed twice.
 *
 * A write is never retried blindly: after an ambiguous failure (5xx, timeout, reset) the object
 * is re-read first. Finalizers gone (or the object gone) → DONE, confirmed by the re-read;
 * unchanged → the same patch again (bounded); changed otherwise → STALE.
 */
import { setTimeout as delay } from "node:timers/promises";
import type { AuditLog } from "../audit/log.js";
import { ErrorCode, isPermanent, isUnstuckError, toUserError, UnstuckError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import type { ObjectSnapshot, ResourceType } from "../kube/types.js";
import type { Logger } from "../log.js";
import { notifySafely, type ApprovalNotifier } from "../approvals/notifier.js";
import type { ApprovalSigner } from "../approvals/integrity.js";
import type { ApprovalPolicy } from "../approvals/policy.js";
import type { ApprovalStore } from "../approvals/store.js";
import { verifyApproval } from "../approvals/verify.js";
import type {
  ExecutionResult,
  ObjectTarget,
  RemoveFinalizerAction,
  RequestState,
} from "../approvals/types.js";
import { approverIds, auditChange, describeAction, describeTarget, isTerminal } from "../approvals/types.js";
import type { ApprovalRequest } from "../approvals/types.js";
import type { AwsPort } from "../aws/port.js";
import type { AuditEntry } from "../audit/log.js";
import { applyRepoint, type RepointApplied } from "./repoint-path.js";
import { applyDeleteOrphans } from "./delete-orphans.js";
import { applyOpenDeletionGuard, type GuardCloseData } from "./deletion-guard.js";
import type { DeletionGuardSigner } from "../approvals/deletion-guard-token.js";

/** Test seams to stop a worker at a precise point (the killed-worker tests use them). */
export interface ExecutorHooks {
  /** After the request was claimed EXECUTING, before the object is read. */
  afterClaim?(requestId: string): Promise<void>;
  /** After the patch was accepted, before the outcome is recorded. */
  afterPatch?(requestId: string): Promise<void>;
}

export interface RemoveFinalizerDeps {
  readonly store: ApprovalStore;
  /** Verifies the record's MACs (`UNSTUCK_APPROVAL_KEY`). */
  readonly signer: ApprovalSigner;
  /** The approver list, looked up live to re-derive eligibility from the signed votes. */
  readonly policy: Pick<ApprovalPolicy, "approverIds">;
  /** PATCH attempts when the API server's answer is ambiguous and a re-read shows nothing changed (default 3). */
  readonly patchAttempts?: number;
  /** Pause before re-sending such a patch, times the attempt number (default 250 ms). */
  readonly patchRetryDelayMs?: number;
  readonly kube: KubePort;
  readonly audit: AuditLog;
  readonly now: () => Date;
  readonly notifier?: ApprovalNotifier;
  readonly log?: Logger;
  readonly hooks?: ExecutorHooks;
  /** AWS, for `repoint-path` requests (absent: those fail with a clear message). */
  readonly aws?: AwsPort;
  /**
   * Follow-up work started from the executor's outcome (not from a message edit): the namespace
   * wait after a finalizer removal, the Route 53 / CloudFront waits after a repoint. Failures are logged.
   */
  readonly afterDone?: (request: ApprovalRequest, applied?: RepointApplied) => Promise<void>;
  /** Schedules the close of an opened deletion guard (`open-deletion-guard`); absent: those fail. */
  readonly scheduleGuardClose?: (data: GuardCloseData, delayMs: number) => Promise<void>;
  /** Signs the deletion guard's annotation (`UNSTUCK_APPROVAL_KEY`); absent: those requests fail. */
  readonly guardSigner?: DeletionGuardSigner;
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
      readonly state: "DONE" | "STALE" | "FAILED" | "TAMPERED";
      readonly result: ExecutionResult;
    }
  /** Nothing to do: the request already ended (a duplicate job) or another attempt took over. */
  | { readonly kind: "skipped"; readonly state: RequestState | "" };

/** What to do after re-reading the object. */
export type Verdict =
  | { readonly kind: "apply" }
  | { readonly kind: "stale"; readonly message: string }
  | { readonly kind: "done"; readonly message: string };

const OUTCOME_OF = {
  DONE: "done",
  STALE: "stale",
  FAILED: "failed",
  TAMPERED: "tampered",
} as const satisfies Record<string, ExecutionResult["outcome"]>;

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

/**
 * A failure after which the write may have been applied: a 5xx, a timeout, a reset connection or
 * anything unrecognised. Refusals (4xx: RBAC, validation, not found) were not applied.
 */
export function isAmbiguous(err: unknown): boolean {
  if (!isUnstuckError(err)) return true;
  if (err.code === ErrorCode.Unreachable || err.code === ErrorCode.Internal) return true;
  if (err.code === ErrorCode.Upstream) {
    const status = err.details.status;
    return status === undefined || status >= 500;
  }
  return false;
}

function errorCode(err: unknown): string {
  return isUnstuckError(err) ? err.code : "unknown";
}

/** Decide from a re-read after an ambiguous patch failure. */
export function afterAmbiguous(
  action: RemoveFinalizerAction,
  seen: ObjectSnapshot | null,
): { kind: "done"; message: string } | { kind: "retry" } | { kind: "stale"; message: string } {
  const target = describeTarget(action.target);
  if (seen === null) {
    return {
      kind: "done",
      message: `Removed ${list(action.remove)} from ${target}: the object is gone, so deletion finished`,
    };
  }
  const { precondition, remove } = action;
  const expectedAfter = precondition.finalizers.filter((f) => !remove.includes(f));
  if (sameList(seen.finalizers, expectedAfter)) {
    return {
      kind: "done",
      message: `Removed ${list(remove)} from ${target}; finalizers now ${list(seen.finalizers)}`,
    };
  }
  if (
    seen.resourceVersion === precondition.resourceVersion &&
    sameList(seen.finalizers, precondition.finalizers)
  ) {
    return { kind: "retry" };
  }
  return {
    kind: "stale",
    message: `Not applied: after the API server's answer was lost, the object had changed (resourceVersion ${precondition.resourceVersion} → ${seen.resourceVersion ?? "(none)"}; finalizers ${list(precondition.finalizers)} → ${list(seen.finalizers)}).`,
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
  const system = { kind: "system", component: "executor" } as const;
  // The claim's audit entry is written by the claim's own script (it fills in a resumed attempt).
  const pre = await store.get(requestId);
  /** Who asked, who approved (as recorded) and the exact change, on every entry about the request. */
  const about = (
    request: ApprovalRequest | null,
    approvers?: readonly string[],
  ): Pick<AuditEntry, "requester" | "approvers" | "change"> => {
    if (request === null) return {};
    const ids = approvers ?? approverIds(request);
    return {
      requester: { userId: request.requester.userId, teamId: request.requester.teamId },
      ...(ids.length > 0 ? { approvers: ids } : {}),
      change: auditChange(request.action),
    };
  };
  const claimEntry: AuditEntry = {
    at: now().toISOString(),
    actor: system,
    event: "execution.claimed",
    requestId,
    action: pre?.action.type ?? "unknown",
    target: pre ? describeAction(pre.action) : "unknown",
    ...about(pre),
    before: "APPROVED",
    after: "EXECUTING",
  };
  const claim = await store.claimExecution(requestId, attempt.token, now(), claimEntry);
  if (claim.status === "FINISHED") {
    // It had ended already and its record was put back (an earlier, signed state restored): the claim
    // refused it and restored how it ended; the first refusal wrote the one audit entry.
    deps.log?.warn(
      { requestId, found: claim.prior.state, ended: claim.state },
      "refused to execute a finished request put back to an earlier state",
    );
    if (claim.refusedNow) {
      audit.mirror({
        ...claimEntry,
        event: "execution.refused",
        before: claim.prior.state,
        after: claim.state,
        result: `it had already ended ${claim.state}; its record, put back to ${claim.prior.state}, was refused and restored`,
      });
    }
    return { kind: "skipped", state: claim.state };
  }
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
  const record = await store.getSigned(requestId);
  const resumed = claim.status === "RESUMED";
  if (!record) {
    // Not a record this bot could have written (unparseable): nothing to verify, nothing to act on.
    const result: ExecutionResult = {
      outcome: "tampered",
      message: "Refused: the approval record is unreadable, so it was not executed.",
      at: now().toISOString(),
    };
    const entry: AuditEntry = {
      at: result.at,
      actor: system,
      event: "approval.tampered",
      requestId,
      action: "unknown",
      target: "unknown",
      before: claim.prior.state,
      after: "TAMPERED",
      result: result.message,
    };
    await store.finishExecution(requestId, attempt.token, "TAMPERED", result, now(), entry);
    audit.mirror(entry);
    deps.log?.error({ requestId }, "refused an unreadable approval record");
    return { kind: "finished", state: "TAMPERED", result };
  }
  const request = record.request;
  const action = request.action;
  const target = describeAction(action);
  audit.mirror({
    ...claimEntry,
    ...(resumed
      ? {
          event: "execution.resumed",
          before: "EXECUTING",
          result: `attempt ${String(claim.attempts)} takes over from an interrupted attempt`,
        }
      : {}),
  });

  /** The approvers the verification counted, once it has run (before: as recorded). */
  let verified: readonly string[] | undefined;
  const finish = async (
    state: "DONE" | "STALE" | "FAILED" | "TAMPERED",
    message: string,
    after?: ObjectSnapshot,
    applied?: RepointApplied,
  ): Promise<ExecutionOutcome> => {
    const result: ExecutionResult = {
      outcome: OUTCOME_OF[state],
      message,
      at: now().toISOString(),
      ...(after?.resourceVersion ? { resourceVersionAfter: after.resourceVersion } : {}),
      ...(after ? { finalizersAfter: after.finalizers } : {}),
    };
    const finishEntry: AuditEntry = {
      at: result.at,
      actor: system,
      event: `execution.${result.outcome}`,
      requestId,
      action: action.type,
      target,
      ...about(request, verified),
      before: "EXECUTING",
      after: state,
      result: message,
    };
    // Recorded with the outcome by one script: no crash in between can lose the entry.
    const done = await store.finishExecution(requestId, attempt.token, state, result, now(), finishEntry);
    if (done.status !== "OK") {
      deps.log?.warn(
        { requestId, status: done.status },
        "execution outcome not recorded: another attempt owns it",
      );
      return { kind: "skipped", state: done.state };
    }
    audit.mirror(finishEntry);
    const latest = await store.get(requestId);
    await notifySafely(deps.notifier, deps.log, latest ?? { ...request, state, result }, message);
    // A STALE repoint may still have applied its first steps: their waits run too.
    const wrote = applied !== undefined && applied.route53Changes.length + applied.distributions.length > 0;
    if (deps.afterDone && (state === "DONE" || wrote)) {
      await deps.afterDone(latest ?? { ...request, state, result }, applied).catch((err: unknown) => {
        deps.log?.error({ err, requestId }, "could not start the follow-up of an executed request");
      });
    }
    return { kind: "finished", state, result };
  };

  try {
    // Live lookup (no cache): an approver removed since the vote no longer counts.
    const approvers = await deps.policy.approverIds({ live: true });
    const verification = verifyApproval({
      id: requestId,
      record,
      prior: claim.prior,
      signer: deps.signer,
      approvers,
    });
    if (!verification.ok && verification.cause === "retired-key") {
      // A key rotation, not an intruder: the record was signed with a key the bot no longer holds.
      const detail = verification.problems.join("; ");
      const keys = verification.retiredKeyIds.join(", ");
      const message = `Not executed: this request was signed with a retired approval key (key id ${keys}: neither UNSTUCK_APPROVAL_KEY nor UNSTUCK_APPROVAL_KEY_PREVIOUS), so its approval cannot be verified (${detail}). Nothing was changed; ask for a new approval.`;
      deps.log?.warn({ requestId, keyIds: verification.retiredKeyIds }, "approval signed with a retired key");
      await audit.append({
        at: now().toISOString(),
        actor: system,
        event: "approval.retired-key",
        requestId,
        action: action.type,
        target,
        ...about(request),
        before: claim.prior.state,
        after: "FAILED",
        result: detail,
      });
      return await finish("FAILED", message);
    }
    if (!verification.ok) {
      const detail = verification.problems.join("; ");
      const message = `Refused: this approval record failed verification (${detail}). Nothing was changed; someone may have written to the bot's Redis directly.`;
      deps.log?.error({ requestId, problems: verification.problems }, "refused a tampered approval record");
      await audit.append({
        at: now().toISOString(),
        actor: system,
        event: "approval.tampered",
        requestId,
        action: action.type,
        target,
        ...about(request),
        before: claim.prior.state,
        after: "TAMPERED",
        result: detail,
      });
      return await finish("TAMPERED", `:rotating_light: ${message}`);
    }
    verified = verification.approvers;
    if (!resumed) await notifySafely(deps.notifier, deps.log, { ...request, state: "EXECUTING" });
    await deps.hooks?.afterClaim?.(requestId);
    if (action.type === "open-deletion-guard") {
      const outcome = await applyOpenDeletionGuard(
        {
          kube,
          now,
          ...(deps.scheduleGuardClose ? { scheduleClose: deps.scheduleGuardClose } : {}),
          ...(deps.guardSigner ? { signer: deps.guardSigner } : {}),
          ...(deps.log ? { log: deps.log } : {}),
        },
        request,
        action,
      );
      return await finish(outcome.state, outcome.message);
    }
    if (action.type === "delete-orphans") {
      if (deps.aws === undefined) {
        return await finish(
          "FAILED",
          "Failed: AWS is not configured for the bot (no region), so nothing was deleted.",
        );
      }
      const outcome = await applyDeleteOrphans(
        { aws: deps.aws, kube, ...(deps.log ? { log: deps.log } : {}) },
        action,
      );
      return await finish(outcome.state, outcome.message);
    }
    if (action.type === "repoint-path") {
      if (deps.aws === undefined) {
        return await finish(
          "FAILED",
          "Failed: AWS is not configured for the bot (no region), so nothing was changed.",
        );
      }
      const outcome = await applyRepoint(
        { aws: deps.aws, ...(deps.log ? { log: deps.log } : {}) },
        requestId,
        action,
      );
      return await finish(outcome.state, outcome.message, undefined, outcome.applied);
    }
    const type = resourceTypeOf(action.target);
    const { namespace, name } = action.target;
    const current = await kube.getObject(type, namespace, name);
    if (current !== null && action.target.uid !== undefined && current.uid !== action.target.uid) {
      return await finish(
        "STALE",
        `Not applied: ${target} is a different object now (uid ${current.uid ?? "(none)"}, approved ${action.target.uid}).`,
      );
    }
    if (current !== null && !current.deletionTimestamp) {
      return await finish(
        "STALE",
        `Not applied: ${target} is not being deleted (no deletionTimestamp), so its finalizers still guard a live object.`,
      );
    }
    const verdict = judge(action, current, resumed);
    if (verdict.kind === "stale") return await finish("STALE", verdict.message);
    if (verdict.kind === "done") return await finish("DONE", verdict.message, current ?? undefined);
    const maxAttempts = Math.max(1, deps.patchAttempts ?? 3);
    for (let patchAttempt = 1; ; patchAttempt++) {
      let after: ObjectSnapshot;
      try {
        // Named for the API server's audit log: field manager and User-Agent carry the request id.
        after = await kube.removeFinalizers(type, namespace, name, action.precondition, action.remove, {
          requestId,
        });
      } catch (err) {
        if (isUnstuckError(err) && err.code === ErrorCode.Stale) {
          return await finish("STALE", "Not applied: the object changed between the check and the patch.");
        }
        if (!isAmbiguous(err)) throw err;
        // The write may or may not have been applied: look before deciding.
        const why = toUserError(err).message;
        deps.log?.warn(
          { requestId, patchAttempt, code: errorCode(err) },
          "ambiguous patch failure; re-reading",
        );
        const seen = await kube.getObject(type, namespace, name);
        const check = afterAmbiguous(action, seen);
        if (check.kind === "done") {
          return await finish(
            "DONE",
            `${check.message} (confirmed by re-read after the API server's answer was lost: ${why})`,
            seen ?? undefined,
          );
        }
        if (check.kind === "stale") return await finish("STALE", check.message);
        if (patchAttempt >= maxAttempts) throw err;
        await delay((deps.patchRetryDelayMs ?? 250) * patchAttempt);
        continue;
      }
      await deps.hooks?.afterPatch?.(requestId);
      return await finish(
        "DONE",
        `Removed ${list(action.remove)} from ${target}; finalizers now ${list(after.finalizers)}.`,
        after,
      );
    }
  } catch (err) {
    if (isPermanent(err) || attempt.finalAttempt) {
      const { message } = toUserError(err);
      await finish("FAILED", `Failed: ${message}`);
    }
    // Transient on a non-final attempt: stay EXECUTING; the retry resumes and re-reads.
    throw err;
  }
}
