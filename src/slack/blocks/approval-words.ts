/**
 * What the request card and its Details say for each kind of action, one entry per kind, typed over
 * every action type: a new kind does not compile until it says its header, its one-line change, its
 * why and what it leaves behind (or takes the evidence's and the plan's), its risks, its exact change
 * and what it is bound to, and the condition its Approve dialog names. Escaped mrkdwn throughout.
 */
import type { ActionOf } from "../../requests/action-kinds.js";
import { describeAction } from "../../requests/action-kinds.js";
import {
  DELETION_APPROVED_ANNOTATION,
  describeTarget,
  type ApprovalAction,
  type RepointPathAction,
} from "../../requests/model.js";
import { repointCalls } from "../../edge/repoint-calls.js";
import { orphanPlanLines, repointTargetLine } from "../../render/repoint-plan.js";
import { code, esc, safe } from "./text.js";

export interface CardWords<A extends ApprovalAction> {
  /** The header after the state (plain text). */
  readonly header: (a: A) => string;
  /** *Changes*: the object (the cluster is added by the card). */
  readonly changes: (a: A) => string;
  /** *Why*: given the first evidence item (one line, escaped), when there is one. */
  readonly why: (a: A, firstEvidence: string | undefined) => string;
  /** *Leaves behind*: given the plan's first item and how many more (escaped), when there is one. */
  readonly leaves: (a: A, firstStep: string | undefined) => string;
  /** Risks of this very plan, said on the card too (raw text). */
  readonly risks: (a: A) => readonly string[];
  /** The risk paragraph Details leads with. */
  readonly risk: (a: A) => string;
  /** The exact change and what it is bound to (Details). */
  readonly exact: (a: A, requestId: string) => string;
  /** The Approve dialog's "it runs only if … is still exactly as it was". */
  readonly holds: (a: A) => string;
  /** Said after "says why" when a request has no statements (the kind's form asks for them). */
  readonly withoutForm: string;
}

const NO_EVIDENCE = "_no evidence attached: check the diagnosis before approving_";

/** A repoint's calls for the code block: each numbered, what it changes indented beneath (raw). */
function callsText(a: RepointPathAction): string {
  return repointCalls(a)
    .flatMap((c) => [`${String(c.step)}. ${c.call}:`, ...c.changes.map((line) => `  ${line}`)])
    .join("\n");
}

/** A code block whose own backticks cannot end it early. */
function codeBlock(raw: string): string {
  return "```\n" + esc(raw.replace(/`/g, "ˋ")) + "\n```";
}

const minutes = (seconds: number): string => String(Math.round(seconds / 60));

const WORDS: { readonly [T in ApprovalAction["type"]]: CardWords<ActionOf<T>> } = {
  "remove-finalizer": {
    header: (a) => `remove finalizer from ${a.target.kind} ${a.target.namespace}/${a.target.name}`,
    changes: (a) =>
      `remove ${a.remove.map((f) => `\`${code(f)}\``).join(", ")} from ${safe(a.target.kind, 63)} \`${code(`${a.target.namespace}/${a.target.name}`)}\``,
    why: (_a, first) => first ?? NO_EVIDENCE,
    leaves: (_a, first) => first ?? "nothing planned",
    risks: () => [],
    risk: (a) =>
      `*Risk*: forcing ${a.remove.map((f) => `\`${code(f)}\``).join(", ")} off skips its controller's clean-up: whatever it still had to delete (in the cluster or in AWS) is left behind until the clean-up plan runs, and *${safe(a.target.kind, 63)} \`${code(`${a.target.namespace}/${a.target.name}`)}\`* is deleted at once.`,
    exact: (a) =>
      [
        `*Change*: remove ${a.remove.map((f) => `\`${code(f)}\``).join(", ")} from *${safe(a.target.kind, 63)} \`${code(`${a.target.namespace}/${a.target.name}`)}\`* (${safe(a.target.apiVersion, 100)})`,
        `Bound to the object as it was when requested: resourceVersion \`${code(a.precondition.resourceVersion, 40)}\`, finalizers [${a.precondition.finalizers.map((f) => `\`${code(f)}\``).join(", ")}]. If either changes, the executor refuses (STALE).`,
        // Inside a code block a literal ``` would end it early; the look-alike keeps the patch readable.
        "```" +
          safe(JSON.stringify(a.patch, null, 1).replace(/\n\s*/g, " ").replace(/`/g, "ˋ"), 1500) +
          "```",
      ].join("\n"),
    holds: (a) => safe(describeTarget(a.target)),
    withoutForm:
      " (asked without the form, so cause, recovery-first and clean-up were not confirmed one by one)",
  },
  "open-deletion-guard": {
    header: (a) => `allow deleting namespace ${a.namespace}`,
    changes: (a) => `allow deleting namespace \`${code(a.namespace)}\` for ${minutes(a.windowSeconds)} min`,
    why: (a) =>
      `preflight says *${safe(a.preflight.verdict.toUpperCase(), 10)}*: ${safe(a.preflight.summary.replace(/\s*\n\s*/g, " "), 600)}`,
    leaves: () => "nothing: the bot takes the annotation off again when the window ends",
    risks: () => [],
    risk: (a) =>
      `*Risk* — preflight ${a.preflight.verdict === "safe" ? ":white_check_mark:" : a.preflight.verdict === "risky" ? ":warning:" : ":no_entry:"} *${safe(a.preflight.verdict.toUpperCase(), 10)}*: ${safe(a.preflight.summary, 600)}\nFor ${minutes(a.windowSeconds)} min anyone with delete rights may delete namespace \`${code(a.namespace)}\` and everything in it.`,
    exact: (a, requestId) =>
      [
        `*Change*: set \`${code(DELETION_APPROVED_ANNOTATION)}\` on namespace \`${code(a.namespace)}\` to a value signed by the bot that names request \`${code(requestId)}\` and the end of the window (\`v1;req=…;until=…;mac=…\`), which the deletion guard (the chart's ValidatingAdmissionPolicy) requires before anyone may delete it; the bot takes it off again after ${minutes(a.windowSeconds)} min, and every worker removes it within seconds of the window's end even if that job is lost.`,
        `Bound to the namespace as it was when requested: uid \`${code(a.precondition.uid, 40)}\`, resourceVersion \`${code(a.precondition.resourceVersion, 40)}\`, not Terminating. If it was re-created or changed, the executor refuses (STALE).`,
      ].join("\n"),
    holds: (a) => `namespace ${safe(a.namespace)}`,
    withoutForm: "",
  },
  "delete-orphans": {
    header: (a) => `delete ${describeAction(a)}`,
    changes: (a) => `delete ${safe(describeAction(a))}`,
    why: (_a, first) => first ?? NO_EVIDENCE,
    leaves: (_a, first) => first ?? "nothing: what it deletes cannot be undone",
    risks: () => [],
    risk: () =>
      "*Risk*: deleting AWS resources cannot be undone. Each is re-checked first and left alone if it has an owner or a user again.",
    exact: (a) =>
      [
        `*Change*: delete ${safe(describeAction(a))} — exactly these calls, in order:`,
        codeBlock(orphanPlanLines(a).join("\n")),
        "Bound to what was approved: before deleting, the executor re-reads the cluster and AWS; anything that has an owner or a user again (or that the controller is deleting) is left alone and named. AWS itself refuses to delete what is still in use.",
      ].join("\n"),
    holds: () => "each resource it deletes is still an orphan, unattached,",
    withoutForm: "",
  },
  "repoint-path": {
    header: (a) => `repoint ${a.hostnames.join(", ")}`,
    changes: (a) =>
      `repoint ${a.hostnames.map((h) => `\`${code(h)}\``).join(", ")}: ${String(a.steps.length)} call${a.steps.length === 1 ? "" : "s"} to ${[...new Set(a.steps.map((st) => (st.kind === "route53" ? "Route 53" : "CloudFront")))].join(" and ")}`,
    why: (_a, first) => first ?? NO_EVIDENCE,
    leaves: (_a, first) => first ?? "nothing planned",
    risks: (a) => a.risks ?? [],
    risk: (a) =>
      [
        ...(a.risks ?? []).map((r) => `:warning: *Risk*: ${safe(r, 600)}`),
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
};

/** The card's words for an action, typed to it. */
export function cardWords<A extends ApprovalAction>(a: A): CardWords<A> {
  return WORDS[a.type] as unknown as CardWords<A>;
}
