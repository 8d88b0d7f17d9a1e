/** Slack card for a traffic-path trace: the first line says whether the path is healthy. */
import type { KnownBlock } from "@slack/types";
import type { RepointPlan } from "../../edge/repoint.js";
import { repointPlanLines } from "../../render/repoint-plan.js";
import { repointRequestCommand } from "../../render/trace-text.js";
import { plural } from "../../util/format.js";
import type { TraceResult } from "../../edge/trace-result.js";
import type { TracedPath } from "../../edge/path.js";
import type { SlackMessage } from "./message.js";
import { approverIds, type ApprovalRequest } from "../../requests/model.js";
import { describeAction } from "../../requests/action-kinds.js";
import { slackDate } from "./diagnosis.js";
import { clip, command, esc, mention, sections, SlackLimit } from "./text.js";

/** Action id of the *Fix the path* button; its value names what to re-trace and plan (JSON). */
export const REPAIR_PATH_ACTION = "path:repair";

/** What the button carries: the subject is traced and planned afresh when clicked. */
export type RepairButtonValue = { readonly ns: string } | { readonly hosts: readonly string[] };

type Hop = TracedPath["hops"][number];

/** ELB DNS names as the load balancer's name: what a person recognises (the whole name is in the CLI). */
function shortLabel(label: string): string {
  return label.replace(
    /(?:dualstack\.)?(?:internal-)?([a-z0-9-]+)-[0-9a-f]+\.[a-z0-9-]+\.elb\.(?:[a-z0-9-]+\.)?amazonaws\.com(?:\.cn)?\.?/gi,
    "$1",
  );
}

/** The first link of a broken path that is not as it should be: what the hostname's line names. */
function brokenHop(p: TracedPath): Hop | undefined {
  return p.hops.find((h) => h.verdict === "stale" || h.verdict === "mismatched");
}

/** What a person does about a hostname: the groups of the card, in the order they are acted on. */
type Group = "repaired" | "choose" | "owner-back" | "no-owner" | "unknown" | "intact";

function groupOf(p: TracedPath, repaired: ReadonlySet<string>): Group {
  if (p.verdict === "ok") return "intact";
  if (repaired.has(hostKey(p.hostname))) return "repaired";
  if (p.verdict === "unknown") return "unknown";
  const h = brokenHop(p);
  if (h?.candidates !== undefined) return "choose";
  if (h?.oldOwner !== undefined) return "owner-back";
  return "no-owner";
}

function hostKey(h: string): string {
  return h.replace(/\.$/, "").toLowerCase();
}

/** One line per hostname: its broken link, and what it would become when that is known. */
function hostLine(p: TracedPath, group: Group): string {
  const h = brokenHop(p) ?? p.hops.find((x) => x.verdict === "unknown");
  // A record's label starts with the hostname the line already names.
  const label =
    h !== undefined
      ? shortLabel(h.label).replace(/^(\S+) (\S+)/, (m, type: string, name: string) =>
          hostKey(name) === hostKey(p.hostname) ? `${type} record` : m,
        )
      : "";
  const state =
    h?.verdict === "stale" ? " (gone)" : h?.verdict === "mismatched" ? " (does not serve it)" : "";
  const link = h !== undefined ? ` — ${esc(label)}${state}` : "";
  // The controller re-creates a stack under the same name: the new one differs in its DNS name only.
  const again = h?.replacement !== undefined && label.includes(h.replacement.loadBalancer);
  const to =
    group === "repaired" && h?.replacement !== undefined
      ? ` ⇒ ${esc(h.replacement.loadBalancer)}${again ? " as re-created (a new DNS name)" : ""}`
      : group === "owner-back" && h?.oldOwner !== undefined
        ? ` (was ${esc(h.oldOwner.label)}'s)`
        : group === "choose" && h?.candidates !== undefined
          ? ` (${plural(h.candidates.length, "candidate", "candidates")}: ${h.candidates.map((c) => esc(shortLabel(c))).join(", ")})`
          : group === "unknown" && h !== undefined
            ? `: _${esc(h.why)}_`
            : "";
  return `• *${esc(p.hostname)}*${link}${to}`;
}

/** Each group's heading: what it means and what a person does, said once for all its hostnames. */
function groupHeading(group: Group, n: number, t: TraceResult): string {
  const subject = "namespace" in t.subject ? ` ${t.subject.namespace}` : "";
  switch (group) {
    case "repaired":
      return `:wrench: *Repaired by Fix the path* (${String(n)}) — the plan below; a second person approves it.`;
    case "choose":
      return `:large_orange_circle: *Several load balancers could serve it* (${String(n)}) — name one: ${command(`repoint <hostname> --to <load balancer> --reason "…"`)}`;
    case "owner-back":
      return `:hourglass_flowing_sand: *Waiting for its owner to come back* (${String(n)}) — its load balancer returns when the owner is re-created (re-sync the Argo CD Application that owns it); then ${command(`trace ns${subject}`.trim())} again.`;
    case "no-owner":
      if ("namespace" in t.subject && t.ownersGone)
        return `:hourglass_flowing_sand: *Waiting for namespace ${esc(t.subject.namespace)}'s load balancers to come back* (${String(n)}) — nothing in it owns one now: re-create its Ingresses and Services (e.g. re-sync the Argo CD Application that owns them); once the controller has built the new load balancers, the repair can be planned.`;
      return `:red_circle: *No owner known* (${String(n)}) — the load balancer it names is gone and nothing establishes whose it was (a similar name is not evidence): name the target with ${command(`repoint <hostname> --to <load balancer> --reason "…"`)}.`;
    case "unknown":
      return `:white_circle: *Not checked* (${String(n)}) — a read failed (below).`;
    case "intact":
      return `:large_green_circle: *Intact* (${String(n)})`;
  }
}

const GROUPS: readonly Group[] = ["repaired", "choose", "owner-back", "no-owner", "unknown", "intact"];

/** The repair plan as exact calls with its *Fix the path* button, or how to ask once a replacement exists. */
function repairBlocks(t: TraceResult, repair: RepointPlan, broken: boolean): KnownBlock[] {
  const out: KnownBlock[] = [];
  if (repair.action) {
    const plan = repointPlanLines(repair.action);
    // The exact calls whole: a plan too long for one section continues in the next, by line.
    out.push(
      ...sections(
        `:wrench: *Repair plan* — ${plural(repair.action.steps.length, "change", "changes")}, applied only after a second person approves:\n\`\`\`\n${esc(plan.join("\n")).replace(/`/g, "ˋ")}\n\`\`\``,
      ),
    );
    const value: RepairButtonValue =
      "namespace" in t.subject ? { ns: t.subject.namespace } : { hosts: t.subject.hostnames };
    out.push({
      type: "actions",
      block_id: "path-repair",
      elements: [
        {
          type: "button",
          action_id: REPAIR_PATH_ACTION,
          text: { type: "plain_text", text: "Fix the path" },
          style: "primary",
          value: JSON.stringify(value).slice(0, 2000),
        },
      ],
    });
  }
  if (!repair.action && repair.refused.length === 0 && broken) {
    out.push({
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: `Nothing can be repointed yet. Once a replacement exists: ${command(repointRequestCommand(t.subject))}`,
        },
      ],
    });
  }
  return out;
}

/**
 * A traffic-path card grouped by what a person does: hostnames *Fix the path* repairs, those waiting
 * for their owner to come back, those whose owner nobody knows (name a target), those not checked,
 * and the intact ones — one line per hostname, each explanation once. The whole trace (every hop and
 * why) is the terminal's and `--json`'s.
 */
export function renderTraceBlocks(t: TraceResult, repair?: RepointPlan): SlackMessage {
  const broken = t.paths.filter((p) => p.verdict === "stale" || p.verdict === "mismatched");
  const headline = traceHeadline(t, broken.length);
  const blocks: KnownBlock[] = [
    // A refused request is the answer: it comes before the trace it was checked against.
    ...(repair !== undefined && repair.refused.length > 0
      ? [
          {
            type: "section" as const,
            text: {
              type: "mrkdwn" as const,
              text: clip(`:no_entry: *Refused:* ${repair.refused.map(esc).join("\n")}`),
            },
          },
        ]
      : []),
    {
      type: "section",
      text: {
        type: "mrkdwn",
        text: clip(`${broken.length > 0 ? ":red_circle:" : ":large_green_circle:"} *${esc(headline)}*`),
      },
    },
  ];
  const shown = t.paths.slice(0, 60);
  const lines = groupedLines(t, shown, new Set((repair?.action?.hostnames ?? []).map(hostKey)));
  if (lines.length > 0) blocks.push(...sections(lines.join("\n")));
  const probes = probesBlock(t);
  if (probes !== undefined) blocks.push(probes);
  if (repair !== undefined) blocks.push(...repairBlocks(t, repair, broken.length > 0));
  if (t.paths.length > shown.length) {
    blocks.push({
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: `…and ${String(t.paths.length - shown.length)} more paths (use the CLI with --json).`,
        },
      ],
    });
  }
  const partial = partialBlock(t);
  if (partial !== undefined) blocks.push(partial);
  return { text: clip(esc(headline), SlackLimit.Fallback), blocks: blocks.slice(0, 50) };
}

/** The card's first line (unescaped): no path at all, every path intact, or how many are broken. */
function traceHeadline(t: TraceResult, broken: number): string {
  const subject =
    "namespace" in t.subject ? `namespace ${t.subject.namespace}` : t.subject.hostnames.join(", ");
  return t.paths.length === 0
    ? `No hostname or distribution reaches ${subject}.`
    : broken === 0
      ? `Traffic path of ${subject} is intact${t.paths.some((p) => p.verdict === "unknown") ? " (some links unknown)" : ""}.`
      : `Traffic path of ${subject} is broken${t.paths.length > 1 ? `: ${String(broken)} of ${plural(t.paths.length, "hostname", "hostnames")}` : ""}.`;
}

/**
 * The `shown` hostnames by group, each group's heading once and then its hostnames (`repaired`: those
 * *Fix the path* repairs), followed by the first lints, each said once however many links share it.
 */
function groupedLines(t: TraceResult, shown: readonly TracedPath[], repaired: ReadonlySet<string>): string[] {
  const lines: string[] = [];
  for (const group of GROUPS) {
    const members = shown.filter((p) => groupOf(p, repaired) === group);
    if (members.length === 0) continue;
    lines.push(groupHeading(group, members.length, t));
    lines.push(
      group === "intact"
        ? members.map((p) => esc(p.hostname)).join(", ")
        : members.map((p) => hostLine(p, group)).join("\n"),
    );
  }
  // A lint said once, however many hostnames share the link it is about.
  const lints = [
    ...new Set(shown.flatMap((p) => p.hops.flatMap((h) => (h.warning !== undefined ? [h.warning] : [])))),
  ];
  for (const w of lints.slice(0, 3)) lines.push(`:warning: ${esc(w)}`);
  return lines;
}

/** What the hostnames answered when probed just now (DNS and HTTP), when they were probed. */
function probesBlock(t: TraceResult): KnownBlock | undefined {
  if (!t.probes || t.probes.length === 0) return undefined;
  const probed = t.probes.map(
    (p) =>
      `*${esc(p.hostname)}* — DNS ${esc(p.dns)}; ${p.http.map((h) => `${h.ok ? ":white_check_mark:" : ":x:"} \`${esc(new URL(h.url).pathname)}\` ${esc(h.result)}`).join(", ")}`,
  );
  return {
    type: "section",
    text: { type: "mrkdwn", text: clip(`:satellite_antenna: *Probed now*\n${probed.join("\n")}`) },
  };
}

/**
 * Reads that failed make the card partial; a note is not a failure. That the namespace owns nothing
 * is said by the group it explains, so its note is left out. None when there is nothing to say.
 */
function partialBlock(t: TraceResult): KnownBlock | undefined {
  const failed = t.warnings;
  const notes = t.ownersGone ? [] : t.notes;
  if (failed.length === 0 && notes.length === 0) return undefined;
  return {
    type: "context",
    elements: [
      {
        type: "mrkdwn",
        text: clip(
          [
            ...(failed.length > 0 ? [`:grey_question: Partial — ${failed.map(esc).join("; ")}`] : []),
            ...notes.map((n) => `:information_source: ${esc(n)}`),
          ].join("\n"),
        ),
      },
    ],
  };
}

/**
 * The card with its *Fix the path* taken off and why in its place: the button can do nothing more
 * (nothing left to repair, or the repair asked from it was made). `blocks` are the card as posted (or
 * as Slack sent them back with the click): every other block is kept as it was.
 */
function withoutRepairButton(blocks: readonly unknown[], note: string): SlackMessage {
  const kept = (blocks as KnownBlock[]).filter((b) => !isRepairButton(b));
  const first = kept[0];
  const headline =
    first?.type === "section" && first.text?.type === "mrkdwn" ? first.text.text : "Traffic path";
  return {
    text: clip(headline.replace(/[*_]|:[a-z_]+: /g, ""), SlackLimit.Fallback),
    blocks: [...kept.slice(0, 49), { type: "context", elements: [{ type: "mrkdwn", text: clip(note) }] }],
  };
}

function isRepairButton(block: KnownBlock): boolean {
  return block.type === "actions" && JSON.stringify(block.elements).includes(`"${REPAIR_PATH_ACTION}"`);
}

/** Whether a card (as posted, or as Slack sent it back) still offers *Fix the path*. */
export function hasRepairButton(blocks: readonly unknown[]): boolean {
  return (blocks as KnownBlock[]).some(isRepairButton);
}

/** The card after *Fix the path* found nothing to repair (checked afresh by `userId` at `at`). */
export function renderTraceNothingToRepair(
  blocks: readonly unknown[],
  why: string,
  userId: string,
  at: Date,
): SlackMessage {
  return withoutRepairButton(
    blocks,
    `:information_source: ${esc(why)} (checked again by ${mention(userId)} ${slackDate(at.toISOString())}; this card shows the path as it was traced)`,
  );
}

/**
 * A traffic-path card once the repair asked from it was made: the repaired state first, from the
 * signed request alone (what it changed, who asked and approved, when); the checks that follow are in
 * the request's thread. Nothing of the card as posted is kept, so no stored words can reach it.
 */
export function renderPathRepaired(request: ApprovalRequest, at: Date): SlackMessage {
  const what = describeAction(request.action);
  const approvers = approverIds(request);
  const by = `asked by ${mention(request.requester.userId)}${approvers.length > 0 ? `, approved by ${approvers.map(mention).join(", ")}` : ""}`;
  const where =
    request.message !== undefined ? `; its thread follows CloudFront, Route 53 and the hostnames` : "";
  return {
    text: clip(`Repaired: ${what}.`, SlackLimit.Fallback),
    blocks: [
      {
        type: "section",
        text: {
          type: "mrkdwn",
          text: clip(
            `:white_check_mark: *Repaired* — the ${esc(what)} (${slackDate(at.toISOString())}, request \`${esc(request.id)}\`, ${by})${where}.`,
          ),
        },
      },
      {
        type: "context",
        elements: [
          { type: "mrkdwn", text: "This card showed the path before the repair; `trace` shows it now." },
        ],
      },
    ],
  };
}
