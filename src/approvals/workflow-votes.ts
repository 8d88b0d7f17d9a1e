/**
 * The decisions on a pending request (`workflow.ts`): an approver's vote (admitted, cast by the
 * store's script, and the approving one enqueued exactly once) and the requester's cancel. Each
 * refusal is a coded error that says why.
 */
import type { AuditEntry } from "../audit/entry.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { ApprovalRequest, Identity, VoteDecision } from "../requests/model.js";
import { notifySafely } from "./notifier.js";
import { assertRequestId } from "./store-context.js";
import type { VoteOutcome } from "./store-types.js";
import { appendEntry, notifyExpired, requestEntry, unknownRequest, userActor } from "./workflow-context.js";
import {
  MAX_VOTE_REASON,
  type ApprovalWorkflowDeps,
  type VoteContext,
  type VoteResult,
} from "./workflow-types.js";

/**
 * Approve or deny. Throws a coded error (NotApprover, SelfApproval, AlreadyVoted, …) when refused.
 * The voter must belong to the requester's team and, when the context names it, vote from the
 * request's channel; group membership is looked up live (a failed lookup refuses the vote).
 */
export async function castVote(
  deps: ApprovalWorkflowDeps,
  requestId: string,
  voter: Identity,
  decision: VoteDecision,
  context: VoteContext,
): Promise<VoteResult> {
  const { store, now } = deps;
  assertRequestId(requestId);
  const before = await store.get(requestId);
  if (!before) throw unknownRequest(requestId);
  const reason = await admitVote(deps, before, voter, context);
  // The script words the entry's result: the tally, and this reason from the signed vote.
  const voteEntry = requestEntry(now, before, userActor(voter), `vote.${decision}`, "PENDING", undefined);
  const outcome = await store.vote(requestId, voter, decision, now(), context.channelId, voteEntry, reason);
  const after = (await store.get(requestId)) ?? before;
  await assertCounted(deps, requestId, outcome, voteEntry, after);
  // Written by the vote's own script; the mirror gets the same entry.
  deps.audit.mirror({
    ...voteEntry,
    ...(outcome.state ? { after: outcome.state } : {}),
    result: `${String(outcome.approvals)}/${String(after.approvalsRequired)} approvals`,
  });
  if (outcome.transitioned && outcome.state === "APPROVED") await enqueueApproved(deps, requestId, after);
  await notifySafely(deps.notifier, deps.log, after, {
    kind: "vote",
    voter: voter.userId,
    decision,
    ...(reason !== undefined ? { reason } : {}),
    ...(outcome.state === "PENDING"
      ? { tally: { approvals: outcome.approvals, required: after.approvalsRequired } }
      : {}),
  });
  return { request: after, transitioned: outcome.transitioned };
}

/**
 * Whether a vote may be counted before it is cast: an approver, of the requester's workspace, on
 * the request's own message, on a record that still verifies, with a reason of bounded length
 * (returned trimmed, or undefined). Throws a coded error naming why not.
 */
async function admitVote(
  deps: ApprovalWorkflowDeps,
  before: ApprovalRequest,
  voter: Identity,
  context: VoteContext,
): Promise<string | undefined> {
  const { store, policy } = deps;
  await policy.assertMayVote(voter, before);
  if (voter.teamId !== before.requester.teamId) {
    throw new UnstuckError(
      ErrorCode.Forbidden,
      "This request belongs to another Slack workspace, so your vote was not counted.",
      { action: "vote" },
    );
  }
  if (
    context.channelId !== undefined &&
    context.channelId !== before.channelId &&
    context.channelId !== before.message?.channel
  ) {
    throw new UnstuckError(
      ErrorCode.Forbidden,
      "Votes count only on the request's own message, in the channel where it was asked.",
      { action: "vote" },
    );
  }
  // A request that can never execute takes no vote: one whose record does not verify is refused
  // with why (terminal and expired ones by the vote's script).
  if (before.state === "PENDING") {
    const integrity = await store.checkIntegrity(before.id);
    if (integrity !== null && !integrity.ok) {
      throw new UnstuckError(
        ErrorCode.InvalidState,
        `This request can no longer be executed: ${integrity.problem}, so your vote was not counted. Ask for a new request.`,
        { state: before.state, cause: "tampered" },
      );
    }
  }
  const reason = context.reason?.trim() || undefined;
  if (reason !== undefined && reason.length > MAX_VOTE_REASON) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      `Say why in at most ${String(MAX_VOTE_REASON)} characters (this is ${String(reason.length)}).`,
    );
  }
  return reason;
}

/**
 * Throws the coded error for a vote the store's script did not count; returns when it counted (OK).
 * An expiry the script found is mirrored and told to the thread first, once.
 */
async function assertCounted(
  deps: ApprovalWorkflowDeps,
  requestId: string,
  outcome: VoteOutcome,
  voteEntry: AuditEntry,
  after: ApprovalRequest,
): Promise<void> {
  switch (outcome.status) {
    case "NOT_FOUND":
      throw unknownRequest(requestId);
    case "FINISHED":
      // Its record had been put back to an earlier state; the script restored it and audited that.
      deps.log?.warn(
        { requestId, state: outcome.state },
        "a vote found a finished request put back to an earlier state; refused",
      );
      throw new UnstuckError(
        ErrorCode.InvalidState,
        `This request already ended ${outcome.state}; votes are closed.`,
        { state: outcome.state },
      );
    case "SELF_APPROVAL":
      throw new UnstuckError(
        ErrorCode.SelfApproval,
        "You made this request, so someone else has to approve it.",
      );
    case "ALREADY_VOTED":
      throw new UnstuckError(ErrorCode.AlreadyVoted, "You have already voted on this request.");
    case "INVALID_STATE":
      throw new UnstuckError(
        ErrorCode.InvalidState,
        `This request is already ${outcome.state}; votes are closed.`,
        {
          state: outcome.state,
        },
      );
    case "EXPIRED":
      // The script recorded the expiry in the audit stream; tell the mirror and the thread.
      if (outcome.transitioned) {
        deps.audit.mirror({
          ...voteEntry,
          event: "request.expired",
          after: "EXPIRED",
          result: "the expiry passed before this vote; nothing was changed",
        });
        await notifyExpired(deps, after);
      }
      throw new UnstuckError(ErrorCode.Expired, "This request expired before your vote; ask for a new one.");
    case "OK":
      return;
  }
}

/**
 * Enqueue the execution the approving vote unlocked, and audit it; a failed enqueue leaves the
 * approval standing (it is in Redis) for the sweep's `requeueApproved` to retry.
 */
async function enqueueApproved(
  deps: ApprovalWorkflowDeps,
  requestId: string,
  after: ApprovalRequest,
): Promise<void> {
  const system = { kind: "system", component: "workflow" } as const;
  try {
    await deps.enqueueExecution(after);
    await appendEntry(deps, after, system, "execution.enqueued", "APPROVED", "APPROVED");
  } catch (err) {
    deps.log?.error({ err, requestId }, "could not enqueue the approved execution; the sweep will retry");
    await appendEntry(
      deps,
      after,
      system,
      "execution.enqueue-failed",
      "APPROVED",
      "APPROVED",
      "the sweep will retry",
    );
  }
}

/** Cancel a pending request; only the requester may. */
export async function cancelRequest(
  deps: ApprovalWorkflowDeps,
  requestId: string,
  actor: Identity,
): Promise<ApprovalRequest> {
  const { store, now } = deps;
  assertRequestId(requestId);
  const before = await store.get(requestId);
  if (!before) throw unknownRequest(requestId);
  const cancelEntry = requestEntry(
    now,
    before,
    userActor(actor),
    "request.cancelled",
    "PENDING",
    "CANCELLED",
  );
  const outcome = await store.cancel(requestId, actor, now(), cancelEntry);
  const request = await store.get(requestId);
  if (outcome.status === "NOT_FOUND" || !request) throw unknownRequest(requestId);
  switch (outcome.status) {
    case "NOT_REQUESTER":
      throw new UnstuckError(ErrorCode.Forbidden, "Only the person who made the request can cancel it.", {
        action: "cancel",
      });
    case "INVALID_STATE":
      throw new UnstuckError(ErrorCode.InvalidState, `This request is already ${outcome.state}.`, {
        state: outcome.state,
      });
    case "EXPIRED":
      deps.audit.mirror({
        ...cancelEntry,
        event: "request.expired",
        after: "EXPIRED",
        result: "the expiry passed before the cancel; nothing was changed",
      });
      await notifyExpired(deps, request);
      throw new UnstuckError(ErrorCode.Expired, "This request had already expired.");
    case "OK":
      break;
  }
  deps.audit.mirror(cancelEntry);
  await notifySafely(deps.notifier, deps.log, request, { kind: "cancelled", by: actor.userId });
  return request;
}
