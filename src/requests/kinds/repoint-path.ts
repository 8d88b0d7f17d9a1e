/**
 * Repointing a traffic path: Route 53 records and CloudFront origins moved from a dying load balancer
 * to its owner's live one, each call bound to what was read when planning. Its executor is
 * `src/actions/repoint-path.ts`.
 */
import { repointCalls } from "../../edge/repoint-calls.js";
import { repointPlanLines, repointTargetLine, repointTargetLines } from "../../render/repoint-plan.js";
import { code, Mark, safe } from "../../slack/blocks/text.js";
import type { ActionKind, ActionOf } from "../kind.js";
import type { RepointPathAction } from "../model.js";
import { asPlanned, codeBlock, NO_EVIDENCE, PATH_LESSON } from "./words.js";

/** A repoint plan whose Route 53 batches are DELETE/CREATE pairs of one record and whose origins change. */
function wellFormedRepoint(action: RepointPathAction): boolean {
  return action.steps.every((step) => {
    if (step.kind === "cloudfront-origin") return step.from !== step.to && step.etag !== "";
    if (step.changes.length === 0 || step.changes.length % 2 !== 0) return false;
    for (let i = 0; i < step.changes.length; i += 2) {
      const del = step.changes[i];
      const create = step.changes[i + 1];
      if (del?.action !== "DELETE" || create?.action !== "CREATE") return false;
      if (del.record.name !== create.record.name || del.record.type !== create.record.type) return false;
      if ((del.record.setIdentifier ?? "") !== (create.record.setIdentifier ?? "")) return false;
    }
    return true;
  });
}

/** A repoint's calls for the code block: each numbered, what it changes indented beneath (raw). */
function callsText(a: RepointPathAction): string {
  return repointCalls(a)
    .flatMap((c) => [`${String(c.step)}. ${c.call}:`, ...c.changes.map((line) => `  ${line}`)])
    .join("\n");
}

export const repointPath: ActionKind<ActionOf<"repoint-path">> = {
  target: (a) => `traffic path of ${a.hostnames.join(", ")}`,
  change: (a) =>
    `repoint the traffic path of ${a.hostnames.join(", ")} (${String(a.steps.length)} change${a.steps.length === 1 ? "" : "s"})`,
  subject: (a) =>
    `repoint/${a.steps
      .map((s) =>
        s.kind === "route53"
          ? `r53/${s.zoneId}/${s.edits.map((e) => `${e.name}/${e.type}`).join(",")}`
          : `cf/${s.distributionId}/${s.originId}`,
      )
      .sort()
      .join("+")}`,
  audit: (a, target) => ({
    type: a.type,
    target,
    plan: a.steps.flatMap((step) =>
      step.kind === "route53"
        ? step.edits.map((e) => `route53 ${step.zoneId} ${e.name} ${e.type}: ${e.from} -> ${e.to}`)
        : [
            `cloudfront ${step.distributionId} origin ${step.originId}: ${step.from} -> ${step.to} (If-Match ${step.etag})`,
          ],
    ),
  }),
  filed: asPlanned,
  wellFormed: wellFormedRepoint,
  terminal: {
    what: (a) => `repoint the traffic path of ${a.hostnames.join(", ")}`,
    exact: (a) => [
      ...(a.risks ?? []).map((r) => `RISK: ${r}`),
      ...repointPlanLines(a),
      ...repointTargetLines(a).map((l) => `target ${l}`),
    ],
  },
  card: {
    header: (a) => `repoint ${a.hostnames.join(", ")}`,
    changes: (a) =>
      `repoint ${a.hostnames.map((h) => `\`${code(h)}\``).join(", ")}: ${String(a.steps.length)} call${a.steps.length === 1 ? "" : "s"} to ${[...new Set(a.steps.map((st) => (st.kind === "route53" ? "Route 53" : "CloudFront")))].join(" and ")}`,
    why: (_a, first) => first ?? NO_EVIDENCE,
    leaves: (_a, first) => first ?? "nothing planned",
    risks: (a) => a.risks ?? [],
    risk: (a) =>
      [
        ...(a.risks ?? []).map((r) => `${Mark.Warning} *Risk*: ${safe(r, 600)}`),
        "*Risk*: live traffic moves: each changed record and origin serves the new target as soon as it propagates (Route 53 in seconds, CloudFront in minutes).",
      ].join("\n"),
    exact: (a) =>
      [
        `*Change*: repoint the traffic path of ${a.hostnames.map((h) => `\`${code(h)}\``).join(", ")} — exactly these calls, in order:`,
        codeBlock(callsText(a)),
        ...(a.targets !== undefined && a.targets.length > 0
          ? [
              "*Targets* (owner from the controller's tags, hosts from its owner's rules):",
              ...a.targets.slice(0, 10).map((t) => `• ${safe(repointTargetLine(t), 2000)}`),
            ]
          : []),
        "Bound to what was read when planning: each Route 53 DELETE names the record's exact current values (the whole batch fails if one changed), each CloudFront update carries the ETag read then (If-Match). If anything moved, the executor refuses (STALE).",
      ].join("\n"),
    holds: () => "every record and distribution it changes",
    withoutForm: "",
  },
  timeline: "repoint of the",
  lessons: () => [PATH_LESSON],
  followedBy: (a) => ({
    wait: "edge",
    hostnames: a.hostnames,
    zoneNames: Object.fromEntries(
      a.steps.flatMap((s) => (s.kind === "route53" ? [[s.zoneId, s.zoneName]] : [])),
    ),
  }),
};
