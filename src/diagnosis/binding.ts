/**
 * The AWS side of a TargetGroupBinding's finalizer (`elbv2.k8s.aws/resources`). A binding has no
 * load balancer of its own: the controller registers the Service's endpoints into a target group
 * named by `spec.targetGroupARN` — often one Terraform or CloudFormation owns — and on deletion
 * deregisters them (and revokes the node security-group rules it added) before it removes the
 * finalizer. So the findings are that target group: whether it exists, who owns it (its tags), the
 * targets still registered in it, and the exact command that deregisters them. Pure.
 */
import type { RegisteredTargetSnapshot, Tags, TargetGroupSnapshot } from "../aws/types.js";
import type { EdgeOwner } from "../edge/model.js";
import type {
  AwsFindings,
  AwsResourceFinding,
  BindingFindings,
  BindingTarget,
  TargetGroupOwner,
} from "./aws.js";
import { LBC_TAGS } from "../edge/lbc-names.js";
import { plural } from "../util/format.js";

export interface BindingCollected {
  readonly cluster: string;
  readonly blocker: { readonly namespace: string; readonly name: string };
  readonly targetGroupArn?: string;
  /** `null`: the target group does not exist; `undefined`: it could not be read. */
  readonly targetGroup: TargetGroupSnapshot | null | undefined;
  /** Tags of the target group, when read. */
  readonly tags?: Tags;
  /** `null`: the target group does not exist; `undefined`: they could not be read. */
  readonly targets: readonly RegisteredTargetSnapshot[] | null | undefined;
  readonly owners: readonly EdgeOwner[];
  readonly problems: readonly string[];
}

/** `arn:aws:elasticloadbalancing:…:targetgroup/<name>/<id>` → `<name>`. */
export function targetGroupNameOf(arn: string): string | undefined {
  return /:targetgroup\/([^/]+)\//.exec(arn)?.[1];
}

/** Hints that name who made a resource, by tag key (case-insensitive). */
const CREATOR_TAGS = [
  "aws:cloudformation:stack-name",
  "managedby",
  "managed-by",
  "managed_by",
  "terraform",
  "created-by",
  "createdby",
];

export function targetGroupOwner(tags: Tags): TargetGroupOwner {
  const cluster = tags[LBC_TAGS.cluster];
  if (cluster !== undefined) {
    const stackTag = [LBC_TAGS.ingressStack, LBC_TAGS.serviceStack].find((k) => tags[k] !== undefined);
    return {
      managedBy: "controller",
      cluster,
      ...(stackTag !== undefined ? { stackTag, stack: tags[stackTag] ?? "" } : {}),
    };
  }
  const hintKey = Object.keys(tags).find((k) => CREATOR_TAGS.includes(k.toLowerCase()));
  return {
    managedBy: "other",
    ...(hintKey !== undefined ? { hint: `${hintKey}=${tags[hintKey] ?? ""}` } : {}),
  };
}

export function describeTargetGroupOwner(o: TargetGroupOwner, cluster: string): string {
  if (o.managedBy === "other") {
    return `not managed by the controller (no ${LBC_TAGS.cluster} tag${o.hint !== undefined ? `; tagged ${o.hint}` : ""})`;
  }
  const of =
    o.cluster === cluster
      ? `cluster ${cluster}'s controller`
      : `the controller of another cluster, ${o.cluster}`;
  return `managed by ${of}${o.stack !== undefined ? ` for stack ${o.stackTag ?? ""}=${o.stack}` : ""}`;
}

/** `Id=10.0.3.14,Port=8080` — a target as `aws elbv2 deregister-targets --targets` takes it. */
export function targetSpec(t: Pick<BindingTarget, "id" | "port">): string {
  return `Id=${t.id}${t.port !== undefined ? `,Port=${String(t.port)}` : ""}`;
}

const q = (s: string): string => (/^[A-Za-z0-9._\-/:=@,]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export function deregisterCommand(
  arn: string,
  targets: readonly Pick<BindingTarget, "id" | "port">[],
): string {
  return `aws elbv2 deregister-targets --target-group-arn ${q(arn)} --targets ${targets.map((t) => q(targetSpec(t))).join(" ")}`;
}

/** Targets still registered (a draining one is already being deregistered). */
export function registeredTargetsLeft(b: Pick<BindingFindings, "targets">): readonly BindingTarget[] {
  return (b.targets ?? []).filter((t) => t.state !== "draining");
}

/** The AWS findings of a TargetGroupBinding's finalizer: its target group, the targets left, and what to do. */
export function analyzeBinding(c: BindingCollected): AwsFindings {
  const binding = bindingFindingsOf(c);
  const owner = binding.owner;
  return {
    cluster: c.cluster,
    stack: owner?.managedBy === "controller" ? (owner.stack ?? "") : "",
    resources: targetGroupResources(binding),
    blockedGroups: [],
    stays: [],
    binding,
    // Deregistering the targets lets the controller finish by itself; otherwise forcing remains —
    // but not while a target serves: its pods go with the namespace, then deregistering is the step.
    forceAdvised: !binding.deregisterActionable && binding.serving.length === 0,
    problems: c.problems,
    summary: bindingSummary(c, binding),
  };
}

/** The target group as read: whether it exists, who owns it, its targets, and whether deregistering is the step. */
function bindingFindingsOf(c: BindingCollected): BindingFindings {
  const arn = c.targetGroupArn;
  const name = arn !== undefined ? (c.targetGroup?.name ?? targetGroupNameOf(arn)) : undefined;
  const exists = c.targetGroup === null || c.targets === null ? false : c.targetGroup ? true : undefined;
  const owner = exists === true && c.tags !== undefined ? targetGroupOwner(c.tags) : undefined;
  const ownerText = owner ? describeTargetGroupOwner(owner, c.cluster) : undefined;
  const targets =
    exists === false
      ? []
      : c.targets?.map((t) => ({
          id: t.id,
          ...(t.port !== undefined ? { port: t.port } : {}),
          state: t.state,
          ...(t.reason !== undefined ? { reason: t.reason } : {}),
        }));
  const otherBindings = otherBindingsOf(c);
  const left = registeredTargetsLeft({ ...(targets ? { targets } : {}) });
  const command = arn !== undefined && left.length > 0 ? deregisterCommand(arn, left) : undefined;
  // Deregistering a healthy target cuts the traffic it serves: never the advice while one does.
  const serving = left.filter((t) => t.state === "healthy").map(targetSpec);
  return {
    ...(arn !== undefined ? { targetGroupArn: arn } : {}),
    ...(name !== undefined ? { targetGroupName: name } : {}),
    ...(exists !== undefined ? { exists } : {}),
    ...(owner ? { owner } : {}),
    ...(ownerText !== undefined ? { ownerText } : {}),
    loadBalancerArns: c.targetGroup?.loadBalancerArns ?? [],
    ...(targets ? { targets } : {}),
    otherBindings,
    ...(command !== undefined ? { deregisterCommand: command } : {}),
    serving,
    deregisterActionable: command !== undefined && otherBindings.length === 0 && serving.length === 0,
  };
}

/** The other live TargetGroupBindings that bind the same target group (`Kind ns/name`). */
function otherBindingsOf(c: BindingCollected): string[] {
  const arn = c.targetGroupArn;
  return c.owners
    .filter(
      (o) =>
        o.kind === "TargetGroupBinding" &&
        arn !== undefined &&
        o.targetGroupArn === arn &&
        !o.deleting &&
        !(o.namespace === c.blocker.namespace && o.name === c.blocker.name),
    )
    .map((o) => `TargetGroupBinding ${o.namespace}/${o.name}`);
}

/** The target group as one AWS resource (none when the binding names none), with its owner or absence. */
function targetGroupResources(b: BindingFindings): AwsResourceFinding[] {
  if (b.targetGroupArn === undefined) return [];
  return [
    {
      type: "TargetGroup",
      id: b.targetGroupArn,
      ...(b.targetGroupName !== undefined ? { name: b.targetGroupName } : {}),
      exists: b.exists !== false,
      ...(b.exists === false
        ? { detail: "does not exist" }
        : b.ownerText !== undefined
          ? { detail: b.ownerText }
          : {}),
    },
  ];
}

/** The findings in one paragraph: no target group, a gone one, unread targets, the targets left, or none. */
function bindingSummary(c: BindingCollected, b: BindingFindings): string {
  const { targetGroupArn: arn, ownerText, otherBindings, serving, targets } = b;
  const me = `TargetGroupBinding ${c.blocker.namespace}/${c.blocker.name}`;
  const tg = `target group ${b.targetGroupName ?? arn ?? "?"}`;
  const left = registeredTargetsLeft(b);
  if (arn === undefined)
    return `${me} names no target group (spec.targetGroupARN is empty): nothing in ELB is registered for it.`;
  if (b.exists === false)
    return `${tg} (${arn}) does not exist: no target can be left registered in it, so nothing in ELB is left for the controller to deregister.`;
  if (targets === undefined)
    return `AWS could not be fully read, so the targets ${me} left in ${tg} are unknown: ${c.problems.join("; ")}`;
  if (left.length === 0) {
    return `${tg} has no target left registered${
      targets.length > 0 ? ` (${plural(targets.length, "target is", "targets are")} draining)` : ""
    }: nothing is left for the controller to deregister.`;
  }
  const shared =
    otherBindings.length > 0
      ? ` ${otherBindings.join(", ")} also bind${otherBindings.length === 1 ? "s" : ""} it, so some of them may be ${otherBindings.length === 1 ? "its" : "theirs"}: deregister only ${me}'s (its Service's endpoints).`
      : "";
  const live =
    serving.length > 0
      ? ` ${plural(serving.length, "of them is", "of them are")} healthy and serving traffic: deregistering ${serving.length === 1 ? "it" : "them"} would cut it.`
      : "";
  return `${tg}${ownerText !== undefined ? `, ${ownerText},` : ""} still has ${plural(left.length, "registered target", "registered targets")}: ${left
    .slice(0, 10)
    .map(targetSpec)
    .join(" ")}${left.length > 10 ? ` and ${String(left.length - 10)} more` : ""}.${live}${shared}`;
}
