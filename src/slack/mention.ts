/**
 * `@unstuck timeline` typed in a message. Slack does not deliver slash commands typed in a thread (only
 * its built-in commands work there), so a thread's own timeline is asked for by mentioning the bot in
 * the thread: the `app_mention` event carries the thread's parent `ts`. Only `timeline` is answered this
 * way — a read, posted in the same thread with the draft as a file; everything else stays a slash
 * command (its approvals and forms are built around those). The user id comes from the signed event;
 * the channel allow-list applies as to every request.
 */
import { randomUUID } from "node:crypto";
import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from "@slack/bolt";
import type { Actor, CommandDispatcher, CommandServices } from "../command-contract.js";
import { takeClusterFlag } from "../fleet/cluster-flag.js";
import { dispatchLine } from "../fleet/dispatcher.js";
import type { Logger } from "../log.js";
import { attachTimelineFile, renderTimelineCard } from "./timeline.js";
import { renderSlackMessage } from "./blocks/index.js";
import { clip, SlackLimit } from "./blocks/text.js";
import type { ChannelGate } from "./channel-gate.js";
import { channelRefusal } from "./middleware.js";
import { slackErrorCode } from "./slack-errors.js";

export interface MentionListenerDeps {
  readonly registry: CommandDispatcher;
  readonly services: CommandServices;
  /** The slash command as configured (`/unstuck`), for the hint. */
  readonly command: string;
  /** `UNSTUCK_CHANNELS` ids and `UNSTUCK_CHANNEL_PATTERNS` names (neither allows all). */
  readonly channels: ChannelGate;
  readonly log: Logger;
  readonly newRequestId?: () => string;
}

/** The verbs a mention answers. */
const MENTION_VERBS = new Set(["timeline"]);

export function mentionListener(
  deps: MentionListenerDeps,
): (args: SlackEventMiddlewareArgs<"app_mention"> & AllMiddlewareArgs) => Promise<void> {
  return async ({ event, body, client }) => {
    const channel = event.channel;
    const user = event.user;
    // Bots (ours included) never drive the bot.
    if (event.bot_id !== undefined || user === undefined) return;
    const requestId = (deps.newRequestId ?? randomUUID)();
    const log = deps.log.child({ requestId, userId: user, teamId: body.team_id, channelId: channel });
    const threadTs = event.thread_ts;
    const ephemeral = async (text: string, blocks?: readonly unknown[]): Promise<void> => {
      try {
        await client.chat.postEphemeral({
          channel,
          user,
          text: clip(text, SlackLimit.Fallback),
          ...(blocks !== undefined ? { blocks: blocks as never } : {}),
          ...(threadTs !== undefined ? { thread_ts: threadTs } : {}),
        });
      } catch (err) {
        log.warn({ slackError: slackErrorCode(err) ?? "unknown" }, "could not answer a mention");
      }
    };
    const allowed = await deps.channels
      .allowed(channel, (id) => client.conversations.info({ channel: id }).then((r) => r.channel?.name))
      .catch(() => false);
    if (!allowed) {
      log.warn({ code: "CHANNEL_NOT_ALLOWED" }, "mention from a channel outside the allow-list");
      await ephemeral(channelRefusal(channel, deps.channels));
      return;
    }
    // Every mention of the bot is markup (`<@U…>` or `<@U…|name>`): what is left is the command.
    const text = event.text.replace(/<@[A-Z0-9]+(?:\|[^>]*)?>/g, " ").trim();
    // `--cluster NAME` may come first; the verb is the first word of the rest.
    let line = text;
    try {
      line = takeClusterFlag(text).text;
    } catch {
      // A bad flag: the dispatch below answers it.
    }
    const verb = (line.split(/\s+/)[0] ?? "").toLowerCase();
    log.info(
      { kind: "mention", subject: verb.slice(0, 20), inThread: threadTs !== undefined },
      "slack request",
    );
    if (!MENTION_VERBS.has(verb)) {
      await ephemeral(
        `In a message I answer \`timeline\` (in a thread: that thread's events). Everything else: \`${deps.command} help\`.`,
      );
      return;
    }
    const actor: Actor = {
      userId: user,
      teamId: body.team_id,
      channelId: channel,
      ...(threadTs !== undefined ? { threadTs } : {}),
      surface: "slack",
    };
    const result = await dispatchLine(
      deps.registry,
      text,
      { actor, services: { ...deps.services, log } },
      deps.command,
    );
    if (result.type !== "timeline") {
      const message = renderSlackMessage(result, { command: deps.command });
      await ephemeral(message.text, message.blocks);
      return;
    }
    // Answer in the thread it was asked in; a top-level mention starts a thread on its own message.
    const where = threadTs ?? event.ts;
    const card = renderTimelineCard(result);
    let ts: string | undefined;
    try {
      ts = (
        await client.chat.postMessage({ channel, thread_ts: where, text: card.text, blocks: card.blocks })
      ).ts;
    } catch (err) {
      log.warn({ slackError: slackErrorCode(err) ?? "unknown" }, "could not post the timeline card");
      await ephemeral(`I could not post the timeline here (${slackErrorCode(err) ?? "unknown error"}).`);
      return;
    }
    if (ts !== undefined) await attachTimelineFile(client, result, { channel, ts }, where, log);
  };
}
