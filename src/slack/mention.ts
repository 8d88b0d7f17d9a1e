/**
 * `@unstuck timeline` typed in a message. Slack does not deliver slash commands typed in a thread (only
 * its built-in commands work there), so a thread's own timeline is asked for by mentioning the bot in
 * the thread: the `app_mention` event carries the thread's parent `ts`. Only `timeline` is answered this
 * way — a read, posted in the same thread with the draft as a file; everything else stays a slash
 * command (its approvals and forms are built around those). The user id comes from the signed event;
 * the channel allow-list applies as to every request.
 */
import type { AllMiddlewareArgs, Middleware, SlackEventMiddlewareArgs } from "@slack/bolt";
import type { CommandDispatcher, CommandServices } from "../command-contract.js";
import type { Actor } from "../command-result.js";
import { takeClusterFlag } from "../fleet/cluster-flag.js";
import { dispatchLine } from "../fleet/dispatcher.js";
import { attachTimelineFile, renderTimelineCard } from "./timeline.js";
import { renderSlackMessage } from "./blocks/index.js";
import { clip, SlackLimit } from "./blocks/text.js";
import type { ChannelGate } from "./channel-gate.js";
import { channelRefusal, gateAllows, scopeOf } from "./middleware.js";
import { slackErrorCode } from "./slack-errors.js";

export interface MentionListenerDeps {
  readonly registry: CommandDispatcher;
  readonly services: CommandServices;
  /** The slash command as configured (`/unstuck`), for the hint. */
  readonly command: string;
}

/** The verbs a mention answers. */
const MENTION_VERBS = new Set(["timeline"]);

type MentionArgs = SlackEventMiddlewareArgs<"app_mention"> & AllMiddlewareArgs;

/**
 * The channel allow-list for mentions, in the chain every listener passes after the request scope:
 * a mention from a channel that is not allowed is answered there, ephemerally, and goes no further.
 * A bot's mention (ours included) goes no further either: bots never drive the bot.
 */
export function mentionChannelAllowList(
  gate: ChannelGate,
): Middleware<SlackEventMiddlewareArgs<"app_mention">> {
  return async ({ event, client, context, next }) => {
    if (event.bot_id !== undefined || event.user === undefined) return;
    if (await gateAllows(gate, event.channel, client, context, "mention")) {
      await next();
      return;
    }
    const log = scopeOf(context).log;
    await client.chat
      .postEphemeral({
        channel: event.channel,
        user: event.user,
        text: clip(channelRefusal(event.channel, gate), SlackLimit.Fallback),
        ...(event.thread_ts !== undefined ? { thread_ts: event.thread_ts } : {}),
      })
      .catch((err: unknown) => {
        log.warn({ slackError: slackErrorCode(err) ?? "unknown" }, "could not answer a mention");
      });
  };
}

export function mentionListener(deps: MentionListenerDeps): (args: MentionArgs) => Promise<void> {
  return async ({ event, body, client, context }) => {
    const channel = event.channel;
    const user = event.user;
    if (event.bot_id !== undefined || user === undefined) return;
    const log = scopeOf(context).log;
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
    log.info({ verb: verb.slice(0, 20), inThread: threadTs !== undefined }, "mention");
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
