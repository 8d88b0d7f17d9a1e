/** Terminal rendering of a traffic-path trace: one line per hop, indented by depth. */
import type { RepointPlan } from "../edge/repoint.js";
import type { TraceResult } from "../edge/trace-result.js";
import { plural } from "../util/format.js";
import { repointPlanLines } from "./repoint-plan.js";

const MARK = {
  ok: "ok        ",
  stale: "STALE     ",
  mismatched: "MISMATCHED",
  unknown: "unknown   ",
} as const;

export function renderTraceText(t: TraceResult, repair?: RepointPlan): string {
  const out: string[] = [];
  // A refused request is the answer: it comes before the trace it was checked against.
  if (repair !== undefined && repair.refused.length > 0)
    out.push(...repair.refused.map((r) => `Refused: ${r}`), "");
  const subject =
    "namespace" in t.subject ? `namespace ${t.subject.namespace}` : t.subject.hostnames.join(", ");
  const broken = t.paths.filter((p) => p.verdict === "stale" || p.verdict === "mismatched");
  out.push(
    t.paths.length === 0
      ? `Traffic path of ${subject}: no hostname or distribution reaches it.`
      : broken.length === 0
        ? `Traffic path of ${subject}: ${t.paths.length === 1 ? "intact" : `all ${String(t.paths.length)} paths intact`}${t.paths.some((p) => p.verdict === "unknown") ? " (some links unknown)" : ""}.`
        : `Traffic path of ${subject}: BROKEN — ${broken.map((p) => p.hostname).join(", ")}.`,
  );
  for (const p of t.paths) {
    out.push("", `${p.hostname}: ${p.verdict.toUpperCase()}`);
    let prev: (typeof p.hops)[number] | undefined;
    for (const h of p.hops) {
      const pad = "  ".repeat(h.depth + 1);
      out.push(`${pad}${MARK[h.verdict]} ${h.label} — ${h.why}`);
      if (h.replacement) {
        out.push(
          `${pad}           → should be ${h.replacement.dnsName} (${h.replacement.loadBalancer}${h.replacement.owner ? `, ${h.replacement.owner}` : ""})`,
        );
        if (h.replacement.evidence !== undefined)
          out.push(`${pad}             because ${h.replacement.evidence}`);
      }
      if (h.candidates)
        out.push(
          `${pad}           → ${plural(h.candidates.length, "load balancer", "load balancers")} of the same owner serve${h.candidates.length === 1 ? "s" : ""} it, choose one: ${h.candidates.join("; ")}`,
        );
      // A record carries its load balancer's answer: said once, on the record.
      if (h.unresolved !== undefined && h.unresolved !== prev?.unresolved)
        out.push(`${pad}           → no replacement: ${h.unresolved}`);
      prev = h;
      if (h.warning) out.push(`${pad}           ! ${h.warning}`);
    }
  }
  if (t.probes && t.probes.length > 0) {
    out.push("", "Probed now:");
    for (const p of t.probes) {
      out.push(`  ${p.hostname}: DNS ${p.dns}`);
      for (const h of p.http) out.push(`    ${h.ok ? "ok  " : "FAIL"} GET ${h.url} → ${h.result}`);
    }
  }
  if (repair) out.push(...repairText(repair, t));
  if (t.warnings.length > 0) {
    out.push("", "Could not read (links that needed it are unknown):");
    for (const w of t.warnings) out.push(`  - ${w}`);
  }
  if (t.notes.length > 0) {
    out.push("", "Notes:");
    for (const n of t.notes) out.push(`  - ${n}`);
  }
  return out.join("\n");
}

/**
 * The command that requests a repair of the traced subject, as both surfaces print it (the Slack
 * card shows it byte for byte, so it copies the same).
 */
export function repointRequestCommand(subject: TraceResult["subject"], command = "/unstuck"): string {
  const how =
    "namespace" in subject ? `repoint ns ${subject.namespace}` : `repoint ${subject.hostnames.join(" ")}`;
  return `${command} ${how} --reason "<what is stale, why this target>"`;
}

/** The repair plan under a trace: the exact calls, what needs a person, and how to request it. */
function repairText(repair: RepointPlan, t: TraceResult): string[] {
  const out: string[] = [];
  if (repair.action) {
    out.push("", "Repair plan (needs a second person's approval; request it in Slack with --reason):");
    for (const l of repointPlanLines(repair.action)) out.push(`  ${l}`);
    out.push(`  request: ${repointRequestCommand(t.subject)}`);
  }
  if (repair.questions.length > 0) {
    out.push("", "Needs a person (not planned):");
    for (const q of repair.questions) out.push(`  - ${q}`);
  }
  for (const n of repair.notes) out.push(`  note: ${n}`);
  return out;
}
