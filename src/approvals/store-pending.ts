/**
 * The approval store's transitions of a request waiting for votes (`store.ts`): filing it, a vote,
 * the requester's cancel, and the sweep's expiry. Each is one script (`approval-create.4.lua`,
 * `approval-vote.7.lua`, `approval-cancel.6.lua`, `approval-expire.2.lua`), signed with this
 * process's keys.
 */
import { createHash, randomUUID } from "node:crypto";
import { ErrorCode, UnstuckError } from "../errors.js";
import type {
  ApprovalAction,
  ApprovalRequest,
  Identity,
  RequestState,
  Vote,
  VoteDecision,
} from "../requests/model.js";
import { isRequestId } from "../requests/model.js";
import { requestSubject } from "../requests/action-kinds.js";
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
import { readRequest } from "./store-reads.js";
import type { AuditTemplate, CancelOutcome, NewRequest, VoteOutcome, VoteStatus } from "./store-types.js";

/** The key naming the PENDING request of the action's object (one pending request each). */
function openKey(ctx: StoreContext, action: ApprovalAction, cluster: string | undefined): string {
  const subject = requestSubject(action, cluster);
  // A long repoint subject is hashed; a finalizer removal keeps its readable key.
  const key = subject.length > 200 ? createHash("sha256").update(subject).digest("hex") : subject;
  return ApprovalKeys.open(ctx.options.prefix, key);
}

/**
 * Store a new PENDING request; throws `Conflict` if the id is taken, or if a request for the same
 * object is still pending (`details.existingRequestId` names it).
 */
export async function createRequest(
  ctx: StoreContext,
  request: NewRequest,
  now: Date,
  audit?: AuditTemplate,
): Promise<ApprovalRequest> {
  assertRequestId(request.id);
  const signer = signerOf(ctx);
  const ap = ctx.options.prefix;
  const doc = JSON.stringify(request);
  const docMac = signer.requestSig(request.id, doc);
  const reply = tuple(
    await exec(
      ctx,
      ctx.scripts.create,
      [
        ApprovalKeys.request(ap, request.id),
        ApprovalKeys.pending(ap),
        openKey(ctx, request.action, request.cluster),
        auditStream(ctx),
      ],
      [
        request.id,
        doc,
        request.requester.userId,
        Date.parse(request.expiresAt),
        request.approvalsRequired,
        request.createdAt,
        docMac,
        signer.stateSig(request.id, docMac, "PENDING", request.createdAt),
        ApprovalKeys.requestPrefix(ap),
        now.getTime(),
        auditArg(ctx, audit),
      ],
      [audit],
    ),
  );
  const status = num(reply[0]);
  if (status === 2) {
    throw new UnstuckError(ErrorCode.Conflict, "A request for this object is already pending.", {
      existingRequestId: str(reply[1]),
    });
  }
  if (status !== 1) throw new UnstuckError(ErrorCode.Conflict, "An approval request with this id exists.");
  return { ...request, state: "PENDING", votes: [], executionAttempts: 0, updatedAt: request.createdAt };
}

/** Where and why a vote was cast, and the audit template of its entry. */
export interface VoteCast {
  readonly channelId?: string;
  readonly audit?: AuditTemplate;
  readonly reason?: string;
}

/**
 * Record a vote (see `approval-vote.7.lua`). The caller checks the approver list first. `channelId`
 * is where the vote was cast; it is bound into the vote's MAC.
 */
export async function castVote(
  ctx: StoreContext,
  id: string,
  voter: Identity,
  decision: VoteDecision,
  now: Date,
  cast: VoteCast,
): Promise<VoteOutcome> {
  assertRequestId(id);
  const { channelId, audit, reason } = cast;
  const signer = signerOf(ctx);
  const ap = ctx.options.prefix;
  const docMac = await docMacOf(ctx, id);
  const at = now.toISOString();
  const fields = {
    requestId: id,
    voter: { userId: voter.userId, teamId: voter.teamId },
    decision,
    at,
    ...(channelId !== undefined ? { channelId } : {}),
    ...(reason !== undefined ? { reason } : {}),
  };
  const vote: Vote = { ...fields, mac: signer.voteSig(docMac, fields) };
  const stateMac = (state: string): string => signer.stateSig(id, docMac, state, at);
  const reply = tuple(
    await exec(
      ctx,
      ctx.scripts.vote,
      [
        ...keysFor(ctx, id),
        ApprovalKeys.pending(ap),
        ApprovalKeys.approved(ap),
        ApprovalKeys.finished(ap, id),
        auditStream(ctx),
      ],
      [
        id,
        voter.userId,
        decision,
        now.getTime(),
        JSON.stringify(vote),
        at,
        ctx.retention,
        stateMac("PENDING"),
        stateMac("APPROVED"),
        stateMac("DENIED"),
        stateMac("EXPIRED"),
        ctx.finishedRetention,
        // Tells this call apart from a second click: a script resent after a lost answer carries it again.
        randomUUID(),
        auditArg(ctx, audit),
      ],
      [audit],
    ),
  );
  return {
    status: str(reply[0]) as VoteStatus,
    state: str(reply[1]) as RequestState | "",
    approvals: num(reply[2]),
    transitioned: num(reply[3]) === 1,
  };
}

/** Cancel a PENDING request on behalf of `actor` (see `approval-cancel.6.lua`). */
export async function cancelRequest(
  ctx: StoreContext,
  id: string,
  actor: Identity,
  now: Date,
  audit?: AuditTemplate,
): Promise<CancelOutcome> {
  assertRequestId(id);
  const signer = signerOf(ctx);
  const ap = ctx.options.prefix;
  const docMac = await docMacOf(ctx, id);
  const at = now.toISOString();
  const reply = tuple(
    await exec(
      ctx,
      ctx.scripts.cancel,
      [...keysFor(ctx, id), ApprovalKeys.pending(ap), ApprovalKeys.finished(ap, id), auditStream(ctx)],
      [
        id,
        actor.userId,
        now.getTime(),
        at,
        ctx.retention,
        signer.stateSig(id, docMac, "CANCELLED", at),
        signer.stateSig(id, docMac, "EXPIRED", at),
        ctx.finishedRetention,
        auditArg(ctx, audit),
      ],
      [audit],
    ),
  );
  return { status: str(reply[0]) as CancelOutcome["status"], state: str(reply[1]) as RequestState | "" };
}

/** Mark every PENDING request past its expiry EXPIRED; returns the ids this call expired. */
export async function expireDue(
  ctx: StoreContext,
  now: Date,
  limit: number,
  auditFor?: (request: ApprovalRequest) => AuditTemplate,
): Promise<string[]> {
  const signer = signerOf(ctx);
  const ap = ctx.options.prefix;
  const pendingKey = ApprovalKeys.pending(ap);
  const listed = await ctx.redis.zrangebyscore(pendingKey, "-inf", now.getTime(), "LIMIT", 0, limit);
  // Members that are not ids this bot issues were not written by it: unlist them, or they would
  // fill every page of this sweep.
  const foreign = listed.filter((id) => !isRequestId(id));
  if (foreign.length > 0) await ctx.redis.zrem(pendingKey, ...foreign);
  const due = listed.filter(isRequestId);
  if (due.length === 0) return [];
  const pipeline = ctx.redis.pipeline();
  for (const id of due) pipeline.hget(ApprovalKeys.request(ap, id), "docMac");
  const macs = (await pipeline.exec()) ?? [];
  const at = now.toISOString();
  // Each id's audit entry is built from its stored request; the script writes it only if it expires it.
  const requests =
    auditFor !== undefined && ctx.options.auditKey !== undefined
      ? await Promise.all(due.map((id) => readRequest(ctx, id)))
      : [];
  const templates = due.map((_id, i) => {
    const request = requests[i];
    return request && auditFor ? auditFor(request) : undefined;
  });
  const triples = due.flatMap((id, i) => [
    id,
    signer.stateSig(id, str(macs[i]?.[1]), "EXPIRED", at),
    auditArg(ctx, templates[i]),
  ]);
  const reply = tuple(
    await exec(
      ctx,
      ctx.scripts.expire,
      [pendingKey, auditStream(ctx)],
      [
        now.getTime(),
        ApprovalKeys.requestPrefix(ap),
        at,
        ctx.retention,
        ApprovalKeys.finishedPrefix(ap),
        ctx.finishedRetention,
        ...triples,
      ],
      templates,
    ),
  );
  return reply.map(str);
}
