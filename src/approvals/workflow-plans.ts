/**
 * The approval workflow's plans (`workflow.ts`): each kind of request checked against the policy and
 * turned into a draft, bound to the object as read now where it has one. Nothing is stored here;
 * filing a draft is `workflow-filing.ts`.
 */
import { ErrorCode, UnstuckError } from "../errors.js";
import { assertNamespaceName, assertObjectName } from "../kube/names.js";
import type { NamespaceSnapshot, ObjectSnapshot } from "../kube/types.js";
import type {
  ApprovalAction,
  DeleteOrphansAction,
  OpenDeletionGuardAction,
  RemoveFinalizerAction,
  RepointPathAction,
  RequestDraft,
  RequesterStatement,
} from "../requests/model.js";
import { areKnownStatements, DELETION_APPROVED_ANNOTATION } from "../requests/model.js";
import { buildFinalizerPatch } from "../kube/finalizer-patch.js";
import { parseGuardValue } from "./deletion-guard-token.js";
import { MIN_REASON_LENGTH } from "./reason.js";
import type {
  ApprovalWorkflowDeps,
  DeletionGuardInput,
  FinalizerRemovalInput,
  PlannedInput,
} from "./workflow-types.js";

/** What planning reads and checks with: the policy, the cluster, and the bot's approval settings. */
export type PlanDeps = Pick<
  ApprovalWorkflowDeps,
  "policy" | "kube" | "approvalsRequired" | "deletionWindowSeconds"
>;

/**
 * The reason as given, trimmed; a `BadInput` when it is too short. `hint` says what a good reason
 * names (a command's `--reason`); without it the refusal only asks for the length.
 */
export function checkedReason(raw: string, hint?: string): string {
  const reason = raw.trim();
  if (reason.length < MIN_REASON_LENGTH) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      hint === undefined
        ? `Say why in at least ${MIN_REASON_LENGTH} characters.`
        : `Say why in at least ${MIN_REASON_LENGTH} characters: add --reason "…" (${hint}).`,
    );
  }
  return reason;
}

/** Refuse confirmations that are not the ones the form asks for. */
export function assertKnownStatements(statements: readonly RequesterStatement[] | undefined): void {
  if (statements !== undefined && !areKnownStatements(statements)) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      "The confirmations are not the ones the form asks for; open the form again.",
    );
  }
}

/** Plan a finalizer removal from the object as it is now: checked, read, frozen; nothing stored. */
export async function planFinalizerRemoval(
  deps: PlanDeps,
  input: FinalizerRemovalInput,
): Promise<RequestDraft> {
  const { policy, kube } = deps;
  await policy.assertMayRequest(input.channelId);
  assertNamespaceName(input.namespace);
  assertObjectName(input.name);
  const reason = checkedReason(input.reason, "cause confirmed, recovery first");
  assertKnownStatements(input.statements);
  await policy.assertApprovable(input.requester, deps.approvalsRequired);
  const object = await kube.getObject(input.type, input.namespace, input.name);
  return draftOf(finalizerAction(input, object), reason, input);
}

/**
 * The removal of `input`'s finalizer(s) from `object` as read: it must exist, carry them and have a
 * resourceVersion, which is frozen into the action with its finalizer list.
 */
function finalizerAction(input: FinalizerRemovalInput, object: ObjectSnapshot | null): RemoveFinalizerAction {
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
    throw new UnstuckError(ErrorCode.Upstream, `The API server returned ${what} without a resourceVersion.`);
  }
  const precondition = { resourceVersion: object.resourceVersion, finalizers: [...object.finalizers] };
  const remove = input.finalizer !== undefined ? [input.finalizer] : [...object.finalizers];
  return {
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
}

/** The checks of a request whose plan is made (a repoint, a clean-up; `changes`: the calls it holds). */
export async function planPlanned(
  deps: PlanDeps,
  input: PlannedInput<RepointPathAction | DeleteOrphansAction>,
  changes: number,
): Promise<RequestDraft> {
  const { policy } = deps;
  await policy.assertMayRequest(input.channelId);
  const reason = checkedReason(input.reason, "what is stale, why this target");
  if (changes === 0) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      "The plan has no change to make: the path has nothing stale to repoint.",
    );
  }
  await policy.assertApprovable(input.requester, deps.approvalsRequired);
  return draftOf(input.action, reason, input);
}

/** A deletion guard's draft, bound to the namespace as read now. */
export async function planDeletionGuard(deps: PlanDeps, input: DeletionGuardInput): Promise<RequestDraft> {
  const { policy, kube } = deps;
  await policy.assertMayRequest(input.channelId);
  assertNamespaceName(input.namespace);
  const reason = checkedReason(input.reason, "why this namespace goes, who owns it");
  const ns = await kube.getNamespace(input.namespace);
  const precondition = guardPrecondition(input.namespace, ns);
  await policy.assertApprovable(input.requester, deps.approvalsRequired);
  const action: OpenDeletionGuardAction = {
    type: "open-deletion-guard",
    namespace: input.namespace,
    precondition,
    windowSeconds: deps.deletionWindowSeconds ?? 3600,
    preflight: input.preflight,
  };
  return draftOf(action, reason, input);
}

/**
 * The namespace as a guard binds to it (its uid and resourceVersion): it must exist, not be
 * Terminating, and not carry the annotation already.
 */
function guardPrecondition(
  namespace: string,
  ns: NamespaceSnapshot | null,
): OpenDeletionGuardAction["precondition"] {
  if (ns === null) {
    throw new UnstuckError(
      ErrorCode.NotFound,
      `Namespace ${namespace} does not exist, so there is nothing to approve.`,
      { namespace, resource: "namespaces" },
    );
  }
  if (ns.deletionTimestamp !== undefined) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      `Namespace ${namespace} is already being deleted (Terminating since ${ns.deletionTimestamp}); there is no deletion left to approve. \`ns ${namespace}\` says what it waits on.`,
    );
  }
  const open = ns.annotations[DELETION_APPROVED_ANNOTATION];
  if (open !== undefined) {
    // Never echo the value: anyone who may annotate the namespace chose it.
    const parsed = parseGuardValue(open);
    throw new UnstuckError(
      ErrorCode.Conflict,
      parsed
        ? `Namespace ${namespace} already carries ${DELETION_APPROVED_ANNOTATION} for request ${parsed.requestId}: its deletion guard is open until ${parsed.until.toISOString()}, when the bot closes it.`
        : `Namespace ${namespace} carries a ${DELETION_APPROVED_ANNOTATION} annotation the bot did not write; the workers remove it within seconds. Ask again then.`,
      { namespace },
    );
  }
  if (!ns.uid || !ns.resourceVersion) {
    throw new UnstuckError(
      ErrorCode.Upstream,
      `The API server returned namespace ${namespace} without a uid or resourceVersion.`,
    );
  }
  return { uid: ns.uid, resourceVersion: ns.resourceVersion };
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
