/**
 * The Slack side of what the engine and the jobs report: the notifier that keeps a request message
 * current (paints the stored state, retries with Retry-After), the thread reporter the waits post and
 * edit their status through, the audit-channel mirror, and the user-group directory the policy reads.
 */
import { webApi } from "@slack/bolt";
import type { KnownBlock } from "@slack/types";
import {
  retrying,
  type ApprovalNotifier,
  type RetryPolicy,
  type RetryVerdict,
  type ThreadEvent,
} from "../approvals/notifier.js";
import type { SlackDirectory } from "../approvals/policy.js";
import type { ApprovalRequest, RequestState } from "../requests/model.js";
import type { AuditMirror } from "../audit/log.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { ThreadReporter } from "../jobs/waits.js";
import type { Logger } from "../log.js";
import { renderApprovalRequest, renderAuditLine, renderLostRequest } from "./blocks/approval.js";
import { outcomeSentence } from "./blocks/outcome.js";
import { clip, safe, safeLine, SlackLimit } from "./blocks/text.js";
import { slackErrorCode } from "./slack-errors.js";
import { attachAnswerFile } from "./answer-file.js";
import { pino } from "pino";

type WebClient = webApi.WebClient;
// ---------------------------------------------------------------------------------------------------------
// Notifier, thread reporter, audit mirror, directory
// ---------------------------------------------------------------------------------------------------------

export interface SlackApprovalNotifierDeps {
  readonly client: WebClient;
  readonly now: () => Date;
  readonly log: Logger;
  /**
   * Reads the request as stored now. When given, each update renders the stored state rather than the
   * snapshot it was called with, so a slow vote notification can never paint APPROVED over DONE.
   */
  readonly current?: (requestId: string) => Promise<ApprovalRequest | null | undefined>;
  /**
   * Retries of a failed edit or reply (Slack's `Retry-After` is honoured). Give this notifier a client
   * without retries of its own (`retryConfig: { retries: 0 }, rejectRateLimitedCalls: true`): the
   * client would re-send the old body, while each retry here re-reads and paints the stored state.
   */
  readonly retry?: RetryPolicy;
}

/** Slack's platform errors that mean "try again later"; any other platform error is final. */
const TRANSIENT_SLACK_ERRORS = new Set([
  "ratelimited",
  "internal_error",
  "fatal_error",
  "service_unavailable",
  "request_timeout",
]);

/** Whether a failed Web API call is worth repeating, and when (Slack's `Retry-After` on a 429). */
export function slackRetryVerdict(err: unknown): RetryVerdict {
  if (typeof err !== "object" || err === null) return { retry: false };
  const e = err as { code?: unknown; retryAfter?: unknown; statusCode?: unknown };
  switch (e.code) {
    case webApi.ErrorCode.RateLimitedError:
      return {
        retry: true,
        why: "rate limited",
        afterMs: typeof e.retryAfter === "number" ? e.retryAfter * 1000 : 1000,
      };
    case webApi.ErrorCode.RequestError:
      return { retry: true, why: "request failed" };
    case webApi.ErrorCode.HTTPError:
      return typeof e.statusCode === "number" && e.statusCode >= 500
        ? { retry: true, why: `HTTP ${String(e.statusCode)}` }
        : { retry: false };
    case webApi.ErrorCode.PlatformError: {
      const code = slackErrorCode(err);
      return code !== undefined && TRANSIENT_SLACK_ERRORS.has(code)
        ? { retry: true, why: code }
        : { retry: false };
    }
    default:
      return { retry: false };
  }
}

const STATE_RANK: Record<RequestState, number> = {
  PENDING: 0,
  APPROVED: 1,
  EXECUTING: 2,
  DONE: 3,
  FAILED: 3,
  DENIED: 3,
  EXPIRED: 3,
  CANCELLED: 3,
  STALE: 3,
  TAMPERED: 3,
};

/** How far a request has progressed; states only move forward, votes only accumulate. */
function progress(req: ApprovalRequest): readonly [number, number, number, string] {
  return [STATE_RANK[req.state], req.votes.length, req.executionAttempts, req.updatedAt];
}

function isOlder(a: readonly [number, number, number, string], b: readonly [number, number, number, string]) {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x < y) return true;
    if (x > y) return false;
  }
  return false;
}

/**
 * A thread reply's words, before escaping: a vote or a cancel leads with the mention of who did it
 * (the only markup `threadReply` keeps, and only for someone taking part in the request); an outcome
 * is its sentence, a TAMPERED one behind the alarm.
 */
export function renderThreadReply(event: ThreadEvent): string {
  switch (event.kind) {
    case "vote": {
      const verb = event.decision === "approve" ? "approved" : "denied";
      const tally =
        event.tally !== undefined
          ? ` (${String(event.tally.approvals)}/${String(event.tally.required)})`
          : "";
      // The reason is the voter's own text: quoted, escaped with the rest of the reply.
      return `<@${event.voter}> ${verb}${tally}${event.reason !== undefined ? `: “${event.reason}”` : ""}.`;
    }
    case "cancelled":
      return `<@${event.by}> cancelled the request.`;
    case "expired":
      return "The request expired without enough approvals.";
    case "outcome":
      return outcomeSentence(event.state === "TAMPERED", event.message);
  }
}

/** Forget rendered versions beyond this many requests; a process sees few requests at once. */
const RENDERED_CAP = 1_000;

/**
 * `requestUpdated` re-renders the original request message (`chat.update`); `threadReply` posts in its
 * thread. Updates for one request run one at a time and never go backwards: the engine notifies from the
 * vote, the executor and the sweep, which finish in any order.
 */
export function createSlackApprovalNotifier(deps: SlackApprovalNotifierDeps): ApprovalNotifier {
  const queues = new Map<string, Promise<void>>();
  const rendered = new Map<string, readonly [number, number, number, string]>();

  const serial = (id: string, task: () => Promise<void>): Promise<void> => {
    const previous = queues.get(id) ?? Promise.resolve();
    const run = previous.then(task, task);
    const tail = run.catch(() => undefined);
    queues.set(id, tail);
    void tail.then(() => {
      if (queues.get(id) === tail) queues.delete(id);
    });
    return run;
  };

  return {
    requestUpdated(request) {
      const message = request.message;
      if (message === undefined) return Promise.resolve();
      // Each attempt re-reads the stored request, so a retry after a failure (or after Slack's
      // Retry-After) paints what is true then, never the state the first attempt saw.
      const paint = async (): Promise<void> => {
        const stored = deps.current ? await deps.current(request.id) : undefined;
        if (stored === null) {
          // The record is gone (expired and cleaned up, or lost with Redis): no live buttons may remain.
          const lost = renderLostRequest(request.id);
          await deps.client.chat.update({ channel: message.channel, ts: message.ts, ...lost });
          return;
        }
        const latest = stored ?? request;
        const version = progress(latest);
        const last = rendered.get(request.id);
        if (last !== undefined && isOlder(version, last)) {
          deps.log.debug(
            { requestId: request.id, state: latest.state },
            "skipped an out-of-date message update",
          );
          return;
        }
        const { text, blocks } = renderApprovalRequest(latest, deps.now());
        await deps.client.chat.update({ channel: message.channel, ts: message.ts, text, blocks });
        rendered.delete(request.id);
        rendered.set(request.id, version);
        if (rendered.size > RENDERED_CAP) {
          const oldest = rendered.keys().next().value;
          if (oldest !== undefined) rendered.delete(oldest);
        }
      };
      return serial(request.id, () =>
        retrying(paint, slackRetryVerdict, deps.retry, ({ attempt, waitMs, why }) => {
          deps.log.warn(
            { requestId: request.id, attempt, waitMs, why },
            "request message update failed; retrying",
          );
        }),
      );
    },
    async threadReply(request, event) {
      const message = request.message;
      if (message === undefined) return;
      const text = renderThreadReply(event);
      // Replies carry outcomes with cluster text; only a leading mention of a participant is the bot's own.
      const people = new Set([request.requester.userId, ...request.votes.map((v) => v.voter.userId)]);
      const reply = {
        channel: message.channel,
        thread_ts: message.ts,
        text: safeLine(text, people),
        // A refused forgery is raised loudly: the reply is also sent to the channel itself.
        reply_broadcast: request.state === "TAMPERED",
      };
      await retrying(
        () => deps.client.chat.postMessage(reply),
        slackRetryVerdict,
        deps.retry,
        ({ attempt, waitMs, why }) => {
          deps.log.warn({ requestId: request.id, attempt, waitMs, why }, "thread reply failed; retrying");
        },
      );
    },
  };
}

/** Wait status messages in an incident thread: posted once, then edited in place. */
export function createSlackThreadReporter(
  client: WebClient,
  log: Logger = pino({ level: "silent" }),
): ThreadReporter {
  return {
    // Status lines quote object names, finalizers and API errors: all of it is foreign text.
    async post(channel, threadTs, text) {
      const res = await client.chat.postMessage({
        channel,
        thread_ts: threadTs,
        text: safe(text, SlackLimit.Section),
      });
      if (res.ts === undefined) {
        throw new UnstuckError(ErrorCode.Upstream, "Slack accepted a thread message but returned no ts.");
      }
      return { ts: res.ts };
    },
    async update(channel, ts, text) {
      await client.chat.update({ channel, ts, text: safe(text, SlackLimit.Section) });
    },
    // Cards are rendered by the Block Kit renderers, which escape everything foreign themselves.
    async postCard(channel, threadTs, card) {
      const res = await client.chat.postMessage({
        channel,
        thread_ts: threadTs,
        text: clip(card.text, SlackLimit.Fallback),
        blocks: card.blocks as KnownBlock[],
      });
      if (res.ts === undefined) {
        throw new UnstuckError(ErrorCode.Upstream, "Slack accepted a thread message but returned no ts.");
      }
      // A command too long for the card: whole in a file in the same thread, as the card says.
      if (card.file !== undefined) await attachAnswerFile(client, card.file, { channel, threadTs }, log);
      return { ts: res.ts };
    },
  };
}

/** The audit-channel mirror; `postToChannel` posts a line composed elsewhere, all of it escaped. */
export interface SlackAuditMirror extends AuditMirror {
  postToChannel(text: string): Promise<void>;
}

/**
 * Copies audit entries to `UNSTUCK_AUDIT_CHANNEL`, each as one line naming who acted (a mention of
 * the person, or the bot's component); the Redis stream stays the record.
 */
export function createSlackAuditMirror(client: WebClient, channel: string): SlackAuditMirror {
  return {
    async postToChannel(text) {
      // Audit lines name users and objects; unfurling or pinging everyone would only add noise.
      await client.chat.postMessage({
        channel,
        text: safe(text, SlackLimit.Section),
        unfurl_links: false,
        unfurl_media: false,
      });
    },
    async postEntry(entry) {
      // A reason like `<!channel> …` must reach the audit channel as text, never as a ping.
      await client.chat.postMessage({
        channel,
        text: clip(renderAuditLine(entry), SlackLimit.Section),
        unfurl_links: false,
        unfurl_media: false,
      });
    },
  };
}

/** User-group membership for the approver policy (`usergroups.users.list`). */
export function createSlackDirectory(client: WebClient): SlackDirectory {
  return {
    async usergroupMembers(groupId) {
      try {
        const res = await client.usergroups.users.list({ usergroup: groupId });
        return res.users ?? [];
      } catch (err) {
        const code = slackErrorCode(err);
        throw new UnstuckError(
          ErrorCode.Upstream,
          `Could not read the members of user group ${groupId} from Slack (${code ?? "unreachable"}), so approvers from that group cannot be checked right now.`,
          { group: groupId, ...(code !== undefined ? { slackError: code } : {}) },
          { cause: err },
        );
      }
    },
  };
}
