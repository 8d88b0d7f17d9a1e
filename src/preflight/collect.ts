/**
 * Reads what `preflight delete ns` needs: the namespace, every object in it that carries a
 * finalizer (all namespaced listable types) with the health of each finalizer's controller, the
 * Argo CD Applications, and — through the edge model — which AWS resources the controller would
 * delete with the namespace and which hostnames end at them. Nothing is changed.
 */
import type { PreflightAwsReads } from "../aws/port.js";
import type {
  DistributionSnapshot,
  HostedZoneSnapshot,
  LoadBalancerSnapshot,
  RecordSetSnapshot,
  SecurityGroupSnapshot,
  TargetGroupSnapshot,
} from "../aws/types.js";
import { analyzeArgoOwnership } from "../diagnosis/argo.js";
import { resourceLabel } from "../diagnosis/analyze.js";
import { ownersOf } from "../diagnosis/owners.js";
import { clusterOwners } from "../diagnosis/diagnose.js";
import { lookupFinalizer, matchControllers } from "../diagnosis/finalizers.js";
import { clusterNameFromArgs } from "../edge/lbc-names.js";
import { buildEdgeModel, EDGE_TAGS, type EdgeOwner } from "../edge/model.js";
import { hostnamesReaching, tracePaths } from "../edge/path.js";
import { toUserError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import type {
  ArgoApplicationSnapshot,
  DeploymentSnapshot,
  DiscoverySnapshot,
  NamespaceSnapshot,
} from "../kube/types.js";
import { chunks, mapLimit } from "../util/concurrency.js";
import {
  analyzePreflight,
  type PreflightAwsResource,
  type PreflightObject,
  type PreflightReport,
} from "./analyze.js";

/** What the pre-deletion check reads in the cluster. */
export type PreflightKube = Pick<
  KubePort,
  "discover" | "getNamespace" | "listArgoApplications" | "listDeployments" | "listObjects"
>;

/** The AWS side of the check: its reads, and the cluster's name when configured. */
interface PreflightAws {
  readonly port: PreflightAwsReads;
  readonly cluster?: string;
}

/** Runs one read; when it fails, says what could not be read in the warnings and returns `fallback`. */
type Attempt = <T>(what: string, fallback: T, op: () => Promise<T>) => Promise<T>;

/** What the namespace's reads share: what the cluster answered first, and the report's warnings. */
interface PreflightContext {
  readonly kube: PreflightKube;
  readonly namespace: string;
  /** `null`: the namespace does not exist. */
  readonly ns: NamespaceSnapshot | null;
  readonly discovery: DiscoverySnapshot;
  /** The cluster's Deployments, to name each finalizer's controller. */
  readonly deployments: readonly DeploymentSnapshot[];
  readonly warnings: string[];
  readonly attempt: Attempt;
}

/** {@link Attempt} noting its failures in `warnings`. */
function attemptNoting(warnings: string[]): Attempt {
  return async <T>(what: string, fallback: T, op: () => Promise<T>): Promise<T> => {
    try {
      return await op();
    } catch (err) {
      warnings.push(`${what}: ${toUserError(err).message}`);
      return fallback;
    }
  };
}

/**
 * The pre-deletion report of `namespace`: the namespace, its Deployments and the API's types are
 * read first, then its finalizer objects, Argo CD and the edge at once; what cannot be read is a
 * warning of the report, not a failure (except the namespace and the discovery themselves).
 */
export async function collectPreflight(
  kube: PreflightKube,
  aws: PreflightAws | undefined,
  namespace: string,
): Promise<PreflightReport> {
  const warnings: string[] = [];
  const attempt = attemptNoting(warnings);
  const [ns, discovery, deployments] = await Promise.all([
    kube.getNamespace(namespace),
    kube.discover(),
    attempt("controller Deployments", [] as DeploymentSnapshot[], () => kube.listDeployments()),
  ]);
  const ctx: PreflightContext = { kube, namespace, ns, discovery, deployments, warnings, attempt };
  // The namespace's objects, the Argo CD Applications and the AWS side share no request: read
  // them at once.
  const [finalizerObjects, argo, { awsDeleted, deletedArns, paths }] = await Promise.all([
    readFinalizerObjects(ctx),
    readArgo(ctx),
    readEdge(ctx, aws),
  ]);

  return analyzePreflight({
    namespace,
    phase: ns ? ns.phase || (ns.deletionTimestamp ? "Terminating" : "Active") : null,
    ...(argo ? { argo } : {}),
    finalizerObjects,
    awsDeleted,
    paths,
    deletedArns,
    warnings,
  });
}

/** Every object in the namespace that carries a finalizer (all namespaced listable types), with its owners. */
async function readFinalizerObjects(ctx: PreflightContext): Promise<PreflightObject[]> {
  const { kube, namespace, warnings, deployments } = ctx;
  const types = ctx.discovery.resources.filter(
    (t) => t.namespaced && t.verbs.includes("list") && t.group !== "events.k8s.io",
  );
  const listed = ctx.ns ? await mapLimit(types, 16, (t) => kube.listObjects(t, namespace)) : [];
  const found: PreflightObject[] = [];
  listed.forEach((r, i) => {
    const t = types[i];
    if (!t) return;
    if (!r.ok) {
      warnings.push(`${resourceLabel(t)}: ${toUserError(r.error).message}`);
      return;
    }
    for (const o of r.value.filter((x) => x.finalizers.length > 0)) {
      found.push({
        kind: o.kind,
        name: o.name,
        finalizers: o.finalizers,
        owners: ownersOf(o.finalizers, deployments, o),
      });
    }
  });
  return found;
}

/** Which Argo CD Applications own the namespace (none read when Argo CD is not installed). */
async function readArgo(ctx: PreflightContext): Promise<ReturnType<typeof analyzeArgoOwnership>> {
  const argoInstalled = ctx.discovery.resources.some(
    (t) => t.group === "argoproj.io" && t.resource === "applications",
  );
  const apps = argoInstalled
    ? await ctx.attempt("Argo CD Applications", [] as ArgoApplicationSnapshot[], () =>
        ctx.kube.listArgoApplications(),
      )
    : [];
  return analyzeArgoOwnership(ctx.namespace, apps);
}

/**
 * The cluster's name: configured, else read from its Load Balancer Controller's arguments; unknown
 * is said in the warnings (security groups are then not checked).
 */
function preflightClusterName(ctx: PreflightContext, aws: PreflightAws): string | undefined {
  const info = lookupFinalizer("ingress.k8s.aws/resources");
  const cluster =
    aws.cluster ??
    (info ? matchControllers(info, ctx.deployments) : [])
      .map((d) => clusterNameFromArgs(d.args))
      .find((c) => c !== undefined);
  if (cluster === undefined)
    ctx.warnings.push("The cluster name is unknown (UNSTUCK_CLUSTER_NAME): security groups not checked.");
  return cluster;
}

/** Route 53's zones and records and CloudFront's distributions; what fails is left out and warned. */
async function readDnsAndCdn(
  port: PreflightAwsReads,
  attempt: Attempt,
): Promise<{
  zones: HostedZoneSnapshot[];
  records: RecordSetSnapshot[];
  distributions: DistributionSnapshot[];
}> {
  const [{ zones, records }, distributions] = await Promise.all([
    attempt("Route 53 hosted zones", [], () => port.hostedZones()).then(async (zones) => ({
      zones,
      records: (
        await Promise.all(
          zones.map((z) =>
            attempt(`records of zone ${z.name}`, [] as RecordSetSnapshot[], () => port.recordSets(z.id)),
          ),
        )
      ).flat(),
    })),
    attempt("CloudFront distributions", [], () => port.distributions()),
  ]);
  return { zones, records, distributions };
}

/** What the namespace's deletion does at the edge. */
interface EdgeSide {
  /** The AWS resources the controller would delete with the namespace. */
  readonly awsDeleted: PreflightAwsResource[];
  /** The ARNs of the load balancers among them. */
  readonly deletedArns: string[];
  /** The traffic paths of the hostnames that end at those load balancers. */
  readonly paths: ReturnType<typeof tracePaths>;
}

/**
 * The edge as if the namespace were deleted: its owners become deleting, and what turns dying is
 * what goes — with the hostnames whose paths end at its load balancers.
 */
async function readEdge(ctx: PreflightContext, aws: PreflightAws | undefined): Promise<EdgeSide> {
  const { namespace, warnings, attempt } = ctx;
  if (!aws || !ctx.ns) return { awsDeleted: [], deletedArns: [], paths: [] };
  const cluster = preflightClusterName(ctx, aws);
  // Route 53 and CloudFront do not depend on the cluster's owners: read them meanwhile.
  const dns = readDnsAndCdn(aws.port, attempt);
  const ownersRead = await clusterOwners(ctx.kube, ctx.discovery.resources, warnings);
  const stack = await readStackResources(aws.port, cluster, namespace, ownersRead.owners, attempt);
  // The namespace as if deleted: its owners become deleting; what turns dying is what goes.
  const asDeleted: EdgeOwner[] = ownersRead.owners.map((o) =>
    o.namespace === namespace ? { ...o, deleting: true, hasLbcFinalizer: true } : o,
  );
  const model = buildEdgeModel({
    cluster: cluster ?? "",
    owners: asDeleted,
    ownersComplete: ownersRead.complete,
    loadBalancers: stack.loadBalancers,
    targetGroups: stack.targetGroups,
    securityGroups: stack.securityGroups,
    networkInterfaces: [],
  });
  const dying = (kind: "LoadBalancer" | "TargetGroup" | "SecurityGroup", id: string): boolean =>
    model.liveness(kind, id).state === "dying";
  const lbs = stack.loadBalancers.filter((l) => dying("LoadBalancer", l.arn));
  const awsDeleted: PreflightAwsResource[] = [
    ...lbs.map((l) => ({ type: "LoadBalancer", id: l.arn, name: l.name })),
    ...stack.targetGroups
      .filter((t) => dying("TargetGroup", t.arn))
      .map((t) => ({ type: "TargetGroup", id: t.arn, name: t.name })),
    ...stack.securityGroups
      .filter((g) => dying("SecurityGroup", g.id))
      .map((g) => ({ type: "SecurityGroup", id: g.id, name: g.name })),
  ];
  const reads = { ...(await dns), loadBalancers: stack.loadBalancers, owners: ownersRead.objects };
  const hostnames = hostnamesReaching(reads, { dnsNames: lbs.map((l) => l.dnsName), namePrefixes: [] });
  return { awsDeleted, deletedArns: lbs.map((l) => l.arn), paths: tracePaths({ ...reads, hostnames }) };
}

/** Tag values a `GetResources` tag filter takes at once. */
const TAG_VALUES_PER_CALL = 20;

/**
 * The AWS resources of the stacks the namespace's Ingresses and Services own (and the cluster's
 * shared backend group): asked by their stack tags (Tagging API, 20 stacks a call), then described
 * by name, ARN and id — a few calls however big the account, instead of listing its thousands of
 * load balancers and target groups.
 */
async function readStackResources(
  aws: PreflightAwsReads,
  cluster: string | undefined,
  namespace: string,
  owners: readonly EdgeOwner[],
  attempt: Attempt,
): Promise<{
  loadBalancers: LoadBalancerSnapshot[];
  targetGroups: TargetGroupSnapshot[];
  securityGroups: SecurityGroupSnapshot[];
}> {
  const stacksByKey = new Map<string, Set<string>>();
  for (const o of owners) {
    if (o.namespace !== namespace || !o.stack) continue;
    stacksByKey.set(o.stack.tagKey, (stacksByKey.get(o.stack.tagKey) ?? new Set()).add(o.stack.value));
  }
  const queries = [...stacksByKey].flatMap(([tagKey, values]) =>
    chunks([...values], TAG_VALUES_PER_CALL).map((batch) => ({
      ...(cluster !== undefined ? { [EDGE_TAGS.cluster]: cluster } : {}),
      [tagKey]: batch,
    })),
  );
  const [tagged, backend] = await Promise.all([
    Promise.all(
      queries.map((q) =>
        attempt("the namespace's load balancers, target groups and security groups", [], () =>
          aws.resourcesByTags(q, [
            "elasticloadbalancing:loadbalancer",
            "elasticloadbalancing:targetgroup",
            "ec2:security-group",
          ]),
        ),
      ),
    ).then((r) => r.flat()),
    cluster !== undefined
      ? attempt("the cluster's backend security group", [] as SecurityGroupSnapshot[], () =>
          aws.securityGroups({
            tags: { [EDGE_TAGS.cluster]: cluster, "elbv2.k8s.aws/resource": "backend-sg" },
          }),
        )
      : Promise.resolve([] as SecurityGroupSnapshot[]),
  ]);
  const tagsByArn = new Map(tagged.map((r) => [r.arn, r.tags]));
  const lbNames = tagged
    .filter((r) => r.arn.includes(":loadbalancer/"))
    .map((r) => r.arn.split(":loadbalancer/")[1]?.split("/")[1] ?? "")
    .filter((n) => n !== "");
  const tgArns = tagged.filter((r) => r.arn.includes(":targetgroup/")).map((r) => r.arn);
  const sgIds = tagged
    .filter((r) => r.arn.includes(":security-group/"))
    .map((r) => r.arn.split(":security-group/")[1] ?? "")
    .filter((id) => id !== "");
  const [loadBalancers, targetGroups, groups] = await Promise.all([
    lbNames.length > 0
      ? attempt("load balancers", [] as LoadBalancerSnapshot[], () => aws.loadBalancersByName(lbNames))
      : Promise.resolve([] as LoadBalancerSnapshot[]),
    tgArns.length > 0
      ? attempt("target groups", [] as TargetGroupSnapshot[], () => aws.targetGroupsByArn(tgArns))
      : Promise.resolve([] as TargetGroupSnapshot[]),
    sgIds.length > 0 && cluster !== undefined
      ? attempt("security groups", [] as SecurityGroupSnapshot[], () => aws.securityGroups({ ids: sgIds }))
      : Promise.resolve([] as SecurityGroupSnapshot[]),
  ]);
  const byId = new Map([...groups, ...backend].map((g) => [g.id, g]));
  return {
    loadBalancers,
    targetGroups: targetGroups.map((t) => ({ ...t, tags: tagsByArn.get(t.arn) ?? t.tags })),
    securityGroups: [...byId.values()],
  };
}
