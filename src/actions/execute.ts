/**
 * The one executor of every approved request, whatever its kind (`executors.ts` runs the kind's own
 * change). It verifies, it does not trust: before any write it checks the record's MACs and
 * re-derives the approval from the signed votes (see `approvals/verify.ts`); a record that fails is
 * refused (FAILED, nothing written) and raised in the audit log and the request's thread. Each kind
 * acts only on the exact state that was approved; a finalizer removal, for one, re-reads the object, requires it to be the same object (uid) and being deleted, compares
 * resourceVersion and finalizers with the frozen precondition, and sends a JSON patch whose `test`
 * operations make the API server itself refuse the change if anything moved in between.
 *
 * A record with a signature by a key the keyring does not hold is refused the same way: a key is
 * retired from the keyring only once nothing it signed is live. A request that ended already and is
 * found put back to APPROVED is refused by the claim (`approval-prelude-finished.lua` in `src/redis/lua/`): never executed twice.
 *
 * A write is never retried blindly: after an ambiguous failure (5xx, timeout, reset) the object
 * is re-read first. Finalizers gone (or the object gone) → DONE, confirmed by the re-read;
 * unchanged → the same patch again (bounded); changed otherwise → STALE.
 */
import { ErrorCode, isPermanent, toUserError, UnstuckError } from "../errors.js";
import type { ObjectSnapshot } from "../kube/types.js";
import { notifySafely } from "../approvals/notifier.js";
import { verifyApproval, type SignedRecord, type SignedState } from "../approvals/verify.js";
import type { ClaimOutcome } from "../approvals/store-types.js";
import type { ExecutionResult, RequestState } from "../requests/model.js";
import { approverIds, isTerminal } from "../requests/model.js";
import { actionKind, auditChange, describeAction } from "../requests/action-kinds.js";
import type { ApprovalRequest } from "../requests/model.js";
import type { AuditEntry } from "../audit/entry.js";
import type { RepointApplied } from "./repoint-path.js";
import type { ExecutorDeps } from "./deps.js";
import { runAction } from "./executors.js";
import { withoutSharedBudget } from "../kube/limiter.js";

export type { ExecutorHooks, ExecutorDeps } from "./deps.js";
export { afterAmbiguous, isAmbiguous, judge, resourceTypeOf, type Verdict } from "./finalizer.js";

export interface ExecutionAttempt {
  /** Unique per attempt; fences a taken-over attempt out of recording an outcome. */
  readonly token: string;
  /** True when the job will not be retried after this attempt (a transient error becomes FAILED). */
  readonly finalAttempt: boolean;
}

/**
 * Why a worker of cluster `mine` (a fleet's `UNSTUCK_CLUSTER_NAME`; `undefined` outside a fleet) must not
 * run a request signed for cluster `requested`; `undefined` when it may.
 */
export function wrongCluster(requested: string | undefined, mine: string | undefined): string | undefined {
  if (mine === undefined) return undefined;
  if (requested === undefined) {
    return `the request names no cluster, and this worker of a fleet (cluster ${mine}) runs only requests signed for its own cluster.`;
  }
  if (requested !== mine) {
    return `the request is for cluster ${requested}, but this worker serves cluster ${mine}; only ${requested}'s workers may run it.`;
  }
  return undefined;
}

export type ExecutionOutcome =
  | {
      readonly kind: "finished";
      readonly state: "DONE" | "STALE" | "FAILED" | "TAMPERED";
      readonly result: ExecutionResult;
    }
  /** Nothing to do: the request already ended (a duplicate job) or another attempt took over. */
  | { readonly kind: "skipped"; readonly state: RequestState | "" };

/** How long a runner holds a follow-up before another may take it over (it waits on Slack up to 15 s per reply). */
const FOLLOW_UP_LEASE_MS = 5 * 60_000;

/**
 * Run what follows a request's outcome if it is still in the outbox (an earlier run recorded the
 * outcome and died before, or failed in, its follow-up). The outbox holds ids only: what runs is
 * read from the signed record, which must verify and have ended DONE or STALE. Returns whether it ran.
 */
export async function runPendingFollowUp(deps: ExecutorDeps, requestId: string): Promise<boolean> {
  const cluster = deps.cluster ?? "";
  if (deps.afterDone === undefined) return false;
  // One runner at a time: the executor's re-run and the sweep may find the same entry together.
  if (!(await deps.store.claimFollowUp(cluster, requestId, deps.now(), FOLLOW_UP_LEASE_MS))) return false;
  const view = await deps.store.getVerified(requestId);
  const request = view?.ok === true ? view.request : undefined;
  if (request === undefined || (request.state !== "DONE" && request.state !== "STALE")) {
    deps.log?.warn(
      { requestId, why: view === null ? "no such request" : view.ok ? view.request.state : view.why },
      "dropped a follow-up entry with no verified DONE or STALE request behind it",
    );
    await deps.store.followUpRan(cluster, requestId);
    return false;
  }
  if (wrongCluster(request.cluster, deps.cluster) !== undefined) {
    await deps.store.followUpRan(cluster, requestId);
    return false;
  }
  deps.log?.info({ requestId }, "running the follow-up an earlier attempt left unfinished");
  await deps.afterDone(request, request.result?.applied);
  await deps.store.followUpRan(cluster, requestId);
  return true;
}

/** Run every follow-up recorded more than `graceMs` ago and not run since (the sweep's part). */
export async function runDueFollowUps(deps: ExecutorDeps, graceMs: number): Promise<number> {
  if (deps.afterDone === undefined) return 0;
  const due = await deps.store.followUpsDue(deps.cluster ?? "", new Date(deps.now().getTime() - graceMs));
  let ran = 0;
  for (const id of due) {
    try {
      if (await runPendingFollowUp(deps, id)) ran += 1;
    } catch (err) {
      deps.log?.error(
        { err, requestId: id },
        "could not run a follow-up left unfinished; the next sweep retries it",
      );
    }
  }
  return ran;
}

const OUTCOME_OF = {
  DONE: "done",
  STALE: "stale",
  FAILED: "failed",
  TAMPERED: "tampered",
} as const satisfies Record<string, ExecutionResult["outcome"]>;

/** Who asked, who approved (as recorded, or as verified) and the exact change: on every entry about a request. */
function aboutRequest(
  request: ApprovalRequest | null,
  approvers?: readonly string[],
): Pick<AuditEntry, "requester" | "approvers" | "change"> {
  if (request === null) return {};
  const ids = approvers ?? approverIds(request);
  return {
    requester: { userId: request.requester.userId, teamId: request.requester.teamId },
    ...(ids.length > 0 ? { approvers: ids } : {}),
    change: auditChange(request.action),
  };
}

const SYSTEM = { kind: "system", component: "executor" } as const;

/**
 * How an attempt ends when its claim is refused: an ended request put back (refused and restored),
 * one that ended in an earlier run (its follow-up runs here if that run died before it), or none to
 * run (thrown). `undefined`: the claim holds (claimed or resumed), the attempt goes on.
 */
async function refusedClaim(
  deps: ExecutorDeps,
  requestId: string,
  claim: ClaimOutcome,
  claimEntry: AuditEntry,
): Promise<ExecutionOutcome | undefined> {
  if (claim.status === "FINISHED") {
    // It had ended already and its record was put back (an earlier, signed state restored): the claim
    // refused it and restored how it ended; the first refusal wrote the one audit entry.
    deps.log?.warn(
      { requestId, found: claim.prior.state, ended: claim.state },
      "refused to execute a finished request put back to an earlier state",
    );
    if (claim.refusedNow) {
      deps.audit.mirror({
        ...claimEntry,
        event: "execution.refused",
        before: claim.prior.state,
        after: claim.state,
        result: `it had already ended ${claim.state}; its record, put back to ${claim.prior.state}, was refused and restored`,
      });
    }
    await runPendingFollowUp(deps, requestId);
    return { kind: "skipped", state: claim.state };
  }
  if (claim.status === "NOT_FOUND") {
    throw new UnstuckError(ErrorCode.NotFound, "The approval request to execute does not exist.", {
      requestId,
    });
  }
  if (claim.status === "INVALID_STATE") {
    if (claim.state !== "" && isTerminal(claim.state)) {
      // It ended in an earlier run: what follows the outcome runs here if that run died before it.
      await runPendingFollowUp(deps, requestId);
      return { kind: "skipped", state: claim.state };
    }
    throw new UnstuckError(ErrorCode.InvalidState, `The request is ${claim.state}, not APPROVED.`, {
      requestId,
    });
  }
  return undefined;
}

/** Not a record this bot could have written (unparseable): nothing to verify, nothing to act on. */
async function refuseUnreadable(
  deps: ExecutorDeps,
  requestId: string,
  attempt: ExecutionAttempt,
  prior: SignedState,
): Promise<ExecutionOutcome> {
  const result: ExecutionResult = {
    outcome: "tampered",
    message: "Refused: the approval record is unreadable, so it was not executed.",
    at: deps.now().toISOString(),
  };
  const entry: AuditEntry = {
    at: result.at,
    actor: SYSTEM,
    event: "approval.tampered",
    requestId,
    action: "unknown",
    target: "unknown",
    before: prior.state,
    after: "TAMPERED",
    result: result.message,
  };
  await deps.store.finishExecution(requestId, attempt.token, "TAMPERED", result, deps.now(), entry);
  deps.audit.mirror(entry);
  deps.log?.error({ requestId }, "refused an unreadable approval record");
  return { kind: "finished", state: "TAMPERED", result };
}

/** One claimed attempt at one verified-or-not-yet request: what its steps share. */
interface Attempt {
  readonly deps: ExecutorDeps;
  readonly requestId: string;
  readonly attempt: ExecutionAttempt;
  readonly request: ApprovalRequest;
  readonly target: string;
  /** The approvers the verification counted, once it has run (before: as recorded). */
  verified: readonly string[] | undefined;
}

/**
 * Record how the attempt ended (with its audit entry and, when something follows it, its outbox
 * entry, in one script), tell the thread, and start what follows.
 */
async function finishAttempt(
  run: Attempt,
  state: "DONE" | "STALE" | "FAILED" | "TAMPERED",
  message: string,
  after?: ObjectSnapshot,
  applied?: RepointApplied,
): Promise<ExecutionOutcome> {
  const { deps, requestId, request } = run;
  const { store, now } = deps;
  const action = request.action;
  // A STALE repoint may still have applied its first steps: their waits run too.
  const wrote = applied !== undefined && applied.route53Changes.length + applied.distributions.length > 0;
  const result: ExecutionResult = {
    outcome: OUTCOME_OF[state],
    message,
    at: now().toISOString(),
    ...(after?.resourceVersion ? { resourceVersionAfter: after.resourceVersion } : {}),
    ...(after ? { finalizersAfter: after.finalizers } : {}),
    ...(wrote ? { applied } : {}),
  };
  const follows =
    deps.afterDone !== undefined &&
    (state === "DONE" || wrote) &&
    actionKind(action).followedBy(action) !== null;
  const finishEntry: AuditEntry = {
    at: result.at,
    actor: SYSTEM,
    event: `execution.${result.outcome}`,
    requestId,
    action: action.type,
    target: run.target,
    ...aboutRequest(request, run.verified),
    before: "EXECUTING",
    after: state,
    result: message,
  };
  // Recorded with the outcome by one script: no crash in between can lose the entry.
  // The outcome and, when something follows it, the outbox entry that follow-up clears: one step.
  const done = await store.finishExecution(
    requestId,
    run.attempt.token,
    state,
    result,
    now(),
    finishEntry,
    follows ? { cluster: deps.cluster ?? "" } : undefined,
  );
  if (done.status !== "OK") {
    deps.log?.warn(
      { requestId, status: done.status },
      "execution outcome not recorded: another attempt owns it",
    );
    return { kind: "skipped", state: done.state };
  }
  deps.audit.mirror(finishEntry);
  await deps.hooks?.afterOutcome?.(requestId);
  const latest = (await store.get(requestId)) ?? { ...request, state, result };
  await notifySafely(deps.notifier, deps.log, latest, { kind: "outcome", state, message });
  if (follows && deps.afterDone !== undefined) {
    try {
      // Held while it runs: a sweep finding the entry meanwhile leaves it to this run.
      await store.claimFollowUp(deps.cluster ?? "", requestId, now(), FOLLOW_UP_LEASE_MS);
      await deps.afterDone(latest, applied);
      await store.followUpRan(deps.cluster ?? "", requestId);
    } catch (err) {
      // Left in the outbox: the next run of this job, or the sweep, runs it.
      deps.log?.error(
        { err, requestId },
        "could not start the follow-up of an executed request; the sweep retries it",
      );
    }
  }
  return { kind: "finished", state, result };
}

/**
 * Verify the signed record and its votes against the live approver list, and that it is for this
 * worker's cluster. Returns how the attempt ended when it is refused (TAMPERED, FAILED), else
 * `undefined` with the verified approvers recorded on the attempt.
 */
async function refusedApproval(
  run: Attempt,
  record: SignedRecord,
  prior: SignedState,
): Promise<ExecutionOutcome | undefined> {
  const { deps, requestId, request } = run;
  const refused = (event: string, after: "TAMPERED" | "FAILED", result: string) =>
    deps.audit.append({
      at: deps.now().toISOString(),
      actor: SYSTEM,
      event,
      requestId,
      action: request.action.type,
      target: run.target,
      ...aboutRequest(request, run.verified),
      before: prior.state,
      after,
      result,
    });
  // Live lookup (no cache): an approver removed since the vote no longer counts.
  const approvers = await deps.policy.approverIds({ live: true });
  const verification = verifyApproval({ id: requestId, record, prior, signer: deps.signer, approvers });
  if (!verification.ok) {
    const detail = verification.problems.join("; ");
    const message = `Refused: this approval record failed verification (${detail}). Nothing was changed; someone may have written to the bot's Redis directly.`;
    deps.log?.error({ requestId, problems: verification.problems }, "refused a tampered approval record");
    await refused("approval.tampered", "TAMPERED", detail);
    // Raised loudly by the surfaces, which mark a TAMPERED outcome as an alarm.
    return await finishAttempt(run, "TAMPERED", message);
  }
  run.verified = verification.approvers;
  // In a fleet the request names (signed) the cluster it is for: a job that reached another
  // cluster's worker (mis-routed, or put on this queue by hand) is refused, never run here.
  const misplaced = wrongCluster(request.cluster, deps.cluster);
  if (misplaced !== undefined) {
    deps.log?.error(
      { requestId, requestCluster: request.cluster ?? null, workerCluster: deps.cluster },
      "refused a request for another cluster",
    );
    await refused("execution.wrong-cluster", "FAILED", misplaced);
    return await finishAttempt(run, "FAILED", `Not executed: ${misplaced} Nothing was changed.`);
  }
  return undefined;
}

/**
 * Run one attempt. Returns how it ended; throws only when the job should retry (a transient
 * error on a non-final attempt) or fail without retry (a permanent error, already recorded).
 */
export async function executeApproved(
  deps: ExecutorDeps,
  requestId: string,
  attempt: ExecutionAttempt,
): Promise<ExecutionOutcome> {
  const { store, now } = deps;
  // The claim's audit entry is written by the claim's own script (it fills in a resumed attempt).
  const pre = await store.get(requestId);
  const claimEntry: AuditEntry = {
    at: now().toISOString(),
    actor: SYSTEM,
    event: "execution.claimed",
    requestId,
    action: pre?.action.type ?? "unknown",
    target: pre ? describeAction(pre.action) : "unknown",
    ...aboutRequest(pre),
    before: "APPROVED",
    after: "EXECUTING",
  };
  const claim = await store.claimExecution(requestId, attempt.token, now(), claimEntry);
  const refusal = await refusedClaim(deps, requestId, claim, claimEntry);
  if (refusal !== undefined) return refusal;
  const record = await store.getSigned(requestId);
  if (!record) return refuseUnreadable(deps, requestId, attempt, claim.prior);
  const resumed = claim.status === "RESUMED";
  const request = record.request;
  const action = request.action;
  const run: Attempt = {
    deps,
    requestId,
    attempt,
    request,
    target: describeAction(action),
    verified: undefined,
  };
  deps.audit.mirror({
    ...claimEntry,
    ...(resumed
      ? {
          event: "execution.resumed",
          before: "EXECUTING",
          result: `attempt ${String(claim.attempts)} takes over from an interrupted attempt`,
        }
      : {}),
  });
  try {
    const refused = await refusedApproval(run, record, claim.prior);
    if (refused !== undefined) return refused;
    if (!resumed) await notifySafely(deps.notifier, deps.log, { ...request, state: "EXECUTING" });
    await deps.hooks?.afterClaim?.(requestId);
    // One executor per action type (`executors.ts`): what is approved is done by its own module.
    // An approved change never waits behind diagnoses or on the fleet's request budget.
    const outcome = await withoutSharedBudget(() =>
      runAction({ deps, request, requestId, resumed, target: run.target }, action),
    );
    return await finishAttempt(run, outcome.state, outcome.message, outcome.object, outcome.applied);
  } catch (err) {
    if (isPermanent(err) || attempt.finalAttempt) {
      const { message } = toUserError(err);
      await finishAttempt(run, "FAILED", `Failed: ${message}`);
    }
    // Transient on a non-final attempt: stay EXECUTING; the retry resumes and re-reads.
    throw err;
  }
}
