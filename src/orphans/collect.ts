/**
 * Collects what the orphan check reads — the cluster's load-balancer owners, the account's load
 * balancers, target groups, the controller's security groups (by tag) and ELB interfaces — and
 * hands them to the pure finder (`src/edge/orphans.ts`). A read that fails is a named warning; the
 * finder then reports nothing it cannot prove orphaned.
 */
import type { AwsPort } from "../aws/port.js";
import type {
  LoadBalancerSnapshot,
  NetworkInterfaceSnapshot,
  SecurityGroupSnapshot,
  TargetGroupSnapshot,
} from "../aws/types.js";
import { clusterOwners } from "../diagnosis/diagnose.js";
import { lookupFinalizer, matchControllers } from "../diagnosis/finalizers.js";
import { clusterNameFromArgs } from "../diagnosis/lbc-names.js";
import { findOrphans, type OrphanReport } from "../edge/orphans.js";
import { EDGE_TAGS } from "../edge/model.js";
import { ErrorCode, UnstuckError, toUserError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import { mapLimit } from "../util/concurrency.js";

export async function collectOrphans(
  aws: AwsPort,
  kube: KubePort,
  options: { readonly cluster?: string; readonly namespace?: string },
): Promise<OrphanReport> {
  const warnings: string[] = [];
  const attempt = async <T>(what: string, fallback: T, op: () => Promise<T>): Promise<T> => {
    try {
      return await op();
    } catch (err) {
      warnings.push(`Could not read ${what}: ${toUserError(err).message}`);
      return fallback;
    }
  };
  const [discovery, deployments] = await Promise.all([kube.discover(), kube.listDeployments()]);
  const info = lookupFinalizer("ingress.k8s.aws/resources");
  const cluster =
    options.cluster ??
    (info ? matchControllers(info, deployments) : [])
      .map((d) => clusterNameFromArgs(d.args))
      .find((c) => c !== undefined);
  if (cluster === undefined) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      "The cluster name the Load Balancer Controller tags with is unknown: set UNSTUCK_CLUSTER_NAME, or run the controller with --cluster-name.",
    );
  }
  const ownersRead = await clusterOwners(kube, discovery.resources, warnings);
  const [loadBalancers, targetGroups, securityGroups, elbInterfaces] = await Promise.all([
    attempt("load balancers", [] as LoadBalancerSnapshot[], () => aws.allLoadBalancers()),
    attempt("target groups", [] as TargetGroupSnapshot[], () => aws.allTargetGroups()),
    attempt("the controller's security groups", [] as SecurityGroupSnapshot[], () =>
      aws.securityGroups({ tags: { [EDGE_TAGS.cluster]: cluster } }),
    ),
    attempt("ELB network interfaces", [] as NetworkInterfaceSnapshot[], () => aws.elbInterfaces()),
  ]);
  const interfacesByGroup = new Map<string, readonly NetworkInterfaceSnapshot[]>();
  const used = await mapLimit(securityGroups, 8, (g) => aws.networkInterfacesUsing(g.id));
  let interfacesComplete = true;
  used.forEach((r, i) => {
    const g = securityGroups[i];
    if (!g) return;
    if (r.ok) interfacesByGroup.set(g.id, r.value);
    else {
      interfacesComplete = false;
      warnings.push(`Could not read the interfaces using ${g.id}: ${toUserError(r.error).message}`);
    }
  });
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
    securityGroups,
    elbInterfaces: awsComplete ? elbInterfaces : [],
    interfacesByGroup,
    warnings,
  });
}
