/**
 * What a finalizer-removal request must show before anyone approves it: the evidence that the
 * cause is confirmed, and the clean-up plan — what the finalizer's controller would have cleaned up
 * and which of those resources (AWS included) still exist.
 */
import { ErrorCode, UnstuckError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import type { ObjectSnapshot, ResourceType } from "../kube/types.js";
import { formatDuration, leftInAws } from "./analyze.js";
import { describeDependent, type AwsFindings, type BindingFindings } from "./aws.js";
import { registeredTargetsLeft, targetSpec } from "./binding.js";
import { diagnoseNamespace, type DiagnoseOptions } from "./diagnose.js";
import { lookupFinalizer } from "./finalizers.js";
import type { Blocker, NamespaceDiagnosis } from "./types.js";
import { clock } from "../util/format.js";
import { causeSentence, rootCause } from "../render/diagnosis-prose.js";

export interface RemovalPlan {
  readonly type: ResourceType;
  readonly evidence: string[];
  readonly cleanupPlan: string[];
}

/**
 * Resolve what a user typed (`ingress`, `ingresses`, `Ingress`, `ingresses.networking.k8s.io`,
 * `ing`…) to one namespaced resource type found by discovery.
 */
export function resolveResourceType(types: readonly ResourceType[], text: string): ResourceType {
  const wanted = text.toLowerCase();
  const [first, ...rest] = wanted.split(".");
  const group = rest.join(".");
  const candidates = types.filter(
    (t) =>
      t.namespaced &&
      (group === "" || t.group === group) &&
      (t.resource === first || t.kind.toLowerCase() === first || SHORT_NAMES[first ?? ""] === t.resource),
  );
  // Prefer the core group, then the first group discovery returned (kubectl's preference order).
  const chosen = candidates.find((t) => t.group === "") ?? candidates[0];
  if (!chosen) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      `Unknown namespaced kind "${text}": use the kind or resource name as kubectl does, e.g. ingress/myapp-worker-ingress.`,
    );
  }
  return chosen;
}

/** kubectl's short names for the kinds that most often block a namespace. */
const SHORT_NAMES: Readonly<Record<string, string>> = {
  ing: "ingresses",
  svc: "services",
  pvc: "persistentvolumeclaims",
  cm: "configmaps",
  po: "pods",
  deploy: "deployments",
  sts: "statefulsets",
  ds: "daemonsets",
  rs: "replicasets",
  tgb: "targetgroupbindings",
};

/**
 * What a finalizer-removal request shows: the evidence that the cause is confirmed and the
 * clean-up plan, from a fresh diagnosis of the object's namespace. Refuses an object that does not
 * exist or is not being deleted.
 */
export async function planFinalizerRemoval(
  kube: KubePort,
  target: {
    readonly type: ResourceType;
    readonly namespace: string;
    readonly name: string;
    readonly finalizer?: string;
  },
  options: DiagnoseOptions,
): Promise<RemovalPlan> {
  const { type, namespace, name } = target;
  const object = await readDeletingObject(kube, type, namespace, name);
  const removing = target.finalizer !== undefined ? [target.finalizer] : object.finalizers;

  const diagnosis = await diagnoseNamespace(kube, namespace, options);
  const blocker = diagnosis.blockers.find((b) => b.resource === type.resource && b.name === name);
  const evidence = removalEvidence(diagnosis, namespace, blocker, removing);
  const cleanupPlan = finalizerCleanup(removing, blocker);
  const aws = blocker?.aws;
  if (aws?.binding) {
    cleanupPlan.push(...bindingCleanup(aws, aws.binding));
    return { type, evidence, cleanupPlan };
  }
  if (aws) cleanupPlan.push(...stackCleanup(aws));
  cleanupPlan.push(afterRemovalCheck(aws, namespace, name));
  return { type, evidence, cleanupPlan };
}

/** The object whose finalizers are to go; refuses one that does not exist or is not being deleted. */
async function readDeletingObject(
  kube: KubePort,
  type: ResourceType,
  namespace: string,
  name: string,
): Promise<ObjectSnapshot> {
  const object = await kube.getObject(type, namespace, name);
  if (!object) {
    throw new UnstuckError(
      ErrorCode.NotFound,
      `${type.kind} ${namespace}/${name} does not exist, so there is nothing to approve.`,
      {
        namespace,
        name,
        resource: type.resource,
      },
    );
  }
  if (!object.deletionTimestamp) {
    // A finalizer only blocks an object that is being deleted; removing it from a live object
    // would just skip its controller's clean-up later.
    throw new UnstuckError(
      ErrorCode.InvalidState,
      `${type.kind} ${namespace}/${name} is not being deleted (no deletionTimestamp), so its finalizers block nothing. Delete it first if that is the intent.`,
      { namespace, name, resource: type.resource },
    );
  }
  return object;
}

/**
 * The evidence that the cause is confirmed: the cause in one sentence, how long the namespace has
 * been Terminating, who owns the finalizers being removed and the blocker's latest errors.
 */
function removalEvidence(
  diagnosis: NamespaceDiagnosis,
  namespace: string,
  blocker: Blocker | undefined,
  removing: readonly string[],
): string[] {
  const evidence: string[] = [];
  // The cause in one sentence comes first: the request card says it as its "why".
  if (rootCause(diagnosis) !== undefined) {
    const cause = causeSentence(diagnosis);
    evidence.push(`${cause.charAt(0).toUpperCase()}${cause.slice(1)}.`);
  }
  if (diagnosis.terminatingSeconds !== null) {
    evidence.push(
      `Namespace ${namespace} has been Terminating for ${formatDuration(diagnosis.terminatingSeconds)} (${diagnosis.verdict}).`,
    );
  }
  if (blocker) {
    for (const o of blocker.owners.filter((x) => removing.includes(x.finalizer))) {
      const who = o.candidates.map((c) =>
        c.kind === "builtin" ? "built-in" : `${c.namespace}/${c.name} ${c.readyReplicas}/${c.replicas} ready`,
      );
      evidence.push(
        `${o.finalizer} is owned by ${o.controller}${who.length > 0 ? ` (${who.join(", ")})` : " — no such controller found in the cluster"}.`,
      );
    }
    for (const e of blocker.evidence.filter((x) => x.error).slice(0, 6)) {
      // A time as people read it (the request is read long after; the day is kept).
      const at =
        e.time !== undefined && !Number.isNaN(Date.parse(e.time))
          ? clock(Date.parse(e.time), { date: true })
          : e.time;
      evidence.push(`${e.from}${at !== undefined ? ` at ${at}` : ""}: ${e.text}`);
    }
  }
  return evidence;
}

/** One line per finalizer being removed: what its controller would have cleaned up. */
function finalizerCleanup(removing: readonly string[], blocker: Blocker | undefined): string[] {
  return removing.map((f) => {
    const info = lookupFinalizer(f);
    // The blocker's owner says what is true for this object once AWS was read (a binding's
    // targets, a shared IngressGroup member's own rules); the table's text otherwise.
    const cleanup = blocker?.owners.find((o) => o.finalizer === f)?.cleanup ?? info?.cleanup;
    return info && cleanup !== undefined
      ? `${f}: ${info.controller} would have cleaned up ${cleanup}.`
      : `${f}: unknown controller — find what it would have cleaned up before approving.`;
  });
}

/**
 * A TargetGroupBinding's clean-up: it owns no load balancer or security group, so what forcing
 * leaves is the targets still registered in its target group, which itself stays.
 */
function bindingCleanup(aws: AwsFindings, bound: BindingFindings): string[] {
  const lines: string[] = [];
  const tg = bound.targetGroupName ?? bound.targetGroupArn ?? "(none named)";
  const left = registeredTargetsLeft(bound);
  if (bound.exists === false) {
    lines.push(`Target group ${tg} does not exist: no registered target is left behind in ELB.`);
  } else if (left.length > 0) {
    lines.push(
      `Left registered in target group ${tg}${bound.targetGroupArn !== undefined && bound.targetGroupArn !== tg ? ` (${bound.targetGroupArn})` : ""}: ${left.map(targetSpec).join(", ")}. ` +
        (bound.serving.length > 0 && bound.deregisterCommand !== undefined
          ? `${String(bound.serving.length)} of them healthy and serving traffic: deregister only once their pods are gone (\`${bound.deregisterCommand}\`).`
          : bound.deregisterActionable && bound.deregisterCommand !== undefined
            ? `Deregister them: \`${bound.deregisterCommand}\`.`
            : `Other live bindings (${bound.otherBindings.join(", ")}) share the target group: deregister only this binding's targets.`),
    );
  } else if (bound.targets !== undefined) {
    lines.push(`Target group ${tg} has no target left registered.`);
  }
  if (bound.ownerText !== undefined)
    lines.push(`Stays (not the binding's to delete): target group ${tg}, ${bound.ownerText}.`);
  for (const p of aws.problems) lines.push(`Could not read AWS: ${p}`);
  lines.push(
    `After removal: check that no target of this binding is still registered${bound.targetGroupArn !== undefined && bound.exists !== false ? ` (\`aws elbv2 describe-target-health --target-group-arn ${bound.targetGroupArn}\`)` : ""} and that the node security-group rules it added are gone.`,
  );
  return lines;
}

/**
 * A load balancer stack's clean-up: only what the controller was deleting can be left behind by
 * forcing; what live objects still use is named as staying, never as something to clean up.
 */
function stackCleanup(aws: AwsFindings): string[] {
  const lines: string[] = [];
  const dying = leftInAws(aws);
  if (dying.length > 0) lines.push(`Left for clean-up in AWS (stack ${aws.stack}): ${dying.join(", ")}.`);
  for (const s of aws.stays) lines.push(`Stays (in use, not to delete): ${s.why}.`);
  for (const g of aws.blockedGroups) {
    const fixes = g.remedies.filter((r) => r.kind !== "live-dependent");
    const held = describeDependent(g);
    lines.push(
      held.length > 0
        ? `Security group ${g.groupId} (${g.groupName}) is held by ${held.join("; ")}. Fix: ${fixes
            .map((r) => `${r.action}${r.commands[0] ? ` (\`${r.commands[0]}\`)` : ""}`)
            .join("; ")}; then delete the group.`
        : `Security group ${g.groupId} (${g.groupName}) failed to delete earlier (CloudTrail): check it is gone.`,
    );
  }
  for (const p of aws.problems) lines.push(`Could not read AWS: ${p}`);
  return lines;
}

/**
 * What to check once the finalizer is gone: only this member's rules when other IngressGroup
 * members keep the load balancer, nothing but DNS when the stack is already gone, orphans otherwise.
 */
function afterRemovalCheck(aws: AwsFindings | undefined, namespace: string, name: string): string {
  const others = aws?.group?.members.filter(
    (m) => !m.deleting && !(m.namespace === namespace && m.name === name),
  );
  const lb = aws?.resources.find((r) => r.type === "LoadBalancer");
  const nothingLeft =
    aws !== undefined &&
    aws.problems.length === 0 &&
    lb !== undefined &&
    !lb.exists &&
    leftInAws(aws).length === 0 &&
    aws.blockedGroups.length === 0;
  return aws?.group !== undefined && others !== undefined && others.length > 0
    ? `After removal: check only this member's listener rules and target groups for orphans; the load balancer of IngressGroup ${aws.group.name} and its security groups stay (${others.map((m) => m.ref).join(", ")} still ${others.length === 1 ? "uses" : "use"} them).`
    : nothingLeft
      ? `Leaves nothing in AWS: load balancer ${lb.name ?? lb.id} is already gone and nothing of its stack is left. After removal, check only that old DNS names no longer point at it.`
      : "After removal: check for orphans (ALB, target groups, security groups, ENIs) and that old DNS names no longer resolve.";
}
