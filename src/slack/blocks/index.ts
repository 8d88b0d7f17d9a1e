import type { KnownBlock } from "@slack/types";
import type { CommandResult } from "../../../commands/types.js";
import { renderDiagnosisBlocks } from "./diagnosis.js";
import { renderErrorBlocks, renderHelpBlocks } from "./help.js";

/** A Slack message: `text` is the notification/fallback, `blocks` the Block Kit body. */
export interface SlackMessage {
  readonly text: string;
  readonly blocks: KnownBlock[];
}

/** Render any command result as a Slack message. */
export function renderSlackMessage(result: CommandResult): SlackMessage {
  switch (result.type) {
    case "help":
      return renderHelpBlocks(result.help);
    case "diagnosis":
      return renderDiagnosisBlocks(result.diagnosis);
    case "error":
      return renderErrorBlocks(result.error, result.help);
  }
}
