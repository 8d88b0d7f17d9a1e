/**
 * The whole answer as a file in a card's thread, when the card replaced a command too long for any
 * Slack section by a note saying the file is there (`LONG_COMMAND_NOTE`): a command is never cut, it
 * is copied from the file exactly as the terminal prints it. A failed upload is said in the thread.
 */
import type { WebClient } from "@slack/web-api";
import type { Logger } from "../log.js";
import type { AttachedFile } from "./blocks/message.js";
import { slackErrorCode } from "./slack-errors.js";
import { uploadFailureReason } from "./timeline.js";

export async function attachAnswerFile(
  client: WebClient,
  file: AttachedFile,
  where: { readonly channel: string; readonly threadTs: string },
  log: Logger,
): Promise<void> {
  try {
    await client.files.uploadV2({
      channel_id: where.channel,
      thread_ts: where.threadTs,
      filename: file.filename,
      title: file.title,
      content: file.content,
    });
    log.info({ filename: file.filename, bytes: file.content.length }, "answer attached as a file");
  } catch (err) {
    const code = slackErrorCode(err);
    log.warn({ slackError: code ?? "unknown" }, "could not attach the whole answer as a file");
    await client.chat
      .postMessage({
        channel: where.channel,
        thread_ts: where.threadTs,
        text: `:warning: The file with every command whole could not be attached (${uploadFailureReason(code)}). The same command in a terminal (\`npm run unstuck -- …\`) prints them whole.`,
      })
      .catch(() => undefined);
  }
}
