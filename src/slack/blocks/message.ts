import type { KnownBlock } from "@slack/types";

/**
 * A file for a message's thread: the whole answer as the terminal prints it, when a command in the
 * card was too long for any section (`files.uploadV2`, beside the card, never inside its arguments).
 */
export interface AttachedFile {
  readonly filename: string;
  readonly title: string;
  readonly content: string;
}

/** A Slack message: `text` is the notification/fallback, `blocks` the Block Kit body. */
export interface SlackMessage {
  readonly text: string;
  readonly blocks: KnownBlock[];
}
