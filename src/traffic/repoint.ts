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

export async function planPathRepair(
  aws: AwsPort,
  kube: KubePort | undefined,
  subject: RepairSubject,
  now: () => Date,
  choose?: string,
): Promise<PathRepair> {
  let traced: TraceWithReads;
  if ("namespace" in subject) {
    if (!kube) throw new Error("planPathRepair: a namespace needs the cluster connection");
    traced = await traceNamespaceWithReads(aws, kube, subject.namespace, now);
  } else {
    traced = await traceHostnamesWithReads(aws, kube, subject.hostnames, now);
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
    etags,
    ...(choose !== undefined ? { choose } : {}),
  });
  return { trace: { ...traced.trace, warnings }, plan };
}
