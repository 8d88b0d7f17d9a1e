/**
 * Durable notifications: every edit of a request message and every thread reply is a BullMQ job on
 * the `notify` queue, so a Slack outage, a rate limit longer than a process's patience or a process
 * that dies mid-retry loses nothing: the job stays in Redis and any replica's worker finishes it.
 *
 * A job carries ids only: the request id, and for a reply which event of it (a vote by whom, the
 * outcome). The worker re-reads the record, keeps what its signatures vouch for (`verifiedRequest`),
 * and paints or words that — never a snapshot or words taken from the job — in the one message the bot
 * signed for the request. A record that does not verify is not painted at all; so a Redis writer can
 * neither make the bot write a message of its choosing nor point it at another message. Jobs finishing
 * in any order converge on the truth. Repaints are deduplicated by the request's progress (state,
 * votes, attempts); a reply by its event, so a notification repeated by a retried executor posts once.
 * A reply job that runs again after it posted (handed over or re-delivered before it was marked done)
 * finds its post recorded under the job's key (`post-once.ts`) and posts nothing; edits are idempotent.
 */
import { createHash } from "node:crypto";
import { Queue, UnrecoverableError, Worker, type ConnectionOptions, type Job } from "bullmq";
import type { ApprovalNotifier, OutcomeState, ThreadEvent } from "../approvals/notifier.js";
import type { ApprovalRequest, VoteDecision } from "../requests/model.js";
import type { VerifiedView } from "../approvals/verify.js";
import type { Keyring } from "../trust/keys.js";
import { seal, unseal, type Sealed, type SealKeys } from "../trust/sealed.js";
import type { NamespaceMessage } from "./namespace-messages.js";
import type { Logger } from "../log.js";
import { postKey, unrecordedPosts, type PostLedger } from "./post-once.js";
import { jobId, openQueue } from "./queues.js";

export const NotifyQueueName = "notify";

export const NotifyJobName = { Repaint: "repaint", Reply: "reply", Edit: "edit" } as const;

/**
 * The final form of a message the bot posted, named by ids: the worker that applies it renders it
 * (a namespace's card or watch message from the namespace and the outcome, a path card from the signed
 * request). The job is sealed by the process that queued it (`src/trust/sealed.ts`): a Redis writer can
 * neither queue an edit nor change which message one touches.
 */
export type MessageEdit =
  | {
      readonly kind: "namespace-final";
      readonly cluster: string;
      readonly message: NamespaceMessage;
      readonly outcome: "gone" | "timed-out";
      /** ISO-8601: when the outcome was seen. */
      readonly at: string;
    }
  | {
      readonly kind: "repaired-card";
      readonly requestId: string;
      readonly channel: string;
      readonly ts: string;
      readonly at: string;
    };

/** Where an edit applies. */
export function editTarget(edit: MessageEdit): { readonly channel: string; readonly ts: string } {
  return edit.kind === "namespace-final" ? edit.message : edit;
}

const EDIT_DOMAIN = "message-edit";

/**
 * Queue the repaint of one posted message, sealed with `keys`; one job per message and `key` (what it
 * becomes), so a wait retried after queueing repaints once.
 */
export async function queueMessageEdit(
  queue: Queue,
  keys: SealKeys,
  edit: MessageEdit,
  key: string,
  retry: NotifyRetry = {},
): Promise<void> {
  if (keys.key === undefined) throw new UnrecoverableError("this process holds no key to seal an edit with");
  const where = editTarget(edit);
  await queue.add(NotifyJobName.Edit, seal(keys.key, EDIT_DOMAIN, edit), {
    attempts: retry.attempts ?? 12,
    backoff: { type: "exponential", delay: retry.backoffMs ?? 5_000 },
    removeOnFail: { age: 7 * 86_400 },
    removeOnComplete: { age: 86_400 },
    jobId: jobId(NotifyJobName.Edit, where.channel, where.ts, key),
  });
}

export interface RepaintJobData {
  readonly requestId: string;
}

/** Which event of a request a reply reports: the worker words it from the signed record. */
export type ReplyRef =
  | { readonly kind: "vote"; readonly voter: string; readonly decision: VoteDecision }
  | { readonly kind: "cancelled" }
  | { readonly kind: "expired" }
  | { readonly kind: "outcome"; readonly state: OutcomeState };

export interface ReplyJobData extends RepaintJobData {
  readonly reply: ReplyRef;
}

/** The reference of an event: what it is, none of its words. */
export function replyRef(event: ThreadEvent): ReplyRef {
  switch (event.kind) {
    case "vote":
      return { kind: "vote", voter: event.voter, decision: event.decision };
    case "cancelled":
      return { kind: "cancelled" };
    case "expired":
      return { kind: "expired" };
    case "outcome":
      return { kind: "outcome", state: event.state };
  }
}

/**
 * The event `ref` names, as the verified record tells it (`undefined` when the record does not hold
 * it: a vote nobody signed, an outcome the state does not carry). A vote's tally is the approvals
 * counted up to it, while they were still short.
 */
export function eventOf(ref: ReplyRef, request: ApprovalRequest): ThreadEvent | undefined {
  switch (ref.kind) {
    case "vote": {
      const index = request.votes.findIndex(
        (v) => v.voter.userId === ref.voter && v.decision === ref.decision,
      );
      if (index < 0) return undefined;
      const reason = request.votes[index]?.reason;
      if (ref.decision === "deny")
        return {
          kind: "vote",
          voter: ref.voter,
          decision: "deny",
          ...(reason !== undefined ? { reason } : {}),
        };
      const approvals = request.votes.slice(0, index + 1).filter((v) => v.decision === "approve").length;
      return {
        kind: "vote",
        voter: ref.voter,
        decision: "approve",
        ...(reason !== undefined ? { reason } : {}),
        ...(approvals < request.approvalsRequired
          ? { tally: { approvals, required: request.approvalsRequired } }
          : {}),
      };
    }
    case "cancelled":
      return request.state === "CANCELLED" ? { kind: "cancelled", by: request.requester.userId } : undefined;
    case "expired":
      return request.state === "EXPIRED" ? { kind: "expired" } : undefined;
    case "outcome":
      return request.state === ref.state && request.result !== undefined
        ? { kind: "outcome", state: ref.state, message: request.result.message }
        : undefined;
  }
}

type NotifyJobData = RepaintJobData | ReplyJobData | Sealed;

export interface NotifyRetry {
  /** BullMQ attempts of one notification, each with the notifier's own retry loop (default 12). */
  readonly attempts?: number;
  /** First BullMQ backoff, doubled per attempt (default 5 s; 12 attempts span about 3 hours). */
  readonly backoffMs?: number;
}

/** An `ApprovalNotifier` that queues each notification as a job; the notify worker performs it. */
export function queuedNotifier(queue: Queue, retry: NotifyRetry = {}): ApprovalNotifier {
  const opts = {
    attempts: retry.attempts ?? 12,
    backoff: { type: "exponential", delay: retry.backoffMs ?? 5_000 },
    removeOnFail: { age: 7 * 86_400 },
  };
  return {
    async requestUpdated(request: ApprovalRequest) {
      if (request.message === undefined) return;
      const data: RepaintJobData = { requestId: request.id };
      await queue.add(NotifyJobName.Repaint, data, {
        ...opts,
        // One repaint per step of progress; a completed one is removed so a later repaint of the same
        // step (a lost message found by a click) can run again.
        jobId: jobId(
          NotifyJobName.Repaint,
          request.id,
          request.state,
          String(request.votes.length),
          String(request.executionAttempts),
        ),
        removeOnComplete: true,
      });
    },
    async threadReply(request: ApprovalRequest, event: ThreadEvent) {
      if (request.message === undefined) return;
      const data: ReplyJobData = { requestId: request.id, reply: replyRef(event) };
      await queue.add(NotifyJobName.Reply, data, {
        ...opts,
        jobId: replyJobId(request.id, data.reply),
        // Kept a day: the same reply queued again within it collapses into this one.
        removeOnComplete: { age: 86_400 },
      });
    },
  };
}

/** The job of one reply: one per request and event (the same event queued again joins it). */
export function replyJobId(requestId: string, reply: ReplyRef): string {
  const digest = createHash("sha256").update(JSON.stringify(reply)).digest("hex").slice(0, 24);
  return jobId(NotifyJobName.Reply, requestId, digest);
}

/**
 * Resolves once the reply of `event` on `requestId` was delivered (or given up on, or was never
 * queued), or after `timeoutMs` at most: what follows it in the thread — a wait's status message —
 * then comes below it, as the story reads. Never throws: a Redis hiccup only ends the wait early.
 */
export async function replyDelivered(
  queue: Pick<Queue, "getJobState">,
  requestId: string,
  reply: ReplyRef,
  options: { readonly timeoutMs?: number; readonly pollMs?: number } = {},
): Promise<void> {
  const id = replyJobId(requestId, reply);
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const state = await queue.getJobState(id).catch(() => "unknown" as const);
    if (state === "completed" || state === "failed" || state === "unknown") return;
    if (Date.now() >= deadline) return;
    await new Promise((r) => setTimeout(r, options.pollMs ?? 100));
  }
}

export interface NotifyWorkerDeps {
  /** The request as its signatures vouch for it now; `null` when its record is gone. */
  readonly current: (requestId: string) => Promise<VerifiedView | null>;
  /** Performs the edit and the reply (with its own short retry loop, honouring Retry-After). */
  readonly slack: ApprovalNotifier;
  /** Whether a failure will never go away by retrying (e.g. `cant_update_message`). */
  readonly isPermanent: (err: unknown) => boolean;
  /** Applies an `edit` job (renders it, then `chat.update` with its own short retry loop); edits fail without it. */
  readonly edit?: (edit: MessageEdit) => Promise<void>;
  /** The keyring an edit job's seal is checked with (the bot's or any cluster's workers'). */
  readonly keyring?: Keyring;
  readonly log?: Logger;
  /** Records each reply under its job's key, so a reply job that runs again does not post twice. */
  readonly posted?: PostLedger;
}

export interface NotifyWorkerSetup {
  readonly connection: ConnectionOptions;
  readonly prefix: string;
  readonly concurrency?: number;
}

export function createNotifyQueue(connection: ConnectionOptions, prefix: string): Queue {
  return openQueue(NotifyQueueName, { connection, prefix });
}

/**
 * Edits run concurrently across requests (a rate-limited edit never holds back another request's
 * reply); the Slack notifier keeps the edits of one request in order within a process.
 */
export function createNotifyWorker(setup: NotifyWorkerSetup, deps: NotifyWorkerDeps): Worker<NotifyJobData> {
  return new Worker<NotifyJobData>(
    NotifyQueueName,
    async (job: Job<NotifyJobData>) => {
      if (job.name === NotifyJobName.Edit) {
        if (deps.edit === undefined || deps.keyring === undefined) {
          throw new UnrecoverableError("no message editor configured");
        }
        // Only an edit a process of this install sealed: never one written into Redis.
        const opened = unseal<MessageEdit>(deps.keyring, EDIT_DOMAIN, job.data, () => true);
        if (!opened.ok) {
          deps.log?.error(
            { job: job.id, why: opened.why },
            "refused an edit job that is not sealed by the bot or a worker",
          );
          throw new UnrecoverableError(`the edit is not sealed: ${opened.why}`);
        }
        const edit = opened.data;
        const where = editTarget(edit);
        try {
          await deps.edit(edit);
        } catch (err) {
          if (deps.isPermanent(err)) {
            deps.log?.warn(
              { channel: where.channel, ts: where.ts, err: { message: (err as Error).message } },
              "message edit refused by Slack; not retrying",
            );
            throw new UnrecoverableError((err as Error).message);
          }
          throw err;
        }
        return;
      }
      const data = job.data as Partial<ReplyJobData>;
      const requestId = typeof data.requestId === "string" ? data.requestId : "";
      const view = await deps.current(requestId);
      // Gone: nothing of it can be shown (a click on its buttons repaints it "lost").
      if (view === null) return;
      if (!view.ok) {
        deps.log?.error(
          { requestId: requestId.slice(0, 64), job: job.name, why: view.why },
          "refused to paint a request whose record does not verify",
        );
        throw new UnrecoverableError(`the record does not verify: ${view.why}`);
      }
      const request = view.request;
      // Only the message the bot signed for this request is ever touched.
      if (request.message === undefined) return;
      let reply: ThreadEvent | undefined;
      if (job.name === NotifyJobName.Reply) {
        // Before replies named their event by reference a job carried the event itself: only what it is counts.
        const legacy = (job.data as { event?: ThreadEvent }).event;
        const ref = data.reply ?? (legacy !== undefined ? replyRef(legacy) : undefined);
        reply = ref !== undefined ? eventOf(ref, request) : undefined;
        if (reply === undefined) {
          throw new UnrecoverableError("a reply whose event the signed record does not hold");
        }
      }
      try {
        if (job.name === NotifyJobName.Repaint) {
          await deps.slack.requestUpdated(request);
          return;
        }
        if (reply !== undefined) {
          // This job, not just this event: the same reply queued again a day later is a new one.
          await (deps.posted ?? unrecordedPosts).once(
            postKey("notify-reply", job.id ?? "", job.timestamp),
            async () => {
              await deps.slack.threadReply(request, reply);
              return undefined;
            },
          );
          return;
        }
      } catch (err) {
        if (deps.isPermanent(err)) {
          deps.log?.warn(
            { requestId, job: job.name, err: { message: (err as Error).message } },
            "notification refused by Slack; not retrying",
          );
          throw new UnrecoverableError((err as Error).message);
        }
        throw err;
      }
      throw new UnrecoverableError(`unknown notify job "${job.name}"`);
    },
    { connection: setup.connection, prefix: setup.prefix, concurrency: setup.concurrency ?? 8 },
  );
}
