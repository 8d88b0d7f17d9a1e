/**
 * How the engine tells the Slack layer that a request changed. The Slack layer implements it:
 * `requestUpdated` re-renders the original request message (`chat.update`) to the current state;
 * `threadReply` posts a line (a vote, an outcome) in that message's thread.
 */
import type { Logger } from "../log.js";
import type { ApprovalRequest } from "./types.js";

export interface ApprovalNotifier {
  requestUpdated(request: ApprovalRequest): Promise<void>;
  threadReply(request: ApprovalRequest, text: string): Promise<void>;
}

/**
 * Tell the notifier, but never let a Slack failure undo or hide a transition that already
 * happened in Redis: the state is the truth, the message is a view of it.
 */
export async function notifySafely(
  notifier: ApprovalNotifier | undefined,
  log: Logger | undefined,
  request: ApprovalRequest,
  reply?: string,
): Promise<void> {
  if (!notifier) return;
  try {
    await notifier.requestUpdated(request);
    if (reply !== undefined) await notifier.threadReply(request, reply);
  } catch (err) {
    log?.warn({ err, requestId: request.id }, "could not update the Slack message for a request");
  }
}
