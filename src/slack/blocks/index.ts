import type { KnownBlock } from "@slack/types";
import type { CommandResult } from "../../../commands/types.js";
import { renderApprovalList, renderApprovalRequest, renderAuditEntries } from "./approval.js";
import { renderDiagnosisBlocks } from "./diagnosis.js";
import { renderErrorBlocks, renderHelpBlocks } from "./help.js";
import { renderOrphansBlocks } from "./orphans.js";
import { renderPreflightBlocks } from "./preflight.js";
import { renderTraceBlocks } from "./trace.js";
import { renderWatching } from "./watch.js";
import { renderTimelineBlocks } from "../../timeline/blocks.js";

/** A Slack message: `text` is the notification/fallback, `blocks` the Block Kit body. */
export interface SlackMessage {
  readonly text: string;
  readonly blocks: KnownBlock[];
}

/** What the renderers need from the configuration. */
export interface RenderOptions {
  /** The slash command as configured (`UNSTUCK_COMMAND`), named where a card tells what to run. */
  readonly command?: string;
}

/** Render any command result as a Slack message. */
export function renderSlackMessage(result: CommandResult, options: RenderOptions = {}): SlackMessage {
  const card = options.command !== undefined ? { command: options.command } : {};
  switch (result.type) {
    case "help":
      return renderHelpBlocks(result.help);
    case "diagnosis":
      return renderDiagnosisBlocks(result.diagnosis, card);
    case "trace":
      return renderTraceBlocks(result.trace, result.repair);
    case "orphans":
      return renderOrphansBlocks(result.report);
    case "preflight":
      return renderPreflightBlocks(result.report);
    case "watch": {
      const m = renderDiagnosisBlocks(result.diagnosis, card);
      if (result.diagnosis.verdict === "not-found") return m;
      return renderWatching(result.namespace, m);
    }
    case "approval-request":
      return renderApprovalRequest(result.request, new Date());
    case "approvals":
      return renderApprovalList(result.requests, new Date(result.now));
    case "audit":
      return renderAuditEntries(result.entries);
    case "timeline":
      return renderTimelineBlocks(result.markdown, result.entries);
    case "error":
      return renderErrorBlocks(result.error, result.help);
  }
}
