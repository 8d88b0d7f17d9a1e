/**
 * A button or form turned into an approval request: a finalizer removal whose target the form names
 * by resource and API version (resolved through discovery), and a traffic-path repair planned afresh.
 */
import type { ApprovalRequest, RemovalRequestInput } from "../requests/model.js";
import type { Filed, FinalizerRemovalInput } from "../approvals/workflow.js";
import { resolveResourceType } from "../diagnosis/removal-plan.js";
import type { RepointPlan } from "../edge/repoint.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import type { RepairCheck, RepairFormInput, RepairSubject } from "../traffic/repoint.js";

export type { RepairCheck, RepairFormInput } from "../traffic/repoint.js";

export interface RemovalRequestDeps {
  readonly kube: Pick<KubePort, "discover">;
  /** Plans the removal (evidence, clean-up) and submits the request. */
  readonly requestRemoval: (input: Omit<FinalizerRemovalInput, "evidence" | "cleanupPlan">) => Promise<Filed>;
}

/** Submits a finalizer-removal request from the form; throws `UnstuckError` when the kind does not match. */
export function removalRequester(deps: RemovalRequestDeps): (input: RemovalRequestInput) => Promise<Filed> {
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

export interface RepairRequestDeps {
  /** Traces and plans the subject afresh; the submitted request when there is something to repair. */
  readonly requestRepair: (
    input: RepairFormInput,
  ) => Promise<{ readonly filed?: Filed; readonly plan: RepointPlan }>;
}

/** Submits a repair request; throws `UnstuckError` when the path has nothing to repair now. */
export function repairRequester(deps: RepairRequestDeps): (input: RepairFormInput) => Promise<Filed> {
  return async (input) => {
    const made = await deps.requestRepair(input);
    if (made.filed !== undefined) return made.filed;
    throw new UnstuckError(ErrorCode.BadInput, nothingToRepair(input.subject, made.plan));
  };
}

/**
 * The request a submission filed in this process (the bot). A draft here means the request was
 * planned where nothing may file it: refused, never shown as if it were a request.
 */
export function filedHere(filed: Filed): ApprovalRequest {
  if (filed.kind === "filed") return filed.request;
  throw new UnstuckError(
    ErrorCode.Internal,
    "The request was planned but not filed: only the bot files requests, and this one reached no bot.",
  );
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
  // A refused target is the answer to the request: said first, and alone.
  if (plan.refused.length > 0) return `Refused: ${plan.refused.join(" ")}`;
  return `Nothing to repair on the traffic path of ${"namespace" in subject ? `namespace ${subject.namespace}` : subject.hostnames.join(", ")} now${plan.questions.length > 0 ? `: ${plan.questions.join(" ")}` : "."}`;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}
