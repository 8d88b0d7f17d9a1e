/**
 * Collects what the orphan check reads — the cluster's load-balancer owners, the account's load
 * balancers, target groups, the controller's security groups (by tag) and ELB interfaces — and
 * hands them to the pure finder (`src/edge/orphans.ts`). A read that fails is a named warning; the
 * finder then reports nothing it cannot prove orphaned.
 */
import type { OrphanAwsReads } from "../aws/port.js";
import type {
  LoadBalancerSnapshot,
  NetworkInterfaceSnapshot,
  SecurityGroupSnapshot,
  Tags,
  TargetGroupSnapshot,
} from "../aws/types.js";
import { clusterOwners } from "../diagnosis/diagnose.js";
import { lbcClusterNames } from "../diagnosis/finalizers.js";
import { findOrphans, type OrphanReport } from "../edge/orphans.js";
import { buildEdgeModel, EDGE_TAGS, type EdgeOwner } from "../edge/model.js";
import { ErrorCode, UnstuckError, toUserError } from "../errors.js";
import type { KubePort } from "../kube/port.js";

/** What the orphan check reads in the cluster: the controller's cluster name, and the live owners. */
export type OrphanKube = Pick<KubePort, "discover" | "listDeployments" | "listObjects">;

/** The orphan check: read the cluster's owners and the account's edge resources, then find what nothing owns. */
export async function collectOrphans(
  aws: OrphanAwsReads,
  kube: OrphanKube,
  options: { readonly cluster?: string; readonly namespace?: string },
): Promise<OrphanReport> {
  const reads: OrphanReads = { aws, warnings: [] };
  const { warnings } = reads;
  // The cluster's name (what the controller tags with) decides which AWS resources are asked
  // about; the Kubernetes owners are read meanwhile — the two sides share no request.
  const cluster = await clusterNameOf(kube, options.cluster);
  const [ownersRead, [loadBalancers, bareTargetGroups, securityGroups, elbInterfaces]] = await Promise.all([
    kube.discover().then((discovery) => clusterOwners(kube, discovery.resources, warnings)),
    readAccount(reads, cluster),
  ]);
  const { inUse, targetGroups } = await readTargetGroups(reads, {
    cluster,
    owners: ownersRead.owners,
    ownersComplete: ownersRead.complete,
    loadBalancers,
    bareTargetGroups,
  });

  // Only a group no live or dying owner accounts for can be an orphan, and only then does it
  // matter what still uses it: ask for those groups' interfaces (one call per 200 groups) instead
  // of every group's (the shared backend group alone is on every node).
  const candidates = unownedGroups(
    cluster,
    ownersRead.owners,
    ownersRead.complete,
    loadBalancers,
    targetGroups,
    securityGroups,
    elbInterfaces,
  );
  const { interfacesByGroup, interfacesComplete } = await readGroupInterfaces(reads, candidates);
  const awsComplete = warnings.length === 0 && interfacesComplete;
  return findOrphans({
    cluster,
    ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
    owners: ownersRead.owners,
    // An unread AWS list can hide the load balancer a target group or interface belongs to:
    // then nothing is proven orphaned.
    ownersComplete: ownersRead.complete && awsComplete,
    loadBalancers,
    targetGroups,
    targetGroupsInUse: inUse,
    securityGroups,
    elbInterfaces: awsComplete ? elbInterfaces : [],
    interfacesByGroup,
    warnings,
  });
}

/** The AWS reads of one check, and its warnings: every read that fails adds one and goes on. */
interface OrphanReads {
  readonly aws: OrphanAwsReads;
  readonly warnings: string[];
}

/** A read whose failure is a named warning and gives `fallback`. */
async function attempt<T>(reads: OrphanReads, what: string, fallback: T, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    reads.warnings.push(`Could not read ${what}: ${toUserError(err).message}`);
    return fallback;
  }
}

/** The cluster name the controller tags with: as configured, else from the controller's own flags. */
async function clusterNameOf(kube: OrphanKube, configured: string | undefined): Promise<string> {
  if (configured !== undefined) return configured;
  const [found] = lbcClusterNames(await kube.listDeployments());
  if (found === undefined) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      "The cluster name the Load Balancer Controller tags with is unknown: set UNSTUCK_CLUSTER_NAME, or run the controller with --cluster-name.",
    );
  }
  return found;
}

/** The account's load balancers, target groups (untagged), the controller's security groups and ELB interfaces. */
function readAccount(
  reads: OrphanReads,
  cluster: string,
): Promise<
  [LoadBalancerSnapshot[], TargetGroupSnapshot[], SecurityGroupSnapshot[], NetworkInterfaceSnapshot[]]
> {
  const { aws } = reads;
  return Promise.all([
    // Only this cluster's resources can be its orphans: their tags come from the Tagging API (a
    // page of 100), not from ELB's DescribeTags (20 a call under a 10-a-second bucket).
    attempt(reads, "load balancers", [] as LoadBalancerSnapshot[], () =>
      aws.allLoadBalancers({ clusterTags: cluster }),
    ),
    attempt(reads, "target groups", [] as TargetGroupSnapshot[], () =>
      aws.allTargetGroups({ withoutTags: true }),
    ),
    attempt(reads, "the controller's security groups", [] as SecurityGroupSnapshot[], () =>
      aws.securityGroups({ tags: { [EDGE_TAGS.cluster]: cluster } }),
    ),
    attempt(reads, "ELB network interfaces", [] as NetworkInterfaceSnapshot[], () => aws.elbInterfaces()),
  ]);
}

/**
 * The target groups a live load balancer forwards to (in use whatever their tags say), and the
 * others with their tags: only those (attached to nothing, or only to load balancers nothing owns
 * or that are going) can be orphans, and only their tags are read — a few DescribeTags calls
 * instead of the tags of every target group of the account (thousands, 100 a page through the
 * Tagging API).
 */
async function readTargetGroups(
  reads: OrphanReads,
  seen: {
    readonly cluster: string;
    readonly owners: readonly EdgeOwner[];
    readonly ownersComplete: boolean;
    readonly loadBalancers: readonly LoadBalancerSnapshot[];
    readonly bareTargetGroups: readonly TargetGroupSnapshot[];
  },
): Promise<{ inUse: TargetGroupSnapshot[]; targetGroups: TargetGroupSnapshot[] }> {
  const { loadBalancers, bareTargetGroups } = seen;
  const lbModel = buildEdgeModel({
    cluster: seen.cluster,
    owners: seen.owners,
    ownersComplete: seen.ownersComplete,
    loadBalancers,
    targetGroups: [],
    securityGroups: [],
    networkInterfaces: [],
  });
  const liveLbs = new Set(
    loadBalancers.filter((l) => lbModel.liveness("LoadBalancer", l.arn).state === "live").map((l) => l.arn),
  );
  const inUse = bareTargetGroups.filter((t) => t.loadBalancerArns.some((a) => liveLbs.has(a)));
  const maybe = bareTargetGroups.filter((t) => !t.loadBalancerArns.some((a) => liveLbs.has(a)));
  const tgTags = await attempt(reads, "target group tags", new Map<string, Tags>(), () =>
    maybe.length > 0
      ? reads.aws.elbTagsOf(maybe.map((t) => t.arn))
      : Promise.resolve(new Map<string, Tags>()),
  );
  return { inUse, targetGroups: maybe.map((t) => ({ ...t, tags: tgTags.get(t.arn) ?? {} })) };
}

/** The interfaces that use any of the unowned groups (none asked for when there are none). */
async function readGroupInterfaces(
  reads: OrphanReads,
  candidates: readonly string[],
): Promise<{
  interfacesByGroup: ReadonlyMap<string, readonly NetworkInterfaceSnapshot[]>;
  interfacesComplete: boolean;
}> {
  if (candidates.length === 0) return { interfacesByGroup: new Map(), interfacesComplete: true };
  try {
    return {
      interfacesByGroup: await reads.aws.networkInterfacesUsingAny(candidates),
      interfacesComplete: true,
    };
  } catch (err) {
    reads.warnings.push(
      `Could not read the interfaces using the cluster's unowned security groups: ${toUserError(err).message}`,
    );
    return { interfacesByGroup: new Map(), interfacesComplete: false };
  }
}

/** The cluster's security groups that nothing live or dying owns (the edge model's `unowned`). */
function unownedGroups(
  cluster: string,
  owners: readonly EdgeOwner[],
  ownersComplete: boolean,
  loadBalancers: readonly LoadBalancerSnapshot[],
  targetGroups: readonly TargetGroupSnapshot[],
  securityGroups: readonly SecurityGroupSnapshot[],
  networkInterfaces: readonly NetworkInterfaceSnapshot[],
): string[] {
  const model = buildEdgeModel({
    cluster,
    owners,
    ownersComplete,
    loadBalancers,
    targetGroups,
    securityGroups,
    networkInterfaces,
  });
  return securityGroups
    .filter((g) => model.liveness("SecurityGroup", g.id).state === "unowned")
    .map((g) => g.id);
}
