/**
 * Plain-text rendering of command results for the terminal (`npm run unstuck -- …`). The same
 * data renders as Block Kit in Slack (`src/slack/blocks`) and as JSON with `--json`.
 */
import { orphanPlanLines, repointPlanLines, repointTargetLines } from "./repoint-plan.js";
import { describeAction, type ActionOf } from "../requests/action-kinds.js";
import type { CommandResult, HelpDoc } from "../command-result.js";
import { formatDuration } from "../diagnosis/analyze.js";
import { describeSync } from "../diagnosis/argo.js";
import { describeDependent } from "../diagnosis/aws.js";
import type { NamespaceDiagnosis } from "../diagnosis/types.js";
import { registeredTargetsLeft, targetSpec } from "../diagnosis/binding.js";
import {
  blockerHeadline,
  causeSentence,
  deeperCauseLines,
  nextStepTexts,
  scanText,
  type ProseOptions,
} from "./diagnosis-prose.js";
import { plural } from "../util/format.js";
import { count, countLine, SUMMARY_FIRST, summarizeBlockers } from "./blocker-summary.js";
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

const VERDICT_LABEL: Record<NamespaceDiagnosis["verdict"], string> = {
  active: "ACTIVE",
  "not-found": "NOT FOUND",
  terminating: "TERMINATING (progressing)",
  blocked: "BLOCKED",
};

/** Options of the terminal text of a diagnosis. */
export interface DiagnosisTextOptions extends ProseOptions {
  /**
   * Every object with finalizers in full (the terminal's `--all`). Without it, more than
   * {@link SUMMARY_FIRST} are counted by type and by finalizer and only the first are shown.
   */
  readonly all?: boolean;
}

/** A condition message longer than this is cut in a summary (600 types make one of 20,000 characters). */
const CONDITION_MESSAGE_MAX = 400;

/** `options.command`: the slash command as configured, named in steps that run one. */
export function renderDiagnosisText(d: NamespaceDiagnosis, options: DiagnosisTextOptions = {}): string {
  const all = options.all === true;
  const summary = summarizeBlockers(d.blockers, { all });
  const out: string[] = [];
  out.push(`Namespace ${d.namespace}: ${VERDICT_LABEL[d.verdict]}`);
  if (d.verdict === "blocked" || d.verdict === "terminating") out.push(`  Cause: ${causeSentence(d)}.`);
  if (d.terminatingSeconds !== null) {
    out.push(
      `  Terminating for ${formatDuration(d.terminatingSeconds)} (since ${d.deletionTimestamp ?? "?"})`,
    );
  }
  if (d.scan !== undefined) out.push(`  Content: ${scanText(d.scan)}.`);
  const deeper = deeperCauseLines(d);
  if (deeper.length > 0) out.push("", "What holds it:", ...deeper.map((l) => `  - ${l}`));
  if (d.conditions.length > 0) {
    out.push("", "Conditions:");
    for (const c of d.conditions) {
      const message =
        c.message !== undefined && !all && c.message.length > CONDITION_MESSAGE_MAX
          ? `${c.message.slice(0, CONDITION_MESSAGE_MAX - 1)}…`
          : c.message;
      out.push(`  ${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ""}${message ? `: ${message}` : ""}`);
    }
  }
  if (d.remaining.length > 0) {
    const total = d.remaining.reduce((n, r) => n + r.count, 0);
    out.push("", `Remaining resources (${count(total)} in ${plural(d.remaining.length, "type", "types")}):`);
    // Many types: the biggest first, the rest counted.
    const rows =
      !all && d.remaining.length > SUMMARY_FIRST
        ? [...d.remaining].sort((a, b) => b.count - a.count || a.resource.localeCompare(b.resource))
        : d.remaining;
    for (const r of rows.slice(0, all ? rows.length : SUMMARY_FIRST)) out.push(`  ${r.resource}: ${r.count}`);
    const rest = rows.slice(all ? rows.length : SUMMARY_FIRST);
    if (rest.length > 0)
      out.push(
        `  … ${count(rest.length)} more types with ${count(rest.reduce((n, r) => n + r.count, 0))} objects (--all lists every type)`,
      );
  }
  if (d.discoveryFailures.length > 0) {
    out.push("", "Discovery failures:");
    for (const f of d.discoveryFailures) {
      out.push(`  ${f.groupVersion}: ${f.message}`);
      const a = f.apiService;
      if (!a) continue;
      out.push(
        `    APIService ${a.name}: Available=${a.available}${a.reason ? ` (${a.reason})` : ""}${a.message ? `: ${a.message}` : ""}`,
      );
      out.push(
        a.service === undefined
          ? "    served by kube-apiserver itself (no backing Service)"
          : `    Service ${a.service}: ${a.readyEndpoints === undefined ? "ready endpoints unknown" : `${a.readyEndpoints} ready endpoint${a.readyEndpoints === 1 ? "" : "s"}`}`,
      );
    }
  }
  if (d.namespaceFinalizers.length > 0)
    out.push("", `Namespace finalizers left: ${d.namespaceFinalizers.join(", ")}`);
  if (summary.total > SUMMARY_FIRST) {
    out.push(
      "",
      `Objects with finalizers: ${count(summary.total)}${summary.hidden > 0 ? ` (the first ${count(summary.shown.length)} below, those with findings first; --all lists every one)` : ""}`,
      `  by type:      ${countLine(summary.byType, all ? summary.byType.length : SUMMARY_FIRST)}`,
      `  by finalizer: ${countLine(summary.byFinalizer, all ? summary.byFinalizer.length : SUMMARY_FIRST)}`,
    );
  }
  const told = summary.total > SUMMARY_FIRST ? new Set<string>() : undefined;
  for (const b of summary.shown) {
    out.push("", `Blocker: ${b.kind} ${b.namespace}/${b.name} (${b.apiVersion})`);
    const headline = blockerHeadline(d, b);
    if (headline !== undefined) out.push(`  cause: ${headline}`);
    out.push(`  finalizers: ${b.finalizers.join(", ")}`);
    if (b.deletionTimestamp) out.push(`  deletionTimestamp: ${b.deletionTimestamp}`);
    if (b.loadBalancerHostnames) out.push(`  load balancer: ${b.loadBalancerHostnames.join(", ")}`);
    for (const o of b.owners) {
      // Many objects share a few finalizers: their owner is told once.
      const key = `${o.finalizer}|${o.controller}|${o.status}`;
      if (told !== undefined && told.has(key)) {
        out.push(`  ${o.finalizer} → ${o.controller}: as above`);
        continue;
      }
      told?.add(key);
      out.push(`  ${o.finalizer} → ${o.controller}: ${o.purpose}`);
      if (o.candidates.length === 0)
        out.push(
          o.status === "not-installed"
            ? "    NOT INSTALLED: no such controller in the cluster, so nothing will ever remove this finalizer"
            : "    no such controller found in the cluster",
        );
      for (const c of o.candidates) {
        out.push(
          c.kind === "builtin"
            ? `    built into Kubernetes`
            : `    ${o.guessedBy !== undefined ? `likely controller (its name or image says "${o.guessedBy}")` : "controller"} ${c.namespace}/${c.name}: ${c.readyReplicas}/${c.replicas} ready${c.healthy ? "" : " (UNHEALTHY)"}`,
        );
      }
      out.push(`    removing it by hand leaves: ${o.cleanup}`);
    }
    const bound = b.aws?.binding;
    if (b.aws && bound) {
      // A TargetGroupBinding: its target group and the targets left in it, no load balancer.
      out.push(`  AWS (cluster ${b.aws.cluster}, no load balancer of its own):`);
      const tg = bound.targetGroupName ?? bound.targetGroupArn;
      if (tg === undefined) out.push("    target group: none named (spec.targetGroupARN is empty)");
      else {
        out.push(
          `    ${bound.exists === false ? "gone   " : bound.exists === true ? "exists " : "unknown"} TargetGroup ${tg}${bound.targetGroupArn !== undefined && bound.targetGroupArn !== tg ? ` (${bound.targetGroupArn})` : ""}`,
        );
        if (bound.ownerText !== undefined) out.push(`      owner: ${bound.ownerText}`);
        for (const t of bound.targets ?? [])
          out.push(
            `      registered: ${targetSpec(t)} — ${t.state}${t.state === "draining" ? " (being deregistered)" : ""}`,
          );
        if (bound.otherBindings.length > 0)
          out.push(`      also bound by: ${bound.otherBindings.join(", ")}`);
        if (bound.serving.length > 0) {
          out.push(
            `      not now: ${String(bound.serving.length)} healthy and serving traffic — deregister only once their pods are gone`,
          );
        } else if (bound.deregisterCommand !== undefined && registeredTargetsLeft(bound).length > 0) {
          out.push(
            `      fix (${bound.deregisterActionable ? "no forcing needed" : "only this binding's targets"}): deregister the targets left`,
          );
          out.push(`        $ ${bound.deregisterCommand}`);
        }
      }
      for (const p of b.aws.problems) out.push(`    could not read: ${p}`);
      out.push(`    => ${b.aws.summary}`);
    } else if (b.aws) {
      out.push(`  AWS (cluster ${b.aws.cluster}, stack ${b.aws.stack}):`);
      for (const r of b.aws.resources) {
        out.push(
          `    ${!r.exists ? "gone   " : r.liveness?.state === "live" ? "in use " : r.liveness?.state === "dying" ? "dying  " : "exists "} ${r.type} ${r.name ?? r.id}${r.name && r.name !== r.id ? ` (${r.id})` : ""}${r.detail ? ` — ${r.detail}` : ""}`,
        );
      }
      for (const st of b.aws.stays) out.push(`    stays: ${st.why}`);
      for (const g of b.aws.blockedGroups) {
        out.push(
          `    security group ${g.groupId} (${g.groupName}, ${g.role}) — ${g.why ?? "being deleted"}:`,
        );
        for (const d of describeDependent(g)) out.push(`      held by ${d}`);
        for (const f of g.deleteFailures.slice(0, 3)) {
          out.push(
            `      CloudTrail ${f.time} DeleteSecurityGroup ${f.errorCode}${f.caller ? ` by ${f.caller}` : ""}`,
          );
        }
        if (g.deleteFailures.length > 3) out.push(`      … ${g.deleteFailures.length - 3} more failures`);
        for (const r of g.remedies) {
          out.push(
            `      fix (${r.actionable ? "no forcing needed" : "not yours to change"}): ${r.what}: ${r.action}`,
          );
          for (const c of r.commands) out.push(`        $ ${c}`);
        }
      }
      for (const p of b.aws.problems) out.push(`    could not read: ${p}`);
      out.push(`    => ${b.aws.summary}`);
    }
    if (b.evidence.length > 0) {
      out.push("  evidence:");
      for (const e of b.evidence) {
        out.push(`    [${e.error ? "ERROR" : e.source}] ${e.from}${e.time ? ` @ ${e.time}` : ""}: ${e.text}`);
      }
    }
  }
  if (summary.hidden > 0) {
    out.push(
      "",
      `… and ${count(summary.hidden)} more objects with finalizers, not shown: run again with --all to list every one, or --json for all of them as data.`,
    );
  }
  if (d.argo) {
    out.push("", "Argo CD:");
    for (const a of d.argo.apps) {
      const ownsNs = d.argo.namespaceOwners.some((o) => o.app === a.app);
      out.push(`  ${a.app}: ${describeSync(a)}${ownsNs ? " — manages the Namespace itself" : ""}`);
    }
    for (const w of d.argo.warnings) out.push(`  SharedResourceWarning (${w.app}): ${w.message}`);
    if (d.argo.redFlag) out.push(`  !! ${d.argo.redFlag}`);
  }
  const steps = nextStepTexts(d, options);
  if (steps.length > 0) {
    out.push("", "Next steps:");
    steps.forEach((s, i) => {
      out.push(`  ${String(i + 1)}. ${s}${i === d.recommended && steps.length > 1 ? "  ← recommended" : ""}`);
    });
  }
  if (d.warnings.length > 0) {
    out.push("", "Could not read (partial result):");
    for (const w of d.warnings) out.push(`  - ${w}`);
  }
  return out.join("\n");
}
