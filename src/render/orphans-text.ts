/** Terminal rendering of an orphan report. */
import type { OrphanReport } from "../edge/orphans.js";

export function renderOrphansText(r: OrphanReport): string {
  const scope = r.namespace !== undefined ? `namespace ${r.namespace}` : `cluster ${r.cluster}`;
  const out = [
    r.orphans.length === 0
      ? `No orphans for ${scope}${r.warnings.length > 0 ? " found in what could be read" : ""} (${String(r.liveCount)} resources checked are in use).`
      : `${String(r.orphans.length)} orphan${r.orphans.length === 1 ? "" : "s"} for ${scope} (${String(r.liveCount)} resources checked are in use):`,
  ];
  for (const o of r.orphans) {
    out.push("", `  ${o.type} ${o.name ?? o.id}${o.name && o.name !== o.id ? ` (${o.id})` : ""}`);
    out.push(`    why: ${o.why}`);
    if (o.cost) out.push(`    cost: ${o.cost}`);
    out.push(`    remove${o.removableNow ? "" : " (not yet)"}:`);
    for (const c of o.remove) out.push(`      $ ${c}`);
  }
  if (r.inProgress.length > 0) {
    out.push("", "Still being deleted by the controller (not orphans yet):");
    for (const p of r.inProgress) out.push(`  ${p.type} ${p.id}: ${p.why}`);
  }
  if (r.warnings.length > 0) {
    out.push("", "Could not read (nothing unproven is called an orphan):");
    for (const w of r.warnings) out.push(`  - ${w}`);
  }
  return out.join("\n");
}

/**
 * The orphan check a thread gets after a namespace is gone (`after: "deletion"`) or once the
 * controller has re-created what the namespace held (`after: "re-creation"`).
 */
export function renderOrphansFollowUp(r: OrphanReport, after: "deletion" | "re-creation"): string {
  return after === "deletion"
    ? `🧹 ${renderOrphansText(r)}`
    : `🧹 After the re-creation: ${renderOrphansText(r)}`;
}

/** The orphan check could not run (`message`: the error as a user reads it). */
export function orphansUnavailableText(message: string): string {
  return `🧹 Could not check orphans: ${message}`;
}

/** The traffic path could not be traced after a deletion (`message`: the error as a user reads it). */
export function traceUnavailableText(message: string): string {
  return `🛣️ Could not trace the traffic path: ${message}`;
}
