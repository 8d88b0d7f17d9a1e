/**
 * A button or form turned into an approval request: a finalizer removal whose target the form names
 * by resource and API version (resolved through discovery), and a traffic-path repair planned afresh.
 */
import type { ApprovalRequest, Identity, RemovalRequestInput } from "../approvals/types.js";
import type { FinalizerRemovalInput } from "../approvals/workflow.js";
import { resolveResourceType } from "../diagnosis/removal-plan.js";
import type { RepointPlan } from "../edge/repoint.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import type { RepairCheck, RepairSubject } from "../traffic/repoint.js";

export type { RepairCheck } from "../traffic/repoint.js";

export interface RemovalRequestDeps {
  readonly kube: Pick<KubePort, "discover">;
  /** Plans the removal (evidence, clean-up) and creates the request. */
  readonly requestRemoval: (
    input: Omit<FinalizerRemovalInput, "evidence" | "cleanupPlan">,
  ) => Promise<ApprovalRequest>;
}

/** Creates a finalizer-removal request from the form; throws `UnstuckError` when the kind does not match. */
export function removalRequester(
  deps: RemovalRequestDeps,
): (input: RemovalRequestInput) => Promise<ApprovalRequest> {
  return async (input) => {
    const type = resolveResourceType(
      (await deps.kube.discover()).resources,
      `${input.resource}.${groupOf(input.apiVersion)}`,
    );
    if (type.kind !== input.kind) {
      throw new UnstuckError(ErrorCode.BadInput, `${input.resource} is a ${type.kind}, not a ${input.kind}.`);
    }
    return deps.requestRemoval({
      type,
      namespace: input.namespace,
      name: input.name,
      ...(input.finalizer ? { finalizer: input.finalizer } : {}),
      reason: input.reason,
      ...(input.statements !== undefined ? { statements: input.statements } : {}),
      requester: input.requester,
      channelId: input.channelId,
    });
  };
}

/** What the repair button or form asks for. */
export interface RepairFormInput {
  readonly subject: RepairSubject;
  readonly reason: string;
  readonly requester: Identity;
  readonly channelId: string;
}

export interface RepairRequestDeps {
  /** Traces and plans the subject afresh; the request when there is something to repair. */
  readonly requestRepair: (
    input: RepairFormInput,
  ) => Promise<{ readonly request?: ApprovalRequest; readonly plan: RepointPlan }>;
}

/** Creates a repair request; throws `UnstuckError` when the path has nothing to repair now. */
export function repairRequester(
  deps: RepairRequestDeps,
): (input: RepairFormInput) => Promise<ApprovalRequest> {
  return async (input) => {
    const made = await deps.requestRepair(input);
    if (made.request) return made.request;
    throw new UnstuckError(ErrorCode.BadInput, nothingToRepair(input.subject, made.plan));
  };
}

/**
 * Plans the subject afresh (nothing is requested) to say whether there is anything to repair, before
 * anyone is asked for a reason.
 */
export function repairChecker(deps: {
  readonly planRepair: (subject: RepairSubject) => Promise<RepointPlan>;
}): (subject: RepairSubject) => Promise<RepairCheck> {
  return async (subject) => {
    const plan = await deps.planRepair(subject);
    return plan.action !== undefined
      ? { repairable: true }
      : { repairable: false, why: nothingToRepair(subject, plan) };
  };
}

function nothingToRepair(subject: RepairSubject, plan: RepointPlan): string {
  return `Nothing to repair on the traffic path of ${"namespace" in subject ? `namespace ${subject.namespace}` : subject.hostnames.join(", ")} now${plan.questions.length > 0 ? `: ${plan.questions.join(" ")}` : "."}`;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}
