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
import { buildEdgeModel, EDGE_TAGS, isBackendSg, type EdgeModel, type EdgeOwner } from "./model.js";

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

/** A resource the controller is still deleting, as the report lists it. */
interface InProgress {
  readonly type: string;
  readonly id: string;
  readonly why: string;
}

/** One orphan check under way: its input, the edge model it reads, and what it has found so far. */
interface Scan {
  readonly input: OrphanInput;
  readonly model: EdgeModel;
  readonly orphans: OrphanFinding[];
  readonly inProgress: InProgress[];
  liveCount: number;
}

/** Whether tags say this cluster's controller made the resource. */
function ours(scan: Scan, tags: Readonly<Record<string, string>>): boolean {
  return tags[EDGE_TAGS.cluster] === scan.input.cluster;
}

/** Whether a resource with these tags is this cluster's and in the namespace asked about. */
function inScope(scan: Scan, tags: Readonly<Record<string, string>>): boolean {
  return ours(scan, tags) && inNamespace(stackOf(tags), scan.input.namespace, scan.input.owners);
}

/** Load balancers: live ones counted, dying ones in progress, unowned ones orphans (owners all read). */
function checkLoadBalancers(scan: Scan): void {
  const { input } = scan;
  for (const lb of input.loadBalancers) {
    if (!inScope(scan, lb.tags)) continue;
    const lv = scan.model.liveness("LoadBalancer", lb.arn);
    if (lv.state === "live") scan.liveCount++;
    else if (lv.state === "dying") scan.inProgress.push({ type: "LoadBalancer", id: lb.arn, why: lv.why });
    else if (input.ownersComplete) {
      scan.orphans.push({
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
}

/** Target groups a live load balancer in scope forwards to (tags unread): counted as in use. */
function countTargetGroupsInUse(scan: Scan): void {
  const lbByArn = new Map(scan.input.loadBalancers.map((l) => [l.arn, l]));
  for (const tg of scan.input.targetGroupsInUse ?? []) {
    const used = tg.loadBalancerArns.some((a) => {
      const lb = lbByArn.get(a);
      return lb !== undefined && inScope(scan, lb.tags);
    });
    if (used) scan.liveCount++;
  }
}

/** Target groups: an orphan one is removable now only when attached to no load balancer. */
function checkTargetGroups(scan: Scan): void {
  const { input } = scan;
  const lbArns = new Set(input.loadBalancers.map((l) => l.arn));
  for (const tg of input.targetGroups) {
    if (!inScope(scan, tg.tags)) continue;
    const lv = scan.model.liveness("TargetGroup", tg.arn);
    const attached = tg.loadBalancerArns.filter((a) => lbArns.has(a));
    if (lv.state === "live") scan.liveCount++;
    else if (lv.state === "dying") scan.inProgress.push({ type: "TargetGroup", id: tg.arn, why: lv.why });
    else if (input.ownersComplete) {
      scan.orphans.push({
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
}

/**
 * Security groups, the shared backend group included: an orphan one is removable now only when no
 * interface uses it.
 */
function checkSecurityGroups(scan: Scan): void {
  const { input } = scan;
  for (const g of input.securityGroups) {
    if (!ours(scan, g.tags)) continue;
    const backend = isBackendSg(g, input.cluster);
    if (!backend && !inNamespace(stackOf(g.tags), input.namespace, input.owners)) continue;
    const lv = scan.model.liveness("SecurityGroup", g.id);
    // The shared backend group belongs to no namespace: a namespace-scoped check mentions it only
    // when it has become an orphan (e.g. this namespace held its last user).
    if (backend && input.namespace !== undefined && lv.state !== "unowned") continue;
    if (lv.state === "live") {
      scan.liveCount++;
      continue;
    }
    if (lv.state === "dying") {
      scan.inProgress.push({ type: "SecurityGroup", id: g.id, why: lv.why });
      continue;
    }
    if (!input.ownersComplete) continue;
    const users = input.interfacesByGroup.get(g.id) ?? [];
    scan.orphans.push({
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
}

/**
 * ELB interfaces of load balancers that no longer exist (in a namespace-scoped check, those whose
 * load balancer name carries the namespace's prefix): removable once `available`.
 */
function checkInterfaces(scan: Scan): void {
  const { input } = scan;
  for (const eni of input.elbInterfaces) {
    const elb = scan.model.loadBalancerOfInterface(eni);
    if (!elb || elb.loadBalancer) continue;
    if (
      input.namespace !== undefined &&
      !elb.name.startsWith(`k8s-${input.namespace.replace(/[^a-zA-Z0-9]/g, "").slice(0, 8)}-`)
    )
      continue;
    scan.orphans.push({
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
}

/**
 * What the controller left behind for a cluster (or one namespace of it): each resource kind checked
 * in turn against the edge model's live-vs-dying answer.
 */
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
  const scan: Scan = { input, model, orphans: [], inProgress: [], liveCount: 0 };
  checkLoadBalancers(scan);
  countTargetGroupsInUse(scan);
  checkTargetGroups(scan);
  checkSecurityGroups(scan);
  checkInterfaces(scan);
  return {
    cluster: input.cluster,
    ...(input.namespace !== undefined ? { namespace: input.namespace } : {}),
    orphans: scan.orphans,
    inProgress: scan.inProgress,
    liveCount: scan.liveCount,
    warnings,
  };
}
