import type { Button, KnownBlock } from "@slack/types";
import { formatDuration } from "../../diagnosis/analyze.js";
import type { AwsFindings, BindingFindings } from "../../diagnosis/aws.js";
import { forceAdvisedFor } from "../../diagnosis/causes/load-balancer.js";
import type { Blocker, DiagnosisRemedy, NamespaceDiagnosis } from "../../diagnosis/types.js";
import { registeredTargetsLeft, targetSpec } from "../../diagnosis/binding.js";
import {
  blockerHeadline,
  causeSentence,
  deeperCauseLines,
  nextStepTexts,
  remedyText,
  scanText,
  type ProseOptions,
} from "../../render/diagnosis-prose.js";
import { count, countLine, summarizeBlockers } from "../../render/blocker-summary.js";
import type { SlackMessage } from "./message.js";
import { clip, code, command, plain, prose as proseText, safe, sections, SlackLimit } from "./text.js";
import { compareText } from "../../util/collate.js";

const ICON: Record<NamespaceDiagnosis["verdict"], string> = {
  active: ":large_green_circle:",
  "not-found": ":white_circle:",
  terminating: ":large_yellow_circle:",
  blocked: ":red_circle:",
};

/** Action id of the "Request finalizer removal" button (handled by the approvals layer). */
export const REQUEST_FINALIZE_ACTION = "finalize:request";
/** Action ids of the card's own buttons (handled in `slack/diagnosis-actions.ts`); value `{"namespace": …}`. */
export const DiagnosisActionId = {
  /** Posts the evidence, every blocker and every step in the card's thread. */
  Details: "diagnosis:details",
  /** Diagnoses again and posts the fresh card in the thread (after a fix the operator applied). */
  Recheck: "diagnosis:recheck",
} as const;

const VERDICT_WORD: Record<NamespaceDiagnosis["verdict"], string> = {
  active: "ACTIVE",
  "not-found": "NOT FOUND",
  terminating: "TERMINATING",
  blocked: "BLOCKED",
};

/**
 * A Slack date token: every reader sees it in their own time zone, `{ago}` relative ("32 minutes
 * ago"); the fallback (clients that do not render tokens) is UTC to the minute, no milliseconds.
 */
export function slackDate(iso: string, format = "{date_short_pretty} {time}"): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return safe(iso, 40);
  const fallback = `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
  return `<!date^${String(Math.floor(ms / 1000))}^${format}|${fallback}>`;
}

/** `2026-02-12T08:38:47.123Z` → `2026-02-12 08:38 UTC` (plain text: fallbacks, terminal). */
export function plainDate(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** Options of the diagnosis card. */
export interface DiagnosisCardOptions {
  /** The slash command as configured (`UNSTUCK_COMMAND`), named where a step runs one. */
  readonly command?: string;
}

/** A failing group-version, with the APIService that serves it and its Service's ready endpoints. */
function discoveryLine(f: NamespaceDiagnosis["discoveryFailures"][number]): string {
  const head = `\`${code(f.groupVersion, 120)}\`: ${safe(f.message, 500)}`;
  const a = f.apiService;
  if (!a) return head;
  const available = `${safe(a.available, 20)}${a.reason ? ` (${safe(a.reason, 100)})` : ""}`;
  const backing =
    a.service === undefined
      ? "served by kube-apiserver itself"
      : `Service \`${code(a.service)}\`: ${a.readyEndpoints === undefined ? "ready endpoints unknown" : `*${a.readyEndpoints}* ready endpoint${a.readyEndpoints === 1 ? "" : "s"}`}`;
  return `${head}\n   APIService \`${code(a.name)}\` Available=${available}${a.message ? `: ${safe(a.message, 500)}` : ""}  ·  ${backing}`;
}

/**
 * `told`: owners already explained above (a big result names each finalizer's owner once);
 * `headline`: the controller's own error for the object, said first.
 */
function blockerSection(b: Blocker, told?: Set<string>, headline?: string): KnownBlock[] {
  const lines = [
    `*${safe(b.kind, 63)} \`${code(`${b.namespace}/${b.name}`)}\`* (${safe(b.apiVersion, 100)})`,
    ...(headline !== undefined ? [`:x: *${safe(headline, 600)}*`] : []),
    `finalizers: ${b.finalizers.map((f) => `\`${code(f)}\``).join(", ")}` +
      (b.deletionTimestamp ? `  ·  deleting since ${slackDate(b.deletionTimestamp)}` : ""),
  ];
  if (b.loadBalancerHostnames)
    lines.push(`load balancer: \`${b.loadBalancerHostnames.map((h) => code(h)).join("`, `")}\``);
  lines.push(...ownerLines(b, told));
  if (b.aws?.binding) lines.push(...bindingAwsLines(b.aws, b.aws.binding));
  else if (b.aws) lines.push(...stackAwsLines(b, b.aws));
  for (const e of b.evidence.filter((x) => x.source !== "aws").slice(0, 6)) {
    lines.push(
      `${e.error ? ":x:" : "•"} _${safe(e.from, 120)}_${e.time ? ` (${slackDate(e.time)})` : ""}: \`${code(e.text, 400)}\``,
    );
  }
  return sections(lines.join("\n"));
}

/** Each finalizer's owner: its controller and what runs it, and what removing it by hand leaves. */
function ownerLines(b: Blocker, told: Set<string> | undefined): string[] {
  const lines: string[] = [];
  for (const o of b.owners) {
    const key = `${o.finalizer}|${o.controller}|${o.status}`;
    if (told !== undefined && told.has(key)) {
      lines.push(`\`${code(o.finalizer)}\` → ${safe(o.controller)}: as above`);
      continue;
    }
    told?.add(key);
    const who =
      o.candidates.length === 0
        ? o.status === "not-installed"
          ? "*not installed: nothing will ever remove this finalizer*"
          : "*no such controller found in the cluster*"
        : o.candidates
            .map((c) =>
              c.kind === "builtin"
                ? "built into Kubernetes"
                : `${o.guessedBy !== undefined ? "likely " : ""}\`${code(`${c.namespace}/${c.name}`)}\` ${c.readyReplicas}/${c.replicas} ready${c.healthy ? "" : " :warning:"}`,
            )
            .join(", ");
    lines.push(`\`${code(o.finalizer)}\` → ${safe(o.controller)}: ${who}`);
    lines.push(`   _removing it by hand leaves:_ ${safe(o.cleanup, 500)}`);
  }
  return lines;
}

/** A TargetGroupBinding's AWS side: the target group it registers into and what is left in it. */
function bindingAwsLines(aws: AwsFindings, bound: BindingFindings): string[] {
  const tg = bound.targetGroupName ?? bound.targetGroupArn;
  const lines = [`*AWS* (cluster \`${code(aws.cluster)}\`, no load balancer of its own)`];
  if (tg !== undefined) {
    lines.push(
      `   target group \`${code(tg)}\`${bound.exists === false ? " *does not exist*" : ""}${bound.ownerText !== undefined ? `: ${safe(bound.ownerText, 400)}` : ""}`,
    );
    const left = registeredTargetsLeft(bound);
    if (left.length > 0)
      lines.push(
        `   still registered: ${left
          .slice(0, 10)
          .map((t) => `\`${code(targetSpec(t), 200)}\``)
          .join(", ")}${left.length > 10 ? `, … ${String(left.length - 10)} more` : ""}`,
      );
    if (bound.otherBindings.length > 0)
      lines.push(`   also bound by: ${bound.otherBindings.map((o) => safe(o, 200)).join(", ")}`);
  }
  lines.push(`   :mag: ${safe(aws.summary, 1000)}`);
  if (bound.deregisterCommand !== undefined && bound.deregisterActionable)
    lines.push(
      `   :white_check_mark: *Fix without forcing:* deregister them — ${command(bound.deregisterCommand)}`,
    );
  for (const p of aws.problems) lines.push(`   :grey_question: ${safe(p, 500)}`);
  return lines;
}

/** A load balancer's AWS side: its stack's resources, what stays, and the fix without forcing. */
function stackAwsLines(b: Blocker, aws: AwsFindings): string[] {
  const name = (r: { type: string; name?: string; id: string }): string =>
    `${safe(r.type, 60)} \`${code(r.name ?? r.id)}\``;
  const gone = aws.resources.filter((r) => !r.exists).map(name);
  const dying = aws.resources.filter((r) => r.exists && r.liveness?.state !== "live").map(name);
  const lines = [`*AWS* (cluster \`${code(aws.cluster)}\`, stack \`${code(aws.stack)}\`)`];
  if (dying.length > 0) lines.push(`   being deleted / left over: ${dying.join(", ")}`);
  for (const st of aws.stays.slice(0, 3))
    lines.push(`   :large_green_circle: in use, not to touch: ${safe(st.why, 500)}`);
  if (gone.length > 0) lines.push(`   already gone: ${gone.join(", ")}`);
  lines.push(`   :mag: ${safe(aws.summary, 1000)}`);
  const fix = aws.blockedGroups.flatMap((g) => g.remedies).find((r) => r.actionable);
  if (fix && !forceAdvisedFor(b)) {
    lines.push(
      `   :white_check_mark: *Fix without forcing:* ${safe(fix.what)}: ${safe(fix.action, 500)}${fix.commands[0] ? ` — ${command(fix.commands[0])}` : ""}`,
    );
  }
  for (const p of aws.problems) lines.push(`   :grey_question: ${safe(p, 500)}`);
  return lines;
}

/** The headline: verdict, the cause in one sentence, for how long (date tokens). */
function headline(d: NamespaceDiagnosis): string {
  const verdict = `${ICON[d.verdict]} *${VERDICT_WORD[d.verdict]}*`;
  if (d.verdict === "not-found" || d.verdict === "active")
    // "namespace `myap` does not exist: …", "namespace `myapp` is Active, …": the sentence's own subject dropped.
    return `${verdict} — namespace \`${code(d.namespace, 63)}\` ${safe(causeSentence(d).replace(/^it /, ""), 600)}.`;
  const since =
    d.deletionTimestamp !== undefined
      ? ` — Terminating for *${formatDuration(d.terminatingSeconds ?? 0)}*, since ${slackDate(d.deletionTimestamp, "{date_short_pretty} {time} ({ago})")}`
      : "";
  return `${verdict}: ${safe(capitalize(causeSentence(d)), 1500)}${since}.`;
}

/** The first word capitalised, unless it is a name (`aws-load-balancer-controller`), not prose. */
function capitalize(s: string): string {
  const first = /^\S*/.exec(s)?.[0] ?? "";
  if (!/^[a-z]+$/.test(first)) return s;
  return `${s.charAt(0).toUpperCase()}${s.slice(1)}`;
}

/** The notification text: verdict and cause, so a phone's lock screen says what is wrong. */
function fallbackText(d: NamespaceDiagnosis): string {
  const since =
    d.terminatingSeconds !== null ? ` (Terminating for ${formatDuration(d.terminatingSeconds)})` : "";
  return safe(
    `Namespace ${d.namespace}: ${VERDICT_WORD[d.verdict]}${since} — ${causeSentence(d)}.`,
    SlackLimit.Fallback,
  );
}

function targetValue(r: Extract<DiagnosisRemedy, { kind: "force-finalizer" }>): string {
  const o = r.object;
  return JSON.stringify({
    resource: o.resource,
    apiVersion: o.apiVersion,
    kind: o.kind,
    namespace: o.namespace,
    name: o.name,
  });
}

/** Why the recommended action is the one: the non-forced fix says the controller then finishes. */
function recommendation(r: DiagnosisRemedy, prose: ProseOptions): string {
  if (r.kind === "release-dependent" && r.fix.actionable) {
    const cmd = r.fix.commands[0];
    return (
      `:white_check_mark: *Recommended — no forcing needed:* ${safe(r.fix.action, 400)} (${safe(r.fix.what, 300)}). ` +
      `The controller's next retry then deletes ${safe(r.groupId, 40)} and removes the finalizer by itself.` +
      (cmd !== undefined ? `\n${command(cmd)}` : "") +
      "\nOnce done, *Check again* diagnoses the namespace afresh in the thread."
    );
  }
  if (r.kind === "deregister-targets" && r.actionable) {
    return (
      `:white_check_mark: *Recommended — no forcing needed:* deregister the ${r.targets.length === 1 ? "target" : `${String(r.targets.length)} targets`} ${safe(r.object.kind, 63)} \`${code(`${r.object.namespace}/${r.object.name}`)}\` left in target group \`${code(r.targetGroupName, 200)}\`` +
      `${r.owner !== undefined ? ` (${safe(r.owner, 400)})` : ""}. The controller's next retry then has nothing left to deregister and can remove its finalizer by itself; the target group itself stays.` +
      `\n${command(r.command)}` +
      "\nOnce done, *Check again* diagnoses the namespace afresh in the thread."
    );
  }
  if (r.kind === "force-finalizer") {
    return `👉 *Recommended — recovery first:* ask a second person to approve removing the finalizer of ${safe(r.object.kind, 63)} \`${code(`${r.object.namespace}/${r.object.name}`)}\`, once the cause is confirmed and a clean-up plan exists; afterwards check for orphaned AWS resources.`;
  }
  return `👉 *Recommended:* ${proseText(remedyText(r, prose), 1200)}`;
}

/** How the card and its details word steps: with the configured command, buttons named. */
function proseFor(options: DiagnosisCardOptions): ProseOptions {
  return { ...(options.command !== undefined ? { command: options.command } : {}), buttons: true };
}

/**
 * The diagnosis card: the header, then verdict + cause + how long in one line, the one recommended
 * action as the primary button, and *Details* for the evidence, every blocker and every step (posted
 * in the thread). Long lists stay out of the card; `--json` and the terminal keep everything.
 */
export function renderDiagnosisBlocks(
  d: NamespaceDiagnosis,
  options: DiagnosisCardOptions = {},
): SlackMessage {
  const prose = proseFor(options);
  const blocks: KnownBlock[] = [
    {
      type: "header",
      text: { type: "plain_text", text: plain(`Namespace ${d.namespace}: ${VERDICT_WORD[d.verdict]}`) },
    },
    { type: "section", text: { type: "mrkdwn", text: clip(headline(d)) } },
  ];
  blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: clip(cardFacts(d).join("  ·  ")) }] });

  const rec = d.recommended !== undefined ? d.remedies[d.recommended] : undefined;
  if (rec) blocks.push(...sections(recommendation(rec, prose)));

  const buttons = cardButtons(d, rec);
  if (buttons.length > 0) blocks.push({ type: "actions", block_id: "diagnosis-actions", elements: buttons });
  return { text: fallbackText(d), blocks };
}

/**
 * The card's context line, fact by fact: what remains, what has finalizers, failing discovery, when
 * it was checked, how the content was found, and what could not be read (a partial answer says so).
 */
function cardFacts(d: NamespaceDiagnosis): string[] {
  const facts: string[] = [];
  const remains = remainingFact(d);
  if (remains !== undefined) facts.push(remains);
  if (d.blockers.length > 0) facts.push(blockersFact(d));
  if (d.discoveryFailures.length > 0)
    facts.push(
      `discovery failing: ${d.discoveryFailures
        .slice(0, 3)
        .map((f) => `\`${code(f.groupVersion, 120)}\``)
        .join(", ")}`,
    );
  facts.push(`checked ${slackDate(d.checkedAt, "{time}")}`);
  // Which path found the content: the namespace controller's report, or every type (and why).
  if (d.scan !== undefined)
    facts.push(
      d.scan.path === "report"
        ? `from the namespace controller's report (${count(d.scan.listedTypes)} ${d.scan.listedTypes === 1 ? "type" : "types"} listed)`
        : `every type listed (${count(d.scan.listedTypes)}, see Details)`,
    );
  // A missing AWS region is said in so many words; the rest counted as unread.
  const awsOff = d.warnings.find((w) => w.startsWith("AWS not checked"));
  if (awsOff !== undefined) facts.push(`:grey_question: ${safe(awsOff, 200)}`);
  // A partial answer says so on the card, naming the first thing that could not be read (an
  // API that hung or refused): acting on it without knowing would be acting blind.
  const unread = d.warnings.filter((w) => w !== awsOff);
  if (unread.length > 0) {
    facts.push(
      `:grey_question: Partial result — ${safe((unread[0] ?? "").replace(/^Partial result: /, ""), 600)}${unread.length > 1 ? ` (and ${String(unread.length - 1)} more, see Details)` : ""}`,
    );
  }
  if (d.argo?.redFlag) facts.push(":warning: Argo CD ownership is doubled (see Details)");
  return facts;
}

/** How many objects remain, the biggest types named first; none when the namespace is empty. */
function remainingFact(d: NamespaceDiagnosis): string | undefined {
  const total = d.remaining.reduce((n, r) => n + r.count, 0);
  if (total <= 0) return undefined;
  // The biggest types first: with hundreds of types, the first three by name say little.
  const biggest = [...d.remaining].sort((a, b) => b.count - a.count || compareText(a.resource, b.resource));
  return `${count(total)} object${total === 1 ? "" : "s"} ${total === 1 ? "remains" : "remain"} (${biggest
    .slice(0, 3)
    .map((r) => `${safe(r.resource, 120)} ${count(r.count)}`)
    .join(", ")}${d.remaining.length > 3 ? ", …" : ""})`;
}

/** How many objects have finalizers, and (when several) the two most common finalizers. */
function blockersFact(d: NamespaceDiagnosis): string {
  const byFinalizer = summarizeBlockers(d.blockers, { all: true }).byFinalizer;
  return `${count(d.blockers.length)} with finalizers${
    d.blockers.length > 1
      ? ` (${byFinalizer
          .slice(0, 2)
          .map((f) => `\`${code(f.key, 120)}\` ${count(f.count)}`)
          .join(", ")}${byFinalizer.length > 2 ? ", …" : ""})`
      : ""
  }`;
}

/**
 * The card's buttons: the recommended action as the primary one (a finalizer removal request, or
 * *Check again* after a fix), then *Details* while the namespace is still stuck.
 */
function cardButtons(d: NamespaceDiagnosis, rec: DiagnosisRemedy | undefined): Button[] {
  const value = JSON.stringify({ namespace: d.namespace });
  const buttons: Button[] = [];
  if (rec?.kind === "force-finalizer" && d.verdict === "blocked") {
    buttons.push({
      type: "button",
      action_id: REQUEST_FINALIZE_ACTION,
      style: "primary",
      text: { type: "plain_text", text: "Request finalizer removal" },
      value: targetValue(rec),
    });
  } else if (rec && d.verdict !== "not-found" && d.verdict !== "active") {
    buttons.push({
      type: "button",
      action_id: DiagnosisActionId.Recheck,
      style: "primary",
      text: { type: "plain_text", text: "Check again" },
      value,
    });
  }
  if (d.verdict !== "not-found" && d.verdict !== "active")
    buttons.push({
      type: "button",
      action_id: DiagnosisActionId.Details,
      text: { type: "plain_text", text: "Details" },
      value,
    });
  return buttons;
}

/**
 * The details, for the card's thread: conditions, discovery failures, every blocker with its owners,
 * AWS findings and evidence, every next step and what could not be read. At most 50 blocks.
 */
export function renderDiagnosisDetails(
  d: NamespaceDiagnosis,
  options: DiagnosisCardOptions = {},
): SlackMessage {
  const blocks = detailsHeadBlocks(d);
  blocks.push(...detailsBlockerBlocks(d, blocks.length));
  blocks.push(...detailsTailBlocks(d, proseFor(options)));
  return {
    text: fallbackText(d),
    blocks: blocks.slice(0, 50),
  };
}

/** A section of one mrkdwn text, clipped to Slack's limit. */
function mrkdwnSection(text: string): KnownBlock {
  return { type: "section", text: { type: "mrkdwn", text: clip(text) } };
}

/** A context block of one mrkdwn text, clipped to Slack's limit. */
function mrkdwnContext(text: string): KnownBlock {
  return { type: "context", elements: [{ type: "mrkdwn", text: clip(text) }] };
}

/**
 * The namespace as a whole, before its objects: when it was checked, how its content was found,
 * its true conditions, discovery failures, what holds it and its own finalizers.
 */
function detailsHeadBlocks(d: NamespaceDiagnosis): KnownBlock[] {
  const blocks: KnownBlock[] = [
    mrkdwnSection(`*Details* — namespace \`${code(d.namespace, 63)}\`, checked ${slackDate(d.checkedAt)}`),
  ];
  if (d.scan !== undefined) blocks.push(mrkdwnContext(`Content: ${safe(scanText(d.scan), 600)}.`));
  const trueConditions = d.conditions.filter((c) => c.status === "True");
  if (trueConditions.length > 0) {
    blocks.push(
      mrkdwnSection(
        trueConditions
          .map((c) => `*${safe(c.type, 100)}* (${safe(c.reason ?? "", 100)}): ${safe(c.message ?? "", 800)}`)
          .join("\n"),
      ),
    );
  }
  if (d.discoveryFailures.length > 0) {
    blocks.push(
      mrkdwnSection(
        `:rotating_light: *Discovery failures*\n${d.discoveryFailures.map(discoveryLine).join("\n")}`,
      ),
    );
  }
  const deeper = deeperCauseLines(d);
  if (deeper.length > 0) {
    blocks.push(mrkdwnSection(`:mag: *What holds it*\n${deeper.map((l) => `• ${safe(l, 700)}`).join("\n")}`));
  }
  if (d.namespaceFinalizers.length > 0) {
    blocks.push(
      mrkdwnSection(
        `Namespace finalizers left: ${d.namespaceFinalizers.map((f) => `\`${code(f)}\``).join(", ")}`,
      ),
    );
  }
  return blocks;
}

/**
 * The objects with finalizers, after `used` blocks: a big result is summarised (counts by type and
 * by finalizer, then the first objects in full, those with findings first, and a note of the rest).
 * Slack allows 50 blocks: room is kept for the tail (more-objects note, next steps, Argo, warnings).
 */
function detailsBlockerBlocks(d: NamespaceDiagnosis, used: number): KnownBlock[] {
  const blocks: KnownBlock[] = [];
  const summary = summarizeBlockers(d.blockers);
  const big = summary.hidden > 0;
  if (big) {
    blocks.push(
      mrkdwnSection(
        `*${count(summary.total)} objects with finalizers*\n` +
          `_by type:_ ${safe(countLine(summary.byType, 15), 1400)}\n` +
          `_by finalizer:_ ${safe(countLine(summary.byFinalizer, 15), 1400)}`,
      ),
    );
  }
  const room = Math.max(1, 50 - (used + blocks.length) - 1 - 5);
  const shown = summary.shown.slice(0, room);
  if (shown.length > 0) blocks.push({ type: "divider" });
  const told = big ? new Set<string>() : undefined;
  for (const b of shown) blocks.push(...blockerSection(b, told, blockerHeadline(d, b)));
  const hidden = summary.total - shown.length;
  if (hidden > 0) {
    const cli = `npm run unstuck -- ns ${d.namespace} --all`;
    blocks.push(
      mrkdwnContext(
        `…and ${count(hidden)} more objects with finalizers, not shown here (the first ${count(shown.length)} above, those with findings first). Every one: ${command(cli)} in a terminal, or \`--json\` for all of them as data.`,
      ),
    );
  }
  return blocks;
}

/** What follows the objects: Argo CD's red flag, every next step, and what could not be read. */
function detailsTailBlocks(d: NamespaceDiagnosis, prose: ProseOptions): KnownBlock[] {
  const blocks: KnownBlock[] = [];
  if (d.argo?.redFlag) {
    blocks.push(mrkdwnSection(`:warning: *Argo CD ownership*: ${safe(d.argo.redFlag, 1000)}`));
  }
  const steps = nextStepTexts(d, prose);
  if (steps.length > 0) {
    // A step's prose is shortened before its commands, which stay whole.
    blocks.push(
      ...sections(
        `*Next steps*\n${steps.map((s, i) => `${String(i + 1)}. ${i === d.recommended ? "*(recommended)* " : ""}${proseText(s, 600)}`).join("\n")}`,
      ),
    );
  }
  if (d.warnings.length > 0) {
    blocks.push(
      mrkdwnContext(
        `:grey_question: Partial result — could not read: ${d.warnings.map((w) => safe(w, 400)).join("; ")}`,
      ),
    );
  }
  return blocks;
}
