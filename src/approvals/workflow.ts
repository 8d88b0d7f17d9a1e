/**
 * The approval service the Slack and CLI layers call. It validates, applies the policy, stores
 * transitions atomically, audits every one of them, and enqueues the execution exactly once:
 * only the vote whose script moved the request to APPROVED enqueues it, and the job id derives
 * from the request id, so even a repeated enqueue collapses into one job.
 *
 * Its parts: `workflow-plans.ts` (each kind of request checked and drafted), `workflow-filing.ts`
 * (a draft signed and stored), `workflow-votes.ts` (votes and cancels), `workflow-sweep.ts` (expiry
 * and requeues) and `workflow-context.ts` (what they share); this class is their one face.
 */
import { REQUEST_POSTED_EVENT } from "../audit/entry.js";
import { assertRequestId } from "./store-context.js";
import type { ApprovalRequest, Identity, MessageRef, RequestDraft, VoteDecision } from "../requests/model.js";
import { type VerifiedView } from "./verify.js";
import { planDeletionGuard, planFinalizerRemoval, planPlanned } from "./workflow-plans.js";
import { fileDraft } from "./workflow-filing.js";
import { cancelRequest, castVote } from "./workflow-votes.js";
import { expireOverdue, requeueApproved } from "./workflow-sweep.js";
import { unknownRequest } from "./workflow-context.js";

export * from "./workflow-types.js";
import type {
  ApprovalWorkflowDeps,
  DeletionGuardInput,
  FinalizerRemovalInput,
  Filed,
  OrphanDeletionInput,
  RepointInput,
  VoteContext,
  VoteResult,
} from "./workflow-types.js";

/** Re-exported: the patch the request shows is the patch the adapter sends. */
export { buildFinalizerPatch } from "../kube/finalizer-patch.js";

export class ApprovalWorkflow {
  public constructor(private readonly deps: ApprovalWorkflowDeps) {
    // Transitions write their audit entries from the store's scripts: into the audit log's stream.
    if (deps.store.auditKey !== deps.audit.key) {
      throw new Error(
        `the approval store writes audit entries to ${deps.store.auditKey ?? "(nowhere)"}, the audit log reads ${deps.audit.key}`,
      );
    }
  }

  /**
   * The policy checks a request must pass, without touching the cluster: call it before gathering
   * evidence, so a request that will be refused costs no diagnosis. `requestFinalizerRemoval`
   * checks again (the policy may change in between).
   */
  public async precheck(requester: Identity, channelId: string): Promise<void> {
    await this.deps.policy.assertMayRequest(channelId);
    await this.deps.policy.assertApprovable(requester, this.deps.approvalsRequired);
  }

  /**
   * Create a request to remove finalizers from one object (planned and filed here). The object must
   * exist and carry the finalizer; its resourceVersion and finalizer list are frozen into the request.
   */
  public async requestFinalizerRemoval(input: FinalizerRemovalInput): Promise<ApprovalRequest> {
    return this.fileDraft(await this.planFinalizerRemoval(input), input.requester, input.channelId);
  }

  /** Plan a finalizer removal from the object as it is now: checked, read, frozen; nothing stored. */
  public async planFinalizerRemoval(input: FinalizerRemovalInput): Promise<RequestDraft> {
    return planFinalizerRemoval(this.deps, input);
  }

  /**
   * Create a request to repair the traffic path: the plan's exact Route 53 batches and CloudFront
   * updates, each bound to what was read when planning (exact record values, the distribution's ETag).
   */
  public async requestRepoint(input: RepointInput): Promise<ApprovalRequest> {
    return this.fileDraft(await this.planRepoint(input), input.requester, input.channelId);
  }

  /** A repair's draft, checked. */
  public async planRepoint(input: RepointInput): Promise<RequestDraft> {
    return planPlanned(this.deps, input, input.action.steps.length);
  }

  /**
   * Create a request to delete AWS orphans: the resources the orphan check found removable, each
   * re-checked by the executor before it is deleted.
   */
  public async requestOrphanDeletion(input: OrphanDeletionInput): Promise<ApprovalRequest> {
    return this.fileDraft(await this.planOrphanDeletion(input), input.requester, input.channelId);
  }

  /** A clean-up's draft, checked. */
  public async planOrphanDeletion(input: OrphanDeletionInput): Promise<RequestDraft> {
    return planPlanned(this.deps, input, input.action.resources.length);
  }

  /**
   * Create a request to open a namespace's deletion guard: bound to the namespace as it is now (its
   * uid and resourceVersion), which must exist, not be Terminating, and not carry the annotation.
   */
  public async requestDeletionGuard(input: DeletionGuardInput): Promise<ApprovalRequest> {
    return this.fileDraft(await this.planDeletionGuard(input), input.requester, input.channelId);
  }

  /** A deletion guard's draft, bound to the namespace as read now. */
  public async planDeletionGuard(input: DeletionGuardInput): Promise<RequestDraft> {
    return planDeletionGuard(this.deps, input);
  }

  /**
   * A planned request submitted by whoever asked: filed here (signed and stored) on the bot, handed
   * back as a draft on a fleet's worker, for the bot to file as the person it verified.
   */
  public async submit(draft: RequestDraft, requester: Identity, channelId: string): Promise<Filed> {
    if (this.deps.files === "bot") return { kind: "draft", draft };
    return { kind: "filed", request: await this.fileDraft(draft, requester, channelId) };
  }

  /**
   * File a draft as `requester`'s request in `channelId` for `cluster`: the bot's policy, the draft's
   * shape checked again (a draft from a cluster's worker is that worker's word, not the bot's), the
   * bot's own lifetime, approvals and deletion window, then signed and stored.
   */
  public async fileDraft(
    draft: RequestDraft,
    requester: Identity,
    channelId: string,
    cluster: string | undefined = this.deps.cluster,
  ): Promise<ApprovalRequest> {
    return fileDraft(this.deps, draft, requester, channelId, cluster);
  }

  /** Remember the Slack message that shows the request, so later transitions can update it. */
  public async attachMessage(requestId: string, message: MessageRef): Promise<void> {
    if (!(await this.deps.store.setMessage(requestId, message))) throw unknownRequest(requestId);
    // Where the request lives in Slack (its message is its thread's parent), so the timeline of that
    // thread finds the request's events. Not mirrored, never thrown: a read aid, not a transition.
    await this.deps.audit.record({
      at: this.deps.now().toISOString(),
      actor: { kind: "system", component: "slack" },
      event: REQUEST_POSTED_EVENT,
      requestId,
      action: "",
      target: "",
      channel: message.channel,
      threadTs: message.ts,
    });
  }

  /**
   * Approve or deny. Throws a coded error (NotApprover, SelfApproval, AlreadyVoted, …) when refused.
   * The voter must belong to the requester's team and, when the context names it, vote from the
   * request's channel; group membership is looked up live (a failed lookup refuses the vote).
   */
  public async vote(
    requestId: string,
    voter: Identity,
    decision: VoteDecision,
    context: VoteContext = {},
  ): Promise<VoteResult> {
    return castVote(this.deps, requestId, voter, decision, context);
  }

  /** Cancel a pending request; only the requester may. */
  public async cancel(requestId: string, actor: Identity): Promise<ApprovalRequest> {
    return cancelRequest(this.deps, requestId, actor);
  }

  /** Expire every overdue pending request; returns them so the caller can update their messages. */
  public async expireDue(): Promise<ApprovalRequest[]> {
    return expireOverdue(this.deps);
  }

  /**
   * Re-enqueue approved requests whose execution was never claimed (the enqueue after the approving
   * vote can fail), bounded by `maxRequeues`; returns the ids re-enqueued (see `workflow-sweep.ts`).
   */
  public async requeueApproved(graceMs = 30_000): Promise<string[]> {
    return requeueApproved(this.deps, graceMs);
  }

  /** The periodic housekeeping: expire overdue requests and repair lost enqueues. */
  public async sweep(): Promise<{ expired: ApprovalRequest[]; requeued: string[] }> {
    return { expired: await this.expireDue(), requeued: await this.requeueApproved() };
  }

  /** Pending, unexpired requests, soonest expiry first. */
  public async listPending(page: { offset?: number; limit?: number } = {}): Promise<ApprovalRequest[]> {
    return this.deps.store.listPending(this.deps.now(), page);
  }

  /** The request as stored; `NotFound` when there is none. */
  public async get(requestId: string): Promise<ApprovalRequest> {
    const request = await this.deps.store.get(requestId);
    if (!request) throw unknownRequest(requestId);
    return request;
  }

  /** The request as its signatures vouch for it (what a card may show), or why it cannot be shown. */
  public async getVerified(requestId: string): Promise<VerifiedView> {
    assertRequestId(requestId);
    const view = await this.deps.store.getVerified(requestId);
    if (view === null) throw unknownRequest(requestId);
    return view;
  }
}
