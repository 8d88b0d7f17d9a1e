/**
 * The AWS side of a Load Balancer Controller finalizer: which of the stack's resources still
 * exist, and for every security group that cannot be deleted, the exact objects that hold it
 * (network interfaces that use it, rules in other groups that reference it), with CloudTrail's
 * DeleteSecurityGroup failures. Pure: takes collected snapshots, returns findings.
 */
import type {
  CloudTrailEventSnapshot,
  LoadBalancerSnapshot,
  NetworkInterfaceSnapshot,
  SecurityGroupRuleSnapshot,
  SecurityGroupSnapshot,
  TargetGroupSnapshot,
} from "../aws/types.js";
import {
  buildEdgeModel,
  ownerRef,
  type EdgeModel,
  type EdgeOwner,
  type EdgeResourceKind,
  type Liveness,
} from "../edge/model.js";
import { remedyForInterface, remedyForRule, type Remedy } from "../edge/remedies.js";
import { LBC_TAGS } from "../edge/lbc-names.js";

export interface AwsResourceFinding {
  readonly type: "LoadBalancer" | "TargetGroup" | "Listener" | "SecurityGroup";
  readonly id: string;
  readonly name?: string;
  readonly exists: boolean;
  readonly detail?: string;
  /** For an existing resource: is the controller deleting it, or does something live still use it? */
  readonly liveness?: Liveness;
}

export interface ReferencingRule {
  readonly ruleId: string;
  /** The group that owns the rule. */
  readonly groupId: string;
  readonly groupName: string;
  readonly direction: "ingress" | "egress";
  readonly description?: string;
  readonly ports?: string;
}

export interface SecurityGroupDependents {
  readonly groupId: string;
  readonly groupName: string;
  readonly role: "managed" | "backend" | "load-balancer" | "cloudtrail";
  readonly networkInterfaces: readonly NetworkInterfaceSnapshot[];
  readonly referencingRules: readonly ReferencingRule[];
  readonly deleteFailures: readonly CloudTrailFailure[];
  /** Why the group is dying (only dying groups are ever listed as blocked). */
  readonly why?: string;
  /** The least destructive fix for each dependent, in the order of `networkInterfaces` then `referencingRules`. */
  readonly remedies: readonly Remedy[];
}

/** An AWS resource the stack touches that something live still uses: never to delete. */
export interface StayingResource {
  readonly type: EdgeResourceKind;
  readonly id: string;
  readonly name?: string;
  readonly usedBy: readonly string[];
  /** One sentence: "load balancer k8s-… stays: Ingress team-b/partner-api is still a member of group `…`". */
  readonly why: string;
}

/** The IngressGroup a blocker belongs to, with every member across namespaces. */
export interface GroupMembership {
  readonly name: string;
  readonly members: readonly {
    readonly ref: string;
    readonly namespace: string;
    readonly name: string;
    readonly deleting: boolean;
    /** Certificates the member names: a build error naming one is that member's. */
    readonly certificateArns: readonly string[];
  }[];
}

export interface CloudTrailFailure {
  readonly time: string;
  readonly groupId: string;
  readonly errorCode: string;
  readonly errorMessage?: string;
  readonly caller?: string;
}

/** Who owns a bound target group, read from its tags. */
export type TargetGroupOwner =
  | {
      readonly managedBy: "controller";
      readonly cluster: string;
      /** `ingress.k8s.aws/stack` or `service.k8s.aws/stack`, when tagged. */
      readonly stackTag?: string;
      readonly stack?: string;
    }
  | {
      readonly managedBy: "other";
      /** A tag that says who made it (`aws:cloudformation:stack-name=…`, `ManagedBy=terraform`), if any. */
      readonly hint?: string;
    };

export interface BindingTarget {
  readonly id: string;
  readonly port?: number;
  readonly state: string;
  readonly reason?: string;
}

/** What a TargetGroupBinding's finalizer is about in AWS. */
export interface BindingFindings {
  /** `spec.targetGroupARN`; absent when the binding names none. */
  readonly targetGroupArn?: string;
  /** The name inside the ARN (`…:targetgroup/<name>/<id>`). */
  readonly targetGroupName?: string;
  /** Whether the target group exists; absent when it could not be read. */
  readonly exists?: boolean;
  /** Who owns it; absent when its tags could not be read or it does not exist. */
  readonly owner?: TargetGroupOwner;
  /** The owner in words: "not managed by the controller (…)" or "the controller's, stack …". */
  readonly ownerText?: string;
  /** Load balancers that forward to it. */
  readonly loadBalancerArns: readonly string[];
  /** Targets registered now; absent when they could not be read. */
  readonly targets?: readonly BindingTarget[];
  /** Other, live TargetGroupBindings that bind the same target group (`Kind ns/name`). */
  readonly otherBindings: readonly string[];
  /** The exact command that deregisters the targets still registered (draining ones excluded). */
  readonly deregisterCommand?: string;
  /** Targets still registered that ELB reports `healthy` (`Id=…,Port=…`): they serve traffic now. */
  readonly serving: readonly string[];
  /**
   * `true` when deregistering those targets is safe to do now and lets the controller finish by
   * itself: no other live binding shares the target group and none of them serves traffic.
   */
  readonly deregisterActionable: boolean;
}

export interface AwsFindings {
  readonly cluster: string;
  readonly stack: string;
  readonly loadBalancerName?: string;
  readonly resources: readonly AwsResourceFinding[];
  /** Groups that still exist and have at least one dependent, or failed deletion in CloudTrail. */
  readonly blockedGroups: readonly SecurityGroupDependents[];
  /** Resources of the stack (or shared with it) that live owners still use: never blockers, never to delete. */
  readonly stays: readonly StayingResource[];
  /** The IngressGroup, when the blocker is a member of one. */
  readonly group?: GroupMembership;
  /**
   * For a TargetGroupBinding: the target group it registers into (no load balancer of its own), its
   * owner and the targets still registered.
   */
  readonly binding?: BindingFindings;
  /**
   * `false` when a fix the operator can apply now (revoke a rule, take a group off an interface…)
   * lets the controller finish by itself; `true` when only waiting on AWS or forcing remains.
   */
  readonly forceAdvised: boolean;
  /** What could not be read (e.g. a missing IAM permission, named). */
  readonly problems: readonly string[];
  /** One line naming the exact blocking objects, or why none was found. */
  readonly summary: string;
}

export interface AwsCollected {
  readonly cluster: string;
  readonly stack: string;
  readonly loadBalancerName?: string;
  /** The hostname in the Ingress status, to tell the Ingress's ALB from a re-created namesake. */
  readonly hostname?: string;
  readonly loadBalancers: readonly LoadBalancerSnapshot[];
  readonly targetGroups: readonly TargetGroupSnapshot[];
  readonly listenerArns: readonly string[];
  /** Every group examined, with why it was examined. */
  readonly groups: readonly { group: SecurityGroupSnapshot; role: SecurityGroupDependents["role"] }[];
  /** Ids of groups named in CloudTrail failures that no longer exist or could not be described. */
  readonly missingGroupIds: readonly string[];
  readonly networkInterfaces: ReadonlyMap<string, readonly NetworkInterfaceSnapshot[]>;
  /** Referencing group → its rules. */
  readonly referencing: ReadonlyMap<
    string,
    readonly { group: SecurityGroupSnapshot; rules: readonly SecurityGroupRuleSnapshot[] }[]
  >;
  readonly deleteSecurityGroupEvents: readonly CloudTrailEventSnapshot[];
  readonly problems: readonly string[];
  /** The controller's owners across the cluster (Ingresses, Services, TargetGroupBindings). */
  readonly owners: readonly EdgeOwner[];
  /** False when they could not all be read: nothing shared is then called dying. */
  readonly ownersComplete: boolean;
  /** Other load balancers seen (e.g. named by the interfaces that use a group), to tell live users. */
  readonly otherLoadBalancers?: readonly LoadBalancerSnapshot[];
  /** CloudTrail history (create/attach/modify) of interfaces no AWS service manages, by interface id. */
  readonly interfaceHistory?: ReadonlyMap<string, readonly CloudTrailEventSnapshot[]>;
  /** The blocker itself, to find its IngressGroup. */
  readonly blocker?: { readonly namespace: string; readonly name: string; readonly kind: string };
}

function ports(r: SecurityGroupRuleSnapshot): string | undefined {
  if (r.protocol === "-1") return "all traffic";
  if (r.fromPort === undefined) return r.protocol;
  return `${r.protocol ?? "tcp"} ${r.fromPort === r.toPort ? String(r.fromPort) : `${r.fromPort}-${r.toPort ?? ""}`}`;
}

/** Lower-case, without `dualstack.` or a trailing dot, for comparing DNS names. */
export function normalizeHost(h: string): string {
  return h
    .toLowerCase()
    .replace(/^dualstack\./, "")
    .replace(/\.$/, "");
}

export function groupIdOf(e: CloudTrailEventSnapshot): string | undefined {
  const id = e.requestParameters.groupId;
  return typeof id === "string" ? id : undefined;
}

/**
 * The findings for one stack from its collected snapshots: which resources still exist and whether
 * live owners use them, the security groups the controller is deleting and what holds each, and
 * whether a fix the operator can apply now makes forcing unnecessary.
 */
export function analyzeAws(c: AwsCollected): AwsFindings {
  const model = edgeModelOf(c);
  const resources = resourceFindings(c, model);
  const blockedGroups = blockedGroupsOf(c, model, deleteFailuresOf(c.deleteSecurityGroupEvents));
  const stays = staysOf(resources);
  const group = groupOf(c, model);
  const actionable = blockedGroups.some((g) => g.remedies.some((m) => m.actionable));
  return {
    cluster: c.cluster,
    stack: c.stack,
    ...(c.loadBalancerName ? { loadBalancerName: c.loadBalancerName } : {}),
    resources,
    blockedGroups,
    stays,
    ...(group ? { group } : {}),
    forceAdvised: !actionable,
    problems: c.problems,
    summary: summarize(blockedGroups, stays, c),
  };
}

/** The edge model over everything collected: who owns and who uses each load balancer, group and interface. */
function edgeModelOf(c: AwsCollected): EdgeModel {
  return buildEdgeModel({
    cluster: c.cluster,
    owners: c.owners,
    ownersComplete: c.ownersComplete,
    loadBalancers: uniqueBy([...c.loadBalancers, ...(c.otherLoadBalancers ?? [])], (l) => l.arn),
    targetGroups: c.targetGroups,
    securityGroups: [
      ...c.groups.map((g) => g.group),
      ...[...c.referencing.values()].flatMap((refs) => refs.map((r) => r.group)),
    ],
    networkInterfaces: [...c.networkInterfaces.values()].flat(),
  });
}

/** The stack's resources in order: load balancer, target groups, listeners, security groups. */
function resourceFindings(c: AwsCollected, model: EdgeModel): AwsResourceFinding[] {
  const resources: AwsResourceFinding[] = [];
  if (c.loadBalancerName) resources.push(loadBalancerFinding(c, c.loadBalancerName, model));
  for (const tg of c.targetGroups)
    resources.push({
      type: "TargetGroup",
      id: tg.arn,
      name: tg.name,
      exists: true,
      liveness: model.liveness("TargetGroup", tg.arn),
    });
  for (const l of c.listenerArns) resources.push({ type: "Listener", id: l, exists: true });
  for (const { group, role } of c.groups) {
    resources.push({
      type: "SecurityGroup",
      id: group.id,
      name: group.name,
      exists: true,
      detail: role,
      liveness: model.liveness("SecurityGroup", group.id),
    });
  }
  for (const id of c.missingGroupIds)
    resources.push({ type: "SecurityGroup", id, exists: false, detail: "deleted" });
  return resources;
}

/**
 * The stack's load balancer by its name: deleted, replaced by a newer namesake (its DNS name is not
 * the one in the Ingress status), or still there.
 */
function loadBalancerFinding(
  c: AwsCollected,
  loadBalancerName: string,
  model: EdgeModel,
): AwsResourceFinding {
  const lb = c.loadBalancers[0];
  const wanted = c.hostname ? normalizeHost(c.hostname) : undefined;
  if (!lb) {
    return {
      type: "LoadBalancer",
      id: loadBalancerName,
      name: loadBalancerName,
      exists: false,
      detail: "deleted",
    };
  }
  if (wanted && normalizeHost(lb.dnsName) !== wanted) {
    // Names are stable across re-creation; DNS names are not. This is a newer ALB, not the Ingress's.
    return {
      type: "LoadBalancer",
      id: c.hostname ?? loadBalancerName,
      name: loadBalancerName,
      exists: false,
      detail: `deleted; a newer load balancer with the same name exists (${lb.dnsName})`,
    };
  }
  return {
    type: "LoadBalancer",
    id: lb.arn,
    name: lb.name,
    exists: true,
    detail: `${lb.state}, ${lb.dnsName}`,
    liveness: model.liveness("LoadBalancer", lb.arn),
  };
}

/** The failed DeleteSecurityGroup calls CloudTrail recorded, each naming its group. */
function deleteFailuresOf(events: readonly CloudTrailEventSnapshot[]): CloudTrailFailure[] {
  return events
    .filter((e) => e.errorCode !== undefined && groupIdOf(e) !== undefined)
    .map((e) => ({
      time: e.time,
      groupId: groupIdOf(e) ?? "",
      errorCode: e.errorCode ?? "",
      ...(e.errorMessage ? { errorMessage: e.errorMessage } : {}),
      ...(e.caller ? { caller: e.caller } : {}),
    }));
}

/**
 * The security groups the controller is deleting that something still holds (an interface, a rule
 * in another group) or that failed to delete, each with the least destructive fix per dependent.
 */
function blockedGroupsOf(
  c: AwsCollected,
  model: EdgeModel,
  failures: readonly CloudTrailFailure[],
): SecurityGroupDependents[] {
  const blockedGroups: SecurityGroupDependents[] = [];
  for (const { group, role } of c.groups) {
    const lv = model.liveness("SecurityGroup", group.id);
    // Only what the controller is deleting can block it: a group something live still uses is
    // never a blocker, and its interfaces and rules are never anything to remove.
    if (lv.state !== "dying") continue;
    const enis = c.networkInterfaces.get(group.id) ?? [];
    const { referencingRules, owningGroups } = rulesReferencing(group.id, c.referencing.get(group.id) ?? []);
    const groupFailures = failures.filter((f) => f.groupId === group.id);
    if (enis.length > 0 || referencingRules.length > 0 || groupFailures.length > 0) {
      blockedGroups.push({
        groupId: group.id,
        groupName: group.name,
        role,
        networkInterfaces: enis,
        referencingRules,
        deleteFailures: groupFailures,
        why: lv.why,
        remedies: [
          ...enis.map((n) => remedyForInterface(n, group.id, model, c.interfaceHistory?.get(n.id))),
          ...referencingRules.map((r) => remedyForRule(r, owningGroups.get(r.groupId), group.id)),
        ],
      });
    }
  }
  return blockedGroups;
}

/** The rules in other groups that reference a group, and those groups by id. */
function rulesReferencing(
  groupId: string,
  refs: readonly { group: SecurityGroupSnapshot; rules: readonly SecurityGroupRuleSnapshot[] }[],
): { referencingRules: ReferencingRule[]; owningGroups: Map<string, SecurityGroupSnapshot> } {
  const referencingRules: ReferencingRule[] = [];
  const owningGroups = new Map<string, SecurityGroupSnapshot>();
  for (const ref of refs) {
    owningGroups.set(ref.group.id, ref.group);
    for (const r of ref.rules.filter((x) => x.referencedGroupId === groupId)) {
      const p = ports(r);
      referencingRules.push({
        ruleId: r.id,
        groupId: ref.group.id,
        groupName: ref.group.name,
        direction: r.isEgress ? "egress" : "ingress",
        ...(r.description ? { description: r.description } : {}),
        ...(p ? { ports: p } : {}),
      });
    }
  }
  return { referencingRules, owningGroups };
}

/** The existing resources (listeners aside) that something live still uses: named as staying. */
function staysOf(resources: readonly AwsResourceFinding[]): StayingResource[] {
  const stays: StayingResource[] = [];
  for (const r of resources) {
    if (!r.exists || r.liveness?.state !== "live" || r.type === "Listener") continue;
    stays.push({
      type: r.type,
      id: r.id,
      ...(r.name ? { name: r.name } : {}),
      usedBy: r.liveness.usedBy,
      why: r.liveness.why,
    });
  }
  return stays;
}

function groupOf(c: AwsCollected, model: EdgeModel): GroupMembership | undefined {
  const b = c.blocker;
  if (!b) return undefined;
  const me = c.owners.find((o) => o.kind === b.kind && o.namespace === b.namespace && o.name === b.name);
  const name = me?.stack?.group;
  if (!me?.stack || name === undefined) return undefined;
  const members = model.stacks.get(`${me.stack.tagKey}=${me.stack.value}`) ?? [];
  return {
    name,
    members: members.map((m) => ({
      ref: ownerRef(m),
      namespace: m.namespace,
      name: m.name,
      deleting: m.deleting,
      certificateArns: m.certificateArns ?? [],
    })),
  };
}

function uniqueBy<T>(items: readonly T[], key: (t: T) => string): T[] {
  const seen = new Map<string, T>();
  for (const i of items) if (!seen.has(key(i))) seen.set(key(i), i);
  return [...seen.values()];
}

export function describeDependent(g: SecurityGroupDependents): string[] {
  const out: string[] = [];
  for (const n of g.networkInterfaces) {
    out.push(
      `network interface ${n.id} ("${n.description}", ${n.status}${n.requesterId ? `, requester ${n.requesterId}` : ""}` +
        `${n.attachment?.instanceId ? `, attached to ${n.attachment.instanceId}` : n.attachment?.status ? `, attachment ${n.attachment.status}` : ""})`,
    );
  }
  for (const r of g.referencingRules) {
    out.push(
      `${r.direction} rule ${r.ruleId} in ${r.groupId} (${r.groupName})${r.ports ? ` for ${r.ports}` : ""}${r.description ? ` "${r.description}"` : ""}`,
    );
  }
  return out;
}

function summarize(
  blocked: readonly SecurityGroupDependents[],
  stays: readonly StayingResource[],
  c: AwsCollected,
): string {
  const holding = blocked.filter((g) => g.networkInterfaces.length > 0 || g.referencingRules.length > 0);
  const staying =
    stays.length > 0
      ? ` (${stays[0]?.why ?? ""}${stays.length > 1 ? `; ${stays.length - 1} more of its resources stay in use` : ""})`
      : "";
  if (holding.length > 0) {
    return holding
      .map(
        (g) => `${g.groupId} (${g.groupName}) cannot be deleted: held by ${describeDependent(g).join("; ")}`,
      )
      .join(". ");
  }
  if (c.problems.length > 0) {
    // A read that failed is not evidence of absence: never conclude "nothing holds it" from it.
    return `AWS could not be fully read, so what holds the controller is unknown: ${c.problems.join("; ")}`;
  }
  const failedOnly = blocked.filter((g) => g.deleteFailures.length > 0);
  if (failedOnly.length > 0) {
    return `CloudTrail shows DeleteSecurityGroup failing for ${failedOnly.map((g) => g.groupId).join(", ")}, but no dependent remains now: the controller's next retry should succeed.`;
  }
  if (stays.length > 0) {
    return `Nothing the controller is deleting for stack ${c.stack} is held in AWS${staying}.`;
  }
  return `No remaining dependents found for the stack ${c.stack}'s security groups.`;
}

/** Tag filters for the stack's managed SG and the cluster's shared backend SG. */
export function stackGroupQueries(
  cluster: string,
  stack: string,
  tagKey: string = LBC_TAGS.ingressStack,
): {
  managed: Record<string, string>;
  backend: Record<string, string>;
} {
  return { managed: { [LBC_TAGS.cluster]: cluster, [tagKey]: stack }, backend: backendGroupQuery(cluster) };
}

/** Tag filters for the cluster's shared backend SG, which every stack of the cluster may use. */
export function backendGroupQuery(cluster: string): Record<string, string> {
  return { [LBC_TAGS.cluster]: cluster, [LBC_TAGS.resource]: "backend-sg" };
}
