/**
 * Reads what `preflight delete ns` needs: the namespace, every object in it that carries a
 * finalizer (all namespaced listable types) with the health of each finalizer's controller, the
 * Argo CD Applications, and — through the edge model — which AWS resources the controller would
 * delete with the namespace and which hostnames end at them. Nothing is changed.
 */
import type { AwsPort } from "../aws/port.js";
import type {
  LoadBalancerSnapshot,
  RecordSetSnapshot,
  SecurityGroupSnapshot,
  TargetGroupSnapshot,
} from "../aws/types.js";
import { analyzeArgoOwnership } from "../diagnosis/argo.js";
import { ownersOf, resourceLabel } from "../diagnosis/analyze.js";
import { clusterOwners } from "../diagnosis/diagnose.js";
import { lookupFinalizer, matchControllers } from "../diagnosis/finalizers.js";
import { clusterNameFromArgs } from "../diagnosis/lbc-names.js";
import { buildEdgeModel, EDGE_TAGS, type EdgeOwner } from "../edge/model.js";
import { hostnamesReaching, tracePaths } from "../edge/path.js";
import { toUserError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import type { ArgoApplicationSnapshot, DeploymentSnapshot } from "../kube/types.js";
import { mapLimit } from "../util/concurrency.js";
import {
  analyzePreflight,
  type PreflightAwsResource,
  type PreflightObject,
  type PreflightReport,
} from "./analyze.js";

export async function collectPreflight(
  kube: KubePort,
  aws: { readonly port: AwsPort; readonly cluster?: string } | undefined,
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
  const types = discovery.resources.filter(
    (t) => t.namespaced && t.verbs.includes("list") && t.group !== "events.k8s.io",
  );
  const listed = ns ? await mapLimit(types, 16, (t) => kube.listObjects(t, namespace)) : [];
  const finalizerObjects: PreflightObject[] = [];
  listed.forEach((r, i) => {
    const t = types[i];
    if (!t) return;
    if (!r.ok) {
      warnings.push(`${resourceLabel(t)}: ${toUserError(r.error).message}`);
      return;
    }
    for (const o of r.value.filter((x) => x.finalizers.length > 0)) {
      finalizerObjects.push({
        kind: o.kind,
        name: o.name,
        finalizers: o.finalizers,
        owners: ownersOf(o.finalizers, deployments),
      });
    }
  });

  const argoInstalled = discovery.resources.some(
    (t) => t.group === "argoproj.io" && t.resource === "applications",
  );
  const apps = argoInstalled
    ? await attempt("Argo CD Applications", [] as ArgoApplicationSnapshot[], () =>
        kube.listArgoApplications(),
      )
    : [];
  const argo = analyzeArgoOwnership(namespace, apps);

  let awsDeleted: PreflightAwsResource[] = [];
  let deletedArns: string[] = [];
  let paths: ReturnType<typeof tracePaths> = [];
  if (aws && ns) {
    const info = lookupFinalizer("ingress.k8s.aws/resources");
    const cluster =
      aws.cluster ??
      (info ? matchControllers(info, deployments) : [])
        .map((d) => clusterNameFromArgs(d.args))
        .find((c) => c !== undefined);
    const ownersRead = await clusterOwners(kube, discovery.resources, warnings);
    // The namespace as if deleted: its owners become deleting; what turns dying is what goes.
    const asDeleted: EdgeOwner[] = ownersRead.owners.map((o) =>
      o.namespace === namespace ? { ...o, deleting: true, hasLbcFinalizer: true } : o,
    );
    const [loadBalancers, targetGroups, securityGroups, zones, distributions] = await Promise.all([
      attempt("load balancers", [] as LoadBalancerSnapshot[], () => aws.port.allLoadBalancers()),
      attempt("target groups", [] as TargetGroupSnapshot[], () => aws.port.allTargetGroups()),
      cluster !== undefined
        ? attempt("security groups", [] as SecurityGroupSnapshot[], () =>
            aws.port.securityGroups({ tags: { [EDGE_TAGS.cluster]: cluster } }),
          )
        : Promise.resolve([] as SecurityGroupSnapshot[]),
      attempt("Route 53 hosted zones", [], () => aws.port.hostedZones()),
      attempt("CloudFront distributions", [], () => aws.port.distributions()),
    ]);
    if (cluster === undefined)
      warnings.push("The cluster name is unknown (UNSTUCK_CLUSTER_NAME): security groups not checked.");
    const model = buildEdgeModel({
      cluster: cluster ?? "",
      owners: asDeleted,
      ownersComplete: ownersRead.complete,
      loadBalancers,
      targetGroups,
      securityGroups,
      networkInterfaces: [],
    });
    const dying = (kind: "LoadBalancer" | "TargetGroup" | "SecurityGroup", id: string): boolean =>
      model.liveness(kind, id).state === "dying";
    const lbs = loadBalancers.filter((l) => dying("LoadBalancer", l.arn));
    deletedArns = lbs.map((l) => l.arn);
    awsDeleted = [
      ...lbs.map((l) => ({ type: "LoadBalancer", id: l.arn, name: l.name })),
      ...targetGroups
        .filter((t) => dying("TargetGroup", t.arn))
        .map((t) => ({ type: "TargetGroup", id: t.arn, name: t.name })),
      ...securityGroups
        .filter((g) => dying("SecurityGroup", g.id))
        .map((g) => ({ type: "SecurityGroup", id: g.id, name: g.name })),
    ];
    const records: RecordSetSnapshot[] = [];
    for (const z of zones) {
      records.push(
        ...(await attempt(`records of zone ${z.name}`, [] as RecordSetSnapshot[], () =>
          aws.port.recordSets(z.id),
        )),
      );
    }
    const reads = { zones, records, distributions, loadBalancers, owners: ownersRead.objects };
    const hostnames = hostnamesReaching(reads, { dnsNames: lbs.map((l) => l.dnsName), namePrefixes: [] });
    paths = tracePaths({ ...reads, hostnames });
  }

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
