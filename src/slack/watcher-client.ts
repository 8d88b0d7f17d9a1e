/**
 * The watcher's Slack client: it words and renders what the watcher reports (`WatcherMessage`) with
 * the Block Kit renderers of `blocks/watch.ts`, which escape everything foreign, and posts or edits it
 * through the Web API.
 */
import type { WebClient } from "@slack/web-api";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { WatcherMessage, WatcherSlack } from "../watcher/watcher.js";
import { withCluster } from "./blocks/cluster-value.js";
import type { SlackMessage } from "./blocks/message.js";
import { clip, SlackLimit } from "./blocks/text.js";
import {
  renderWatchCard,
  renderWatchGoneCard,
  renderWatchGoneNote,
  renderWatchUpdate,
} from "./blocks/watch.js";

/** A watcher message as Slack shows it. */
export function renderWatcherMessage(message: WatcherMessage): SlackMessage {
  switch (message.kind) {
    case "notice":
      return renderWatchCard(message.diagnosis, message.thresholdMs);
    case "still-terminating":
      return renderWatchUpdate(message.diagnosis);
    case "gone":
      return renderWatchGoneNote(message.namespace, message.terminatingSeconds);
    case "gone-card":
      return renderWatchGoneCard(message.namespace, message.terminatingSeconds);
  }
}

/** Posts and edits through the Web API; in a fleet the cards' buttons name the watched `cluster`. */
export function slackWatcherClient(client: WebClient, cluster?: string): WatcherSlack {
  const render = (m: WatcherMessage): SlackMessage =>
    cluster !== undefined ? withCluster(renderWatcherMessage(m), cluster) : renderWatcherMessage(m);
  return {
    async post(channel, watcherMessage, threadTs) {
      const message = render(watcherMessage);
      const res = await client.chat.postMessage({
        channel,
        ...(threadTs !== undefined ? { thread_ts: threadTs } : {}),
        text: clip(message.text, SlackLimit.Fallback),
        blocks: message.blocks,
        unfurl_links: false,
        unfurl_media: false,
      });
      if (res.ts === undefined)
        throw new UnstuckError(ErrorCode.Upstream, "Slack accepted a message but returned no ts.");
      return { ts: res.ts };
    },
    async update(channel, ts, watcherMessage) {
      const message = render(watcherMessage);
      await client.chat.update({
        channel,
        ts,
        text: clip(message.text, SlackLimit.Fallback),
        blocks: message.blocks,
      });
    },
  };
}
