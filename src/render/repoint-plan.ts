/**
 * The lines of a repair's plan: a repoint's exact API calls as the executor will send them (printed
 * by the terminal; the approval card renders the same calls for Slack), its targets, and the deletes
 * of a clean-up (these two the card shows too, escaped).
 */
import type { DeleteOrphansAction, RepointPathAction } from "../requests/model.js";
import type { RepointTarget } from "../edge/repoint-steps.js";
import { repointCalls } from "../edge/repoint-calls.js";

/** Each call numbered, then what it changes, indented beneath it. */
export function repointPlanLines(action: RepointPathAction): string[] {
  return repointCalls(action).flatMap((c) => [
    `${String(c.step)}. ${c.call}:`,
    ...c.changes.map((line) => `  ${line}`),
  ]);
}

/** One line per target of a repair: whose it is, its cluster tag, what it serves, and why it. */
export function repointTargetLine(t: RepointTarget): string {
  const owner =
    t.owner !== undefined
      ? `owner ${t.owner}${t.namespaces !== undefined && t.namespaces.length > 0 ? ` (namespace ${t.namespaces.join(", ")})` : ""}`
      : "owner unknown: no Ingress or Service of this cluster names it in its status, and its name is derived for none";
  const serves =
    t.serves.length === 0 ? "no host known" : t.serves.map((h) => (h === "*" ? "any host" : h)).join(", ");
  return `${t.loadBalancer} for ${t.hostnames.join(", ")} — ${owner}; cluster tag ${t.cluster ?? "none"}; serves ${serves}; established: ${t.established}`;
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
