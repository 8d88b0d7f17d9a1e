/**
 * Filing a draft as a request (`workflow.ts`): the bot's policy and the draft's shape checked again,
 * then signed and stored PENDING with its `request.created` entry; a second request for the same
 * object is refused with a pointer to the one that exists.
 */
import { ErrorCode, UnstuckError } from "../errors.js";
import type { ApprovalAction, ApprovalRequest, Identity, RequestDraft } from "../requests/model.js";
import { newRequestId } from "../requests/model.js";
import { describeChange, filedAction, wellFormed } from "../requests/action-kinds.js";
import { duplicateRequestSentence, type DuplicateRequest } from "../requests/duplicate.js";
import { assertKnownStatements, checkedReason } from "./workflow-plans.js";
import { requestEntry, userActor } from "./workflow-context.js";
import type { ApprovalWorkflowDeps, FinalizerRemovalInput, PlannedInput } from "./workflow-types.js";

/**
 * File a draft as `requester`'s request in `channelId` for `cluster`: the bot's policy, the draft's
 * shape checked again (a draft from a cluster's worker is that worker's word, not the bot's), the
 * bot's own lifetime, approvals and deletion window, then signed and stored.
 */
export async function fileDraft(
  deps: ApprovalWorkflowDeps,
  draft: RequestDraft,
  requester: Identity,
  channelId: string,
  cluster: string | undefined,
): Promise<ApprovalRequest> {
  await deps.policy.assertMayRequest(channelId);
  const reason = checkedReason(draft.reason);
  assertKnownStatements(draft.statements);
  const action = filedAction(draft.action, {
    deletionWindowSeconds: deps.deletionWindowSeconds ?? 3600,
  });
  if (!wellFormed(action)) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      "The planned change is not well formed; nothing was requested.",
    );
  }
  await deps.policy.assertApprovable(requester, deps.approvalsRequired);
  return storeRequest(deps, action, reason, { ...draft, requester, channelId }, cluster);
}

/** Store a new PENDING request (its `request.created` entry written by the same script) and mirror it. */
async function storeRequest(
  deps: ApprovalWorkflowDeps,
  action: ApprovalAction,
  reason: string,
  input: Pick<PlannedInput<ApprovalAction>, "evidence" | "cleanupPlan" | "requester" | "channelId"> &
    Pick<FinalizerRemovalInput, "statements">,
  cluster: string | undefined,
): Promise<ApprovalRequest> {
  const created = deps.now();
  const id = (deps.newId ?? newRequestId)();
  const createdEntry = requestEntry(
    deps.now,
    { id, action, requester: input.requester, votes: [] },
    userActor(input.requester),
    "request.created",
    undefined,
    "PENDING",
    reason,
  );
  const request = await deps.store
    .create(
      {
        id,
        action,
        requester: { userId: input.requester.userId, teamId: input.requester.teamId },
        channelId: input.channelId,
        ...(cluster !== undefined ? { cluster } : {}),
        reason,
        evidence: [...(input.evidence ?? [])],
        cleanupPlan: [...(input.cleanupPlan ?? [])],
        ...(input.statements !== undefined
          ? { statements: input.statements.map((st) => ({ id: st.id, text: st.text })) }
          : {}),
        createdAt: created.toISOString(),
        expiresAt: new Date(created.getTime() + deps.requestTtlSeconds * 1000).toISOString(),
        approvalsRequired: deps.approvalsRequired,
      },
      created,
      createdEntry,
    )
    .catch(async (err: unknown) => {
      throw await duplicate(deps, err, action);
    });
  deps.audit.mirror(createdEntry);
  return request;
}

/** A `Conflict` naming the pending request for the same object, or `err` unchanged. */
async function duplicate(deps: ApprovalWorkflowDeps, err: unknown, action: ApprovalAction): Promise<unknown> {
  const existingId =
    err instanceof UnstuckError && err.code === ErrorCode.Conflict
      ? err.details.existingRequestId
      : undefined;
  if (typeof existingId !== "string") return err;
  const existing = await deps.store.get(existingId);
  // One request per object: point at the one that exists (who asked, where its message is) instead
  // of a second; the surfaces word the person and the message their own way (`duplicate.ts`).
  const duplicate: DuplicateRequest = {
    what: `A request to ${describeChange(action)}`,
    requestId: existingId,
    running: existing !== null && (existing.state === "APPROVED" || existing.state === "EXECUTING"),
    ...(existing ? { requester: existing.requester.userId } : {}),
    ...(existing?.message !== undefined
      ? { message: { channel: existing.message.channel, ts: existing.message.ts } }
      : {}),
  };
  return new UnstuckError(ErrorCode.Conflict, duplicateRequestSentence(duplicate), {
    requestId: existingId,
    existingRequestId: existingId,
    ...(existing?.message !== undefined
      ? { existingChannel: existing.message.channel, existingTs: existing.message.ts }
      : {}),
    duplicateOf: duplicate,
  });
}
