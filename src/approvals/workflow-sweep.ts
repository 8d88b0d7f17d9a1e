/**
 * The approval workflow's periodic housekeeping (`workflow.ts`): expire overdue pending requests,
 * and requeue approved ones whose enqueue was lost, bounded so that none is queued forever.
 */
import type { AuditEntry } from "../audit/entry.js";
import type { ApprovalRequest, ExecutionResult } from "../requests/model.js";
import { isRequestId } from "../requests/model.js";
import { notifySafely } from "./notifier.js";
import { appendEntry, notifyExpired, requestEntry } from "./workflow-context.js";
import { DEFAULT_MAX_REQUEUES, type ApprovalWorkflowDeps } from "./workflow-types.js";

/** Expire every overdue pending request; returns them so the caller can update their messages. */
export async function expireOverdue(deps: ApprovalWorkflowDeps): Promise<ApprovalRequest[]> {
  const system = { kind: "system", component: "expiry" } as const;
  const entryOf = (r: ApprovalRequest): AuditEntry =>
    requestEntry(deps.now, r, system, "request.expired", "PENDING", "EXPIRED");
  // Each expiry's audit entry is written by the script that expires it.
  const ids = await deps.store.expireDue(deps.now(), 500, entryOf);
  const out: ApprovalRequest[] = [];
  for (const id of ids) {
    const request = await deps.store.get(id);
    if (!request) continue;
    deps.audit.mirror(entryOf(request));
    await notifyExpired(deps, request);
    out.push(request);
  }
  return out;
}

/**
 * Re-enqueue approved requests whose execution was never claimed (the enqueue after the
 * approving vote can fail, e.g. on a Redis failover). Safe to run any time: the job id derives
 * from the request, so a job that does exist absorbs the duplicate. Returns the ids re-enqueued.
 *
 * Never a loop: a request that ended already and was put back to APPROVED (an earlier record
 * restored in Redis) is refused, restored and audited once, never queued again (`approval-prelude-finished.lua` in `src/redis/lua/`);
 * a job still waiting to run is left to run (nothing counted, nothing audited); any other requeue
 * is counted, and past `maxRequeues` the request ends FAILED with one `execution.requeue-limit`
 * entry.
 */
export async function requeueApproved(deps: ApprovalWorkflowDeps, graceMs: number): Promise<string[]> {
  const ids = await deps.store.approvedUnclaimed(new Date(deps.now().getTime() - graceMs));
  const max = deps.maxRequeues ?? DEFAULT_MAX_REQUEUES;
  const out: string[] = [];
  for (const id of ids) {
    if (!isRequestId(id)) continue;
    if (await requeueOne(deps, id, max)) out.push(id);
  }
  return out;
}

/** One approved, unclaimed request through the requeue: true when it was queued again and counted. */
async function requeueOne(deps: ApprovalWorkflowDeps, id: string, max: number): Promise<boolean> {
  const { store, now } = deps;
  const system = { kind: "system", component: "sweep" } as const;
  const request = await store.get(id);
  if (request === null) {
    await store.requeue(id, "check", now(), max, gaveUp(max, now()));
    return false;
  }
  const gaveUpResult = gaveUp(max, now());
  const refusal = requestEntry(now, request, system, "execution.refused", request.state, undefined);
  const check = await store.requeue(id, "check", now(), max, gaveUpResult, refusal);
  if (check.status === "FINISHED") {
    refusedFinished(deps, request, refusal, check.state);
    return false;
  }
  if (check.status !== "OK") return false;
  const found = (await deps.enqueueExecution(request)) ?? "added";
  // Its job is waiting (workers busy or down, a retry's backoff): it runs when a worker takes it.
  if (found === "pending") return false;
  const limit = requestEntry(
    now,
    request,
    system,
    "execution.requeue-limit",
    "APPROVED",
    "FAILED",
    gaveUpResult.message,
  );
  const counted = await store.requeue(id, "count", now(), max, gaveUpResult, limit);
  if (counted.status === "GAVE_UP") {
    deps.log?.error(
      { requestId: id, requeues: counted.count },
      "approved request never claimed; ended FAILED",
    );
    deps.audit.mirror(limit);
    const latest = (await store.get(id)) ?? request;
    await notifySafely(deps.notifier, deps.log, latest, {
      kind: "outcome",
      state: "FAILED",
      message: gaveUpResult.message,
    });
    return false;
  }
  if (counted.status !== "OK") return false;
  await appendEntry(
    deps,
    request,
    system,
    "execution.requeued",
    "APPROVED",
    "APPROVED",
    `requeue ${String(counted.count)} of at most ${String(max)}${found === "ended" ? "; its job had ended without claiming it" : ""}`,
  );
  return true;
}

/** The result a request gets when the sweep gives up on it. */
function gaveUp(max: number, at: Date): ExecutionResult {
  return {
    outcome: "failed",
    message: `Not executed: the approved request was queued ${String(max)} times without ever being started, so it ended FAILED and will not run. Nothing was changed; ask for a new approval.`,
    at: at.toISOString(),
  };
}

/** A finished request found put back to an earlier state was refused: raise it (the script audited it). */
function refusedFinished(
  deps: ApprovalWorkflowDeps,
  request: ApprovalRequest,
  refusal: AuditEntry,
  state: string,
): void {
  deps.log?.warn(
    { requestId: request.id, found: request.state, ended: state },
    "a finished request was found put back to an earlier state; refused and restored",
  );
  deps.audit.mirror({
    ...refusal,
    after: state,
    result: `it had already ended ${state}; its record, put back to ${request.state}, was refused and restored`,
  });
}
