/**
 * The approval store's transitions of an approved request (`store.ts`): an executor's claim and its
 * finish, the sweep's requeue of one never claimed, and the end of one whose record cannot be
 * trusted. Each is one script (`approval-claim.4.lua`, `approval-finish.6.lua`,
 * `approval-requeue.7.lua`, `approval-end-unverified.7.lua`), signed with this process's keys.
 */
import type { ExecutionResult, RequestState } from "../requests/model.js";
import { ApprovalKeys } from "../redis/keys.js";
import {
  assertRequestId,
  auditArg,
  auditStream,
  docMacOf,
  exec,
  keysFor,
  num,
  signerOf,
  str,
  tuple,
  type StoreContext,
} from "./store-context.js";
import type {
  AuditTemplate,
  ClaimOutcome,
  FinishOutcome,
  FollowUpOf,
  RequeueOutcome,
} from "./store-types.js";

/** APPROVED → EXECUTING (or take over a dead attempt's EXECUTING) under `token`. */
export async function claimExecution(
  ctx: StoreContext,
  id: string,
  token: string,
  now: Date,
  audit?: AuditTemplate,
): Promise<ClaimOutcome> {
  assertRequestId(id);
  const signer = signerOf(ctx);
  const ap = ctx.options.prefix;
  const docMac = await docMacOf(ctx, id);
  const at = now.toISOString();
  const reply = tuple(
    await exec(
      ctx,
      ctx.scripts.claim,
      [
        ApprovalKeys.request(ap, id),
        ApprovalKeys.approved(ap),
        ApprovalKeys.finished(ap, id),
        auditStream(ctx),
      ],
      [token, at, id, signer.stateSig(id, docMac, "EXECUTING", at), ctx.retention, auditArg(ctx, audit)],
      [audit],
    ),
  );
  return {
    status: str(reply[0]) as ClaimOutcome["status"],
    state: str(reply[1]) as RequestState | "",
    attempts: num(reply[2]),
    prior: { state: str(reply[3]), at: str(reply[4]), mac: str(reply[5]) },
    refusedNow: num(reply[6]) === 1,
  };
}

/** How an attempt ended: its state and result, and what the finish records beside it. */
export interface FinishOf {
  readonly state: "DONE" | "FAILED" | "STALE" | "TAMPERED";
  readonly result: ExecutionResult;
  readonly audit?: AuditTemplate;
  readonly followUp?: FollowUpOf;
}

/** EXECUTING → DONE/FAILED/STALE, only for the attempt holding `token`. */
export async function finishExecution(
  ctx: StoreContext,
  id: string,
  token: string,
  now: Date,
  end: FinishOf,
): Promise<FinishOutcome> {
  assertRequestId(id);
  const { state, result, audit, followUp } = end;
  const signer = signerOf(ctx);
  const ap = ctx.options.prefix;
  const docMac = await docMacOf(ctx, id);
  const at = now.toISOString();
  const resultJson = JSON.stringify(result);
  const reply = tuple(
    await exec(
      ctx,
      ctx.scripts.finish,
      [
        ...keysFor(ctx, id),
        ApprovalKeys.finished(ap, id),
        ApprovalKeys.followUps(ap, followUp?.cluster ?? ""),
        auditStream(ctx),
      ],
      [
        token,
        state,
        resultJson,
        at,
        ctx.retention,
        signer.stateSig(id, docMac, state, at, resultJson),
        ctx.finishedRetention,
        followUp !== undefined ? id : "",
        now.getTime(),
        auditArg(ctx, audit),
      ],
      [audit],
    ),
  );
  return { status: str(reply[0]) as FinishOutcome["status"], state: str(reply[1]) as RequestState | "" };
}

/** What one requeue step is: `check` before the enqueue or `count` after it, and its bound. */
export interface RequeueStep {
  readonly mode: "check" | "count";
  readonly maxRequeues: number;
  /** The result the request ends FAILED with past `maxRequeues`. */
  readonly result: ExecutionResult;
  /** The template of the refusal's or the end's entry. */
  readonly audit?: AuditTemplate;
}

/**
 * The sweep's requeue of an approved, unclaimed request (see `approval-requeue.7.lua`): `check` before
 * the enqueue (a request that ended already is refused, one no longer APPROVED unlisted), `count`
 * after it; past `maxRequeues` counted requeues the request ends FAILED with `result`.
 */
export async function requeue(
  ctx: StoreContext,
  id: string,
  now: Date,
  step: RequeueStep,
): Promise<RequeueOutcome> {
  assertRequestId(id);
  const { mode, maxRequeues, result, audit } = step;
  const signer = signerOf(ctx);
  const ap = ctx.options.prefix;
  const docMac = await docMacOf(ctx, id);
  const at = now.toISOString();
  const resultJson = JSON.stringify(result);
  const reply = tuple(
    await exec(
      ctx,
      ctx.scripts.requeue,
      [
        ...keysFor(ctx, id),
        ApprovalKeys.approved(ap),
        ApprovalKeys.finished(ap, id),
        ApprovalKeys.requeues(ap, id),
        auditStream(ctx),
      ],
      [
        id,
        mode,
        at,
        ctx.retention,
        ctx.finishedRetention,
        maxRequeues,
        signer.stateSig(id, docMac, "FAILED", at, resultJson),
        resultJson,
        auditArg(ctx, audit),
      ],
      [audit],
    ),
  );
  return {
    status: str(reply[0]) as RequeueOutcome["status"],
    state: str(reply[1]) as RequestState | "",
    count: num(reply[2]),
  };
}

/** How `endUnverified` went: ended, found moved on, or no such request. */
export interface EndUnverifiedOutcome {
  readonly status: "OK" | "MOVED" | "NOT_FOUND";
  readonly state: RequestState | "";
}

/**
 * End a request whose record cannot be trusted, before anything executes it (see
 * `approval-end-unverified.7.lua`): `found` PENDING ends EXPIRED, APPROVED ends FAILED, with `result`.
 */
export async function endUnverified(
  ctx: StoreContext,
  id: string,
  found: "PENDING" | "APPROVED",
  result: ExecutionResult,
  now: Date,
  audit?: AuditTemplate,
): Promise<EndUnverifiedOutcome> {
  assertRequestId(id);
  const signer = signerOf(ctx);
  const ap = ctx.options.prefix;
  const docMac = await docMacOf(ctx, id);
  const at = now.toISOString();
  const state = found === "PENDING" ? "EXPIRED" : "FAILED";
  const resultJson = JSON.stringify(result);
  const reply = tuple(
    await exec(
      ctx,
      ctx.scripts.endUnverified,
      [
        ...keysFor(ctx, id),
        ApprovalKeys.pending(ap),
        ApprovalKeys.approved(ap),
        ApprovalKeys.finished(ap, id),
        auditStream(ctx),
      ],
      [
        id,
        found,
        state,
        at,
        signer.stateSig(id, docMac, state, at, resultJson),
        resultJson,
        ctx.retention,
        ctx.finishedRetention,
        auditArg(ctx, audit),
      ],
      [audit],
    ),
  );
  return {
    status: str(reply[0]) as EndUnverifiedOutcome["status"],
    state: str(reply[1]) as RequestState | "",
  };
}
