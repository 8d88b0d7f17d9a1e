/**
 * The exact API calls of a repoint plan, one line each, as the executor will send them: what the
 * approval request shows (Slack escapes these lines; the terminal prints them as they are).
 */
import type { RecordSetSnapshot } from "../aws/types.js";
import type {
  DeleteOrphansAction,
  RepointPathAction,
  RepointStep,
  RepointTarget,
} from "../approvals/types.js";

function recordTarget(r: RecordSetSnapshot): string {
  if (r.alias)
    return `ALIAS ${r.alias.dnsName} (zone ${r.alias.hostedZoneId}, evaluate health ${String(r.alias.evaluateTargetHealth)})`;
  return `${r.values.join(" ")} (TTL ${String(r.ttl ?? 300)})`;
}

export function repointStepLines(step: RepointStep): string[] {
  if (step.kind === "route53") {
    return [
      `Route 53 ChangeResourceRecordSets, zone ${step.zoneName} (${step.zoneId}), one atomic batch:`,
      ...step.changes.map(
        (c) =>
          `  ${c.action} ${c.record.type} ${c.record.name}${c.record.setIdentifier ? ` [${c.record.setIdentifier}]` : ""} → ${recordTarget(c.record)}`,
      ),
    ];
  }
  return [
    `CloudFront UpdateDistribution ${step.distributionId}, If-Match ${step.etag}:`,
    `  origin ${step.originId} DomainName ${step.from} → ${step.to}${step.hostnames.length > 0 ? ` (serves ${step.hostnames.join(", ")})` : ""}`,
  ];
}

export function repointPlanLines(action: RepointPathAction): string[] {
  return action.steps.flatMap((s, i) => {
    const [first, ...rest] = repointStepLines(s);
    return [`${String(i + 1)}. ${first ?? ""}`, ...rest];
  });
}

/** One line per target of a repair: whose it is, which cluster tagged it, what it serves, and why it. */
export function repointTargetLine(t: RepointTarget): string {
  const owner =
    t.owner !== undefined
      ? `owner ${t.owner}${t.namespaces !== undefined && t.namespaces.length > 0 ? ` (namespace ${t.namespaces.join(", ")})` : ""}`
      : "owner unknown: no Ingress or Service of this cluster tagged it";
  const serves =
    t.serves.length === 0 ? "no host known" : t.serves.map((h) => (h === "*" ? "any host" : h)).join(", ");
  return `${t.loadBalancer} for ${t.hostnames.join(", ")} — ${owner}; cluster ${t.cluster ?? "unknown"}; serves ${serves}; established: ${t.established}`;
}

export function repointTargetLines(action: RepointPathAction): string[] {
  return (action.targets ?? []).map(repointTargetLine);
}

/** The exact deletes of a clean-up, in the order the executor runs them. */
export function orphanPlanLines(action: DeleteOrphansAction): string[] {
  const order = ["LoadBalancer", "TargetGroup", "SecurityGroup"];
  const call = {
    LoadBalancer: (id: string) => `elasticloadbalancing DeleteLoadBalancer ${id}`,
    TargetGroup: (id: string) => `elasticloadbalancing DeleteTargetGroup ${id}`,
    SecurityGroup: (id: string) => `ec2 DeleteSecurityGroup ${id}`,
  } as const;
  return [...action.resources]
    .sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type))
    .map(
      (r, i) =>
        `${String(i + 1)}. ${call[r.type](r.id)}${r.name !== undefined && r.name !== r.id ? ` (${r.name})` : ""}`,
    );
}
