/**
 * One model of the AWS edge a cluster's Load Balancer Controller manages — load balancers, target
 * groups, security groups, the ENIs and rules that depend on them — and their Kubernetes owners
 * (Ingress, IngressGroup, Service, TargetGroupBinding). Pure: built from snapshots, no I/O.
 *
 * Its one question, asked before anything is called "blocked": is the controller deleting this
 * resource (`dying`), does something live still use it (`live`), or does nothing in this cluster
 * claim it (`unowned`)? A live resource is never a blocker and never something to delete; the
 * diagnosis, the removal plan, and later the traffic path and orphan checks all read this answer.
 */
import type {
  LoadBalancerSnapshot,
  NetworkInterfaceSnapshot,
  SecurityGroupSnapshot,
  Tags,
  TargetGroupSnapshot,
} from "../aws/types.js";
import type { ObjectSnapshot } from "../kube/types.js";
import { refusedGroupName } from "./lbc-names.js";

export const EDGE_TAGS = {
  cluster: "elbv2.k8s.aws/cluster",
  ingressStack: "ingress.k8s.aws/stack",
  ingressResource: "ingress.k8s.aws/resource",
  serviceStack: "service.k8s.aws/stack",
  serviceResource: "service.k8s.aws/resource",
  resource: "elbv2.k8s.aws/resource",
} as const;

export const LBC_FINALIZERS = {
  ingress: "ingress.k8s.aws/resources",
  groupPrefix: "group.ingress.k8s.aws/",
  service: "service.k8s.aws/resources",
  targetGroupBinding: "elbv2.k8s.aws/resources",
} as const;

const GROUP_ANNOTATION = "alb.ingress.kubernetes.io/group.name";
const SECURITY_GROUPS_ANNOTATION = "alb.ingress.kubernetes.io/security-groups";
const MANAGE_BACKEND_RULES_ANNOTATION = "alb.ingress.kubernetes.io/manage-backend-security-group-rules";
const NLB_SECURITY_GROUPS_ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-security-groups";
const NLB_MANAGE_BACKEND_RULES_ANNOTATION =
  "service.beta.kubernetes.io/aws-load-balancer-manage-backend-security-group-rules";

/** A Kubernetes object the Load Balancer Controller reconciles into AWS resources. */
export interface EdgeOwner {
  readonly kind: "Ingress" | "Service" | "TargetGroupBinding";
  readonly namespace: string;
  readonly name: string;
  /** Being deleted (`deletionTimestamp` set). */
  readonly deleting: boolean;
  /** Still carries one of the controller's finalizers (the controller still has work on it). */
  readonly hasLbcFinalizer: boolean;
  /** The stack tag it owns: `ingress.k8s.aws/stack` = group name or `ns/name`; `service.k8s.aws/stack` = `ns/name`. */
  readonly stack?: { readonly tagKey: string; readonly value: string; readonly group?: string };
  /** Whether its load balancer uses the cluster's shared backend security group. */
  readonly usesBackendSg: boolean;
  /** A TargetGroupBinding's target group. */
  readonly targetGroupArn?: string;
  /**
   * Certificates an Ingress names (`alb.ingress.kubernetes.io/certificate-arn`): a group build that
   * fails on one of them is that member's fault, although the controller's error names only the ARN.
   */
  readonly certificateArns?: readonly string[];
}

/** `Kind ns/name`, how a person names an owner. */
export function ownerRef(o: Pick<EdgeOwner, "kind" | "namespace" | "name">): string {
  return `${o.kind} ${o.namespace}/${o.name}`;
}

function hasAny(finalizers: readonly string[], test: (f: string) => boolean): boolean {
  return finalizers.some(test);
}

/**
 * The controller's owner for an object, or undefined when the controller does not manage it: an
 * Ingress with its finalizer or of its class, a Service of type LoadBalancer it serves, any
 * TargetGroupBinding.
 */
export function edgeOwnerOf(
  o: ObjectSnapshot,
  albClasses: readonly string[] = ["alb"],
): EdgeOwner | undefined {
  const namespace = o.namespace ?? "default";
  const deleting = o.deletionTimestamp !== undefined;
  const a = o.annotations;
  if (o.kind === "Ingress") {
    const lbc = hasAny(
      o.finalizers,
      (f) => f === LBC_FINALIZERS.ingress || f.startsWith(LBC_FINALIZERS.groupPrefix),
    );
    if (!lbc && !albClasses.includes(o.ingressClassName ?? "")) return undefined;
    const group = a[GROUP_ANNOTATION];
    // A group.name the controller refuses: it builds nothing for this Ingress, so it owns no stack.
    const refused = refusedGroupName(o) !== undefined;
    const certificateArns = (a["alb.ingress.kubernetes.io/certificate-arn"] ?? "")
      .split(",")
      .map((c) => c.trim())
      .filter((c) => c !== "");
    return {
      kind: "Ingress",
      ...(certificateArns.length > 0 ? { certificateArns } : {}),
      namespace,
      name: o.name,
      deleting,
      hasLbcFinalizer: lbc,
      ...(refused
        ? {}
        : {
            stack: {
              tagKey: EDGE_TAGS.ingressStack,
              value: group ?? `${namespace}/${o.name}`,
              ...(group !== undefined ? { group } : {}),
            },
          }),
      usesBackendSg:
        a[SECURITY_GROUPS_ANNOTATION] === undefined || a[MANAGE_BACKEND_RULES_ANNOTATION] === "true",
    };
  }
  if (o.kind === "Service") {
    const lbc = hasAny(o.finalizers, (f) => f === LBC_FINALIZERS.service);
    const served =
      o.serviceType === "LoadBalancer" &&
      (o.loadBalancerClass === "service.k8s.aws/nlb" ||
        ["external", "nlb-ip"].includes(a["service.beta.kubernetes.io/aws-load-balancer-type"] ?? ""));
    if (!lbc && !served) return undefined;
    return {
      kind: "Service",
      namespace,
      name: o.name,
      deleting,
      hasLbcFinalizer: lbc,
      stack: { tagKey: EDGE_TAGS.serviceStack, value: `${namespace}/${o.name}` },
      usesBackendSg:
        a[NLB_SECURITY_GROUPS_ANNOTATION] === undefined || a[NLB_MANAGE_BACKEND_RULES_ANNOTATION] === "true",
    };
  }
  if (o.kind === "TargetGroupBinding") {
    return {
      kind: "TargetGroupBinding",
      namespace,
      name: o.name,
      deleting,
      hasLbcFinalizer: hasAny(o.finalizers, (f) => f === LBC_FINALIZERS.targetGroupBinding),
      usesBackendSg: true,
      ...(o.targetGroupArn !== undefined ? { targetGroupArn: o.targetGroupArn } : {}),
    };
  }
  return undefined;
}

/** The snapshots the model is built from. Any list may be partial; `ownersComplete` says whether the owners are. */
export interface EdgeInput {
  readonly cluster: string;
  /** Every Ingress, Service and TargetGroupBinding of the cluster the controller manages. */
  readonly owners: readonly EdgeOwner[];
  /** False when the cluster-wide owner lists could not be read: then nothing shared can be called dying. */
  readonly ownersComplete: boolean;
  readonly loadBalancers: readonly LoadBalancerSnapshot[];
  readonly targetGroups: readonly TargetGroupSnapshot[];
  readonly securityGroups: readonly SecurityGroupSnapshot[];
  /** Interfaces that use the examined groups. */
  readonly networkInterfaces: readonly NetworkInterfaceSnapshot[];
}

/** Who keeps a resource alive, in words and as references. */
export type Liveness =
  | {
      readonly state: "dying";
      /** The deleting owners whose controller work deletes it. */
      readonly deletingOwners: readonly string[];
      readonly why: string;
    }
  | { readonly state: "live"; readonly usedBy: readonly string[]; readonly why: string }
  | { readonly state: "unowned"; readonly why: string };

export type EdgeResourceKind = "LoadBalancer" | "TargetGroup" | "SecurityGroup";

export interface EdgeModel {
  readonly cluster: string;
  readonly ownersComplete: boolean;
  /** Members of each stack, keyed `tagKey=value`. */
  readonly stacks: ReadonlyMap<string, readonly EdgeOwner[]>;
  /** Liveness of a load balancer, target group or security group by ARN / id. */
  liveness(kind: EdgeResourceKind, id: string): Liveness;
  /** The load balancer an ELB network interface belongs to (`ELB app/<name>/<id>`), if known. */
  loadBalancerOfInterface(eni: NetworkInterfaceSnapshot): ElbInterfaceRef | undefined;
  readonly loadBalancers: readonly LoadBalancerSnapshot[];
}

export interface ElbInterfaceRef {
  readonly type: "app" | "net" | "gwy";
  readonly name: string;
  readonly id: string;
  /** The load balancer, when it still exists. */
  readonly loadBalancer?: LoadBalancerSnapshot;
}

/** `ELB app/<name>/<id>` / `ELB net/<name>/<id>` → its parts. */
export function parseElbInterfaceDescription(
  description: string,
): { type: "app" | "net" | "gwy"; name: string; id: string } | undefined {
  const m = /^ELB (app|net|gwy)\/([^/\s]+)\/([^/\s]+)$/.exec(description.trim());
  if (!m) return undefined;
  return { type: m[1] as "app" | "net" | "gwy", name: m[2] ?? "", id: m[3] ?? "" };
}

const stackKey = (tagKey: string, value: string): string => `${tagKey}=${value}`;

function stackOfTags(tags: Tags): string | undefined {
  const ing = tags[EDGE_TAGS.ingressStack];
  if (ing !== undefined) return stackKey(EDGE_TAGS.ingressStack, ing);
  const svc = tags[EDGE_TAGS.serviceStack];
  if (svc !== undefined) return stackKey(EDGE_TAGS.serviceStack, svc);
  return undefined;
}

function isManagedSg(tags: Tags): boolean {
  return (
    tags[EDGE_TAGS.ingressResource] === "ManagedLBSecurityGroup" ||
    tags[EDGE_TAGS.serviceResource] === "ManagedLBSecurityGroup"
  );
}

/** The cluster's shared backend security group (`elbv2.k8s.aws/resource=backend-sg`). */
export function isBackendSg(g: Pick<SecurityGroupSnapshot, "tags">, cluster: string): boolean {
  return g.tags[EDGE_TAGS.cluster] === cluster && g.tags[EDGE_TAGS.resource] === "backend-sg";
}

/** An owner whose controller work is still ahead: not deleting, or deleting with a finalizer left. */
function keepsBackendSg(o: EdgeOwner): boolean {
  return !o.deleting && (o.hasLbcFinalizer || o.kind !== "TargetGroupBinding") && o.usesBackendSg;
}

/** What liveness is answered from: the input, and its stacks and resources indexed once per model. */
interface ModelIndex {
  readonly input: EdgeInput;
  readonly cluster: string;
  readonly stacks: ReadonlyMap<string, readonly EdgeOwner[]>;
  readonly lbByArn: ReadonlyMap<string, LoadBalancerSnapshot>;
  readonly tgByArn: ReadonlyMap<string, TargetGroupSnapshot>;
  readonly sgById: ReadonlyMap<string, SecurityGroupSnapshot>;
  /** Load balancers (other than deleted ones) that list a security group. */
  readonly lbUsersOf: (groupId: string) => readonly LoadBalancerSnapshot[];
}

/** The owners of each stack, keyed `tagKey=value`. */
function indexStacks(owners: readonly EdgeOwner[]): Map<string, EdgeOwner[]> {
  const stacks = new Map<string, EdgeOwner[]>();
  for (const o of owners) {
    if (!o.stack) continue;
    const key = stackKey(o.stack.tagKey, o.stack.value);
    stacks.set(key, [...(stacks.get(key) ?? []), o]);
  }
  return stacks;
}

/**
 * Security group -> the load balancers that list it, built on first use: asking each group in turn
 * by a scan of every load balancer made orphans O(groups × load balancers) in a large account.
 */
function lbUsersIndex(
  loadBalancers: readonly LoadBalancerSnapshot[],
): (groupId: string) => readonly LoadBalancerSnapshot[] {
  let lbsByGroup: Map<string, LoadBalancerSnapshot[]> | undefined;
  return (groupId) => {
    if (lbsByGroup === undefined) {
      const index = new Map<string, LoadBalancerSnapshot[]>();
      for (const l of loadBalancers) {
        if (l.state === "deleted") continue;
        for (const g of new Set(l.securityGroups)) {
          const users = index.get(g);
          if (users === undefined) index.set(g, [l]);
          else users.push(l);
        }
      }
      lbsByGroup = index;
    }
    return lbsByGroup.get(groupId) ?? [];
  };
}

/** Liveness of a stack from its members. */
function stackLiveness(ix: ModelIndex, key: string, what: string): Liveness {
  const members = ix.stacks.get(key) ?? [];
  const [tagKey, ...rest] = key.split("=");
  const value = rest.join("=");
  const live = members.filter((m) => !m.deleting);
  const groupName = members.find((m) => m.stack?.group !== undefined)?.stack?.group;
  if (live.length > 0) {
    const membership =
      groupName !== undefined ? ` is still a member of group \`${groupName}\`` : " still uses it";
    return {
      state: "live",
      usedBy: live.map(ownerRef),
      why: `${what} stays: ${live
        .slice(0, 3)
        .map((m) => `${ownerRef(m)}${membership}`)
        .join("; ")}${live.length > 3 ? ` (and ${live.length - 3} more)` : ""}`,
    };
  }
  const deleting = members.filter((m) => m.deleting && m.hasLbcFinalizer);
  if (groupName !== undefined && !ix.input.ownersComplete) {
    // Members of a group can live in any namespace: without the cluster-wide list, a live one
    // may exist unseen, so the group's resources are not called dying.
    return {
      state: "unowned",
      why: `${what} belongs to group \`${groupName}\`, whose members in other namespaces could not be read`,
    };
  }
  if (deleting.length > 0) {
    return {
      state: "dying",
      deletingOwners: deleting.map(ownerRef),
      why: `${what} belongs only to ${deleting.map(ownerRef).join(", ")}, which ${deleting.length === 1 ? "is" : "are"} being deleted: the controller is deleting it`,
    };
  }
  if (!ix.input.ownersComplete) {
    return {
      state: "unowned",
      why: `${what}: the cluster's owners could not be read, so who uses it is unknown`,
    };
  }
  return {
    state: "unowned",
    why: `${what}: no Ingress or Service in the cluster owns stack ${tagKey === EDGE_TAGS.serviceStack ? "service" : "ingress"} \`${value}\``,
  };
}

/** Liveness of a load balancer: another cluster's is always live (never ours to delete), else its stack's. */
function lbLiveness(ix: ModelIndex, lb: LoadBalancerSnapshot): Liveness {
  const { cluster } = ix;
  const what = `load balancer ${lb.name}`;
  if (lb.tags[EDGE_TAGS.cluster] !== cluster) {
    return {
      state: "live",
      usedBy: [`${what} (not managed by this cluster's controller)`],
      why: `${what} is not managed by cluster ${cluster}'s controller: it is never this cluster's to delete`,
    };
  }
  const stack = stackOfTags(lb.tags);
  if (stack === undefined) return { state: "unowned", why: `${what} carries no stack tag` };
  return stackLiveness(ix, stack, what);
}

/**
 * Liveness of a target group: a live TargetGroupBinding keeps it; otherwise its stack's, except that
 * a deleting IngressGroup member's own group is dying, and a live load balancer forwarding to it keeps it.
 */
function targetGroupLiveness(ix: ModelIndex, tg: TargetGroupSnapshot): Liveness {
  const { cluster } = ix;
  const what = `target group ${tg.name}`;
  const bindings = ix.input.owners.filter(
    (o) => o.kind === "TargetGroupBinding" && o.targetGroupArn === tg.arn && !o.deleting,
  );
  if (bindings.length > 0) {
    return {
      state: "live",
      usedBy: bindings.map(ownerRef),
      why: `${what} stays: ${bindings.map(ownerRef).join(", ")} still binds it`,
    };
  }
  const attached = tg.loadBalancerArns
    .map((a) => ix.lbByArn.get(a))
    .filter((l): l is LoadBalancerSnapshot => l !== undefined)
    .filter((l) => lbLiveness(ix, l).state === "live");
  if (tg.tags[EDGE_TAGS.cluster] !== cluster) {
    return {
      state: "live",
      usedBy: [`${what} (not managed by this cluster's controller)`],
      why: `${what} is not managed by cluster ${cluster}'s controller`,
    };
  }
  const stack = stackOfTags(tg.tags);
  if (stack === undefined) return { state: "unowned", why: `${what} carries no stack tag` };
  const byStack = stackLiveness(ix, stack, what);
  // In an IngressGroup every member has its own target groups: a deleting member's are removed
  // when the group is rebuilt without it, although the group (and its ALB) stay.
  const resourceTag = tg.tags[EDGE_TAGS.ingressResource];
  const members = ix.stacks.get(stack) ?? [];
  const ownMember = members.find(
    (m) => resourceTag !== undefined && resourceTag.startsWith(`${m.namespace}/${m.name}-`),
  );
  if (byStack.state === "live" && ownMember?.deleting === true && members.length > 1) {
    return {
      state: "dying",
      deletingOwners: [ownerRef(ownMember)],
      why: `${what} serves only ${ownerRef(ownMember)}, which is being deleted: the controller removes it from group \`${ownMember.stack?.group ?? ""}\``,
    };
  }
  if (byStack.state !== "live" && attached.length > 0) {
    return {
      state: "live",
      usedBy: attached.map((l) => `load balancer ${l.name}`),
      why: `${what} stays: a live load balancer (${attached.map((l) => l.name).join(", ")}) still forwards to it`,
    };
  }
  return byStack;
}

/**
 * Liveness of the cluster's shared backend security group: live while any live owner or live load
 * balancer uses it; dying only when every owner has been read and one is being finalized.
 */
function backendSgLiveness(ix: ModelIndex, g: SecurityGroupSnapshot, what: string): Liveness {
  const { input } = ix;
  const keepers = input.owners.filter(keepsBackendSg);
  if (keepers.length > 0) {
    return {
      state: "live",
      usedBy: keepers.map(ownerRef),
      why: `${what} is the cluster's shared backend group and stays: ${keepers.length} live load-balancer owner${keepers.length === 1 ? "" : "s"} still use${keepers.length === 1 ? "s" : ""} it (${keepers
        .slice(0, 3)
        .map(ownerRef)
        .join(", ")}${keepers.length > 3 ? ", …" : ""})`,
    };
  }
  const liveLbs = ix.lbUsersOf(g.id).filter((l) => lbLiveness(ix, l).state === "live");
  if (liveLbs.length > 0) {
    return {
      state: "live",
      usedBy: liveLbs.map((l) => `load balancer ${l.name}`),
      why: `${what} stays: live load balancer ${liveLbs.map((l) => l.name).join(", ")} still uses it`,
    };
  }
  if (!input.ownersComplete) {
    return {
      state: "unowned",
      why: `${what}: the cluster's owners could not be read, so whether it is still needed is unknown`,
    };
  }
  const deleting = input.owners.filter((o) => o.deleting && o.hasLbcFinalizer);
  if (deleting.length === 0) {
    return {
      state: "unowned",
      why: `${what}: no live Ingress, Service or TargetGroupBinding uses the shared backend group any more, and nothing is deleting it`,
    };
  }
  return {
    state: "dying",
    deletingOwners: deleting.map(ownerRef),
    why: `${what} is the cluster's shared backend group; no live owner uses it any more, so the controller deletes it while finalizing ${deleting
      .slice(0, 3)
      .map(ownerRef)
      .join(", ")}`,
  };
}

/**
 * Liveness of a security group: the shared backend group by its users; one the controller does not
 * manage is never dying; a stack's by its stack, kept by any live load balancer that lists it.
 */
function securityGroupLiveness(ix: ModelIndex, g: SecurityGroupSnapshot): Liveness {
  const { cluster } = ix;
  const what = `security group ${g.id} (${g.name})`;
  if (isBackendSg(g, cluster)) return backendSgLiveness(ix, g, what);
  const liveLbs = ix.lbUsersOf(g.id).filter((l) => lbLiveness(ix, l).state === "live");
  // The controller deletes only the groups it created and tagged for this cluster and a stack.
  if (g.tags[EDGE_TAGS.cluster] !== cluster || (stackOfTags(g.tags) === undefined && !isManagedSg(g.tags))) {
    if (liveLbs.length > 0) {
      return {
        state: "live",
        usedBy: liveLbs.map((l) => `load balancer ${l.name}`),
        why: `${what} stays: live load balancer ${liveLbs.map((l) => l.name).join(", ")} uses it`,
      };
    }
    return { state: "unowned", why: `${what} is not a group the controller manages: it never deletes it` };
  }
  const stack = stackOfTags(g.tags);
  if (stack === undefined) return { state: "unowned", why: `${what} carries no stack tag` };
  const byStack = stackLiveness(ix, stack, what);
  if (byStack.state !== "live" && liveLbs.length > 0) {
    return {
      state: "live",
      usedBy: liveLbs.map((l) => `load balancer ${l.name}`),
      why: `${what} stays: live load balancer ${liveLbs.map((l) => l.name).join(", ")} still uses it`,
    };
  }
  return byStack;
}

/** Liveness of a resource by kind and ARN / id; one that does not exist is unowned. */
function computeLiveness(ix: ModelIndex, kind: EdgeResourceKind, id: string): Liveness {
  if (kind === "LoadBalancer") {
    const lb = ix.lbByArn.get(id);
    if (!lb) return { state: "unowned", why: `load balancer ${id} does not exist` };
    return lbLiveness(ix, lb);
  }
  if (kind === "TargetGroup") {
    const tg = ix.tgByArn.get(id);
    if (!tg) return { state: "unowned", why: `target group ${id} does not exist` };
    return targetGroupLiveness(ix, tg);
  }
  const g = ix.sgById.get(id);
  if (!g) return { state: "unowned", why: `security group ${id} does not exist` };
  return securityGroupLiveness(ix, g);
}

/** The edge model of a cluster: its stacks, and each resource's liveness (memoized). */
export function buildEdgeModel(input: EdgeInput): EdgeModel {
  const { cluster } = input;
  const stacks = indexStacks(input.owners);
  const lbByName = new Map<string, LoadBalancerSnapshot[]>();
  for (const l of input.loadBalancers) lbByName.set(l.name, [...(lbByName.get(l.name) ?? []), l]);
  const ix: ModelIndex = {
    input,
    cluster,
    stacks,
    lbByArn: new Map(input.loadBalancers.map((l) => [l.arn, l])),
    tgByArn: new Map(input.targetGroups.map((t) => [t.arn, t])),
    sgById: new Map(input.securityGroups.map((g) => [g.id, g])),
    lbUsersOf: lbUsersIndex(input.loadBalancers),
  };

  const memo = new Map<string, Liveness>();
  function liveness(kind: EdgeResourceKind, id: string): Liveness {
    const key = `${kind}|${id}`;
    const cached = memo.get(key);
    if (cached) return cached;
    const result = computeLiveness(ix, kind, id);
    memo.set(key, result);
    return result;
  }

  return {
    cluster,
    ownersComplete: input.ownersComplete,
    stacks,
    liveness,
    loadBalancers: input.loadBalancers,
    loadBalancerOfInterface(eni) {
      const parsed = parseElbInterfaceDescription(eni.description);
      if (!parsed) return undefined;
      const lb = (lbByName.get(parsed.name) ?? []).find((l) =>
        l.arn.endsWith(`/${parsed.name}/${parsed.id}`),
      );
      return { ...parsed, ...(lb ? { loadBalancer: lb } : {}) };
    },
  };
}
