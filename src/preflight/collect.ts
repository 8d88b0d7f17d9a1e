/**
 * Reads what `preflight delete ns` needs: the namespace, every object in it that carries a
 * finalizer (all namespaced listable types) with the health of each finalizer's controller, the
 * Argo CD Applications, and — through the edge model — which AWS resources the controller would
 * delete with the namespace and which hostnames end at them. Nothing is changed.
 */
import type { PreflightAwsReads } from "../aws/port.js";
import type {
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

/** What the pre-deletion check reads in the cluster. */
export type PreflightKube = Pick<
  KubePort,
  "discover" | "getNamespace" | "listArgoApplications" | "listDeployments" | "listObjects"
>;
import type { ArgoApplicationSnapshot, DeploymentSnapshot } from "../kube/types.js";
import { chunks, mapLimit } from "../util/concurrency.js";
import {
  analyzePreflight,
  type PreflightAwsResource,
  type PreflightObject,
  type PreflightReport,
} from "./analyze.js";

export async function collectPreflight(
  kube: PreflightKube,
  aws: { readonly port: PreflightAwsReads; readonly cluster?: string } | undefined,
  namespace: string,
): Promise<PreflightReport> {
  const warnings: string[] = [];
  const attempt = async <T>(what: string, fallback: T, op: () => Promise<T>): Promise<T> => {
    try {
      return await op();
    } catch (err) {
      warnings.push(`${what}: ${toUserError(err).message}`);
      return fallback;
    }
  };
  const [ns, discovery, deployments] = await Promise.all([
    kube.getNamespace(namespace),
    kube.discover(),
    attempt("controller Deployments", [] as DeploymentSnapshot[], () => kube.listDeployments()),
  ]);
  // The namespace's objects, the Argo CD Applications and the AWS side share no request: read
  // them at once.
  const readFinalizerObjects = async (): Promise<PreflightObject[]> => {
    const types = discovery.resources.filter(
      (t) => t.namespaced && t.verbs.includes("list") && t.group !== "events.k8s.io",
    );
    const listed = ns ? await mapLimit(types, 16, (t) => kube.listObjects(t, namespace)) : [];
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
  };

  const readArgo = async (): Promise<ReturnType<typeof analyzeArgoOwnership>> => {
    const argoInstalled = discovery.resources.some(
      (t) => t.group === "argoproj.io" && t.resource === "applications",
    );
    const apps = argoInstalled
      ? await attempt("Argo CD Applications", [] as ArgoApplicationSnapshot[], () =>
          kube.listArgoApplications(),
        )
      : [];
    return analyzeArgoOwnership(namespace, apps);
  };

  interface EdgeSide {
    readonly awsDeleted: PreflightAwsResource[];
    readonly deletedArns: string[];
    readonly paths: ReturnType<typeof tracePaths>;
  }
  const readEdge = async (): Promise<EdgeSide> => {
    if (!aws || !ns) return { awsDeleted: [], deletedArns: [], paths: [] };
    const info = lookupFinalizer("ingress.k8s.aws/resources");
    const cluster =
      aws.cluster ??
      (info ? matchControllers(info, deployments) : [])
        .map((d) => clusterNameFromArgs(d.args))
        .find((c) => c !== undefined);
    if (cluster === undefined)
      warnings.push("The cluster name is unknown (UNSTUCK_CLUSTER_NAME): security groups not checked.");
    // Route 53 and CloudFront do not depend on the cluster's owners: read them meanwhile.
    const dns = Promise.all([
      attempt("Route 53 hosted zones", [], () => aws.port.hostedZones()).then(async (zones) => ({
        zones,
        records: (
          await Promise.all(
            zones.map((z) =>
              attempt(`records of zone ${z.name}`, [] as RecordSetSnapshot[], () =>
                aws.port.recordSets(z.id),
              ),
            ),
          )
        ).flat(),
      })),
      attempt("CloudFront distributions", [], () => aws.port.distributions()),
    ]);
    const ownersRead = await clusterOwners(kube, discovery.resources, warnings);
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
    const [{ zones, records }, distributions] = await dns;
    const reads = {
      zones,
      records,
      distributions,
      loadBalancers: stack.loadBalancers,
      owners: ownersRead.objects,
    };
    const hostnames = hostnamesReaching(reads, { dnsNames: lbs.map((l) => l.dnsName), namePrefixes: [] });
    return { awsDeleted, deletedArns: lbs.map((l) => l.arn), paths: tracePaths({ ...reads, hostnames }) };
  };

  const [finalizerObjects, argo, { awsDeleted, deletedArns, paths }] = await Promise.all([
    readFinalizerObjects(),
    readArgo(),
    readEdge(),
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
  attempt: <T>(what: string, fallback: T, op: () => Promise<T>) => Promise<T>,
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
