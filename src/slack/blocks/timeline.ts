/**
 * The timeline in Slack: a short card (how many events, the draft's first lines in a code block) and
 * the whole draft uploaded as a Markdown file, `postmortem-<date>.md`, into the card's thread with
 * `files.uploadV2` (`src/slack/timeline.ts`). When the upload fails (most often the app lacks the `files:write`
 * scope: `missing_scope`) the card is repainted to say why and how to get the whole draft, so the
 * card alone still stands. The Markdown is escaped as a whole inside the code block, so even the bot's
 * own mentions show as text there and nothing in it can notify anyone; the file is plain text Slack
 * does not render as markup.
 */
import type { KnownBlock } from "@slack/types";
import type { SlackMessage } from "./message.js";
import { clip, esc, safe, SlackLimit } from "./text.js";

/** Room for the draft inside one section (3,000 characters with the fences). */
const DRAFT_BUDGET = SlackLimit.Section - 100;

export interface TimelineCardOptions {
  /** The file the whole draft is uploaded as, in the card's thread. */
  readonly filename?: string;
  /** The upload failed: why, in words (the card then says how to get the whole draft instead). */
  readonly uploadFailure?: string;
}

/** `postmortem-2026-02-12.md`; the day is checked, so nothing foreign reaches a file name. */
export function timelineFilename(date: string): string {
  return /^\d{4}-\d{2}-\d{2}$/.test(date) ? `postmortem-${date}.md` : "postmortem.md";
}

export function renderTimelineBlocks(
  markdown: string,
  entries: number,
  options: TimelineCardOptions = {},
): SlackMessage {
  const title = "Post-mortem draft";
  const counts = `${String(entries)} audit ${entries === 1 ? "entry" : "entries"}`;
  const escaped = esc(markdown.replace(/```/g, "ˋˋˋ"));
  const body = clip(escaped, DRAFT_BUDGET);
  const clipped = body.length < escaped.length;
  const whole = "the whole of it: `unstuck timeline` in a terminal (same options), or `--json`";
  let note: string;
  if (options.uploadFailure !== undefined) {
    note = `:warning: I could not attach the draft as a file (${safe(options.uploadFailure, 300)})${clipped ? `; this card shows its start, ${whole}` : ""}.`;
  } else if (options.filename !== undefined) {
    note = `The whole draft is in this thread as \`${safe(options.filename, 60)}\`: download it, fill in the _to be written_ prompts.`;
  } else {
    note = clipped
      ? `The draft is longer than one Slack message; ${whole}.`
      : "Copy it into the post-mortem and fill in the _to be written_ prompts.";
  }
  const blocks: KnownBlock[] = [
    { type: "header", text: { type: "plain_text", text: `${title} (${counts})` } },
    { type: "section", text: { type: "mrkdwn", text: `\`\`\`\n${body}\n\`\`\`` } },
    { type: "context", elements: [{ type: "mrkdwn", text: note }] },
  ];
  return { text: clip(`${title}: ${counts}`, SlackLimit.Fallback), blocks };
}
