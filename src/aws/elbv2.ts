/**
 * `LoadBalancingPort` over the ELBv2 SDK client. Calls are chosen to be the fewest that answer the
 * question (names rather than listing an account; 20 names or ARNs a call, pages of 400), because
 * ELB's Describe* bucket is 40 requests with a refill of 10/s.
 */
import {
  DeleteLoadBalancerCommand,
  DeleteTargetGroupCommand,
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  DescribeRulesCommand,
  DescribeTagsCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  type LoadBalancer,
  type ElasticLoadBalancingV2Client,
  type TargetGroup,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import { chunks, mapLimit } from "../util/concurrency.js";
import { UnstuckError } from "../errors.js";
import type { LoadBalancingPort, TaggingPort } from "./port.js";
import { aws, deletion, tagMap } from "./sdk-calls.js";
import type {
  ListenerRuleSnapshot,
  ListenerSnapshot,
  LoadBalancerSnapshot,
  RegisteredTargetSnapshot,
  TargetGroupSnapshot,
  Tags,
} from "./types.js";

/** What every part of the adapter reads with: the ELB client, and the Tagging API for cluster tags. */
interface LoadBalancingContext {
  readonly elbv2: ElasticLoadBalancingV2Client;
  readonly tagging: TaggingPort;
}

/** A load balancer as the pure core reads it (tags are added by the caller, from DescribeTags). */
function toLoadBalancerSnapshot(lb: LoadBalancer): LoadBalancerSnapshot {
  return {
    arn: lb.LoadBalancerArn ?? "",
    name: lb.LoadBalancerName ?? "",
    dnsName: lb.DNSName ?? "",
    ...(lb.CanonicalHostedZoneId ? { canonicalHostedZoneId: lb.CanonicalHostedZoneId } : {}),
    state: lb.State?.Code ?? "unknown",
    type: lb.Type ?? "application",
    ...(lb.Scheme ? { scheme: lb.Scheme } : {}),
    ...(lb.VpcId ? { vpcId: lb.VpcId } : {}),
    securityGroups: lb.SecurityGroups ?? [],
    ...(lb.CreatedTime ? { createdTime: lb.CreatedTime.toISOString() } : {}),
    tags: {},
  };
}

/** Whether `err` is the AWS error named by one of `codes` (e.g. an asked resource does not exist). */
function isAwsError(err: unknown, codes: readonly string[]): boolean {
  if (!(err instanceof UnstuckError)) return false;
  const code = err.details.awsError;
  return typeof code === "string" && codes.includes(code);
}

/** How ELB says an asked load balancer does not exist (under either of its names). */
const LOAD_BALANCER_NOT_FOUND = ["LoadBalancerNotFoundException", "LoadBalancerNotFound"];
/** How ELB says an asked target group does not exist. */
const TARGET_GROUP_NOT_FOUND = ["TargetGroupNotFound", "TargetGroupNotFoundException"];

/** The tag the Load Balancer Controller puts on everything it creates for a cluster. */
const CLUSTER_TAG = "elbv2.k8s.aws/cluster";

/** Tags of these load balancers / target groups by ARN, with DescribeTags (20 ARNs a call, in turn). */
async function elbTags(
  elbv2: ElasticLoadBalancingV2Client,
  arns: readonly string[],
): Promise<Map<string, Tags>> {
  const out = new Map<string, Tags>();
  for (const batch of chunks(arns, 20)) {
    const res = await aws("elasticloadbalancing:DescribeTags", () =>
      elbv2.send(new DescribeTagsCommand({ ResourceArns: batch })),
    );
    for (const d of res.TagDescriptions ?? []) if (d.ResourceArn) out.set(d.ResourceArn, tagMap(d.Tags));
  }
  return out;
}

/** Tags of the resources of one type tagged for a cluster, by ARN (Tagging API, 100 a page). */
async function taggedFor(tagging: TaggingPort, cluster: string, type: string): Promise<Map<string, Tags>> {
  const found = await tagging.resourcesByTags({ [CLUSTER_TAG]: cluster }, [type]);
  return new Map(found.map((r) => [r.arn, r.tags]));
}

/** `elbTagsOf`: a few DescribeTags batches at once, well inside ELB's burst of 40. */
async function elbTagsOf(
  elbv2: ElasticLoadBalancingV2Client,
  arns: readonly string[],
): Promise<Map<string, Tags>> {
  // The SDK backs off if throttled.
  const out = new Map<string, Tags>();
  const results = await mapLimit(chunks([...new Set(arns)], 20), 8, (batch) => elbTags(elbv2, batch));
  for (const r of results) {
    if (!r.ok) throw r.error;
    for (const [arn, tags] of r.value) out.set(arn, tags);
  }
  return out;
}

/** Every load balancer of the account and region, without tags (DescribeLoadBalancers, pages of 400). */
async function listLoadBalancers(elbv2: ElasticLoadBalancingV2Client): Promise<LoadBalancerSnapshot[]> {
  const found: LoadBalancerSnapshot[] = [];
  let marker: string | undefined;
  do {
    const res = await aws("elasticloadbalancing:DescribeLoadBalancers", () =>
      elbv2.send(new DescribeLoadBalancersCommand({ PageSize: 400, Marker: marker })),
    );
    for (const lb of res.LoadBalancers ?? []) found.push(toLoadBalancerSnapshot(lb));
    marker = res.NextMarker;
  } while (marker);
  return found;
}

/**
 * Load balancers by name, without tags, added to `found`. One request for all names; a single
 * unknown name fails the whole call, so it falls back to asking one by one only then.
 */
async function describeLoadBalancersNamed(
  elbv2: ElasticLoadBalancingV2Client,
  batch: readonly string[],
  found: LoadBalancerSnapshot[],
): Promise<void> {
  try {
    const res = await aws("elasticloadbalancing:DescribeLoadBalancers", () =>
      elbv2.send(new DescribeLoadBalancersCommand({ Names: [...batch] })),
    );
    for (const lb of res.LoadBalancers ?? []) found.push(toLoadBalancerSnapshot(lb));
  } catch (err) {
    if (isAwsError(err, LOAD_BALANCER_NOT_FOUND)) {
      if (batch.length > 1) for (const n of batch) await describeLoadBalancersNamed(elbv2, [n], found);
      return;
    }
    throw err;
  }
}

/** The load balancer reads: the whole account's listing, or a few by name. */
function loadBalancerReads(
  ctx: LoadBalancingContext,
): Pick<LoadBalancingPort, "allLoadBalancers" | "loadBalancersByName"> {
  const { elbv2, tagging } = ctx;
  return {
    async allLoadBalancers(options) {
      const cluster = options?.clusterTags;
      const [found, clusterTags] = await Promise.all([
        listLoadBalancers(elbv2),
        cluster !== undefined ? taggedFor(tagging, cluster, "elasticloadbalancing:loadbalancer") : undefined,
      ]);
      if (options?.withoutTags === true && clusterTags === undefined) return found;
      const tags =
        clusterTags ??
        (await elbTags(
          elbv2,
          found.map((lb) => lb.arn),
        ));
      return found.map((lb) => ({ ...lb, tags: tags.get(lb.arn) ?? {} }));
    },

    async loadBalancersByName(names) {
      if (names.length === 0) return [];
      const found: LoadBalancerSnapshot[] = [];
      // ELB takes at most 20 names a call.
      await Promise.all(
        chunks([...new Set(names)], 20).map((batch) => describeLoadBalancersNamed(elbv2, batch, found)),
      );
      const tags = await elbTags(
        elbv2,
        found.map((lb) => lb.arn),
      );
      return found.map((lb) => ({ ...lb, tags: tags.get(lb.arn) ?? {} }));
    },
  };
}

/** A target group as the pure core reads it, before its tags are added. */
type UntaggedTargetGroup = Omit<TargetGroupSnapshot, "tags">;

/** A target group as the pure core reads it, from the SDK's description (tags added by the caller). */
function toTargetGroup(g: TargetGroup): UntaggedTargetGroup {
  return {
    arn: g.TargetGroupArn ?? "",
    name: g.TargetGroupName ?? "",
    loadBalancerArns: g.LoadBalancerArns ?? [],
  };
}

/** Every target group of the account, without tags (DescribeTargetGroups, pages of 400). */
async function listTargetGroups(elbv2: ElasticLoadBalancingV2Client): Promise<UntaggedTargetGroup[]> {
  const groups: UntaggedTargetGroup[] = [];
  let marker: string | undefined;
  do {
    const res = await aws("elasticloadbalancing:DescribeTargetGroups", () =>
      elbv2.send(new DescribeTargetGroupsCommand({ PageSize: 400, Marker: marker })),
    );
    for (const g of res.TargetGroups ?? []) groups.push(toTargetGroup(g));
    marker = res.NextMarker;
  } while (marker);
  return groups;
}

/**
 * One batch of target groups by ARN (at most 20). One unknown ARN fails the whole call: it asks one
 * by one only then; an unknown ARN asked alone is simply absent.
 */
async function describeTargetGroupBatch(
  elbv2: ElasticLoadBalancingV2Client,
  batch: string[],
): Promise<TargetGroup[]> {
  try {
    const res = await aws("elasticloadbalancing:DescribeTargetGroups", () =>
      elbv2.send(new DescribeTargetGroupsCommand({ TargetGroupArns: batch })),
    );
    return res.TargetGroups ?? [];
  } catch (err) {
    const notFound = isAwsError(err, TARGET_GROUP_NOT_FOUND);
    if (notFound && batch.length > 1) {
      const one = await Promise.all(batch.map((a) => describeTargetGroupBatch(elbv2, [a])));
      return one.flat();
    }
    if (notFound) return [];
    throw err;
  }
}

/** The target group reads: those of one load balancer, a few by ARN, or the whole account's. */
function targetGroupReads(
  ctx: LoadBalancingContext,
): Pick<LoadBalancingPort, "targetGroupsOf" | "targetGroupsByArn" | "allTargetGroups"> {
  const { elbv2, tagging } = ctx;
  return {
    async targetGroupsOf(loadBalancerArn) {
      const res = await aws("elasticloadbalancing:DescribeTargetGroups", () =>
        elbv2.send(new DescribeTargetGroupsCommand({ LoadBalancerArn: loadBalancerArn })),
      );
      const groups = res.TargetGroups ?? [];
      const tags = await elbTags(
        elbv2,
        groups.map((g) => g.TargetGroupArn ?? ""),
      );
      return groups.map((g) => ({ ...toTargetGroup(g), tags: tags.get(g.TargetGroupArn ?? "") ?? {} }));
    },

    async targetGroupsByArn(arns) {
      const batches = await Promise.all(
        chunks([...new Set(arns)], 20).map((batch) => describeTargetGroupBatch(elbv2, batch)),
      );
      return batches.flat().map((g) => ({ ...toTargetGroup(g), tags: {} }));
    },

    async allTargetGroups(options) {
      const listing = listTargetGroups(elbv2);
      if (options?.withoutTags === true) return (await listing).map((g) => ({ ...g, tags: {} }));
      const cluster = options?.clusterTags;
      const [groups, clusterTags] = await Promise.all([
        listing,
        cluster !== undefined ? taggedFor(tagging, cluster, "elasticloadbalancing:targetgroup") : undefined,
      ]);
      const tags =
        clusterTags ??
        (await elbTags(
          elbv2,
          groups.map((g) => g.arn),
        ));
      return groups.map((g) => ({ ...g, tags: tags.get(g.arn) ?? {} }));
    },
  };
}

/** The listeners of one load balancer (DescribeListeners). */
async function describeListeners(
  elbv2: ElasticLoadBalancingV2Client,
  loadBalancerArn: string,
): Promise<ListenerSnapshot[]> {
  const res = await aws("elasticloadbalancing:DescribeListeners", () =>
    elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: loadBalancerArn })),
  );
  return (res.Listeners ?? []).map((l) => ({
    arn: l.ListenerArn ?? "",
    loadBalancerArn: l.LoadBalancerArn ?? loadBalancerArn,
    ...(l.Port !== undefined ? { port: l.Port } : {}),
    ...(l.Protocol ? { protocol: l.Protocol } : {}),
  }));
}

/** Every rule of one listener, the default rule included (DescribeRules, all pages). */
async function describeRules(
  elbv2: ElasticLoadBalancingV2Client,
  listenerArn: string,
): Promise<ListenerRuleSnapshot[]> {
  const out: ListenerRuleSnapshot[] = [];
  let marker: string | undefined;
  do {
    const res = await aws("elasticloadbalancing:DescribeRules", () =>
      elbv2.send(new DescribeRulesCommand({ ListenerArn: listenerArn, Marker: marker })),
    );
    for (const r of res.Rules ?? []) {
      const hosts = (r.Conditions ?? [])
        .filter((c) => c.Field === "host-header")
        .flatMap((c) => c.HostHeaderConfig?.Values ?? c.Values ?? []);
      out.push({
        listenerArn,
        isDefault: r.IsDefault === true,
        hosts,
        forwards: (r.Actions ?? []).some((a) => a.Type === "forward"),
      });
    }
    marker = res.NextMarker;
  } while (marker);
  return out;
}

/**
 * `registeredTargets`: the targets of one target group (DescribeTargetHealth); `undefined` when the
 * target group itself is gone, as no target can be registered in it.
 */
async function registeredTargets(
  elbv2: ElasticLoadBalancingV2Client,
  targetGroupArn: string,
): Promise<RegisteredTargetSnapshot[] | undefined> {
  try {
    const res = await aws("elasticloadbalancing:DescribeTargetHealth", () =>
      elbv2.send(new DescribeTargetHealthCommand({ TargetGroupArn: targetGroupArn })),
    );
    return (res.TargetHealthDescriptions ?? []).map((t): RegisteredTargetSnapshot => ({
      id: t.Target?.Id ?? "",
      ...(t.Target?.Port !== undefined ? { port: t.Target.Port } : {}),
      ...(t.Target?.AvailabilityZone ? { availabilityZone: t.Target.AvailabilityZone } : {}),
      state: t.TargetHealth?.State ?? "unknown",
      ...(t.TargetHealth?.Reason ? { reason: t.TargetHealth.Reason } : {}),
    }));
  } catch (err) {
    if (isAwsError(err, TARGET_GROUP_NOT_FOUND)) return undefined;
    throw err;
  }
}

/**
 * @param tagging Reads the tags of a cluster's load balancers and target groups (`clusterTags`),
 *   100 a page instead of DescribeTags' 20.
 */
export function createLoadBalancingAdapter(
  elbv2: ElasticLoadBalancingV2Client,
  tagging: TaggingPort,
): LoadBalancingPort {
  const ctx: LoadBalancingContext = { elbv2, tagging };
  return {
    ...loadBalancerReads(ctx),
    ...targetGroupReads(ctx),
    listenersOf: (loadBalancerArn) => describeListeners(elbv2, loadBalancerArn),
    async listenerRulesOf(loadBalancerArn) {
      const listeners = await describeListeners(elbv2, loadBalancerArn);
      const perListener = await Promise.all(listeners.map((l) => describeRules(elbv2, l.arn)));
      return perListener.flat();
    },
    registeredTargets: (targetGroupArn) => registeredTargets(elbv2, targetGroupArn),
    elbTagsOf: (arns) => elbTagsOf(elbv2, arns),

    async deleteLoadBalancer(arn) {
      await deletion("elasticloadbalancing:DeleteLoadBalancer", () =>
        elbv2.send(new DeleteLoadBalancerCommand({ LoadBalancerArn: arn })),
      );
    },

    async deleteTargetGroup(arn) {
      await deletion("elasticloadbalancing:DeleteTargetGroup", () =>
        elbv2.send(new DeleteTargetGroupCommand({ TargetGroupArn: arn })),
      );
    },
  };
}
