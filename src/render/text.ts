/**
 * Plain-text rendering of command results for the terminal (`npm run unstuck -- …`). The same
 * data renders as Block Kit in Slack (`src/slack/blocks`) and as JSON with `--json`.
 */
import { actionKind } from "../requests/action-kinds.js";
import type { CommandResult, HelpDoc } from "../command-result.js";
import { renderDiagnosisText } from "./diagnosis-text.js";
import type { ApprovalRequest } from "../requests/model.js";
import { formatAuditEntry } from "./audit-text.js";
import { renderOrphansText } from "./orphans-text.js";
import { renderPreflightText } from "./preflight-text.js";
import { renderTraceText } from "./trace-text.js";

/** What a surface says of a request planned but never filed (only the bot files, and none did). */
export const UNFILED_DRAFT =
  "error (INTERNAL): the request was planned but not filed — only the bot files requests, as the person it verified.";

export function renderText(result: CommandResult): string {
  switch (result.type) {
    case "help":
      return renderHelpText(result.help);
    case "diagnosis":
      return renderDiagnosisText(result.diagnosis, result.all === true ? { all: true } : {});
    case "trace":
      return renderTraceText(result.trace, result.repair);
    case "orphans":
      return renderOrphansText(result.report);
    case "preflight":
      return renderPreflightText(result.report);
    case "watch":
      return `Watching namespace ${result.namespace}.\n${renderDiagnosisText(result.diagnosis)}`;
    case "approval-request":
      return renderApprovalText(result.request, new Date());
    case "approval-draft":
      return UNFILED_DRAFT;
    case "approvals":
      return result.requests.length === 0
        ? "No pending approval requests."
        : result.requests.map((r) => renderApprovalText(r, new Date(result.now))).join("\n\n");
    case "audit":
      return result.entries.length === 0
        ? "The audit log is empty."
        : result.entries.map(formatAuditEntry).join("\n");
    case "timeline":
      return result.markdown;
    case "error": {
      const lines = [`error (${result.error.code}): ${result.error.message}`];
      if (result.help) lines.push("", renderHelpText(result.help));
      return lines.join("\n");
    }
  }
}

export function renderApprovalText(r: ApprovalRequest, now: Date): string {
  const a = r.action;
  const left = Math.max(0, Math.round((Date.parse(r.expiresAt) - now.getTime()) / 60_000));
  const approvals = r.votes.filter((v) => v.decision === "approve").length;
  const words = actionKind(a).terminal;
  const lines = [
    `Request ${r.id}: ${r.state} — ${words.what(a)}`,
    `  requested by ${r.requester.userId} at ${r.createdAt}; ${approvals}/${r.approvalsRequired} approvals; expires ${r.expiresAt}${r.state === "PENDING" ? ` (in ${left}m)` : ""}`,
    `  reason: ${r.reason}`,
    ...words.exact(a).map((l) => `  ${l}`),
  ];
  if (r.result) lines.push(`  result: ${r.result.outcome} — ${r.result.message}`);
  return lines.join("\n");
}

export function renderHelpText(help: HelpDoc): string {
  const lines = [`${help.product} — commands (${help.prefix} <command> …)`, ""];
  for (const e of help.entries) {
    lines.push(`  ${e.usage}`, `      ${e.summary}`);
    if (e.aliases.length > 0) lines.push(`      also: ${e.aliases.join(", ")}`);
    for (const f of e.flags) lines.push(`      ${f.flag}  ${f.description}`);
    if (e.examples.length > 0)
      lines.push(`      e.g. ${e.examples.map((x) => `${help.prefix} ${x}`).join("  |  ")}`);
    lines.push("");
  }
  return lines.join("\n").trimEnd();
}
