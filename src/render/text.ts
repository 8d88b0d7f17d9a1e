/**
 * Plain-text rendering of command results for the terminal (`npm run unstuck -- …`). The same
 * data renders as Block Kit in Slack (`src/slack/blocks`) and as JSON with `--json`.
 */
import { orphanPlanLines, repointPlanLines, repointTargetLines } from "./repoint-plan.js";
import { describeAction, type ActionOf } from "../requests/action-kinds.js";
import type { CommandResult, HelpDoc } from "../command-result.js";
import { renderDiagnosisText } from "./diagnosis-text.js";
import type { ApprovalAction, ApprovalRequest } from "../requests/model.js";
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

/** The terminal's words for each kind of request: what it does, and its exact change, whole. */
interface TerminalWords<A extends ApprovalAction> {
  readonly what: (a: A) => string;
  readonly exact: (a: A) => readonly string[];
}

const TERMINAL_WORDS: { readonly [T in ApprovalAction["type"]]: TerminalWords<ActionOf<T>> } = {
  "remove-finalizer": {
    what: (a) => `remove ${a.remove.join(", ")} from ${a.target.kind} ${a.target.namespace}/${a.target.name}`,
    exact: (a) => [
      `bound to resourceVersion ${a.precondition.resourceVersion}, finalizers [${a.precondition.finalizers.join(", ")}]`,
    ],
  },
  "repoint-path": {
    what: (a) => `repoint the traffic path of ${a.hostnames.join(", ")}`,
    exact: (a) => [
      ...(a.risks ?? []).map((r) => `RISK: ${r}`),
      ...repointPlanLines(a),
      ...repointTargetLines(a).map((l) => `target ${l}`),
    ],
  },
  "open-deletion-guard": {
    what: (a) =>
      `allow deleting namespace ${a.namespace} for ${String(Math.round(a.windowSeconds / 60))} min`,
    exact: (a) => [
      `bound to namespace uid ${a.precondition.uid}, resourceVersion ${a.precondition.resourceVersion}; preflight ${a.preflight.verdict}: ${a.preflight.summary}`,
    ],
  },
  "delete-orphans": {
    what: (a) => `delete ${describeAction(a)}`,
    exact: (a) => orphanPlanLines(a),
  },
};

function terminalWords<A extends ApprovalAction>(a: A): TerminalWords<A> {
  return TERMINAL_WORDS[a.type] as unknown as TerminalWords<A>;
}

export function renderApprovalText(r: ApprovalRequest, now: Date): string {
  const a = r.action;
  const left = Math.max(0, Math.round((Date.parse(r.expiresAt) - now.getTime()) / 60_000));
  const approvals = r.votes.filter((v) => v.decision === "approve").length;
  const words = terminalWords(a);
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
