/**
 * The Slack side of the application layer's ports: its cards, links and the words it posts in a
 * thread or edits into a message. The use cases (`src/app/`) decide what to say; these say it in Slack.
 */
import type { WebClient } from "@slack/web-api";
import type { PostedMessage } from "../app/namespace-wait.js";
import { retrying } from "../approvals/notifier.js";
import { editTarget, type MessageEdit } from "../jobs/notify.js";
import { NamespaceMessageKind } from "../jobs/namespace-messages.js";
import type { VerifiedView } from "../approvals/verify.js";
import { withCluster } from "../slack/blocks/cluster-value.js";
import { renderDiagnosisBlocks } from "../slack/blocks/diagnosis.js";
import { renderPathRepaired, renderTraceBlocks } from "../slack/blocks/trace.js";
import type { AttachedFile, SlackMessage } from "../slack/blocks/message.js";
import { answerFile } from "../slack/blocks/index.js";
import type { RepointPlan } from "../edge/repoint.js";
import type { TraceResult } from "../edge/trace-result.js";
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

/**
 * Applies a queued edit of a posted message: renders its final form from what the edit names — a
 * namespace's card or watch message from the namespace and the outcome, a path card from the request as
 * its signatures vouch for it (`current`) — then `chat.update`, with a short retry loop. A repaired card
 * whose request does not verify is left as it is.
 */
export function slackMessageEditor(
  notifierClient: WebClient,
  current: (requestId: string) => Promise<VerifiedView | null>,
): (e: MessageEdit) => Promise<void> {
  return async (e) => {
    let message: SlackMessage;
    if (e.kind === "namespace-final") {
      const at = new Date(e.at);
      const m = e.message;
      message =
        m.kind === NamespaceMessageKind.Watch
          ? renderWatchFinished(m.namespace, e.outcome, at)
          : renderDiagnosisGone(m.namespace, at);
    } else {
      const view = await current(e.requestId);
      if (view === null || !view.ok || view.request.action.type !== "repoint-path") return;
      message = renderPathRepaired(view.request, new Date(e.at));
    }
    const where = editTarget(e);
    await retrying(
      () =>
        notifierClient.chat.update({
          channel: where.channel,
          ts: where.ts,
          text: message.text,
          blocks: message.blocks,
        }),
      slackRetryVerdict,
      EDIT_RETRY,
    );
  };
}
