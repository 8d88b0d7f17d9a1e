/**
 * Delivering a timeline in Slack: the card goes where the command was asked (the channel, or the thread
 * it was typed in), then the whole draft is uploaded into the card's thread as `postmortem-<date>.md`
 * with `files.uploadV2` (getUploadURLExternal → the bytes → completeUploadExternal). A failed upload
 * never loses the answer: the card is repainted to say why, and how to get the whole draft.
 */
import type { WebClient } from "@slack/web-api";
import type { CommandResult } from "../command-result.js";
import type { Logger } from "../log.js";
import type { SlackMessage } from "./blocks/message.js";
import { slackErrorCode } from "./slack-errors.js";
import { renderTimelineBlocks, timelineFilename } from "./blocks/timeline.js";

export type TimelineResult = Extract<CommandResult, { type: "timeline" }>;

/** The card as posted before the upload: it names the file the thread will hold. */
export function renderTimelineCard(result: TimelineResult): SlackMessage {
  return renderTimelineBlocks(result.markdown, result.entries, { filename: timelineFilename(result.date) });
}

export type UploadOutcome =
  | { readonly uploaded: true; readonly fileId?: string }
  | { readonly uploaded: false; readonly reason: string; readonly slackError?: string };

/** Why an upload failed, as what to do about it; Slack's own codes, never foreign text. */
export function uploadFailureReason(code: string | undefined): string {
  switch (code) {
    case "missing_scope":
      return "the app lacks the files:write scope; add it to the Slack app (deploy/slack-app-manifest*.yaml) and reinstall";
    case "not_in_channel":
    case "channel_not_found":
    case "invalid_channel":
      return "I am not a member of this channel; invite me with /invite @unstuck";
    case "file_uploads_disabled":
    case "file_uploads_except_images_disabled":
    case "file_type_not_allowed":
      return "this workspace does not allow the bot to upload this file";
    case undefined:
      return "the upload did not complete";
    default:
      return `Slack answered ${code}`;
  }
}

/**
 * Upload the draft into the thread of the posted card (`threadTs`: the card's own ts when it was posted
 * at the top of the channel, the thread's parent when it was posted in a thread). On failure the card
 * is repainted with the reason; a failed repaint is logged, never thrown.
 */
export async function attachTimelineFile(
  client: WebClient,
  result: TimelineResult,
  card: { readonly channel: string; readonly ts: string },
  threadTs: string,
  log: Logger,
): Promise<UploadOutcome> {
  const filename = timelineFilename(result.date);
  let outcome: UploadOutcome;
  try {
    const res = await client.files.uploadV2({
      channel_id: card.channel,
      thread_ts: threadTs,
      filename,
      title: `Post-mortem draft ${result.date}`,
      content: result.markdown,
      initial_comment: `Post-mortem draft (${String(result.entries)} audit ${result.entries === 1 ? "entry" : "entries"}): fill in the _to be written_ prompts before publishing.`,
    });
    // uploadV2 answers one completeUploadExternal response per destination, each listing its files.
    const completions = (res as { files?: { files?: { id?: string }[] }[] }).files;
    const fileId = completions?.[0]?.files?.[0]?.id;
    outcome = { uploaded: true, ...(fileId !== undefined ? { fileId } : {}) };
    log.info({ filename, ...(fileId !== undefined ? { fileId } : {}) }, "timeline draft uploaded");
  } catch (err) {
    const code = slackErrorCode(err);
    outcome = {
      uploaded: false,
      reason: uploadFailureReason(code),
      ...(code !== undefined ? { slackError: code } : {}),
    };
    log.warn({ slackError: code ?? "unknown" }, "could not upload the timeline draft; the card stands alone");
    const repainted = renderTimelineBlocks(result.markdown, result.entries, {
      uploadFailure: outcome.reason,
    });
    try {
      await client.chat.update({
        channel: card.channel,
        ts: card.ts,
        text: repainted.text,
        blocks: repainted.blocks,
      });
    } catch (updateErr) {
      log.warn({ slackError: slackErrorCode(updateErr) ?? "unknown" }, "could not repaint the timeline card");
    }
  }
  return outcome;
}
