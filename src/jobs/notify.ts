/**
 * Durable notifications: every edit of a request message and every thread reply is a BullMQ job on
 * the `notify` queue, so a Slack outage, a rate limit longer than a process's patience or a process
 * that dies mid-retry loses nothing: the job stays in Redis and any replica's worker finishes it.
 *
 * A job carries only the request id (and a reply's event, as JSON); it paints the state stored when
 * it runs, never a snapshot taken when it was queued, so jobs finishing in any order converge on the
 * truth. Repaints are deduplicated by the request's progress (state, votes, attempts); a reply by its
 * event, so a notification repeated by a retried executor posts once. A reply job queued before
 * replies were events carries finished words (`text`) instead: it is still delivered, as it was. A reply job that runs again after it
 * posted (handed over or re-delivered before it was marked done) finds its post recorded under the
 * job's key (`post-once.ts`) and posts nothing; edits are idempotent as they are.
 */
import { createHash } from "node:crypto";
import { Queue, UnrecoverableError, Worker, type ConnectionOptions, type Job } from "bullmq";
import type { ApprovalNotifier, ThreadEvent } from "../approvals/notifier.js";
import type { ApprovalRequest } from "../approvals/types.js";
import type { Logger } from "../log.js";
import { postKey, unrecordedPosts, type PostLedger } from "./post-once.js";
import { jobId } from "./queues.js";

export const NotifyQueueName = "notify";

export const NotifyJobName = { Repaint: "repaint", Reply: "reply", Edit: "edit" } as const;

/**
 * A message about a namespace repainted once its state is final (a diagnosis card GONE, "Watching…"
 * done): rendered when queued — a final state does not change — and applied by `chat.update`.
 */
export interface EditJobData {
  readonly channel: string;
  readonly ts: string;
  readonly text: string;
  readonly blocks: readonly unknown[];
}

export interface RepaintJobData {
  readonly requestId: string;
  /** The request as it was when queued: where its message is, if the record is gone by then. */
  readonly snapshot: ApprovalRequest;
}
export interface ReplyJobData extends RepaintJobData {
  /** What the reply reports; the worker's notifier words it. */
  readonly event?: ThreadEvent;
  /** A reply queued before replies were events: its finished words (read, never written). */
  readonly text?: string;
}

/** The event of a reply job: its own, or the words of one queued before replies were events. */
export function replyEvent(data: ReplyJobData): ThreadEvent | undefined {
  if (data.event !== undefined) return data.event;
  return typeof data.text === "string" ? { kind: "legacy-text", text: data.text } : undefined;
}
type NotifyJobData = RepaintJobData | ReplyJobData | EditJobData;

/**
 * Queue the repaint of one posted message; one job per message and `key` (what it becomes), so a
 * wait retried after queueing repaints once.
 */
export async function queueMessageEdit(
  queue: Queue,
  edit: EditJobData,
  key: string,
  retry: NotifyRetry = {},
): Promise<void> {
  await queue.add(NotifyJobName.Edit, edit, {
    attempts: retry.attempts ?? 12,
    backoff: { type: "exponential", delay: retry.backoffMs ?? 5_000 },
    removeOnFail: { age: 7 * 86_400 },
    removeOnComplete: { age: 86_400 },
    jobId: jobId(NotifyJobName.Edit, edit.channel, edit.ts, key),
  });
}

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
      const data: RepaintJobData = { requestId: request.id, snapshot: request };
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
      const data: ReplyJobData = { requestId: request.id, snapshot: request, event };
      await queue.add(NotifyJobName.Reply, data, {
        ...opts,
        jobId: replyJobId(request.id, event),
        // Kept a day: the same reply queued again within it collapses into this one.
        removeOnComplete: { age: 86_400 },
      });
    },
  };
}

/** The job of one reply: one per request and event (the same event queued again joins it). */
export function replyJobId(requestId: string, event: ThreadEvent): string {
  const digest = createHash("sha256").update(JSON.stringify(event)).digest("hex").slice(0, 24);
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
  event: ThreadEvent,
  options: { readonly timeoutMs?: number; readonly pollMs?: number } = {},
): Promise<void> {
  const id = replyJobId(requestId, event);
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const state = await queue.getJobState(id).catch(() => "unknown" as const);
    if (state === "completed" || state === "failed" || state === "unknown") return;
    if (Date.now() >= deadline) return;
    await new Promise((r) => setTimeout(r, options.pollMs ?? 100));
  }
}

export interface NotifyWorkerDeps {
  /** The request as stored now; `null` when its record is gone. */
  readonly current: (requestId: string) => Promise<ApprovalRequest | null>;
  /** Performs the edit and the reply (with its own short retry loop, honouring Retry-After). */
  readonly slack: ApprovalNotifier;
  /** Whether a failure will never go away by retrying (e.g. `cant_update_message`). */
  readonly isPermanent: (err: unknown) => boolean;
  /** Applies an `edit` job (`chat.update` with its own short retry loop); edits fail without it. */
  readonly edit?: (edit: EditJobData) => Promise<void>;
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
  return new Queue(NotifyQueueName, { connection, prefix });
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
        const edit = job.data as EditJobData;
        if (deps.edit === undefined) throw new UnrecoverableError("no message editor configured");
        try {
          await deps.edit(edit);
        } catch (err) {
          if (deps.isPermanent(err)) {
            deps.log?.warn(
              { channel: edit.channel, ts: edit.ts, err: { message: (err as Error).message } },
              "message edit refused by Slack; not retrying",
            );
            throw new UnrecoverableError((err as Error).message);
          }
          throw err;
        }
        return;
      }
      const data = job.data as RepaintJobData;
      // The Slack notifier re-reads the record itself before each attempt (a vanished one is
      // repainted "expired / lost"); the snapshot only says where the message is.
      const request = (await deps.current(data.requestId)) ?? data.snapshot;
      const reply = job.name === NotifyJobName.Reply ? replyEvent(job.data as ReplyJobData) : undefined;
      if (job.name === NotifyJobName.Reply && reply === undefined) {
        throw new UnrecoverableError("a reply job with neither an event nor a text");
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
            { requestId: data.requestId, job: job.name, err: { message: (err as Error).message } },
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
