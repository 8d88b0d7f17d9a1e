/**
 * The blast radius before anyone deletes a namespace (the pre-deletion checklist among the lessons in
 * docs/incident.md: Argo CD auto-sync, finalizers on the targets, external dependencies (ALB/SG),
 * domain paths (Route 53/CloudFront)). Pure: from what the collector read, a verdict
 * `safe` | `risky` | `blocked` with its reasons, the double-ownership red flag first.
 */
import type { ArgoOwnership } from "../diagnosis/argo.js";
import { describeSync } from "../diagnosis/argo.js";
import type { FinalizerOwner } from "../diagnosis/types.js";
import type { TracedPath } from "../edge/path.js";

export interface PreflightObject {
  readonly kind: string;
  readonly name: string;
  readonly finalizers: readonly string[];
  readonly owners: readonly FinalizerOwner[];
}

export interface PreflightAwsResource {
  readonly type: string;
  readonly id: string;
  readonly name?: string;
}

export interface PreflightReport {
  readonly namespace: string;
  readonly verdict: "safe" | "risky" | "blocked";
  /** Why, most serious first; empty for `safe`. */
  readonly reasons: readonly string[];
  readonly argo?: ArgoOwnership;
  /** Objects that carry finalizers: what deletion will wait on. */
  readonly finalizerObjects: readonly PreflightObject[];
  /** AWS resources the Load Balancer Controller will delete with the namespace. */
  readonly awsDeleted: readonly PreflightAwsResource[];
  /** Hostnames whose path ends at one of those load balancers, with what they will answer. */
  readonly hostnames: readonly { readonly hostname: string; readonly effect: string }[];
  readonly warnings: readonly string[];
}

export interface PreflightInput {
  readonly namespace: string;
  readonly phase: string | null;
  readonly argo?: ArgoOwnership;
  readonly finalizerObjects: readonly PreflightObject[];
  readonly awsDeleted: readonly PreflightAwsResource[];
  /** Current paths of the hostnames that reach the namespace's load balancers. */
  readonly paths: readonly TracedPath[];
  /** ARNs of the load balancers that will be deleted. */
  readonly deletedArns: readonly string[];
  readonly warnings: readonly string[];
}

export function analyzePreflight(input: PreflightInput): PreflightReport {
  const blocked: string[] = [];
  const risky: string[] = [];
  if (input.phase === null) blocked.push(`Namespace ${input.namespace} does not exist.`);
  else if (input.phase === "Terminating")
    blocked.push(`Namespace ${input.namespace} is already being deleted: use \`ns ${input.namespace}\`.`);

  const argo = input.argo;
  if (argo && argo.namespaceOwners.length > 1 && argo.redFlag) blocked.unshift(argo.redFlag);
  else if (argo?.redFlag) risky.push(argo.redFlag);
  for (const a of argo?.apps ?? []) {
    if (a.automated) {
      risky.push(
        `Argo CD Application ${a.app} manages it with ${describeSync(a)}: it will re-create what it tracks unless it is disabled or removed first.`,
      );
    }
  }

  const missing = input.finalizerObjects.flatMap((o) =>
    o.owners.filter((w) => w.status === "not-installed").map((w) => ({ o, w })),
  );
  for (const { o, w } of missing.slice(0, 5)) {
    blocked.push(
      `${o.kind} ${o.name} carries \`${w.finalizer}\` but ${w.controller} is not installed: deletion would hang on it for ever.`,
    );
  }
  const degraded = input.finalizerObjects.flatMap((o) =>
    o.owners.filter((w) => w.status === "degraded").map((w) => ({ o, w })),
  );
  for (const { o, w } of degraded.slice(0, 5)) {
    risky.push(`${o.kind} ${o.name} waits on ${w.controller}, which is not fully ready: deletion may hang.`);
  }

  const deleted = new Set(input.deletedArns);
  const hostnames: { hostname: string; effect: string }[] = [];
  for (const p of input.paths) {
    const hit = p.hops.find((h) => deleted.has(h.ref?.loadBalancerArn ?? ""));
    if (!hit) continue;
    const viaCloudFront = p.hops.some((h) => h.kind === "distribution");
    hostnames.push({
      hostname: p.hostname,
      effect: viaCloudFront
        ? `${p.hostname} will answer 502 until its CloudFront origin is repointed (${hit.label})`
        : `${p.hostname} will stop resolving (NXDOMAIN) until its record is repointed (${hit.label})`,
    });
  }
  if (hostnames.length > 0) {
    risky.push(
      `${String(hostnames.length)} hostname${hostnames.length === 1 ? "" : "s"} will break: ${hostnames
        .slice(0, 3)
        .map((h) => h.effect)
        .join("; ")}${hostnames.length > 3 ? "; …" : ""}.`,
    );
  }
  if (input.awsDeleted.length > 0) {
    risky.push(
      `The Load Balancer Controller will delete ${String(input.awsDeleted.length)} AWS resource${input.awsDeleted.length === 1 ? "" : "s"} (${input.awsDeleted
        .slice(0, 4)
        .map((r) => `${r.type} ${r.name ?? r.id}`)
        .join(", ")}${input.awsDeleted.length > 4 ? ", …" : ""}); re-creating them gives new DNS names.`,
    );
  }
  if (input.warnings.length > 0) risky.push(`Not everything could be read: ${input.warnings.join("; ")}`);

  const verdict = blocked.length > 0 ? "blocked" : risky.length > 0 ? "risky" : "safe";
  return {
    namespace: input.namespace,
    verdict,
    reasons: [...blocked, ...risky],
    ...(argo ? { argo } : {}),
    finalizerObjects: input.finalizerObjects,
    awsDeleted: input.awsDeleted,
    hostnames,
    warnings: input.warnings,
  };
}
