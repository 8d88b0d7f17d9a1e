/**
 * The terminal text of a namespace diagnosis (`npm run unstuck -- ns …`): the verdict and cause,
 * what is left in the namespace, each blocker with its owners and AWS findings, Argo CD, and the
 * next steps. The same diagnosis renders as Block Kit in `src/slack/blocks/diagnosis.ts`.
 */
import { formatDuration } from "../diagnosis/analyze.js";
import { describeSync, type ArgoOwnership } from "../diagnosis/argo.js";
import { describeDependent, type AwsFindings, type BindingFindings } from "../diagnosis/aws.js";
import type { Blocker, FinalizerOwner, NamespaceDiagnosis } from "../diagnosis/types.js";
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
import {
  count,
  countLine,
  SUMMARY_FIRST,
  summarizeBlockers,
  type BlockerSummary,
} from "./blocker-summary.js";
import { compareText } from "../util/collate.js";

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
  const out: string[] = [...headlineLines(d), ...conditionLines(d, all), ...remainingLines(d, all)];
  out.push(...discoveryFailureLines(d));
  if (d.namespaceFinalizers.length > 0)
    out.push("", `Namespace finalizers left: ${d.namespaceFinalizers.join(", ")}`);
  if (summary.total > SUMMARY_FIRST) out.push(...finalizerCountLines(summary, all));
  const told = summary.total > SUMMARY_FIRST ? new Set<string>() : undefined;
  for (const b of summary.shown) out.push(...blockerLines(d, b, told));
  if (summary.hidden > 0) {
    out.push(
      "",
      `… and ${count(summary.hidden)} more objects with finalizers, not shown: run again with --all to list every one, or --json for all of them as data.`,
    );
  }
  if (d.argo) out.push(...argoLines(d.argo));
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

/** The verdict, the cause in one sentence, how long it has been Terminating and what holds it. */
function headlineLines(d: NamespaceDiagnosis): string[] {
  const out = [`Namespace ${d.namespace}: ${VERDICT_LABEL[d.verdict]}`];
  if (d.verdict === "blocked" || d.verdict === "terminating") out.push(`  Cause: ${causeSentence(d)}.`);
  if (d.terminatingSeconds !== null) {
    out.push(
      `  Terminating for ${formatDuration(d.terminatingSeconds)} (since ${d.deletionTimestamp ?? "?"})`,
    );
  }
  if (d.scan !== undefined) out.push(`  Content: ${scanText(d.scan)}.`);
  const deeper = deeperCauseLines(d);
  if (deeper.length > 0) out.push("", "What holds it:", ...deeper.map((l) => `  - ${l}`));
  return out;
}

/** The namespace's conditions, long messages cut unless `--all`. */
function conditionLines(d: NamespaceDiagnosis, all: boolean): string[] {
  if (d.conditions.length === 0) return [];
  const out = ["", "Conditions:"];
  for (const c of d.conditions) {
    const message =
      c.message !== undefined && !all && c.message.length > CONDITION_MESSAGE_MAX
        ? `${c.message.slice(0, CONDITION_MESSAGE_MAX - 1)}…`
        : c.message;
    out.push(`  ${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ""}${message ? `: ${message}` : ""}`);
  }
  return out;
}

/** What is left in the namespace by type; with many types, the biggest first and the rest counted. */
function remainingLines(d: NamespaceDiagnosis, all: boolean): string[] {
  if (d.remaining.length === 0) return [];
  const total = d.remaining.reduce((n, r) => n + r.count, 0);
  const out = [
    "",
    `Remaining resources (${count(total)} in ${plural(d.remaining.length, "type", "types")}):`,
  ];
  // Many types: the biggest first, the rest counted.
  const rows =
    !all && d.remaining.length > SUMMARY_FIRST
      ? [...d.remaining].sort((a, b) => b.count - a.count || compareText(a.resource, b.resource))
      : d.remaining;
  for (const r of rows.slice(0, all ? rows.length : SUMMARY_FIRST)) out.push(`  ${r.resource}: ${r.count}`);
  const rest = rows.slice(all ? rows.length : SUMMARY_FIRST);
  if (rest.length > 0)
    out.push(
      `  … ${count(rest.length)} more types with ${count(rest.reduce((n, r) => n + r.count, 0))} objects (--all lists every type)`,
    );
  return out;
}

/** API groups discovery could not list, with the APIService behind each and its endpoints. */
function discoveryFailureLines(d: NamespaceDiagnosis): string[] {
  if (d.discoveryFailures.length === 0) return [];
  const out = ["", "Discovery failures:"];
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
  return out;
}

/** Many objects with finalizers: how many, counted by type and by finalizer. */
function finalizerCountLines(summary: BlockerSummary, all: boolean): string[] {
  return [
    "",
    `Objects with finalizers: ${count(summary.total)}${summary.hidden > 0 ? ` (the first ${count(summary.shown.length)} below, those with findings first; --all lists every one)` : ""}`,
    `  by type:      ${countLine(summary.byType, all ? summary.byType.length : SUMMARY_FIRST)}`,
    `  by finalizer: ${countLine(summary.byFinalizer, all ? summary.byFinalizer.length : SUMMARY_FIRST)}`,
  ];
}

/**
 * One blocker: its cause, finalizers and their owners, its AWS findings and its evidence. `told`
 * holds the owners already described (when there are many blockers), to say "as above" instead.
 */
function blockerLines(d: NamespaceDiagnosis, b: Blocker, told: Set<string> | undefined): string[] {
  const out = ["", `Blocker: ${b.kind} ${b.namespace}/${b.name} (${b.apiVersion})`];
  const headline = blockerHeadline(d, b);
  if (headline !== undefined) out.push(`  cause: ${headline}`);
  out.push(`  finalizers: ${b.finalizers.join(", ")}`);
  if (b.deletionTimestamp) out.push(`  deletionTimestamp: ${b.deletionTimestamp}`);
  if (b.loadBalancerHostnames) out.push(`  load balancer: ${b.loadBalancerHostnames.join(", ")}`);
  for (const o of b.owners) out.push(...ownerLines(o, told));
  const bound = b.aws?.binding;
  if (b.aws && bound) out.push(...bindingAwsLines(b.aws, bound));
  else if (b.aws) out.push(...stackAwsLines(b.aws));
  if (b.evidence.length > 0) {
    out.push("  evidence:");
    for (const e of b.evidence) {
      out.push(`    [${e.error ? "ERROR" : e.source}] ${e.from}${e.time ? ` @ ${e.time}` : ""}: ${e.text}`);
    }
  }
  return out;
}

/** A finalizer's owner: its controller and their health, and what removing it by hand leaves. */
function ownerLines(o: FinalizerOwner, told: Set<string> | undefined): string[] {
  // Many objects share a few finalizers: their owner is told once.
  const key = `${o.finalizer}|${o.controller}|${o.status}`;
  if (told !== undefined && told.has(key)) return [`  ${o.finalizer} → ${o.controller}: as above`];
  told?.add(key);
  const out = [`  ${o.finalizer} → ${o.controller}: ${o.purpose}`];
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
  return out;
}

/** A TargetGroupBinding's AWS side: its target group and the targets left in it, no load balancer. */
function bindingAwsLines(aws: AwsFindings, bound: BindingFindings): string[] {
  const out = [`  AWS (cluster ${aws.cluster}, no load balancer of its own):`];
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
    if (bound.otherBindings.length > 0) out.push(`      also bound by: ${bound.otherBindings.join(", ")}`);
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
  for (const p of aws.problems) out.push(`    could not read: ${p}`);
  out.push(`    => ${aws.summary}`);
  return out;
}

/**
 * A load balancer stack's AWS side: each resource and whether it is gone, in use or dying, what
 * stays, and each blocked security group with what holds it and the fixes.
 */
function stackAwsLines(aws: AwsFindings): string[] {
  const out = [`  AWS (cluster ${aws.cluster}, stack ${aws.stack}):`];
  for (const r of aws.resources) {
    out.push(
      `    ${!r.exists ? "gone   " : r.liveness?.state === "live" ? "in use " : r.liveness?.state === "dying" ? "dying  " : "exists "} ${r.type} ${r.name ?? r.id}${r.name && r.name !== r.id ? ` (${r.id})` : ""}${r.detail ? ` — ${r.detail}` : ""}`,
    );
  }
  for (const st of aws.stays) out.push(`    stays: ${st.why}`);
  for (const g of aws.blockedGroups) {
    out.push(`    security group ${g.groupId} (${g.groupName}, ${g.role}) — ${g.why ?? "being deleted"}:`);
    for (const dep of describeDependent(g)) out.push(`      held by ${dep}`);
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
  for (const p of aws.problems) out.push(`    could not read: ${p}`);
  out.push(`    => ${aws.summary}`);
  return out;
}

/** The Argo CD Applications that manage the namespace or its objects, and their warnings. */
function argoLines(argo: ArgoOwnership): string[] {
  const out = ["", "Argo CD:"];
  for (const a of argo.apps) {
    const ownsNs = argo.namespaceOwners.some((o) => o.app === a.app);
    out.push(`  ${a.app}: ${describeSync(a)}${ownsNs ? " — manages the Namespace itself" : ""}`);
  }
  for (const w of argo.warnings) out.push(`  SharedResourceWarning (${w.app}): ${w.message}`);
  if (argo.redFlag) out.push(`  !! ${argo.redFlag}`);
  return out;
}
