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
   * to tell what the controller is deleting from what live objects still use.
   */
  readonly owners: readonly EdgeOwner[];
  /** False when the cluster-wide owners could not all be read. */
  readonly ownersComplete: boolean;
  /** CloudTrail window. */
  readonly since: Date;
  readonly until: Date;
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
type Attempt = <T>(fallback: T, op: () => Promise<T>) => Promise<T>;

/** The AWS reads and the failure recorder every collecting step shares. */
interface AwsReadContext {
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

  const { loadBalancers, managed, backend, events, tagged } = await readStackByNameAndTags(
    reads,
    options,
    stack,
    lbName,
  );

  const groups = new Map<string, RoledGroup>();
  for (const g of managed) groups.set(g.id, { group: g, role: "managed" });
  for (const g of backend) if (!groups.has(g.id)) groups.set(g.id, { group: g, role: "backend" });

  const lb = loadBalancers[0];
  const extraIds = extraGroupIds(groups, lb, events);
  const [targetGroups, listeners, extraGroups] = await Promise.all([
    lb ? attempt<TargetGroupSnapshot[]>([], () => aws.targetGroupsOf(lb.arn)) : Promise.resolve([]),
    lb
      ? attempt<string[]>([], async () => (await aws.listenersOf(lb.arn)).map((l) => l.arn))
      : Promise.resolve([]),
    extraIds.length > 0 ? describeEach(aws, extraIds, attempt) : Promise.resolve([]),
  ]);
  addExtraGroups(groups, extraGroups, lb, options.cluster, stack);
  // A group CloudTrail names that no longer exists cannot be attributed to this stack: not listed.
  const missingGroupIds: string[] = [];

  const { networkInterfaces, referencing } = await readGroupDependents(reads, [...groups.values()]);
  const known = new Set([lbName, ...loadBalancers.map((l) => l.name)]);
  const otherLoadBalancers = await readNamedLoadBalancers(reads, networkInterfaces, known);
  const interfaceHistory = await readInterfaceHistory(reads, networkInterfaces, options.until);

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
    owners: options.owners,
    ownersComplete: options.ownersComplete,
    otherLoadBalancers,
    interfaceHistory,
    blocker: { namespace: blocker.namespace ?? "default", name: blocker.name, kind: blocker.kind },
  };
  return withTaggedResources(analyzeAws(collected), tagged, loadBalancers);
}

/**
 * The first round of reads, each from what the blocker names: the load balancer by its exact name,
 * the stack's security groups by the controller's tags, the account's DeleteSecurityGroup events in
 * the window, and the stack's load balancers and target groups by tag.
 */
async function readStackByNameAndTags(
  { aws, attempt }: AwsReadContext,
  options: AwsCollectOptions,
  stack: IngressStack,
  lbName: string,
): Promise<{
  loadBalancers: LoadBalancerSnapshot[];
  managed: SecurityGroupSnapshot[];
  backend: SecurityGroupSnapshot[];
  events: CloudTrailEventSnapshot[];
  tagged: { arn: string; tags: Tags }[];
}> {
  const queries = stackGroupQueries(options.cluster, stack.stack, stack.tagKey);
  const [loadBalancers, managed, backend, events, tagged] = await Promise.all([
    attempt<LoadBalancerSnapshot[]>([], () => aws.loadBalancersByName([lbName])),
    attempt<SecurityGroupSnapshot[]>([], () => aws.securityGroups({ tags: queries.managed })),
    attempt<SecurityGroupSnapshot[]>([], () => aws.securityGroups({ tags: queries.backend })),
    attempt<CloudTrailEventSnapshot[]>([], () =>
      aws.cloudTrailEvents({
        eventName: "DeleteSecurityGroup",
        start: options.since,
        end: options.until,
        max: 200,
      }),
    ),
    attempt<{ arn: string; tags: Tags }[]>([], () =>
      aws.resourcesByTags(
        { [LBC_TAGS.cluster]: options.cluster, [stack.tagKey]: stack.stack },
        STACK_RESOURCE_TYPES,
      ),
    ),
  ]);
  return { loadBalancers, managed, backend, events, tagged };
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
 * What still depends on each group, which is what keeps it from being deleted: the network
 * interfaces using it and the groups whose rules reference it (with those rules).
 */
async function readGroupDependents(
  { aws, attempt }: AwsReadContext,
  groups: readonly RoledGroup[],
): Promise<{
  networkInterfaces: Map<string, readonly NetworkInterfaceSnapshot[]>;
  referencing: Map<string, ReferencingGroups>;
}> {
  const networkInterfaces = new Map<string, readonly NetworkInterfaceSnapshot[]>();
  const referencing = new Map<string, ReferencingGroups>();
  await Promise.all(
    groups.map(async ({ group }) => {
      const [enis, refs] = await Promise.all([
        attempt<NetworkInterfaceSnapshot[]>([], () => aws.networkInterfacesUsing(group.id)),
        attempt<SecurityGroupSnapshot[]>([], () => aws.groupsReferencing(group.id)),
      ]);
      networkInterfaces.set(group.id, enis);
      referencing.set(
        group.id,
        await Promise.all(
          refs.map(async (ref) => ({
            group: ref,
            rules: await attempt<SecurityGroupRuleSnapshot[]>([], () => aws.rulesOf(ref.id)),
          })),
        ),
      );
    }),
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
  return analyzeBinding({
    cluster: options.cluster,
    blocker: { namespace: blocker.namespace ?? "default", name: blocker.name },
    ...(arn !== undefined ? { targetGroupArn: arn } : {}),
    targetGroup: groups === unread ? undefined : (found ?? null),
    ...(tags !== unread && arn !== undefined && tags.has(arn) ? { tags: tags.get(arn) ?? {} } : {}),
    targets: targets === unread ? undefined : (targets ?? null),
    owners: options.owners,
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
