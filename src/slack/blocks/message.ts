import type { KnownBlock } from "@slack/types";

/** A Slack message: `text` is the notification/fallback, `blocks` the Block Kit body. */
export interface SlackMessage {
  readonly text: string;
  readonly blocks: KnownBlock[];
}
