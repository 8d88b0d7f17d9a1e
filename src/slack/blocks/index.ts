import type { CommandResult } from "../../command-result.js";
import { ErrorCode } from "../../errors.js";
import { renderApprovalList, renderApprovalRequest, renderAuditEntries } from "./approval.js";
import { withCluster } from "./cluster-value.js";
import { renderDiagnosisBlocks } from "./diagnosis.js";
import { renderErrorBlocks, renderHelpBlocks } from "./help.js";
import { renderOrphansBlocks } from "./orphans.js";
import { renderPreflightBlocks } from "./preflight.js";
import { renderTraceBlocks } from "./trace.js";
import { renderWatching } from "./watch.js";
import { renderTimelineBlocks } from "./timeline.js";
import type { AttachedFile, SlackMessage } from "./message.js";
import { hasLongCommand } from "./text.js";
import { renderText } from "../../render/text.js";

export type { AttachedFile, SlackMessage };

/** What the renderers need from the configuration. */
export interface RenderOptions {
  /** The slash command as configured (`UNSTUCK_COMMAND`), named where a card tells what to run. */
  readonly command?: string;
  /** In a fleet: the cluster that answered, named in the value of the card's buttons (`cluster-value.ts`). */
  readonly cluster?: string;
}

/**
 * The file a posted answer's thread gets when its card replaced a command too long for Slack by a
 * note: the answer as the terminal prints it, every command whole. `undefined` when nothing was replaced.
 */
export function answerFile(result: CommandResult, message: SlackMessage): AttachedFile | undefined {
  if (!hasLongCommand(message.blocks)) return undefined;
  return {
    filename: `unstuck-${result.type}.txt`,
    title: "The whole answer, every command as the terminal prints it",
    content: renderText(result),
  };
}

/** Render any command result as a Slack message. */
export function renderSlackMessage(result: CommandResult, options: RenderOptions = {}): SlackMessage {
  const message = renderResult(result, options);
  return options.cluster !== undefined ? withCluster(message, options.cluster) : message;
}

function renderResult(result: CommandResult, options: RenderOptions): SlackMessage {
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
    case "approval-draft":
      return renderErrorBlocks({
        code: ErrorCode.Internal,
        message:
          "The request was planned but not filed: only the bot files requests, as the person it verified.",
        details: {},
      });
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
