/** Terminal rendering of a pre-deletion check. */
import type { PreflightReport } from "../preflight/analyze.js";

export function renderPreflightText(r: PreflightReport): string {
  const out = [`Preflight: delete namespace ${r.namespace} — ${r.verdict.toUpperCase()}`];
  r.reasons.forEach((x, i) => out.push(`  ${String(i + 1)}. ${x}`));
  if (r.finalizerObjects.length > 0) {
    out.push("", "Objects with finalizers (deletion waits on their controllers):");
    for (const o of r.finalizerObjects.slice(0, 20)) {
      out.push(
        `  ${o.kind} ${o.name}: ${o.owners.map((w) => `${w.finalizer} → ${w.controller} (${w.status})`).join(", ")}`,
      );
    }
    if (r.finalizerObjects.length > 20) out.push(`  … ${String(r.finalizerObjects.length - 20)} more`);
  }
  if (r.awsDeleted.length > 0) {
    out.push("", "AWS resources the controller will delete:");
    for (const a of r.awsDeleted) out.push(`  ${a.type} ${a.name ?? a.id}`);
  }
  if (r.hostnames.length > 0) {
    out.push("", "Hostnames that will break:");
    for (const h of r.hostnames) out.push(`  ${h.effect}`);
  }
  return out.join("\n");
}
