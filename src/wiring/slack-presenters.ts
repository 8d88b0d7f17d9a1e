/**
 * The Slack side of the application layer's ports: its cards, links and the words it posts in a
 * thread or edits into a message. The use cases (`src/app/`) decide what to say; these say it in Slack.
 */
import type { KnownBlock } from "@slack/types";
import type { WebClient } from "@slack/web-api";
import type { PostedMessage } from "../app/namespace-wait.js";
import type { RepaintPresenter } from "../app/namespace-gone.js";
import { retrying } from "../approvals/notifier.js";
import type { EditJobData } from "../jobs/notify.js";
import { withCluster } from "../slack/blocks/cluster-value.js";
import { renderDiagnosisBlocks } from "../slack/blocks/diagnosis.js";
import { renderTraceBlocks, renderTraceRepaired } from "../slack/blocks/trace.js";
import type { RepairCardPresenter } from "../app/repair-card.js";
import type { AttachedFile, SlackMessage } from "../slack/blocks/message.js";
import { answerFile } from "../slack/blocks/index.js";
import type { RepointPlan } from "../edge/repoint.js";
import type { TraceResult } from "../traffic/trace.js";
import { renderDiagnosisGone, renderWatchFinished, renderWatchJoined } from "../slack/blocks/watch.js";
import { messageLink } from "../slack/links.js";
import { slackRetryVerdict } from "../slack/notifier.js";
import type { NamespaceDiagnosis } from "../diagnosis/types.js";

export { renderTraceBlocks as slackTraceCard } from "../slack/blocks/trace.js";

/** The traffic-path card a worker posts; in a fleet its *Fix the path* names the worker's cluster. */
export function slackTraceCardOf(
  cluster: string | undefined,
): (trace: TraceResult, plan: RepointPlan) => SlackMessage & { readonly file?: AttachedFile } {
  return (trace, plan) => {
    const card = renderTraceBlocks(trace, plan);
    const shown = cluster !== undefined ? withCluster(card, cluster) : card;
    // A command too long for the card goes whole into a file in the same thread.
    const file = answerFile({ type: "trace", trace, repair: plan }, card);
    return file !== undefined ? { ...shown, file } : shown;
  };
}

/** How long an edit of a posted message keeps trying before its job's own retry takes over. */
const EDIT_RETRY = { attempts: 3, budgetMs: 10_000 };

/** The reply in a request's thread when another wait already watches its namespace. */
export function slackAlreadyWatchedReply(
  client: WebClient,
): (thread: PostedMessage, namespace: string, running: PostedMessage) => Promise<{ ts?: string }> {
  return (thread, namespace, running) =>
    client.chat.postMessage({
      channel: thread.channel,
      thread_ts: thread.ts,
      text: `Namespace ${namespace} is already being watched; its progress and the result are in that thread: ${messageLink(running)}`,
    });
}

/** The diagnosis card as a command posts it. */
export function slackDiagnosisCard(command: string): (diagnosis: NamespaceDiagnosis) => SlackMessage {
  return (diagnosis) => renderDiagnosisBlocks(diagnosis, { command });
}

/** The posted watch message pointed at the wait already running (the card kept below). */
export function slackWatchJoined(
  client: WebClient,
): (posted: PostedMessage, namespace: string, card: SlackMessage, running: PostedMessage) => Promise<void> {
  return async (posted, namespace, card, running) => {
    await client.chat.update({
      channel: posted.channel,
      ts: posted.ts,
      ...renderWatchJoined(namespace, card, messageLink(running)),
    });
  };
}

/** The final forms of a watch message and of a diagnosis card (the blocks were posted by this surface). */
export const slackRepaint: RepaintPresenter = {
  watchFinished: (namespace, card, outcome, at) =>
    renderWatchFinished(namespace, card as readonly KnownBlock[], outcome, at),
  diagnosisGone: (namespace, card, at) => renderDiagnosisGone(namespace, card as readonly KnownBlock[], at),
};

/** The traffic-path card once the repair asked from it was made: *Fix the path* taken off. */
export const slackRepairCard: RepairCardPresenter = {
  repaired: (card, at) => renderTraceRepaired(card, at),
};

/** Applies a queued edit of a posted message (`chat.update`, with a short retry loop). */
export function slackMessageEditor(notifierClient: WebClient): (e: EditJobData) => Promise<void> {
  return async (e) => {
    await retrying(
      () =>
        notifierClient.chat.update({
          channel: e.channel,
          ts: e.ts,
          text: e.text,
          blocks: e.blocks as KnownBlock[],
        }),
      slackRetryVerdict,
      EDIT_RETRY,
    );
  };
}
