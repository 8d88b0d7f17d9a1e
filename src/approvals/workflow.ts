/**
 * The approval service the Slack and CLI layers call. It validates, applies the policy, stores
 * transitions atomically, audits every one of them, and enqueues the execution exactly once:
 * only the vote whose script moved the request to APPROVED enqueues it, and the job id derives
 * from the request id, so even a repeated enqueue collapses into one job.
 */
import { REQUEST_POSTED_EVENT, type AuditActor, type AuditEntry } from "../audit/entry.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import { assertNamespaceName, assertObjectName } from "../kube/names.js";
import { notifySafely } from "./notifier.js";
import { assertRequestId } from "./store.js";
import type {
  ApprovalAction,
  ApprovalRequest,
  ExecutionResult,
  Identity,
  MessageRef,
  RemoveFinalizerAction,
  RepointPathAction,
  DeleteOrphansAction,
  OpenDeletionGuardAction,
  RequestDraft,
  RequesterStatement,
  VoteDecision,
} from "../requests/model.js";
import {
  approverIds,
  areKnownStatements,
  DELETION_APPROVED_ANNOTATION,
  isRequestId,
  newRequestId,
} from "../requests/model.js";
import {
  auditChange,
  describeAction,
  describeChange,
  filedAction,
  wellFormed,
} from "../requests/action-kinds.js";
import { buildFinalizerPatch } from "../kube/finalizer-patch.js";
import { parseGuardValue } from "./deletion-guard-token.js";
import { MIN_REASON_LENGTH } from "./reason.js";
import { duplicateRequestSentence, type DuplicateRequest } from "../requests/duplicate.js";
import { type VerifiedView } from "./verify.js";

export * from "./workflow-types.js";
import {
  DEFAULT_MAX_REQUEUES,
  MAX_VOTE_REASON,
  type ApprovalWorkflowDeps,
  type DeletionGuardInput,
  type FinalizerRemovalInput,
  type Filed,
  type OrphanDeletionInput,
  type PlannedInput,
  type RepointInput,
  type VoteContext,
  type VoteResult,
} from "./workflow-types.js";

/** Re-exported: the patch the request shows is the patch the adapter sends. */
export { buildFinalizerPatch } from "../kube/finalizer-patch.js";

function userActor(identity: Identity): AuditActor {
  return { kind: "user", userId: identity.userId, teamId: identity.teamId };
}

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
    const { policy, kube } = this.deps;
    await policy.assertMayRequest(input.channelId);
    assertNamespaceName(input.namespace);
    assertObjectName(input.name);
    const reason = input.reason.trim();
    if (reason.length < MIN_REASON_LENGTH) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        `Say why in at least ${MIN_REASON_LENGTH} characters: add --reason "…" (cause confirmed, recovery first).`,
      );
    }
    if (input.statements !== undefined && !areKnownStatements(input.statements)) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        "The confirmations are not the ones the form asks for; open the form again.",
      );
    }
    await policy.assertApprovable(input.requester, this.deps.approvalsRequired);

    const object = await kube.getObject(input.type, input.namespace, input.name);
    const what = `${input.type.kind} ${input.namespace}/${input.name}`;
    if (!object) {
      throw new UnstuckError(ErrorCode.NotFound, `${what} does not exist, so there is nothing to approve.`, {
        namespace: input.namespace,
        name: input.name,
        resource: input.type.resource,
      });
    }
    if (object.finalizers.length === 0) {
      throw new UnstuckError(ErrorCode.BadInput, `${what} has no finalizers; nothing blocks its deletion.`);
    }
    if (input.finalizer !== undefined && !object.finalizers.includes(input.finalizer)) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        `${what} has no finalizer "${input.finalizer}"; it has [${object.finalizers.join(", ")}].`,
      );
    }
    if (!object.resourceVersion) {
      throw new UnstuckError(
        ErrorCode.Upstream,
        `The API server returned ${what} without a resourceVersion.`,
      );
    }
    const precondition = { resourceVersion: object.resourceVersion, finalizers: [...object.finalizers] };
    const remove = input.finalizer !== undefined ? [input.finalizer] : [...object.finalizers];
    const action: RemoveFinalizerAction = {
      type: "remove-finalizer",
      target: {
        apiVersion: input.type.apiVersion,
        kind: input.type.kind,
        resource: input.type.resource,
        group: input.type.group,
        version: input.type.version,
        namespace: input.namespace,
        name: input.name,
        ...(object.uid ? { uid: object.uid } : {}),
      },
      precondition,
      remove,
      patch: buildFinalizerPatch(precondition, remove),
    };
    return draftOf(action, reason, input);
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
    return this.planned(input, input.action.steps.length);
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
    return this.planned(input, input.action.resources.length);
  }

  /** The checks of a request whose plan is made (`changes`: the calls it holds). */
  private async planned(
    input: PlannedInput<RepointPathAction | DeleteOrphansAction>,
    changes: number,
  ): Promise<RequestDraft> {
    const { policy } = this.deps;
    await policy.assertMayRequest(input.channelId);
    const reason = input.reason.trim();
    if (reason.length < MIN_REASON_LENGTH) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        `Say why in at least ${MIN_REASON_LENGTH} characters: add --reason "…" (what is stale, why this target).`,
      );
    }
    if (changes === 0) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        "The plan has no change to make: the path has nothing stale to repoint.",
      );
    }
    await policy.assertApprovable(input.requester, this.deps.approvalsRequired);
    return draftOf(input.action, reason, input);
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
    const { policy, kube } = this.deps;
    await policy.assertMayRequest(input.channelId);
    assertNamespaceName(input.namespace);
    const reason = input.reason.trim();
    if (reason.length < MIN_REASON_LENGTH) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        `Say why in at least ${MIN_REASON_LENGTH} characters: add --reason "…" (why this namespace goes, who owns it).`,
      );
    }
    const ns = await kube.getNamespace(input.namespace);
    if (ns === null) {
      throw new UnstuckError(
        ErrorCode.NotFound,
        `Namespace ${input.namespace} does not exist, so there is nothing to approve.`,
        { namespace: input.namespace, resource: "namespaces" },
      );
    }
    if (ns.deletionTimestamp !== undefined) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        `Namespace ${input.namespace} is already being deleted (Terminating since ${ns.deletionTimestamp}); there is no deletion left to approve. \`ns ${input.namespace}\` says what it waits on.`,
      );
    }
    const open = ns.annotations[DELETION_APPROVED_ANNOTATION];
    if (open !== undefined) {
      // Never echo the value: anyone who may annotate the namespace chose it.
      const parsed = parseGuardValue(open);
      throw new UnstuckError(
        ErrorCode.Conflict,
        parsed
          ? `Namespace ${input.namespace} already carries ${DELETION_APPROVED_ANNOTATION} for request ${parsed.requestId}: its deletion guard is open until ${parsed.until.toISOString()}, when the bot closes it.`
          : `Namespace ${input.namespace} carries a ${DELETION_APPROVED_ANNOTATION} annotation the bot did not write; the workers remove it within seconds. Ask again then.`,
        { namespace: input.namespace },
      );
    }
    if (!ns.uid || !ns.resourceVersion) {
      throw new UnstuckError(
        ErrorCode.Upstream,
        `The API server returned namespace ${input.namespace} without a uid or resourceVersion.`,
      );
    }
    await policy.assertApprovable(input.requester, this.deps.approvalsRequired);
    const action: OpenDeletionGuardAction = {
      type: "open-deletion-guard",
      namespace: input.namespace,
      precondition: { uid: ns.uid, resourceVersion: ns.resourceVersion },
      windowSeconds: this.deps.deletionWindowSeconds ?? 3600,
      preflight: input.preflight,
    };
    return draftOf(action, reason, input);
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
    await this.deps.policy.assertMayRequest(channelId);
    const reason = draft.reason.trim();
    if (reason.length < MIN_REASON_LENGTH) {
      throw new UnstuckError(ErrorCode.BadInput, `Say why in at least ${MIN_REASON_LENGTH} characters.`);
    }
    if (draft.statements !== undefined && !areKnownStatements(draft.statements)) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        "The confirmations are not the ones the form asks for; open the form again.",
      );
    }
    const action = filedAction(draft.action, {
      deletionWindowSeconds: this.deps.deletionWindowSeconds ?? 3600,
    });
    if (!wellFormed(action)) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        "The planned change is not well formed; nothing was requested.",
      );
    }
    await this.deps.policy.assertApprovable(requester, this.deps.approvalsRequired);
    return this.store(action, reason, { ...draft, requester, channelId }, cluster);
  }

  /** Store a new PENDING request (its `request.created` entry written by the same script) and mirror it. */
  private async store(
    action: ApprovalAction,
    reason: string,
    input: Pick<PlannedInput<ApprovalAction>, "evidence" | "cleanupPlan" | "requester" | "channelId"> &
      Pick<FinalizerRemovalInput, "statements">,
    cluster: string | undefined,
  ): Promise<ApprovalRequest> {
    const created = this.deps.now();
    const id = (this.deps.newId ?? newRequestId)();
    const createdEntry = this.entry(
      { id, action, requester: input.requester, votes: [] },
      userActor(input.requester),
      "request.created",
      undefined,
      "PENDING",
      reason,
    );
    const request = await this.deps.store
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
          expiresAt: new Date(created.getTime() + this.deps.requestTtlSeconds * 1000).toISOString(),
          approvalsRequired: this.deps.approvalsRequired,
        },
        created,
        createdEntry,
      )
      .catch(async (err: unknown) => {
        throw await this.duplicate(err, action);
      });
    this.deps.audit.mirror(createdEntry);
    return request;
  }

  /** Remember the Slack message that shows the request, so later transitions can update it. */
  public async attachMessage(requestId: string, message: MessageRef): Promise<void> {
    if (!(await this.deps.store.setMessage(requestId, message))) throw this.unknown(requestId);
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
   * Whether a vote may be counted before it is cast: an approver, of the requester's workspace, on
   * the request's own message, on a record that still verifies, with a reason of bounded length
   * (returned trimmed, or undefined). Throws a coded error naming why not.
   */
  private async admitVote(
    before: ApprovalRequest,
    voter: Identity,
    context: VoteContext,
  ): Promise<string | undefined> {
    const { store, policy } = this.deps;
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
    const { store, now } = this.deps;
    assertRequestId(requestId);
    const before = await store.get(requestId);
    if (!before) throw this.unknown(requestId);
    const reason = await this.admitVote(before, voter, context);
    // The script words the entry's result: the tally, and this reason from the signed vote.
    const voteEntry = this.entry(before, userActor(voter), `vote.${decision}`, "PENDING", undefined);
    const outcome = await store.vote(requestId, voter, decision, now(), context.channelId, voteEntry, reason);
    const after = (await store.get(requestId)) ?? before;
    switch (outcome.status) {
      case "NOT_FOUND":
        throw this.unknown(requestId);
      case "FINISHED":
        // Its record had been put back to an earlier state; the script restored it and audited that.
        this.deps.log?.warn(
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
          this.deps.audit.mirror({
            ...voteEntry,
            event: "request.expired",
            after: "EXPIRED",
            result: "the expiry passed before this vote; nothing was changed",
          });
          await this.expired(after);
        }
        throw new UnstuckError(
          ErrorCode.Expired,
          "This request expired before your vote; ask for a new one.",
        );
      case "OK":
        break;
    }
    // Written by the vote's own script; the mirror gets the same entry.
    this.deps.audit.mirror({
      ...voteEntry,
      ...(outcome.state ? { after: outcome.state } : {}),
      result: `${String(outcome.approvals)}/${String(after.approvalsRequired)} approvals`,
    });
    if (outcome.transitioned && outcome.state === "APPROVED") {
      const system = { kind: "system", component: "workflow" } as const;
      try {
        await this.deps.enqueueExecution(after);
        await this.audit(after, system, "execution.enqueued", "APPROVED", "APPROVED");
      } catch (err) {
        // The approval stands (it is in Redis); `requeueApproved` in the sweep retries the enqueue.
        this.deps.log?.error(
          { err, requestId },
          "could not enqueue the approved execution; the sweep will retry",
        );
        await this.audit(
          after,
          system,
          "execution.enqueue-failed",
          "APPROVED",
          "APPROVED",
          "the sweep will retry",
        );
      }
    }
    await notifySafely(this.deps.notifier, this.deps.log, after, {
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

  /** Cancel a pending request; only the requester may. */
  public async cancel(requestId: string, actor: Identity): Promise<ApprovalRequest> {
    const { store, now } = this.deps;
    assertRequestId(requestId);
    const before = await store.get(requestId);
    if (!before) throw this.unknown(requestId);
    const cancelEntry = this.entry(before, userActor(actor), "request.cancelled", "PENDING", "CANCELLED");
    const outcome = await store.cancel(requestId, actor, now(), cancelEntry);
    const request = await store.get(requestId);
    if (outcome.status === "NOT_FOUND" || !request) throw this.unknown(requestId);
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
        this.deps.audit.mirror({
          ...cancelEntry,
          event: "request.expired",
          after: "EXPIRED",
          result: "the expiry passed before the cancel; nothing was changed",
        });
        await this.expired(request);
        throw new UnstuckError(ErrorCode.Expired, "This request had already expired.");
      case "OK":
        break;
    }
    this.deps.audit.mirror(cancelEntry);
    await notifySafely(this.deps.notifier, this.deps.log, request, { kind: "cancelled", by: actor.userId });
    return request;
  }

  /** Expire every overdue pending request; returns them so the caller can update their messages. */
  public async expireDue(): Promise<ApprovalRequest[]> {
    const system = { kind: "system", component: "expiry" } as const;
    const entryOf = (r: ApprovalRequest): AuditEntry =>
      this.entry(r, system, "request.expired", "PENDING", "EXPIRED");
    // Each expiry's audit entry is written by the script that expires it.
    const ids = await this.deps.store.expireDue(this.deps.now(), 500, entryOf);
    const out: ApprovalRequest[] = [];
    for (const id of ids) {
      const request = await this.deps.store.get(id);
      if (!request) continue;
      this.deps.audit.mirror(entryOf(request));
      await this.expired(request);
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
  public async requeueApproved(graceMs = 30_000): Promise<string[]> {
    const { store, now } = this.deps;
    const ids = await store.approvedUnclaimed(new Date(now().getTime() - graceMs));
    const max = this.deps.maxRequeues ?? DEFAULT_MAX_REQUEUES;
    const system = { kind: "system", component: "sweep" } as const;
    const out: string[] = [];
    for (const id of ids) {
      if (!isRequestId(id)) continue;
      const request = await store.get(id);
      if (request === null) {
        await store.requeue(id, "check", now(), max, this.gaveUp(max, now()));
        continue;
      }
      const gaveUp = this.gaveUp(max, now());
      const refusal = this.entry(request, system, "execution.refused", request.state, undefined);
      const check = await store.requeue(id, "check", now(), max, gaveUp, refusal);
      if (check.status === "FINISHED") {
        this.refusedFinished(request, refusal, check.state);
        continue;
      }
      if (check.status !== "OK") continue;
      const found = (await this.deps.enqueueExecution(request)) ?? "added";
      // Its job is waiting (workers busy or down, a retry's backoff): it runs when a worker takes it.
      if (found === "pending") continue;
      const limit = this.entry(
        request,
        system,
        "execution.requeue-limit",
        "APPROVED",
        "FAILED",
        gaveUp.message,
      );
      const counted = await store.requeue(id, "count", now(), max, gaveUp, limit);
      if (counted.status === "GAVE_UP") {
        this.deps.log?.error(
          { requestId: id, requeues: counted.count },
          "approved request never claimed; ended FAILED",
        );
        this.deps.audit.mirror(limit);
        const latest = (await store.get(id)) ?? request;
        await notifySafely(this.deps.notifier, this.deps.log, latest, {
          kind: "outcome",
          state: "FAILED",
          message: gaveUp.message,
        });
        continue;
      }
      if (counted.status !== "OK") continue;
      await this.audit(
        request,
        system,
        "execution.requeued",
        "APPROVED",
        "APPROVED",
        `requeue ${String(counted.count)} of at most ${String(max)}${found === "ended" ? "; its job had ended without claiming it" : ""}`,
      );
      out.push(id);
    }
    return out;
  }

  /** The result a request gets when the sweep gives up on it. */
  private gaveUp(max: number, at: Date): ExecutionResult {
    return {
      outcome: "failed",
      message: `Not executed: the approved request was queued ${String(max)} times without ever being started, so it ended FAILED and will not run. Nothing was changed; ask for a new approval.`,
      at: at.toISOString(),
    };
  }

  /** A finished request found put back to an earlier state was refused: raise it (the script audited it). */
  private refusedFinished(request: ApprovalRequest, refusal: AuditEntry, state: string): void {
    this.deps.log?.warn(
      { requestId: request.id, found: request.state, ended: state },
      "a finished request was found put back to an earlier state; refused and restored",
    );
    this.deps.audit.mirror({
      ...refusal,
      after: state,
      result: `it had already ended ${state}; its record, put back to ${request.state}, was refused and restored`,
    });
  }

  /** The periodic housekeeping: expire overdue requests and repair lost enqueues. */
  public async sweep(): Promise<{ expired: ApprovalRequest[]; requeued: string[] }> {
    return { expired: await this.expireDue(), requeued: await this.requeueApproved() };
  }

  /** Pending, unexpired requests, soonest expiry first. */
  public async listPending(page: { offset?: number; limit?: number } = {}): Promise<ApprovalRequest[]> {
    return this.deps.store.listPending(this.deps.now(), page);
  }

  public async get(requestId: string): Promise<ApprovalRequest> {
    const request = await this.deps.store.get(requestId);
    if (!request) throw this.unknown(requestId);
    return request;
  }

  /** The request as its signatures vouch for it (what a card may show), or why it cannot be shown. */
  public async getVerified(requestId: string): Promise<VerifiedView> {
    assertRequestId(requestId);
    const view = await this.deps.store.getVerified(requestId);
    if (view === null) throw this.unknown(requestId);
    return view;
  }

  /** Tell the thread; the expiry's audit entry was written with the transition. */
  private async expired(request: ApprovalRequest): Promise<void> {
    await notifySafely(this.deps.notifier, this.deps.log, request, { kind: "expired" });
  }

  /** A `Conflict` naming the pending request for the same object, or `err` unchanged. */
  private async duplicate(err: unknown, action: ApprovalAction): Promise<unknown> {
    const existingId =
      err instanceof UnstuckError && err.code === ErrorCode.Conflict
        ? err.details.existingRequestId
        : undefined;
    if (typeof existingId !== "string") return err;
    const existing = await this.deps.store.get(existingId);
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

  private unknown(requestId: string): UnstuckError {
    return new UnstuckError(ErrorCode.NotFound, "No such approval request (it may have been cleaned up).", {
      requestId: requestId.slice(0, 64),
    });
  }

  /** An audit entry about `request` (written by a transition's script, or appended on its own). */
  private entry(
    request: Pick<ApprovalRequest, "id" | "action" | "requester" | "votes">,
    actor: AuditActor,
    event: string,
    before: string | undefined,
    after: string | undefined,
    result?: string,
  ): AuditEntry {
    const approvers = approverIds(request);
    return {
      at: this.deps.now().toISOString(),
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
  private async audit(
    request: ApprovalRequest,
    actor: AuditActor,
    event: string,
    before: string | undefined,
    after: string | undefined,
    result?: string,
  ): Promise<void> {
    await this.deps.audit.append(this.entry(request, actor, event, before, after, result));
  }
}

/** A draft of `action`: the reason as said, evidence, clean-up plan and statements as given. */
function draftOf(
  action: ApprovalAction,
  reason: string,
  input: {
    readonly evidence?: readonly string[];
    readonly cleanupPlan?: readonly string[];
    readonly statements?: readonly RequesterStatement[];
  },
): RequestDraft {
  return {
    action,
    reason,
    evidence: [...(input.evidence ?? [])],
    cleanupPlan: [...(input.cleanupPlan ?? [])],
    ...(input.statements !== undefined
      ? { statements: input.statements.map((st) => ({ id: st.id, text: st.text })) }
      : {}),
  };
}
