/**
 * The timeline in Slack: a short card (how many events, the draft's first lines in a code block).
 * The fake Slack the tests run against has no `files.uploadV2`, so the draft is not uploaded as a
 * file; the card says how to get the whole of it. The Markdown is escaped as a whole inside the code
 * block, so even the bot's own mentions show as text there and nothing in it can notify anyone.
 */
import type { KnownBlock } from "@slack/types";
import type { SlackMessage } from "../slack/blocks/index.js";
import { clip, esc, SlackLimit } from "../slack/blocks/text.js";

/** Room for the draft inside one section (3,000 characters with the fences). */
const DRAFT_BUDGET = SlackLimit.Section - 100;

export function renderTimelineBlocks(markdown: string, entries: number): SlackMessage {
  const title = "Post-mortem draft";
  const counts = `${String(entries)} audit ${entries === 1 ? "entry" : "entries"}`;
  const escaped = esc(markdown.replace(/```/g, "ˋˋˋ"));
  const body = clip(escaped, DRAFT_BUDGET);
  const clipped = body.length < escaped.length;
  const blocks: KnownBlock[] = [
    { type: "header", text: { type: "plain_text", text: `${title} (${counts})` } },
    { type: "section", text: { type: "mrkdwn", text: `\`\`\`\n${body}\n\`\`\`` } },
    {
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: clipped
            ? "The draft is longer than one Slack message; the whole of it: `unstuck timeline` in a terminal (same options), or `--json`."
            : "Copy it into the post-mortem and fill in the _to be written_ prompts.",
        },
      ],
    },
  ];
  return { text: clip(`${title}: ${counts}`, SlackLimit.Fallback), blocks };
}
