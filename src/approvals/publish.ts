/**
 * The first part of a request message's life, owned by the engine: publish the filed request where
 * it was asked, attach the message to the record, catch up with a vote cast in between — or cancel
 * a request no approver could ever see. The surface implements the {@link RequestMessenger} (Slack:
 * `chat.postMessage` and `chat.update` of the request card); every later edit and thread reply goes
 * through the {@link ApprovalNotifier}, every state change through the workflow.
 *
 * @see ApprovalNotifier in `notifier.ts`
 */
import type { Logger } from "../log.js";
import type { ApprovalRequest, MessageRef } from "../requests/model.js";
import type { ApprovalWorkflow } from "./workflow.js";

/** Where a request's message is posted and repainted: the surface's half of its life. */
export interface RequestMessenger {
  /** Post the request's card in its channel: the message's `ts`, or the platform's error code. */
  publish(
    request: ApprovalRequest,
  ): Promise<{ readonly ts: string } | { readonly error: string | undefined }>;
  /** Repaint the posted card with the request as it stands now. */
  update(message: MessageRef, request: ApprovalRequest): Promise<void>;
}

/** How publishing a new request went: posted, or not (and then whether it was cancelled). */
export type PublishOutcome =
  | { readonly posted: true; readonly ts: string }
  | { readonly posted: false; readonly cancelled: boolean; readonly slackError?: string };

/** What publishing needs of the workflow. */
export type PublishingWorkflow = Pick<ApprovalWorkflow, "attachMessage" | "cancel" | "getVerified">;

/**
 * Publish a filed request: the one path for the slash command and every form. The caller tells the
 * requester when it was not posted (each surface has its own way).
 */
export async function publishRequest(
  workflow: PublishingWorkflow,
  messenger: RequestMessenger,
  request: ApprovalRequest,
  log: Logger,
): Promise<PublishOutcome> {
  const channel = request.channelId;
  const posted = await messenger.publish(request);
  if (!("ts" in posted)) {
    log.warn(
      { requestId: request.id, slackError: posted.error ?? "unknown" },
      "could not post the approval request",
    );
    // Approvers could never see or click it, so it must not linger until expiry.
    const cancelled = await workflow.cancel(request.id, request.requester).then(
      () => true,
      (err: unknown) => {
        log.warn(
          { err, requestId: request.id },
          "could not cancel an approval request that was never posted",
        );
        return false;
      },
    );
    return { posted: false, cancelled, ...(posted.error !== undefined ? { slackError: posted.error } : {}) };
  }
  const message = { channel, ts: posted.ts };
  await workflow.attachMessage(request.id, message);
  log.info({ requestId: request.id, channel, ts: posted.ts }, "approval request posted");
  // A vote between the post and the attach could not update the message; catch up with it now, from
  // what the record's signatures vouch for.
  const view = await workflow.getVerified(request.id);
  const latest = view.ok ? view.request : request;
  if (latest.state !== request.state || latest.votes.length !== request.votes.length)
    await messenger.update(message, latest);
  return { posted: true, ts: posted.ts };
}
