/**
 * What the parts of the approval workflow (`workflow.ts`) share: the audit entry about a request
 * (written by a transition's script, or appended on its own), the error for a request that is not
 * there, and the thread's notice of an expiry.
 */
import type { AuditActor, AuditEntry } from "../audit/entry.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { ApprovalRequest, Identity } from "../requests/model.js";
import { approverIds } from "../requests/model.js";
import { auditChange, describeAction } from "../requests/action-kinds.js";
import { notifySafely } from "./notifier.js";
import type { ApprovalWorkflowDeps } from "./workflow-types.js";

/** The audit actor of a person. */
export function userActor(identity: Identity): AuditActor {
  return { kind: "user", userId: identity.userId, teamId: identity.teamId };
}

/** An audit entry about `request`, stamped now (written by a transition's script, or appended on its own). */
export function requestEntry(
  now: () => Date,
  request: Pick<ApprovalRequest, "id" | "action" | "requester" | "votes">,
  actor: AuditActor,
  event: string,
  before: string | undefined,
  after: string | undefined,
  result?: string,
): AuditEntry {
  const approvers = approverIds(request);
  return {
    at: now().toISOString(),
    actor,
    event,
    requestId: request.id,
    action: request.action.type,
    target: describeAction(request.action),
    requester: { userId: request.requester.userId, teamId: request.requester.teamId },
    ...(approvers.length > 0 ? { approvers } : {}),
    change: auditChange(request.action),
    ...(before ? { before } : {}),
    ...(after ? { after } : {}),
    ...(result ? { result } : {}),
  };
}

/** An event that is not a state transition (enqueues): appended on its own. */
export async function appendEntry(
  deps: Pick<ApprovalWorkflowDeps, "audit" | "now">,
  request: ApprovalRequest,
  actor: AuditActor,
  event: string,
  before: string | undefined,
  after: string | undefined,
  result?: string,
): Promise<void> {
  await deps.audit.append(requestEntry(deps.now, request, actor, event, before, after, result));
}

/** The `NotFound` error for a request id the store does not know. */
export function unknownRequest(requestId: string): UnstuckError {
  return new UnstuckError(ErrorCode.NotFound, "No such approval request (it may have been cleaned up).", {
    requestId: requestId.slice(0, 64),
  });
}

/** Tell the thread; the expiry's audit entry was written with the transition. */
export async function notifyExpired(
  deps: Pick<ApprovalWorkflowDeps, "notifier" | "log">,
  request: ApprovalRequest,
): Promise<void> {
  await notifySafely(deps.notifier, deps.log, request, { kind: "expired" });
}
