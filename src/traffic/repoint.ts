/**
 * Plans the repair of a traffic path: a fresh trace (hostnames, or every hostname reaching a
 * namespace), the ETag of each distribution whose origin would change, and the pure plan
 * (`edge/repoint.ts`). Read-only: the plan becomes a change only through the two-person approval.
 */
import type { AwsPort } from "../aws/port.js";
import { planRepoint, type RepointPlan } from "../edge/repoint.js";
import { toUserError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import {
  traceHostnamesWithReads,
  traceNamespaceWithReads,
  type TraceResult,
  type TraceWithReads,
} from "./trace.js";

export interface PathRepair {
  readonly trace: TraceResult;
  readonly plan: RepointPlan;
}

export type RepairSubject = { readonly hostnames: readonly string[] } | { readonly namespace: string };

export interface RepairOptions {
  /** `--to`: the load balancer the requester names (checked: it must serve each hostname). */
  readonly choose?: string;
  /** `--other-namespace`: a `--to` target of another namespace than the old target's owner is intended. */
  readonly allowOtherNamespace?: boolean;
  /** The cluster name the controller tags with, when configured. */
  readonly cluster?: string;
}

export async function planPathRepair(
  aws: AwsPort,
  kube: KubePort | undefined,
  subject: RepairSubject,
  now: () => Date,
  options: RepairOptions = {},
): Promise<PathRepair> {
  let traced: TraceWithReads;
  const traceOptions = options.cluster !== undefined ? { cluster: options.cluster } : {};
  if ("namespace" in subject) {
    if (!kube) throw new Error("planPathRepair: a namespace needs the cluster connection");
    traced = await traceNamespaceWithReads(aws, kube, subject.namespace, now, traceOptions);
  } else {
    traced = await traceHostnamesWithReads(aws, kube, subject.hostnames, now, traceOptions);
  }
  // The ETag of each distribution a stale origin belongs to: the change is sent with it (If-Match).
  const ids = new Set<string>();
  for (const p of traced.trace.paths)
    for (const h of p.hops)
      if (h.kind === "origin" && (h.verdict === "stale" || h.verdict === "mismatched")) {
        const id = h.ref?.["distributionId"];
        if (id !== undefined) ids.add(id);
      }
  const etags = new Map<string, string>();
  const warnings = [...traced.trace.warnings];
  await Promise.all(
    [...ids].map(async (id) => {
      try {
        etags.set(id, (await aws.distributionConfig(id)).etag);
      } catch (err) {
        warnings.push(`Could not read the config of distribution ${id}: ${toUserError(err).message}`);
      }
    }),
  );
  const plan = planRepoint({
    paths: traced.trace.paths,
    zones: traced.zones,
    records: traced.records,
    distributions: traced.distributions,
    loadBalancers: traced.loadBalancers,
    owners: traced.owners,
    ...(traced.cluster !== undefined ? { cluster: traced.cluster } : {}),
    etags,
    ...(options.choose !== undefined ? { choose: options.choose } : {}),
    ...(options.allowOtherNamespace === true ? { allowOtherNamespace: true } : {}),
  });
  return { trace: { ...traced.trace, warnings }, plan };
}
