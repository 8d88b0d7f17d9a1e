/**
 * What a forced finalizer removal (or a controller that died mid-way) can leave behind in AWS:
 * load balancers, target groups and security groups the controller tagged for this cluster that no
 * Ingress/Service owns any more, target groups attached to nothing, ELB network interfaces of load
 * balancers that are gone. Pure: it reads the edge model, so the live-vs-dying rule holds here
 * too — a resource something live still uses is never an orphan, and one the controller is still
 * deleting is reported as in progress, not as an orphan.
 */
import type {
  LoadBalancerSnapshot,
  NetworkInterfaceSnapshot,
  SecurityGroupSnapshot,
  TargetGroupSnapshot,
} from "../aws/types.js";
import { buildEdgeModel, EDGE_TAGS, isBackendSg, type EdgeOwner } from "./model.js";

export interface OrphanFinding {
  readonly type: "LoadBalancer" | "TargetGroup" | "SecurityGroup" | "NetworkInterface";
  readonly id: string;
  readonly name?: string;
  /** Why it is an orphan, in one sentence. */
  readonly why: string;
  /** What it costs while it stays, when known. */
  readonly cost?: string;
  /** How to remove it, in order (commands run only after approval). */
  readonly remove: readonly string[];
  /** `false` when something still blocks its removal (say what in `why`). */
  readonly removableNow: boolean;
}

export interface OrphanReport {
  readonly cluster: string;
  /** Namespace the report is scoped to, or undefined for the whole cluster. */
  readonly namespace?: string;
  readonly orphans: readonly OrphanFinding[];
  /** Resources the controller is still deleting: not orphans yet. */
  readonly inProgress: readonly { readonly type: string; readonly id: string; readonly why: string }[];
  /** How many of the cluster's resources were checked and found in use. */
  readonly liveCount: number;
  readonly warnings: readonly string[];
}

export interface OrphanInput {
  readonly cluster: string;
  readonly namespace?: string;
  readonly owners: readonly EdgeOwner[];
  readonly ownersComplete: boolean;
  readonly loadBalancers: readonly LoadBalancerSnapshot[];
  readonly targetGroups: readonly TargetGroupSnapshot[];
  /**
   * Target groups a live load balancer forwards to, whose tags were not read: in use whatever they
   * say, so never orphans; counted among what was checked and is in use.
   */
  readonly targetGroupsInUse?: readonly TargetGroupSnapshot[];
  readonly securityGroups: readonly SecurityGroupSnapshot[];
  /** ELB-managed interfaces of the account. */
  readonly elbInterfaces: readonly NetworkInterfaceSnapshot[];
  /** Interfaces that use each security group, by group id. */
  readonly interfacesByGroup: ReadonlyMap<string, readonly NetworkInterfaceSnapshot[]>;
  readonly warnings?: readonly string[];
}

const ALB_COST =
  "an idle ALB or NLB is billed by the hour (about $16–20 a month plus capacity units, region-dependent)";

function stackOf(tags: Readonly<Record<string, string>>): string | undefined {
  return tags[EDGE_TAGS.ingressStack] ?? tags[EDGE_TAGS.serviceStack];
}

/** Whether a stack (`ns/name` or a group name) belongs to the namespace asked about. */
function inNamespace(
  stack: string | undefined,
  namespace: string | undefined,
  owners: readonly EdgeOwner[],
): boolean {
  if (namespace === undefined) return true;
  if (stack === undefined) return false;
  if (stack.startsWith(`${namespace}/`)) return true;
  return owners.some((o) => o.namespace === namespace && o.stack?.value === stack);
}

export function findOrphans(input: OrphanInput): OrphanReport {
  const model = buildEdgeModel({
    cluster: input.cluster,
    owners: input.owners,
    ownersComplete: input.ownersComplete,
    loadBalancers: input.loadBalancers,
    targetGroups: input.targetGroups,
    securityGroups: input.securityGroups,
    networkInterfaces: input.elbInterfaces,
  });
  const warnings = [...(input.warnings ?? [])];
  if (!input.ownersComplete) {
    warnings.push(
      "The cluster's Ingresses/Services could not all be read: nothing whose owner might exist is reported as an orphan.",
    );
  }
  const orphans: OrphanFinding[] = [];
  const inProgress: { type: string; id: string; why: string }[] = [];
  let liveCount = 0;
  const ours = (tags: Readonly<Record<string, string>>): boolean => tags[EDGE_TAGS.cluster] === input.cluster;

  for (const lb of input.loadBalancers) {
    if (!ours(lb.tags) || !inNamespace(stackOf(lb.tags), input.namespace, input.owners)) continue;
    const lv = model.liveness("LoadBalancer", lb.arn);
    if (lv.state === "live") liveCount++;
    else if (lv.state === "dying") inProgress.push({ type: "LoadBalancer", id: lb.arn, why: lv.why });
    else if (input.ownersComplete) {
      orphans.push({
        type: "LoadBalancer",
        id: lb.arn,
        name: lb.name,
        why: lv.why,
        cost: ALB_COST,
        remove: [`aws elbv2 delete-load-balancer --load-balancer-arn ${lb.arn}`],
        removableNow: true,
      });
    }
  }

  const lbArns = new Set(input.loadBalancers.map((l) => l.arn));
  const lbByArn = new Map(input.loadBalancers.map((l) => [l.arn, l]));
  for (const tg of input.targetGroupsInUse ?? []) {
    const inScope = tg.loadBalancerArns.some((a) => {
      const lb = lbByArn.get(a);
      return (
        lb !== undefined && ours(lb.tags) && inNamespace(stackOf(lb.tags), input.namespace, input.owners)
      );
    });
    if (inScope) liveCount++;
  }

  for (const tg of input.targetGroups) {
    if (!ours(tg.tags) || !inNamespace(stackOf(tg.tags), input.namespace, input.owners)) continue;
    const lv = model.liveness("TargetGroup", tg.arn);
    const attached = tg.loadBalancerArns.filter((a) => lbArns.has(a));
    if (lv.state === "live") liveCount++;
    else if (lv.state === "dying") inProgress.push({ type: "TargetGroup", id: tg.arn, why: lv.why });
    else if (input.ownersComplete) {
      orphans.push({
        type: "TargetGroup",
        id: tg.arn,
        name: tg.name,
        why: attached.length === 0 ? `${lv.why}; attached to no load balancer` : lv.why,
        remove: [`aws elbv2 delete-target-group --target-group-arn ${tg.arn}`],
        // A target group in use by a listener cannot be deleted before its load balancer.
        removableNow: attached.length === 0,
      });
    }
  }

  for (const g of input.securityGroups) {
    if (!ours(g.tags)) continue;
    const backend = isBackendSg(g, input.cluster);
    if (!backend && !inNamespace(stackOf(g.tags), input.namespace, input.owners)) continue;
    const lv = model.liveness("SecurityGroup", g.id);
    // The shared backend group belongs to no namespace: a namespace-scoped check mentions it only
    // when it has become an orphan (e.g. this namespace held its last user).
    if (backend && input.namespace !== undefined && lv.state !== "unowned") continue;
    if (lv.state === "live") {
      liveCount++;
      continue;
    }
    if (lv.state === "dying") {
      inProgress.push({ type: "SecurityGroup", id: g.id, why: lv.why });
      continue;
    }
    if (!input.ownersComplete) continue;
    const users = input.interfacesByGroup.get(g.id) ?? [];
    orphans.push({
      type: "SecurityGroup",
      id: g.id,
      name: g.name,
      why:
        users.length === 0
          ? `${lv.why}; attached to nothing`
          : `${lv.why}; still used by ${users.map((u) => `${u.id} ("${u.description}")`).join(", ")}`,
      remove: [`aws ec2 delete-security-group --group-id ${g.id}`],
      removableNow: users.length === 0,
    });
  }

  for (const eni of input.elbInterfaces) {
    const elb = model.loadBalancerOfInterface(eni);
    if (!elb || elb.loadBalancer) continue;
    if (
      input.namespace !== undefined &&
      !elb.name.startsWith(`k8s-${input.namespace.replace(/[^a-zA-Z0-9]/g, "").slice(0, 8)}-`)
    )
      continue;
    orphans.push({
      type: "NetworkInterface",
      id: eni.id,
      name: eni.description,
      why: `interface of load balancer ${elb.name}, which no longer exists (${eni.status})`,
      remove:
        eni.status === "available"
          ? [`aws ec2 delete-network-interface --network-interface-id ${eni.id}`]
          : [
              `aws ec2 describe-network-interfaces --network-interface-ids ${eni.id} --query 'NetworkInterfaces[0].Status'   # wait for available`,
              `aws ec2 delete-network-interface --network-interface-id ${eni.id}`,
            ],
      removableNow: eni.status === "available",
    });
  }
  return {
    cluster: input.cluster,
    ...(input.namespace !== undefined ? { namespace: input.namespace } : {}),
    orphans,
    inProgress,
    liveCount,
    warnings,
  };
}
