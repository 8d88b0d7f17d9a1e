/** Slack card for a traffic-path trace: the first line says whether the path is healthy. */
import type { KnownBlock } from "@slack/types";
import type { RepointPlan } from "../../edge/repoint.js";
import { repointPlanLines } from "../../render/repoint-plan.js";
import { repointRequestCommand } from "../../render/trace-text.js";
import { plural } from "../../util/format.js";
import type { TraceResult } from "../../traffic/trace.js";
import type { SlackMessage } from "./message.js";
import { approverIds, describeAction, type ApprovalRequest } from "../../approvals/types.js";
import { slackDate } from "./diagnosis.js";
import { clip, command, esc, mention, sections, SlackLimit } from "./text.js";

const ICON = {
  ok: ":large_green_circle:",
  stale: ":red_circle:",
  mismatched: ":large_orange_circle:",
  unknown: ":white_circle:",
} as const;

/** Action id of the *Fix the path* button; its value names what to re-trace and plan (JSON). */
export const REPAIR_PATH_ACTION = "path:repair";

/** What the button carries: the subject is traced and planned afresh when clicked. */
export type RepairButtonValue = { readonly ns: string } | { readonly hosts: readonly string[] };

export function renderTraceBlocks(t: TraceResult, repair?: RepointPlan): SlackMessage {
  const subject =
    "namespace" in t.subject ? `namespace ${t.subject.namespace}` : t.subject.hostnames.join(", ");
  const broken = t.paths.filter((p) => p.verdict === "stale" || p.verdict === "mismatched");
  const headline =
    t.paths.length === 0
      ? `No hostname or distribution reaches ${subject}.`
      : broken.length === 0
        ? `Traffic path of ${subject} is intact${t.paths.some((p) => p.verdict === "unknown") ? " (some links unknown)" : ""}.`
        : `Traffic path of ${subject} is broken: ${broken.map((p) => p.hostname).join(", ")}.`;
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
  for (const p of t.paths.slice(0, 40)) {
    const lines = [`${ICON[p.verdict]} *${esc(p.hostname)}*`];
    let prev: (typeof p.hops)[number] | undefined;
    for (const h of p.hops) {
      const pad = "  ".repeat(h.depth);
      lines.push(`${pad}${ICON[h.verdict]} ${esc(h.label)} — _${esc(h.why)}_`);
      if (h.replacement)
        lines.push(
          `${pad}   → should be ${command(h.replacement.dnsName)}${h.replacement.owner !== undefined ? ` (${esc(h.replacement.owner)})` : ""}`,
        );
      if (h.candidates)
        lines.push(
          `${pad}   → ${plural(h.candidates.length, "load balancer", "load balancers")} of the same owner serve${h.candidates.length === 1 ? "s" : ""} it: ${h.candidates.map(esc).join("; ")}`,
        );
      // A record carries its load balancer's answer: said once, on the record.
      if (h.unresolved !== undefined && h.unresolved !== prev?.unresolved)
        lines.push(`${pad}   → _no replacement: ${esc(h.unresolved)}_`);
      prev = h;
      if (h.warning) lines.push(`${pad}   :warning: ${esc(h.warning)}`);
    }
    blocks.push({ type: "section", text: { type: "mrkdwn", text: clip(lines.join("\n")) } });
  }
  if (t.probes && t.probes.length > 0) {
    const lines = t.probes.map(
      (p) =>
        `*${esc(p.hostname)}* — DNS ${esc(p.dns)}; ${p.http.map((h) => `${h.ok ? ":white_check_mark:" : ":x:"} \`${esc(new URL(h.url).pathname)}\` ${esc(h.result)}`).join(", ")}`,
    );
    blocks.push({
      type: "section",
      text: { type: "mrkdwn", text: clip(`:satellite_antenna: *Probed now*\n${lines.join("\n")}`) },
    });
  }
  if (repair?.action) {
    const lines = repointPlanLines(repair.action);
    // The exact calls whole: a plan too long for one section continues in the next, by line.
    blocks.push(
      ...sections(
        `:wrench: *Repair plan* — ${plural(repair.action.steps.length, "change", "changes")}, applied only after a second person approves:\n\`\`\`\n${esc(lines.join("\n")).replace(/`/g, "ˋ")}\n\`\`\``,
      ),
    );
    const value: RepairButtonValue =
      "namespace" in t.subject ? { ns: t.subject.namespace } : { hosts: t.subject.hostnames };
    blocks.push({
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
  if (repair && !repair.action && repair.refused.length === 0 && broken.length > 0) {
    blocks.push({
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: `Nothing can be repointed yet. Once the controller has re-created the load balancers: ${command(repointRequestCommand(t.subject))}`,
        },
      ],
    });
  }
  if (repair && repair.questions.length > 0) {
    blocks.push({
      type: "section",
      text: {
        type: "mrkdwn",
        text: clip(
          `:raising_hand: *Needs a person* (not planned):\n${repair.questions.map((q) => `• ${esc(q)}`).join("\n")}`,
        ),
      },
    });
  }
  if (t.paths.length > 40) {
    blocks.push({
      type: "context",
      elements: [
        { type: "mrkdwn", text: `…and ${String(t.paths.length - 40)} more paths (use the CLI with --json).` },
      ],
    });
  }
  if (t.warnings.length > 0) {
    blocks.push({
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: clip(`:grey_question: Partial — could not read: ${t.warnings.map(esc).join("; ")}`),
        },
      ],
    });
  }
  return { text: clip(esc(headline), SlackLimit.Fallback), blocks: blocks.slice(0, 50) };
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
