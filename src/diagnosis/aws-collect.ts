/**
 * Collects the AWS state behind one Load Balancer Controller finalizer through the injected
 * `DiagnosisAwsReads`, with the fewest calls that answer the question: the load balancer by its exact name,
 * security groups by server-side tag filters, dependents by `group-id` filters, and the stack's
 * load balancers and target groups by the controller's tags (one paged `GetResources`), which also
 * finds target groups left behind after their load balancer is gone. A call that fails (missing IAM
 * permission, throttling) becomes a named problem; the rest still appears.
 */
import type { DiagnosisAwsReads } from "../aws/port.js";
import type {
  CloudTrailEventSnapshot,
  LoadBalancerSnapshot,
  NetworkInterfaceSnapshot,
  RegisteredTargetSnapshot,
  SecurityGroupRuleSnapshot,
  SecurityGroupSnapshot,
  Tags,
  TargetGroupSnapshot,
} from "../aws/types.js";
import { parseElbInterfaceDescription, type EdgeOwner } from "../edge/model.js";
import { toUserError } from "../errors.js";
import type { ObjectSnapshot } from "../kube/types.js";
import {
  analyzeAws,
  groupIdOf,
  stackGroupQueries,
  type AwsCollected,
  type AwsFindings,
  type AwsResourceFinding,
  type SecurityGroupDependents,
} from "./aws.js";
import { analyzeBinding } from "./binding.js";
import {
  LBC_TAGS,
  ingressStack,
  lbcLoadBalancerName,
  loadBalancerNameFromHostname,
  type IngressStack,
} from "../edge/lbc-names.js";

export interface AwsCollectOptions {
  readonly cluster: string;
  /**
   * The controller's owners across the whole cluster (Ingresses, Services, TargetGroupBindings),
   * to tell what the controller is deleting from what live objects still use. Read beside AWS: the
   * AWS reads never wait for it, only the judgement at the end does.
   */
  readonly owners: PromiseLike<ClusterOwners>;
  /** CloudTrail window. */
  readonly since: Date;
  readonly until: Date;
}

/** The controller's owners across the cluster, and whether every list of them could be read. */
export interface ClusterOwners {
  readonly owners: readonly EdgeOwner[];
  readonly complete: boolean;
}

/** CloudTrail events that say who put a security group on an interface. */
const INTERFACE_CHANGES = [
  "CreateNetworkInterface",
  "AttachNetworkInterface",
  "ModifyNetworkInterfaceAttribute",
];

/** What `resourcesByTags` asks for: the stack's load balancers and target groups. */
const STACK_RESOURCE_TYPES = ["elasticloadbalancing:loadbalancer", "elasticloadbalancing:targetgroup"];

/** Runs one AWS read, turning its failure into a named problem and a fallback answer. */
export type Attempt = <T>(fallback: T, op: () => Promise<T>) => Promise<T>;

/** The AWS reads and the failure recorder every collecting step shares. */
export interface AwsReadContext {
  readonly aws: DiagnosisAwsReads;
  readonly attempt: Attempt;
}

/** A security group found for the stack and why it is listed. */
type RoledGroup = { group: SecurityGroupSnapshot; role: SecurityGroupDependents["role"] };

/** The groups that reference a group, each with the rules that do. */
type ReferencingGroups = { group: SecurityGroupSnapshot; rules: readonly SecurityGroupRuleSnapshot[] }[];

/**
 * Collects and analyzes the AWS state behind one blocker: the Ingress or Service stack's load
 * balancer, security groups and their dependents, or a TargetGroupBinding's target group.
 */
export async function collectAwsForBlocker(
  aws: DiagnosisAwsReads,
  blocker: ObjectSnapshot,
  options: AwsCollectOptions,
): Promise<AwsFindings> {
  const problems: string[] = [];
  const attempt: Attempt = async (fallback, op) => {
    try {
      return await op();
    } catch (err) {
      const msg = toUserError(err).message;
      if (!problems.includes(msg)) problems.push(msg);
      return fallback;
    }
  };
  const reads: AwsReadContext = { aws, attempt };

  // A TargetGroupBinding has no load balancer or stack of its own: only its target group matters.
  if (blocker.kind === "TargetGroupBinding") return collectBinding(aws, blocker, options, attempt, problems);

  const stack = ingressStack(blocker);
  const hostname = blocker.loadBalancerHostnames?.[0];
  const lbName =
    (hostname ? loadBalancerNameFromHostname(hostname) : undefined) ??
    lbcLoadBalancerName(options.cluster, stack);

  // Each read starts once what it needs has arrived, not when the whole round before it has: the
  // dependents of a group found by a tag query while CloudTrail still answers, the load balancer's
  // target groups and listeners as soon as it is found.
  const first = startStackReads(reads, options, stack, lbName);
  const dependents = new Map<string, Promise<GroupDependents>>();
  const dependentsOf = (id: string): Promise<GroupDependents> => {
    let read = dependents.get(id);
    if (read === undefined) {
      read = readGroupDependents(reads, id);
      dependents.set(id, read);
    }
    return read;
  };
  const withDependents = (found: Promise<SecurityGroupSnapshot[]>): Promise<SecurityGroupSnapshot[]> =>
    found.then((gs) => {
      for (const g of gs) void dependentsOf(g.id);
      return gs;
    });
  const ofLoadBalancer = first.loadBalancers.then((lbs): Promise<[TargetGroupSnapshot[], string[]]> => {
    const lb = lbs[0];
    if (lb === undefined) return Promise.resolve([[], []]);
    return Promise.all([
      attempt<TargetGroupSnapshot[]>([], () => aws.targetGroupsOf(lb.arn)),
      attempt<string[]>([], async () => (await aws.listenersOf(lb.arn)).map((l) => l.arn)),
    ]);
  });
  const [loadBalancers, managed, backend, events, tagged] = await Promise.all([
    first.loadBalancers,
    withDependents(first.managed),
    withDependents(first.backend),
    first.events,
    first.tagged,
  ]);

  const groups = new Map<string, RoledGroup>();
  for (const g of managed) groups.set(g.id, { group: g, role: "managed" });
  for (const g of backend) if (!groups.has(g.id)) groups.set(g.id, { group: g, role: "backend" });

  const lb = loadBalancers[0];
  const extraIds = extraGroupIds(groups, lb, events);
  const [[targetGroups, listeners], extraGroups] = await Promise.all([
    ofLoadBalancer,
    extraIds.length > 0 ? describeEach(aws, extraIds, attempt) : Promise.resolve([]),
  ]);
  addExtraGroups(groups, extraGroups, lb, options.cluster, stack);
  // A group CloudTrail names that no longer exists cannot be attributed to this stack: not listed.
  const missingGroupIds: string[] = [];

  // In the groups' order (managed, backend, then the extra ones), whenever each answered.
  const read = await Promise.all([...groups.keys()].map(async (id) => [id, await dependentsOf(id)] as const));
  const networkInterfaces = new Map(read.map(([id, d]) => [id, d.networkInterfaces]));
  const referencing = new Map(read.map(([id, d]) => [id, d.referencing]));
  const known = new Set([lbName, ...loadBalancers.map((l) => l.name)]);
  const [otherLoadBalancers, interfaceHistory, owners] = await Promise.all([
    readNamedLoadBalancers(reads, networkInterfaces, known),
    readInterfaceHistory(reads, networkInterfaces, options.until),
    options.owners,
  ]);

  const collected: AwsCollected = {
    cluster: options.cluster,
    stack: stack.stack,
    loadBalancerName: lbName,
    ...(hostname ? { hostname } : {}),
    loadBalancers,
    targetGroups,
    listenerArns: listeners,
    groups: [...groups.values()],
    missingGroupIds,
    networkInterfaces,
    referencing,
    deleteSecurityGroupEvents: events,
    problems,
    owners: owners.owners,
    ownersComplete: owners.complete,
    otherLoadBalancers,
    interfaceHistory,
    blocker: { namespace: blocker.namespace ?? "default", name: blocker.name, kind: blocker.kind },
  };
  return withTaggedResources(analyzeAws(collected), tagged, loadBalancers);
}

/**
 * The first reads, each from what the blocker names, all started at once: the load balancer by its
 * exact name, the stack's security groups by the controller's tags, the account's
 * DeleteSecurityGroup events in the window, and the stack's load balancers and target groups by tag.
 */
function startStackReads(
  { aws, attempt }: AwsReadContext,
  options: AwsCollectOptions,
  stack: IngressStack,
  lbName: string,
): {
  loadBalancers: Promise<LoadBalancerSnapshot[]>;
  managed: Promise<SecurityGroupSnapshot[]>;
  backend: Promise<SecurityGroupSnapshot[]>;
  events: Promise<CloudTrailEventSnapshot[]>;
  tagged: Promise<{ arn: string; tags: Tags }[]>;
} {
  const queries = stackGroupQueries(options.cluster, stack.stack, stack.tagKey);
  return {
    loadBalancers: attempt<LoadBalancerSnapshot[]>([], () => aws.loadBalancersByName([lbName])),
    managed: attempt<SecurityGroupSnapshot[]>([], () => aws.securityGroups({ tags: queries.managed })),
    backend: attempt<SecurityGroupSnapshot[]>([], () => aws.securityGroups({ tags: queries.backend })),
    events: attempt<CloudTrailEventSnapshot[]>([], () =>
      aws.cloudTrailEvents({
        eventName: "DeleteSecurityGroup",
        start: options.since,
        end: options.until,
        max: 200,
      }),
    ),
    tagged: attempt<{ arn: string; tags: Tags }[]>([], () =>
      aws.resourcesByTags(
        { [LBC_TAGS.cluster]: options.cluster, [stack.tagKey]: stack.stack },
        STACK_RESOURCE_TYPES,
      ),
    ),
  };
}

/**
 * The ids of groups to describe beyond the tag queries' answers: the load balancer's own groups and
 * those CloudTrail saw fail to delete, less the groups already found.
 */
function extraGroupIds(
  groups: ReadonlyMap<string, RoledGroup>,
  lb: LoadBalancerSnapshot | undefined,
  events: readonly CloudTrailEventSnapshot[],
): string[] {
  const failedIds = [
    ...new Set(
      events
        .filter((e) => e.errorCode !== undefined)
        .map(groupIdOf)
        .filter((x): x is string => !!x),
    ),
  ];
  return [...new Set([...(lb?.securityGroups ?? []), ...failedIds])].filter((id) => !groups.has(id));
}

/** Adds the described extra groups: the load balancer's own, and the failed deletions of this stack. */
function addExtraGroups(
  groups: Map<string, RoledGroup>,
  extraGroups: readonly SecurityGroupSnapshot[],
  lb: LoadBalancerSnapshot | undefined,
  cluster: string,
  stack: IngressStack,
): void {
  const lbGroups = new Set(lb?.securityGroups ?? []);
  for (const g of extraGroups) {
    if (lbGroups.has(g.id)) groups.set(g.id, { group: g, role: "load-balancer" });
    // CloudTrail names every failed DeleteSecurityGroup in the account: keep only the groups the
    // controller tagged as this stack's or this cluster's backend group, never another team's.
    else if (belongsToStack(g, cluster, stack)) groups.set(g.id, { group: g, role: "cloudtrail" });
  }
}

/**
 * What still depends on one group, which is what keeps it from being deleted: the network
 * interfaces using it and the groups whose rules reference it (with those rules).
 */
interface GroupDependents {
  readonly networkInterfaces: readonly NetworkInterfaceSnapshot[];
  readonly referencing: ReferencingGroups;
}

export async function readGroupDependents(
  { aws, attempt }: AwsReadContext,
  id: string,
): Promise<GroupDependents> {
  const [networkInterfaces, refs] = await Promise.all([
    attempt<NetworkInterfaceSnapshot[]>([], () => aws.networkInterfacesUsing(id)),
    attempt<SecurityGroupSnapshot[]>([], () => aws.groupsReferencing(id)),
  ]);
  const referencing = await Promise.all(
    refs.map(async (ref) => ({
      group: ref,
      rules: await attempt<SecurityGroupRuleSnapshot[]>([], () => aws.rulesOf(ref.id)),
    })),
  );
  return { networkInterfaces, referencing };
}

/**
 * Load balancers named by the interfaces that use these groups (`ELB app/<name>/<id>`), other than
 * the ones already known: whether each still exists and whose it is decides whether its interface
 * is a blocker or a live user. Read twenty names a call.
 */
async function readNamedLoadBalancers(
  { aws, attempt }: AwsReadContext,
  networkInterfaces: ReadonlyMap<string, readonly NetworkInterfaceSnapshot[]>,
  known: ReadonlySet<string>,
): Promise<LoadBalancerSnapshot[]> {
  const named = [
    ...new Set(
      [...networkInterfaces.values()]
        .flat()
        .map((n) => parseElbInterfaceDescription(n.description)?.name)
        .filter((n): n is string => n !== undefined && !known.has(n)),
    ),
  ];
  const otherLoadBalancers: LoadBalancerSnapshot[] = [];
  for (let i = 0; i < named.length; i += 20) {
    const batch = named.slice(i, i + 20);
    otherLoadBalancers.push(
      ...(await attempt<LoadBalancerSnapshot[]>([], () => aws.loadBalancersByName(batch))),
    );
  }
  return otherLoadBalancers;
}

/**
 * Who attached an interface nobody's service manages (an instance's, or a hand-made one): its
 * CloudTrail history by resource name, 90 days back (CloudTrail's limit). A few at most.
 */
async function readInterfaceHistory(
  { aws, attempt }: AwsReadContext,
  networkInterfaces: ReadonlyMap<string, readonly NetworkInterfaceSnapshot[]>,
  until: Date,
): Promise<Map<string, readonly CloudTrailEventSnapshot[]>> {
  const handMade = [
    ...new Set(
      [...networkInterfaces.values()]
        .flat()
        .filter((n) => !n.requesterManaged)
        .map((n) => n.id),
    ),
  ].slice(0, 5);
  const historyStart = new Date(until.getTime() - 90 * 86_400_000);
  const interfaceHistory = new Map<string, readonly CloudTrailEventSnapshot[]>();
  await Promise.all(
    handMade.map(async (id) => {
      const events = await attempt<CloudTrailEventSnapshot[]>([], () =>
        aws.cloudTrailEvents({ resourceName: id, start: historyStart, end: until, max: 50 }),
      );
      interfaceHistory.set(
        id,
        events.filter((e) => e.errorCode === undefined && INTERFACE_CHANGES.includes(e.name)),
      );
    }),
  );
  return interfaceHistory;
}

/**
 * The findings plus the stack's resources found only by the controller's tags (such as target
 * groups left behind after their load balancer is gone).
 */
function withTaggedResources(
  findings: AwsFindings,
  tagged: readonly { arn: string }[],
  loadBalancers: readonly LoadBalancerSnapshot[],
): AwsFindings {
  // The load balancer found by name counts as listed even when it is a newer namesake: its entry
  // already names it, and listing it again as this stack's would contradict "deleted".
  const listed = new Set([...findings.resources.map((r) => r.id), ...loadBalancers.map((l) => l.arn)]);
  const byTag = tagged.map(taggedFinding).filter((r): r is AwsResourceFinding => !!r && !listed.has(r.id));
  return byTag.length > 0 ? { ...findings, resources: [...findings.resources, ...byTag] } : findings;
}

/**
 * The target group a TargetGroupBinding names (`spec.targetGroupARN`): whether it exists, its tags
 * (who owns it) and the targets still registered in it. Three reads, no name derived.
 */
async function collectBinding(
  aws: DiagnosisAwsReads,
  blocker: ObjectSnapshot,
  options: AwsCollectOptions,
  attempt: Attempt,
  problems: string[],
): Promise<AwsFindings> {
  const arn = blocker.targetGroupArn;
  const unread = Symbol("unread");
  const [groups, targets] =
    arn === undefined
      ? [[], null]
      : await Promise.all([
          attempt<TargetGroupSnapshot[] | typeof unread>(unread, () => aws.targetGroupsByArn([arn])),
          attempt<RegisteredTargetSnapshot[] | undefined | typeof unread>(unread, () =>
            aws.registeredTargets(arn),
          ),
        ]);
  // Tags only of a target group that exists (asking for an unknown ARN's is an error, not an answer).
  const tags =
    arn !== undefined && groups !== unread && groups.some((g) => g.arn === arn)
      ? await attempt<Map<string, Tags> | typeof unread>(unread, () => aws.elbTagsOf([arn]))
      : unread;
  const found = groups === unread ? undefined : groups.find((g) => g.arn === arn);
  const { owners } = await options.owners;
  return analyzeBinding({
    cluster: options.cluster,
    blocker: { namespace: blocker.namespace ?? "default", name: blocker.name },
    ...(arn !== undefined ? { targetGroupArn: arn } : {}),
    targetGroup: groups === unread ? undefined : (found ?? null),
    ...(tags !== unread && arn !== undefined && tags.has(arn) ? { tags: tags.get(arn) ?? {} } : {}),
    targets: targets === unread ? undefined : (targets ?? null),
    owners,
    problems,
  });
}

/**
 * A finding for an ELB resource found by its tags, named from its ARN
 * (`…:targetgroup/<name>/<id>`, `…:loadbalancer/app/<name>/<id>`); undefined for any other ARN.
 */
function taggedFinding(r: { arn: string }): AwsResourceFinding | undefined {
  const resource = r.arn.split(":").slice(5).join(":");
  const tg = /^targetgroup\/([^/]+)\//.exec(resource);
  if (tg) return { type: "TargetGroup", id: r.arn, name: tg[1] ?? "", exists: true, detail: "found by tag" };
  const lb = /^loadbalancer\/(?:app|net|gwy)\/([^/]+)\//.exec(resource);
  if (lb) return { type: "LoadBalancer", id: r.arn, name: lb[1] ?? "", exists: true, detail: "found by tag" };
  return undefined;
}

function belongsToStack(g: SecurityGroupSnapshot, cluster: string, stack: IngressStack): boolean {
  if (g.tags[LBC_TAGS.cluster] !== cluster) return false;
  return g.tags[stack.tagKey] === stack.stack || g.tags[LBC_TAGS.resource] === "backend-sg";
}

/** Describe groups by id; one missing id fails the batch call, so fall back to one by one. */
async function describeEach(
  aws: DiagnosisAwsReads,
  ids: readonly string[],
  attempt: Attempt,
): Promise<SecurityGroupSnapshot[]> {
  const all = await attempt<SecurityGroupSnapshot[]>([], () => aws.securityGroups({ ids }));
  if (all.length === ids.length || ids.length === 1) return all;
  const each = await Promise.all(
    ids.map((id) => attempt<SecurityGroupSnapshot[]>([], () => aws.securityGroups({ ids: [id] }))),
  );
  return each.flat();
}
