/**
 * The Slack side of two-person approvals: the notifier that keeps the request message current, the thread
 * reporter and audit mirror the jobs and audit log write through, the user-group directory the policy reads,
 * and the button and modal listeners.
 *
 * Trust: a click or a modal submission is signed by Slack, but everything in it except the user id is
 * client-supplied. Handlers therefore take the identity from `body.user` only, act on a request only by the id
 * the bot issued (the workflow rejects malformed and unknown ids), and re-validate any target a button or a
 * modal carries before the workflow re-reads the object from the cluster.
 */
import { webApi, type ViewSubmitAction } from "@slack/bolt";
import type { KnownBlock, View } from "@slack/types";
import { pino } from "pino";
import {
  retrying,
  type ApprovalNotifier,
  type RetryPolicy,
  type RetryVerdict,
} from "../approvals/notifier.js";
import type { SlackDirectory } from "../approvals/policy.js";
import type { ApprovalRequest, Identity, RequestState, VoteDecision } from "../approvals/types.js";
import type { ApprovalWorkflow } from "../approvals/workflow.js";
import type { AuditMirror } from "../audit/log.js";
import { ErrorCode, toUserError, UnstuckError } from "../errors.js";
import type { ThreadReporter } from "../jobs/waits.js";
import { assertNamespaceName, assertObjectName } from "../kube/names.js";
import type { Logger } from "../log.js";
import { registerActions, type ActionContext, type ActionHandler } from "./actions.js";
import type { SlackApp } from "./app.js";
import {
  ApprovalActionId,
  renderApprovalRequest,
  renderAuditLine,
  renderLostRequest,
} from "./blocks/approval.js";
import { REQUEST_FINALIZE_ACTION } from "./blocks/diagnosis.js";
import { clip, esc, safe, safeLine, SlackLimit } from "./blocks/text.js";
import { requestScope, scopeOf } from "./middleware.js";
import { slackErrorCode } from "./slack-errors.js";
import { MIN_REASON_LENGTH } from "../../commands/finalize.js";

type WebClient = webApi.WebClient;

/** Callback id of the "Request finalizer removal" modal. */
export const FINALIZE_SUBMIT_CALLBACK = "finalize:submit";
/** Block and action ids of the modal's inputs (`view.state.values[block][action]`). */
export const FinalizeModalField = { Reason: "reason", Finalizer: "finalizer" } as const;

/**
 * Slack closes a modal with an error after 3 s without an answer. The work behind a submission (one object
 * read, a few Redis calls) normally fits well inside this budget, so its errors can be shown in the modal;
 * if it does not, the modal is closed and the outcome is reported ephemerally instead.
 */
const SUBMIT_ACK_BUDGET_MS = 2_000;

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
    async threadReply(request, text) {
      const message = request.message;
      if (message === undefined) return;
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
export function createSlackThreadReporter(client: WebClient): ThreadReporter {
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
      return { ts: res.ts };
    },
  };
}

/** Copies audit lines to `UNSTUCK_AUDIT_CHANNEL`; the Redis stream stays the record. */
export function createSlackAuditMirror(client: WebClient, channel: string): AuditMirror {
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

// ---------------------------------------------------------------------------------------------------------
// Targets carried by buttons and modals
// ---------------------------------------------------------------------------------------------------------

/** The object a "Request finalizer removal" button names. Client-supplied until validated. */
export interface RemovalTarget {
  readonly resource: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

const RESOURCE = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const API_VERSION = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?v[0-9]+([a-z]+[0-9]+)?$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;
/** A qualified name as Kubernetes validates finalizers: optional DNS prefix, e.g. `foregroundDeletion`, `ingress.k8s.aws/resources`. */
const FINALIZER = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const CHANNEL_ID = /^[CGD][A-Z0-9]{2,}$/;

function badTarget(what: string): UnstuckError {
  return new UnstuckError(
    ErrorCode.BadInput,
    `This button does not name a valid object (${what}); run \`/unstuck ns <namespace>\` again and use the new message.`,
  );
}

/** Validate a target from a button value or modal metadata; throws `BadInput`/`InvalidName`. */
export function parseRemovalTarget(raw: unknown): RemovalTarget {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw badTarget("not an object");
  const r = raw as Record<string, unknown>;
  const field = (key: string, pattern: RegExp, max: number): string => {
    const v = r[key];
    if (typeof v !== "string" || v.length === 0 || v.length > max || !pattern.test(v)) throw badTarget(key);
    return v;
  };
  const resource = field("resource", RESOURCE, 253);
  const apiVersion = field("apiVersion", API_VERSION, 253);
  const kind = field("kind", KIND, 63);
  const namespace = r["namespace"];
  const name = r["name"];
  if (typeof namespace !== "string" || typeof name !== "string") throw badTarget("namespace/name");
  return {
    resource,
    apiVersion,
    kind,
    namespace: assertNamespaceName(namespace),
    name: assertObjectName(name),
  };
}

/** Validate an optional finalizer name typed into the modal; `undefined` means "all of them". */
export function parseFinalizer(raw: string | null | undefined): string | undefined {
  const value = (raw ?? "").trim();
  if (value.length === 0) return undefined;
  if (value.length > 316 || !FINALIZER.test(value)) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      `"${value.slice(0, 80)}" is not a finalizer name (e.g. ingress.k8s.aws/resources). Leave it empty to remove all of them.`,
    );
  }
  return value;
}

interface ModalMetadata {
  readonly target: RemovalTarget;
  readonly channelId: string;
}

/** Parse and re-validate the modal's `private_metadata` (it went through Slack and back). */
export function parseModalMetadata(raw: string): ModalMetadata {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw badTarget("unreadable form metadata");
  }
  if (typeof parsed !== "object" || parsed === null) throw badTarget("form metadata");
  const m = parsed as Record<string, unknown>;
  const channelId = m["channelId"];
  if (typeof channelId !== "string" || !CHANNEL_ID.test(channelId)) throw badTarget("channel");
  return { target: parseRemovalTarget(m["target"]), channelId };
}

/** The modal that asks why (required) and which finalizer (optional). */
export function finalizeModal(target: RemovalTarget, channelId: string): View {
  const metadata: ModalMetadata = { target, channelId };
  const blocks: KnownBlock[] = [
    {
      type: "section",
      text: {
        type: "mrkdwn",
        text: clip(
          `Ask for approval to remove a finalizer from *${esc(target.kind)} \`${esc(target.namespace)}/${esc(target.name)}\`* (${esc(target.apiVersion)}).\n` +
            `Someone else on the approver list must approve it in <#${channelId}>. The change is bound to the object as it is now and is not applied if the object changes meanwhile.`,
        ),
      },
    },
    {
      type: "input",
      block_id: FinalizeModalField.Reason,
      label: { type: "plain_text", text: "Why does recovery come first?" },
      hint: {
        type: "plain_text",
        text: "Cause confirmed, what is down, and why the clean-up can follow. Shown to approvers and kept in the audit log.",
      },
      element: {
        type: "plain_text_input",
        action_id: FinalizeModalField.Reason,
        multiline: true,
        min_length: MIN_REASON_LENGTH,
        max_length: 2000,
      },
    },
    {
      type: "input",
      block_id: FinalizeModalField.Finalizer,
      optional: true,
      label: { type: "plain_text", text: "Which finalizer" },
      hint: { type: "plain_text", text: "Leave empty to remove all finalizers the object has now." },
      element: {
        type: "plain_text_input",
        action_id: FinalizeModalField.Finalizer,
        placeholder: { type: "plain_text", text: "e.g. ingress.k8s.aws/resources" },
        max_length: 316,
      },
    },
  ];
  return {
    type: "modal",
    callback_id: FINALIZE_SUBMIT_CALLBACK,
    private_metadata: JSON.stringify(metadata),
    title: { type: "plain_text", text: "Remove a finalizer" },
    submit: { type: "plain_text", text: "Request approval" },
    close: { type: "plain_text", text: "Cancel" },
    blocks,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Buttons and the modal
// ---------------------------------------------------------------------------------------------------------

export interface RemovalRequestInput {
  readonly namespace: string;
  readonly resource: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly finalizer?: string;
  readonly reason: string;
  readonly requester: Identity;
  readonly channelId: string;
}

export interface ApprovalActionDeps {
  readonly workflow: ApprovalWorkflow;
  /** Creates a finalizer-removal request (the runtime builds the plan: evidence, clean-up). Throws UnstuckError. */
  readonly createRemovalRequest: (input: RemovalRequestInput) => Promise<ApprovalRequest>;
  readonly now: () => Date;
  /** Logger for the modal submissions (buttons log through the request scope); silent when absent. */
  readonly log?: Logger;
  /**
   * How long a modal submission may wait for `createRemovalRequest` before the modal is closed and the
   * outcome is reported ephemerally instead (default 2 s; Slack gives up at 3 s).
   */
  readonly submitBudgetMs?: number;
}

function identityOfActor(ctx: ActionContext): Identity | undefined {
  const { userId, teamId } = ctx.scope.actor;
  return userId.length > 0 ? { userId, teamId } : undefined;
}

async function answerPrivately(ctx: ActionContext, text: string): Promise<void> {
  // replace_original: false keeps the shared request message exactly as it is for everyone else.
  // Refusals quote error messages that may echo client-supplied values.
  await ctx.respond({ response_type: "ephemeral", replace_original: false, text: safe(text, 1000) });
}

async function refuse(ctx: ActionContext, err: unknown, what: string): Promise<void> {
  const { code, message } = toUserError(err);
  if (code === ErrorCode.Internal) ctx.scope.log.error({ err }, `${what} failed`);
  else ctx.scope.log.info({ code }, `${what} refused`);
  if (code === ErrorCode.NotFound) await repaintLost(ctx);
  await answerPrivately(ctx, `:no_entry_sign: ${message}`);
}

const APPROVAL_ACTION_IDS: ReadonlySet<string> = new Set(Object.values(ApprovalActionId));

/**
 * A click on a request the store no longer has (expired and cleaned up, or lost with Redis): the
 * message still shows live buttons, so repaint it "expired / lost" without them. Only a button of the
 * bot's own request block (block id `approval-actions:<the id in its value>`) is repainted.
 */
async function repaintLost(ctx: ActionContext): Promise<void> {
  const requestId = ctx.action.value ?? "";
  if (
    ctx.message === undefined ||
    !APPROVAL_ACTION_IDS.has(ctx.action.actionId) ||
    ctx.action.blockId !== `approval-actions:${requestId}`
  ) {
    return;
  }
  try {
    await retrying(
      () =>
        ctx.client.chat.update({
          channel: ctx.message?.channelId ?? "",
          ts: ctx.message?.ts ?? "",
          ...renderLostRequest(requestId),
        }),
      slackRetryVerdict,
      { attempts: 3, budgetMs: 5_000 },
    );
    ctx.scope.log.info({ requestId: requestId.slice(0, 64) }, "repainted a lost request's message");
  } catch (err) {
    ctx.scope.log.warn(
      { slackError: slackErrorCode(err) ?? "unknown" },
      "could not repaint a lost request's message",
    );
  }
}

/** Register the approval buttons, the "Request finalizer removal" button and its modal. */
export function registerApprovalActions(slackApp: SlackApp, deps: ApprovalActionDeps): void {
  const vote =
    (decision: VoteDecision): ActionHandler =>
    async (ctx) => {
      const who = identityOfActor(ctx);
      if (who === undefined) {
        await answerPrivately(
          ctx,
          ":no_entry_sign: I could not tell who clicked, so the vote was not counted.",
        );
        return;
      }
      try {
        // The channel of the clicked message (signed payload): bound into the vote and checked
        // against the request's own channel.
        const channelId = ctx.message?.channelId ?? ctx.scope.actor.channelId;
        const { request, transitioned } = await deps.workflow.vote(ctx.action.value ?? "", who, decision, {
          ...(channelId !== undefined ? { channelId } : {}),
        });
        ctx.scope.log.info(
          { requestId: request.id, decision, state: request.state, transitioned },
          "vote recorded",
        );
      } catch (err) {
        await refuse(ctx, err, `vote (${decision})`);
      }
    };

  const cancel: ActionHandler = async (ctx) => {
    const who = identityOfActor(ctx);
    if (who === undefined) {
      await answerPrivately(ctx, ":no_entry_sign: I could not tell who clicked, so nothing was cancelled.");
      return;
    }
    try {
      const request = await deps.workflow.cancel(ctx.action.value ?? "", who);
      ctx.scope.log.info({ requestId: request.id }, "request cancelled");
    } catch (err) {
      await refuse(ctx, err, "cancel");
    }
  };

  const openModal: ActionHandler = async (ctx) => {
    const channelId = ctx.message?.channelId ?? ctx.scope.actor.channelId;
    try {
      let raw: unknown;
      try {
        raw = JSON.parse(ctx.action.value ?? "");
      } catch {
        throw badTarget("unreadable button value");
      }
      const target = parseRemovalTarget(raw);
      if (channelId === undefined || !CHANNEL_ID.test(channelId)) throw badTarget("channel");
      if (ctx.triggerId === undefined) {
        throw new UnstuckError(ErrorCode.BadInput, "Slack sent no trigger id, so I cannot open the form.");
      }
      await ctx.client.views.open({ trigger_id: ctx.triggerId, view: finalizeModal(target, channelId) });
      ctx.scope.log.info({ target }, "finalizer removal form opened");
    } catch (err) {
      const code = slackErrorCode(err);
      if (code !== undefined) {
        ctx.scope.log.warn({ slackError: code }, "views.open failed");
        await answerPrivately(
          ctx,
          `:warning: Slack did not open the form (${code}${code === "expired_trigger_id" ? ": the click is more than 3 seconds old" : ""}). Click the button again.`,
        );
        return;
      }
      await refuse(ctx, err, "finalizer removal form");
    }
  };

  registerActions(slackApp, [
    { actionId: ApprovalActionId.Approve, handler: vote("approve") },
    { actionId: ApprovalActionId.Deny, handler: vote("deny") },
    { actionId: ApprovalActionId.Cancel, handler: cancel },
    { actionId: REQUEST_FINALIZE_ACTION, handler: openModal },
  ]);

  registerFinalizeSubmit(slackApp, deps);
}

type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );
}

/** Resolves with `undefined` after `ms`, unless `cancel` is called first (so no timer outlives a request). */
function budget(ms: number): { promise: Promise<undefined>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      resolve(undefined);
    }, ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

function registerFinalizeSubmit(slackApp: SlackApp, deps: ApprovalActionDeps): void {
  const baseLog = deps.log ?? pino({ level: "silent" });
  slackApp.app.view<ViewSubmitAction>(
    { callback_id: FINALIZE_SUBMIT_CALLBACK, type: "view_submission" },
    requestScope(baseLog),
    async ({ ack, body, view, client, context }) => {
      const log = scopeOf(context).log;
      // Identity from the signed payload's user only; the team from the user or, failing that, the workspace.
      const requester: Identity = { userId: body.user.id, teamId: body.user.team_id ?? body.team?.id ?? "" };
      const values = view.state.values;
      const reason = (values[FinalizeModalField.Reason]?.[FinalizeModalField.Reason]?.value ?? "").trim();
      const finalizerRaw = values[FinalizeModalField.Finalizer]?.[FinalizeModalField.Finalizer]?.value;

      let meta: ModalMetadata;
      let finalizer: string | undefined;
      try {
        meta = parseModalMetadata(view.private_metadata);
      } catch (err) {
        await ack({
          response_action: "errors",
          errors: { [FinalizeModalField.Reason]: toUserError(err).message },
        });
        return;
      }
      try {
        finalizer = parseFinalizer(finalizerRaw);
      } catch (err) {
        await ack({
          response_action: "errors",
          errors: { [FinalizeModalField.Finalizer]: toUserError(err).message },
        });
        return;
      }
      // Enforced here, not only by the modal's `min_length`: a crafted submission skips the client.
      if (reason.length < MIN_REASON_LENGTH) {
        await ack({
          response_action: "errors",
          errors: {
            [FinalizeModalField.Reason]: `Say why recovery comes first in at least ${MIN_REASON_LENGTH} characters (cause confirmed, clean-up plan).`,
          },
        });
        return;
      }

      const work = settle(
        deps.createRemovalRequest({
          ...meta.target,
          ...(finalizer !== undefined ? { finalizer } : {}),
          reason,
          requester,
          channelId: meta.channelId,
        }),
      );
      const timer = budget(deps.submitBudgetMs ?? SUBMIT_ACK_BUDGET_MS);
      const early = await Promise.race([work, timer.promise]);
      timer.cancel();
      if (early !== undefined && !early.ok) {
        log.info({ code: toUserError(early.error).code }, "finalizer removal request refused");
        await ack({
          response_action: "errors",
          errors: { [FinalizeModalField.Reason]: clip(toUserError(early.error).message, 300) },
        });
        return;
      }
      await ack();
      const settled = early ?? (await work);
      if (!settled.ok) {
        log.info(
          { code: toUserError(settled.error).code },
          "finalizer removal request refused after the form closed",
        );
        await tellRequester(
          client,
          meta.channelId,
          requester.userId,
          `:no_entry_sign: ${toUserError(settled.error).message}`,
          log,
        );
        return;
      }
      await postRequest(client, deps, settled.value, requester, log);
    },
  );
}

/** Post the new request in its channel and attach the message; a request nobody can see is cancelled. */
export async function postRequest(
  client: WebClient,
  deps: Pick<ApprovalActionDeps, "workflow" | "now">,
  request: ApprovalRequest,
  requester: Identity,
  log: Logger,
): Promise<void> {
  const channel = request.channelId;
  const { text, blocks } = renderApprovalRequest(request, deps.now());
  let ts: string | undefined;
  try {
    ts = (await client.chat.postMessage({ channel, text, blocks })).ts;
  } catch (err) {
    const code = slackErrorCode(err);
    log.warn({ requestId: request.id, slackError: code ?? "unknown" }, "could not post the approval request");
  }
  if (ts === undefined) {
    // Approvers could never see or click it, so it must not linger until expiry.
    await deps.workflow.cancel(request.id, requester).catch((err: unknown) => {
      log.warn({ err, requestId: request.id }, "could not cancel an approval request that was never posted");
    });
    await tellRequester(
      client,
      channel,
      requester.userId,
      ":warning: I could not post the approval request in this channel (invite me with `/invite @unstuck`), so I cancelled it.",
      log,
    );
    return;
  }
  await deps.workflow.attachMessage(request.id, { channel, ts });
  log.info({ requestId: request.id, channel, ts }, "approval request posted");
  // A vote between the post and the attach could not update the message; catch up with it now.
  const latest = await deps.workflow.get(request.id);
  if (latest.state !== request.state || latest.votes.length !== request.votes.length) {
    const fresh = renderApprovalRequest(latest, deps.now());
    await client.chat.update({ channel, ts, text: fresh.text, blocks: fresh.blocks });
  }
}

export async function tellRequester(
  client: WebClient,
  channel: string,
  user: string,
  text: string,
  log: Logger,
) {
  try {
    await client.chat.postEphemeral({ channel, user, text: safe(text, 1000) });
  } catch (err) {
    log.warn({ slackError: slackErrorCode(err) ?? "unknown" }, "could not tell the requester");
  }
}
