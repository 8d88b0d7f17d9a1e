/**
 * Block Kit for approval requests. The request message is re-rendered from the stored request on every
 * transition (`chat.update`), so it always shows the current state: a reader who scrolls back to it at 03:12
 * sees whether it is still waiting and how it ended; who decided and what happened are in its thread.
 * What each kind of action says is its entry in the action-kind table (`src/requests/kinds/`).
 */
import type { ActionsBlock, Button, KnownBlock, View } from "@slack/types";
import type { AuditEntry, StoredAuditEntry } from "../../audit/entry.js";
import type { ApprovalRequest, RequestState } from "../../requests/model.js";
import { actionKind, describeAction, describeChange } from "../../requests/action-kinds.js";
import type { SlackMessage } from "./message.js";
import { outcomeSentence } from "./outcome.js";
import { clip, code, mention, plain, safe, sections, SlackLimit } from "./text.js";

/** Action ids of the request message's buttons; each button's `value` is the request id and nothing else. */
export const ApprovalActionId = {
  Approve: "approval:approve",
  Deny: "approval:deny",
  Cancel: "approval:cancel",
  Details: "approval:details",
} as const;
export type ApprovalActionId = (typeof ApprovalActionId)[keyof typeof ApprovalActionId];

const STATE_LINE: Record<RequestState, string> = {
  PENDING: ":hourglass_flowing_sand: *PENDING* — waiting for approval; nothing has been changed yet.",
  APPROVED: ":white_check_mark: *APPROVED* — queued; the executor re-checks the object before it acts.",
  EXECUTING: ":gear: *EXECUTING* — the change is being applied now.",
  DONE: ":large_green_circle: *DONE* — the change was applied.",
  FAILED: ":x: *FAILED* — the change could not be applied.",
  DENIED: ":no_entry: *DENIED* — nothing was changed.",
  EXPIRED: ":alarm_clock: *EXPIRED* — not approved in time; nothing was changed.",
  CANCELLED: ":heavy_multiplication_x: *CANCELLED* by the requester — nothing was changed.",
  STALE: ":warning: *STALE* — the object changed after the request, so the approved change was not applied.",
  TAMPERED:
    ":rotating_light: *TAMPERED* — this approval record failed verification, so nothing was changed. Someone may have written to the bot's Redis directly: treat it as a security incident.",
};

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$/;

/** Slack renders `<!date^…>` in each reader's own time zone; the ISO text is the fallback. */
function when(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return safe(iso, 40);
  const seconds = Math.floor(ms / 1000);
  // The fallback is the stored string only when it is plainly ISO: a parseable date may carry markup.
  const fallback = ISO.test(iso) ? iso : new Date(ms).toISOString();
  return `<!date^${seconds}^{date_short_pretty} {time_secs}|${fallback}>`;
}

/** "in 29 min" / "3 min ago": the relative part readers actually care about during an incident. */
function relative(iso: string, now: Date): string {
  const ms = Date.parse(iso) - now.getTime();
  if (Number.isNaN(ms)) return "";
  const minutes = Math.round(Math.abs(ms) / 60_000);
  const span =
    minutes < 1 ? "less than a minute" : minutes < 120 ? `${minutes} min` : `${Math.round(minutes / 60)} h`;
  return ms >= 0 ? `in ${span}` : `${span} ago`;
}

/** A channel link the bot writes for a channel id Slack returned; anything else stays text. */
function channelRef(channel: string): string {
  return /^[CGD][A-Z0-9]{2,20}$/.test(channel) ? `<#${channel}>` : safe(channel, 40);
}

function approvals(req: ApprovalRequest): number {
  return req.votes.filter((v) => v.decision === "approve").length;
}

function button(
  actionId: ApprovalActionId,
  text: string,
  requestId: string,
  style: "primary" | "danger" | undefined,
  confirm: { title: string; text: string; confirm: string } | undefined,
): Button {
  return {
    type: "button",
    action_id: actionId,
    text: { type: "plain_text", text },
    value: requestId,
    ...(style !== undefined ? { style } : {}),
    ...(confirm !== undefined
      ? {
          confirm: {
            title: { type: "plain_text" as const, text: confirm.title },
            text: { type: "mrkdwn" as const, text: clip(confirm.text, 290) },
            confirm: { type: "plain_text" as const, text: confirm.confirm },
            deny: { type: "plain_text" as const, text: "Back" },
            ...(style === "danger" ? { style: "danger" as const } : {}),
          },
        }
      : {}),
  };
}

function buttons(req: ApprovalRequest): ActionsBlock {
  const target = actionKind(req.action).card.holds(req.action);
  return {
    type: "actions",
    block_id: `approval-actions:${req.id}`,
    elements: [
      button(ApprovalActionId.Approve, "Approve", req.id, "primary", {
        title: "Approve this change?",
        text: `You approve: *${safe(describeChange(req.action))}*. It runs only if ${target} is still exactly as it was when requested.`,
        confirm: "Approve",
      }),
      // Deny opens a form (confirming it, with an optional reason): no dialog before it.
      button(ApprovalActionId.Deny, "Deny", req.id, "danger", undefined),
      button(ApprovalActionId.Cancel, "Cancel", req.id, undefined, {
        title: "Cancel your request?",
        text: "Only the requester can cancel. Nothing will change.",
        confirm: "Cancel request",
      }),
      detailsButton(req),
    ],
  };
}

/** *Details*: the evidence, the plan's steps and the exact change, answered to the one who clicks. */
function detailsButton(req: ApprovalRequest): Button {
  return {
    type: "button",
    action_id: ApprovalActionId.Details,
    text: { type: "plain_text", text: "Details" },
    value: req.id,
  };
}

/** An ended request keeps only *Details*: what was changed, exactly, stays one click away. */
function detailsOnly(req: ApprovalRequest): ActionsBlock {
  return { type: "actions", block_id: `approval-actions:${req.id}`, elements: [detailsButton(req)] };
}

/** Who voted how, in order; the requester never appears here (they cannot vote). */
function votesText(req: ApprovalRequest): string {
  const head = `*Votes* (${approvals(req)}/${req.approvalsRequired} approval${req.approvalsRequired === 1 ? "" : "s"} needed)`;
  if (req.votes.length === 0) return `${head}\n_no votes yet_`;
  const lines = req.votes.map(
    (v) =>
      `${v.decision === "approve" ? ":white_check_mark:" : ":no_entry:"} ${mention(v.voter.userId)} ${v.decision === "approve" ? "approved" : "denied"} ${when(v.at)}`,
  );
  return `${head}\n${lines.join("\n")}`;
}

/** How the request ended, in words (Details; the card says the state, the thread what happened). */
function outcomeText(req: ApprovalRequest): string | undefined {
  if (req.result) {
    const said = outcomeSentence(req.result.outcome === "tampered", req.result.message);
    return `*Outcome* (${when(req.result.at)}): ${safe(said, 1000)}`;
  }
  return undefined;
}

/**
 * The requester's side: what they confirmed in the form (their statements, in their name — never the
 * bot's check marks), their reason, and the evidence the bot attached.
 */
function requesterText(req: ApprovalRequest): string {
  const who = mention(req.requester.userId);
  const lines: string[] = [];
  if (req.statements !== undefined && req.statements.length > 0) {
    lines.push(`${who} confirms:`);
    for (const st of req.statements) lines.push(`☑️ ${safe(st.text, 200)}`);
    lines.push(`and says why:\n> ${safe(req.reason, 1000).replace(/\n/g, "\n> ")}`);
  } else {
    // A kind whose form asks for statements says when a request came without them (the command).
    lines.push(
      `${who} says why${actionKind(req.action).card.withoutForm}:\n> ${safe(req.reason, 1000).replace(/\n/g, "\n> ")}`,
    );
  }
  lines.push(
    "*Evidence* (attached by the bot from the diagnosis):",
    req.evidence.length === 0
      ? "_no evidence attached; check the diagnosis before approving_"
      : wholeItems(req.evidence, 20),
  );
  return lines.join("\n");
}

/** Every item whole, one per line; a list longer than `max` keeps its first items and counts the rest. */
function wholeItems(items: readonly string[], max: number, numbered = false): string {
  const shown = items
    .slice(0, max)
    .map((item, i) => `${numbered ? `${i + 1}.` : "•"} ${safe(item.replace(/\s*:\s*$/, ""), 2000)}`);
  if (items.length > max) shown.push(`…and ${String(items.length - max)} more`);
  return shown.join("\n");
}

/**
 * Everything an approver may want beyond the card, in the order they weigh it: the risk and the
 * clean-up plan, what the requester confirmed, the evidence, the exact change and what it is bound to,
 * the votes. Answered to the one who clicks *Details*, so the thread says each thing once.
 */
export function renderApprovalDetails(req: ApprovalRequest): SlackMessage {
  const riskAndPlan = [
    actionKind(req.action).card.risk(req.action),
    "*Clean-up plan*:",
    req.cleanupPlan.length === 0 ? "_no clean-up plan attached_" : wholeItems(req.cleanupPlan, 20, true),
  ].join("\n");
  const blocks: KnownBlock[] = [
    {
      type: "header",
      text: { type: "plain_text", text: plain(`Details: ${describeChange(req.action)}`) },
    },
    ...(outcomeText(req) !== undefined ? sections(outcomeText(req) ?? "") : []),
    ...sections(riskAndPlan),
    ...sections(requesterText(req)),
    ...sections(actionKind(req.action).card.exact(req.action, req.id)),
    ...(req.result?.finalizersAfter !== undefined || req.result?.resourceVersionAfter !== undefined
      ? sections(
          [
            ...(req.result.finalizersAfter !== undefined
              ? [
                  `*After*: finalizers ${req.result.finalizersAfter.length === 0 ? "none" : req.result.finalizersAfter.map((f) => `\`${code(f)}\``).join(", ")}`,
                ]
              : []),
            ...(req.result.resourceVersionAfter !== undefined
              ? [`resourceVersion now \`${code(req.result.resourceVersionAfter, 40)}\``]
              : []),
          ].join(", "),
        )
      : []),
    { type: "section", text: { type: "mrkdwn", text: clip(votesText(req)) } },
    {
      type: "context",
      elements: [
        { type: "mrkdwn", text: `request \`${code(req.id, 64)}\` · requested ${when(req.createdAt)}` },
      ],
    },
  ];
  return {
    text: clip(`Details of the request to ${safe(describeChange(req.action), 600)}`, SlackLimit.Fallback),
    blocks: blocks.slice(0, 50),
  };
}

/** A text in one line of the card: whole, its line breaks as spaces. */
function oneLine(s: string, max = 1000): string {
  return safe(s.replace(/\s*\n\s*/g, " ").trim(), max);
}

/** States whose thread holds what happened (the outcome, or who denied and why). */
const TOLD_IN_THREAD: ReadonlySet<RequestState> = new Set(["DONE", "FAILED", "STALE", "DENIED"]);

/**
 * The state in one line, with when it ended; what happened is said once, in the thread's reply
 * (the outcome, who denied and why), never again on the card.
 */
function stateLine(req: ApprovalRequest): string {
  const line = STATE_LINE[req.state];
  const told = TOLD_IN_THREAD.has(req.state) ? " What happened is in the thread." : "";
  if (req.state === "EXPIRED")
    return `${line} ${String(approvals(req))}/${String(req.approvalsRequired)} approvals by ${when(req.expiresAt)}; ask again if it is still needed.`;
  // When it ended, right after the state: ":x: *FAILED* 07:11 UTC — …".
  const at = req.result !== undefined ? `* ${when(req.result.at)} — ` : "* — ";
  return `${line.replace("* — ", at)}${told}`;
}

/**
 * The request message: what an approver decides on, in five lines above the buttons — what changes,
 * why, what it leaves behind, who asked and why — under its state. Evidence, the plan's steps, the
 * exact patch and what it is bound to are behind *Details* (and whole in the terminal and `--json`).
 */
export function renderApprovalRequest(req: ApprovalRequest, now: Date): SlackMessage {
  const a = req.action;
  const pending = req.state === "PENDING";
  const overdue = pending && Date.parse(req.expiresAt) <= now.getTime();
  const words = actionKind(a).card;
  const risks = words.risks(a);
  const where = req.cluster !== undefined ? ` in cluster \`${code(req.cluster, 100)}\`` : "";
  const more = req.cleanupPlan.length - 1;
  const lines = [
    stateLine(req),
    `*Changes*: ${words.changes(a)}${where}`,
    `*Why*: ${words.why(a, req.evidence[0] !== undefined ? oneLine(req.evidence[0]) : undefined)}`,
    `*Leaves behind*: ${words.leaves(
      a,
      req.cleanupPlan[0] !== undefined
        ? `${oneLine(req.cleanupPlan[0])}${more > 0 ? ` (and ${String(more)} more step${more === 1 ? "" : "s"} in Details)` : ""}`
        : undefined,
    )}`,
    ...risks
      .slice(0, 1)
      .map(
        (r) =>
          `:warning: *Risk*: ${oneLine(r, 600)}${risks.length > 1 ? ` (and ${String(risks.length - 1)} more in Details)` : ""}`,
      ),
    `*Asked by* ${mention(req.requester.userId)}: “${oneLine(req.reason)}”`,
  ];
  const expiry = pending
    ? overdue
      ? `:alarm_clock: expiry passed ${when(req.expiresAt)}; votes are closed`
      : `expires ${when(req.expiresAt)} (${relative(req.expiresAt, now)})`
    : `asked ${when(req.createdAt)}`;
  const blocks: KnownBlock[] = [
    {
      type: "header",
      text: {
        type: "plain_text",
        text: plain(`${req.state}: ${words.header(a)}`),
      },
    },
    ...sections(lines.join("\n")),
    {
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: clip(
            [
              expiry,
              `${String(approvals(req))}/${String(req.approvalsRequired)} approvals`,
              `request \`${code(req.id, 64)}\``,
            ].join("  ·  "),
          ),
        },
      ],
    },
  ];
  // A record that failed verification offers nothing to click: its contents are not to be trusted.
  if (pending && !overdue) blocks.push(buttons(req));
  else if (req.state !== "TAMPERED") blocks.push(detailsOnly(req));
  const text =
    `[${req.state}] ${mention(req.requester.userId)} asks to ${safe(describeChange(req.action), 600)}` +
    (req.result
      ? ` — ${safe(outcomeSentence(req.result.outcome === "tampered", req.result.message), 600)}`
      : "");
  return { text: clip(text, SlackLimit.Fallback), blocks };
}

/**
 * The request message once its record is gone (expired and cleaned up, or lost with Redis): no
 * buttons, nothing that could be mistaken for a live request, and what to do instead.
 */
export function renderLostRequest(requestId: string): SlackMessage {
  const text =
    ":ghost: *EXPIRED / LOST* — this approval request no longer exists (it expired and was cleaned up, " +
    "or its record was lost). Nothing was changed by it. If the change is still needed, request it again " +
    "(`/unstuck finalize …`) after re-checking the diagnosis.";
  return {
    text: `[EXPIRED / LOST] approval request ${safe(requestId, 64)}: request it again if still needed`,
    blocks: [
      { type: "header", text: { type: "plain_text", text: "EXPIRED / LOST: approval request" } },
      { type: "section", text: { type: "mrkdwn", text } },
      {
        type: "context",
        elements: [{ type: "mrkdwn", text: `request \`${code(requestId, 64)}\`` }],
      },
    ],
  };
}

/** `/unstuck approvals`: the open requests, soonest expiry first (as the workflow lists them). */
export function renderApprovalList(reqs: readonly ApprovalRequest[], now: Date): SlackMessage {
  if (reqs.length === 0) {
    const text = "No approval requests are waiting.";
    return {
      text,
      blocks: [{ type: "section", text: { type: "mrkdwn", text: `:white_check_mark: ${text}` } }],
    };
  }
  // Slack allows 50 blocks per message; leave room for the header and the "more" note.
  const shown = reqs.slice(0, 40);
  const blocks: KnownBlock[] = [
    { type: "header", text: { type: "plain_text", text: `Approval requests (${reqs.length})` } },
  ];
  for (const req of shown) {
    const where = req.message ? ` · in ${channelRef(req.message.channel)}` : "";
    blocks.push({
      type: "section",
      text: {
        type: "mrkdwn",
        text: clip(
          `*${req.state}* · ${safe(describeChange(req.action), 600)}\n` +
            `by ${mention(req.requester.userId)} · ${approvals(req)}/${req.approvalsRequired} approvals · ` +
            `expires ${when(req.expiresAt)} (${relative(req.expiresAt, now)}) · \`${code(req.id, 64)}\`${where}`,
        ),
      },
    });
  }
  if (reqs.length > shown.length) {
    blocks.push({
      type: "context",
      elements: [{ type: "mrkdwn", text: `…and ${reqs.length - shown.length} more.` }],
    });
  }
  const text = `${reqs.length} approval request${reqs.length === 1 ? "" : "s"}: ${shown
    .slice(0, 5)
    .map((r) => `${r.state} ${safe(describeAction(r.action))}`)
    .join("; ")}`;
  return { text: clip(text, SlackLimit.Fallback), blocks };
}

/** `/unstuck audit`: entries as the audit log formats them, newest first, packed into few sections. */
export function renderAuditEntries(entries: readonly StoredAuditEntry[]): SlackMessage {
  if (entries.length === 0) {
    const text = "The audit log has no entries.";
    return { text, blocks: [{ type: "section", text: { type: "mrkdwn", text } }] };
  }
  const blocks: KnownBlock[] = [
    { type: "header", text: { type: "plain_text", text: `Audit log (${entries.length} entries)` } },
  ];
  let chunk: string[] = [];
  let size = 0;
  let omitted = 0;
  const flush = (): void => {
    if (chunk.length === 0) return;
    blocks.push({ type: "section", text: { type: "mrkdwn", text: chunk.join("\n") } });
    chunk = [];
    size = 0;
  };
  for (const entry of entries) {
    const line = clip(renderAuditLine(entry), 1000);
    if (size + line.length + 1 > 2900) flush();
    // 48 sections plus the header and the note stay under Slack's 50-block limit.
    if (blocks.length >= 48) {
      omitted += 1;
      continue;
    }
    chunk.push(line);
    size += line.length + 1;
  }
  flush();
  if (omitted > 0) {
    blocks.push({
      type: "context",
      elements: [{ type: "mrkdwn", text: `…${omitted} older entries not shown.` }],
    });
  }
  return { text: clip(`Audit log: ${entries.length} entries`, 3000), blocks };
}

/**
 * Like `formatAuditEntry`, but with a real mention and escaping that leaves the mention intact; also
 * the audit channel's line, so a `--reason "<!channel>"` reaches that channel as text.
 */
export function renderAuditLine(e: AuditEntry): string {
  const who = e.actor.kind === "user" ? mention(e.actor.userId) : `_${safe(e.actor.component, 40)}_`;
  const move = e.before || e.after ? ` (${safe(e.before ?? "—", 20)} → ${safe(e.after ?? "—", 20)})` : "";
  const said = e.result ? outcomeSentence(e.event === "execution.tampered", e.result) : "";
  const result = said ? `: ${safe(said, 500)}` : "";
  return `• ${when(e.at)} ${who} *${safe(e.event, 60)}* ${safe(e.target)} \`${code(e.requestId, 64)}\`${move}${result}`;
}

/** The deny form's callback id and its one (optional) field. */
export const DENY_SUBMIT_CALLBACK = "approval:deny-submit";
export const DENY_REASON_FIELD = "reason";

/** What the deny form carries back: the request and the channel of the message it was opened from. */
export interface DenyFormMetadata {
  readonly requestId: string;
  readonly channelId: string;
}

/**
 * The form *Deny* opens: it confirms the denial and asks why, optionally — the requester and the
 * thread see the reason, and the audit log keeps it with the signed vote.
 */
export function renderDenyForm(req: ApprovalRequest, channelId: string, maxReason: number): View {
  const metadata: DenyFormMetadata = { requestId: req.id, channelId };
  return {
    type: "modal",
    callback_id: DENY_SUBMIT_CALLBACK,
    private_metadata: JSON.stringify(metadata),
    title: { type: "plain_text", text: "Deny this request?" },
    submit: { type: "plain_text", text: "Deny" },
    close: { type: "plain_text", text: "Back" },
    blocks: [
      {
        type: "section",
        text: {
          type: "mrkdwn",
          text: clip(
            `You deny: *${safe(describeChange(req.action))}*, asked by ${mention(req.requester.userId)}. Nothing will change.`,
          ),
        },
      },
      {
        type: "input",
        block_id: DENY_REASON_FIELD,
        optional: true,
        label: { type: "plain_text", text: "Why? (optional)" },
        hint: {
          type: "plain_text",
          text: "Shown in the request's thread and kept in the audit log, so the requester knows what to change.",
        },
        element: {
          type: "plain_text_input",
          action_id: DENY_REASON_FIELD,
          multiline: true,
          max_length: maxReason,
        },
      },
    ],
  };
}
