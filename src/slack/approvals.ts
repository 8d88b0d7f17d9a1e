/**
 * The Slack side of two-person approvals: the approve/deny/cancel buttons, the "Request finalizer removal"
 * button and its form's submission, and the one path that posts a new request in its channel.
 *
 * Trust: a click or a modal submission is signed by Slack, but everything in it except the user id is
 * client-supplied. Handlers therefore take the identity from `body.user` only, act on a request only by the id
 * the bot issued (the workflow rejects malformed and unknown ids), and re-validate any target a button or a
 * modal carries before the workflow re-reads the object from the cluster.
 */
import { webApi } from "@slack/bolt";
import { retrying } from "../approvals/notifier.js";
import { publishRequest, type PublishOutcome, type RequestMessenger } from "../approvals/publish.js";
import type { ApprovalRequest, Identity, RemovalRequestInput, VoteDecision } from "../requests/model.js";
import { MAX_VOTE_REASON, type ApprovalWorkflow } from "../approvals/workflow.js";
import { ErrorCode, toUserError, UnstuckError } from "../errors.js";
import type { Logger } from "../log.js";
import { registerActions, type ActionContext, type ActionHandler } from "./actions.js";
import type { FormArgs } from "./forms.js";
import type { SlackApp } from "./slack-app.js";
import {
  ApprovalActionId,
  DENY_REASON_FIELD,
  DENY_SUBMIT_CALLBACK,
  renderApprovalDetails,
  renderApprovalRequest,
  renderDenyForm,
  renderLostRequest,
} from "./blocks/approval.js";
import { clusterOfValue } from "./blocks/cluster-value.js";
import { REQUEST_FINALIZE_ACTION } from "./blocks/diagnosis.js";
import { clip, safe } from "./blocks/text.js";
import { scopeOf } from "./middleware.js";
import { slackErrorCode } from "./slack-errors.js";
import { slackUserError } from "./blocks/error-text.js";
import { MIN_REASON_LENGTH } from "../approvals/reason.js";
import { slackRetryVerdict } from "./notifier.js";
import { orElse } from "../util/deadline.js";
import {
  badTarget,
  CHANNEL_ID,
  FINALIZE_SUBMIT_CALLBACK,
  FinalizeModalField,
  finalizeModal,
  parseFinalizer,
  parseModalMetadata,
  parseRemovalTarget,
  parseStatements,
  type ModalMetadata,
} from "./finalize-form.js";

type WebClient = webApi.WebClient;

/**
 * Slack closes a modal with an error after 3 s without an answer. The work behind a submission (one object
 * read, a few Redis calls) normally fits well inside this budget, so its errors can be shown in the modal;
 * if it does not, the modal is closed and the outcome is reported ephemerally instead.
 */
const SUBMIT_ACK_BUDGET_MS = 2_000;
// ---------------------------------------------------------------------------------------------------------
// Buttons and the modal
// ---------------------------------------------------------------------------------------------------------

export type { RemovalRequestInput };

export interface ApprovalActionDeps {
  readonly workflow: ApprovalWorkflow;
  /**
   * Creates a finalizer-removal request (the runtime builds the plan: evidence, clean-up). Throws
   * UnstuckError. In a fleet on `cluster`, the one the card's button named (`undefined`: chosen as before).
   */
  readonly createRemovalRequest: (input: RemovalRequestInput, cluster?: string) => Promise<ApprovalRequest>;
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

/** A form that did not open: Slack's refusal (say so, and to click again), or ours. */
async function formRefused(ctx: ActionContext, err: unknown, what: string, again: string): Promise<void> {
  const code = slackErrorCode(err);
  if (code === undefined) {
    await refuse(ctx, err, what);
    return;
  }
  ctx.scope.log.warn({ slackError: code }, "views.open failed");
  await answerPrivately(
    ctx,
    `:warning: Slack did not open the form (${code}${code === "expired_trigger_id" ? ": the click is more than 3 seconds old" : ""}). ${again}`,
  );
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

/** An approve click: the clicker's vote, bound to the channel of the clicked message. */
function voteHandler(deps: Pick<ApprovalActionDeps, "workflow">, decision: VoteDecision): ActionHandler {
  return async (ctx) => {
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
}

/** *Request finalizer removal*: the form for the object the button names, in its channel. */
const openFinalizeForm: ActionHandler = async (ctx) => {
  const channelId = ctx.message?.channelId ?? ctx.scope.actor.channelId;
  try {
    let raw: unknown;
    try {
      raw = JSON.parse(ctx.action.value ?? "");
    } catch {
      throw badTarget("unreadable button value");
    }
    const target = parseRemovalTarget(raw);
    const cluster = clusterOfValue(ctx.action.value);
    if (channelId === undefined || !CHANNEL_ID.test(channelId)) throw badTarget("channel");
    if (ctx.triggerId === undefined) {
      throw new UnstuckError(ErrorCode.BadInput, "Slack sent no trigger id, so I cannot open the form.");
    }
    await ctx.client.views.open({
      trigger_id: ctx.triggerId,
      view: finalizeModal(target, channelId, cluster),
    });
    ctx.scope.log.info({ target }, "finalizer removal form opened");
  } catch (err) {
    await formRefused(ctx, err, "finalizer removal form", "Click the button again.");
  }
};

/** Register the approval buttons, the "Request finalizer removal" button and its modal. */
export function registerApprovalActions(slackApp: SlackApp, deps: ApprovalActionDeps): void {
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

  /**
   * The request a button names, read (and verified) from the store, and the channel of the clicked
   * message, which must be the request's own: nothing of a request is shown or asked about from
   * anywhere else.
   */
  const requestClicked = async (
    ctx: ActionContext,
  ): Promise<{ request: ApprovalRequest; channelId: string }> => {
    const request = await deps.workflow.get(ctx.action.value ?? "");
    const channelId = ctx.message?.channelId ?? ctx.scope.actor.channelId;
    if (channelId === undefined || !CHANNEL_ID.test(channelId)) throw badTarget("channel");
    if (channelId !== request.channelId && channelId !== request.message?.channel) {
      throw new UnstuckError(ErrorCode.BadInput, "This request belongs to another channel: ask there.");
    }
    return { request, channelId };
  };

  // Read-only, and only in the request's own channel: the details of a request are not shown to a
  // click carrying its id from anywhere else.
  const details: ActionHandler = async (ctx) => {
    try {
      const { request } = await requestClicked(ctx);
      const shown = renderApprovalDetails(request);
      await ctx.respond({ response_type: "ephemeral", replace_original: false, ...shown });
      ctx.scope.log.info({ requestId: request.id }, "request details answered");
    } catch (err) {
      await refuse(ctx, err, "request details");
    }
  };

  // Deny asks first, in a form: it confirms the denial and takes an optional reason. Nothing is
  // counted until the form is submitted.
  const denyForm: ActionHandler = async (ctx) => {
    try {
      const { request, channelId } = await requestClicked(ctx);
      if (request.state !== "PENDING") {
        throw new UnstuckError(
          ErrorCode.InvalidState,
          `This request already ended ${request.state}; votes are closed.`,
        );
      }
      if (ctx.triggerId === undefined) {
        throw new UnstuckError(ErrorCode.BadInput, "Slack sent no trigger id, so I cannot open the form.");
      }
      await ctx.client.views.open({
        trigger_id: ctx.triggerId,
        view: renderDenyForm(request, channelId, MAX_VOTE_REASON),
      });
      ctx.scope.log.info({ requestId: request.id }, "deny form opened");
    } catch (err) {
      await formRefused(ctx, err, "deny form", "Click Deny again.");
    }
  };

  registerActions(slackApp, [
    { actionId: ApprovalActionId.Approve, handler: voteHandler(deps, "approve") },
    { actionId: ApprovalActionId.Deny, handler: denyForm },
    { actionId: ApprovalActionId.Cancel, handler: cancel },
    { actionId: ApprovalActionId.Details, handler: details },
    { actionId: REQUEST_FINALIZE_ACTION, handler: openFinalizeForm },
  ]);

  registerFinalizeSubmit(slackApp, deps);
  registerDenySubmit(slackApp, deps);
}

/** The request and channel a deny form names; anything else is refused. */
function parseDenyMetadata(raw: string): { requestId: string; channelId: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new UnstuckError(ErrorCode.BadInput, "This form does not name a request.");
  }
  const m = (parsed ?? {}) as { requestId?: unknown; channelId?: unknown };
  if (typeof m.requestId !== "string" || typeof m.channelId !== "string" || !CHANNEL_ID.test(m.channelId)) {
    throw new UnstuckError(ErrorCode.BadInput, "This form does not name a request.");
  }
  return { requestId: m.requestId, channelId: m.channelId };
}

/**
 * The deny form's submission: the vote is cast now, by the user Slack signed, on the request and in
 * the channel the form was opened for (the workflow checks both); a refusal is shown in the form.
 */
function registerDenySubmit(slackApp: SlackApp, deps: ApprovalActionDeps): void {
  slackApp.forms.register(DENY_SUBMIT_CALLBACK, DENY_REASON_FIELD, async ({ ack, body, view, context }) => {
    const log = scopeOf(context).log;
    const voter: Identity = { userId: body.user.id, teamId: body.user.team_id ?? body.team?.id ?? "" };
    const reason = view.state.values[DENY_REASON_FIELD]?.[DENY_REASON_FIELD]?.value ?? "";
    try {
      const meta = parseDenyMetadata(view.private_metadata);
      const { request } = await deps.workflow.vote(meta.requestId, voter, "deny", {
        channelId: meta.channelId,
        ...(reason.trim() !== "" ? { reason } : {}),
      });
      log.info({ requestId: request.id, state: request.state }, "deny recorded");
      await ack();
    } catch (err) {
      const { code } = toUserError(err);
      if (code === ErrorCode.Internal) log.error({ err }, "deny failed");
      else log.info({ code }, "deny refused");
      await ack({
        response_action: "errors",
        errors: { [DENY_REASON_FIELD]: clip(slackUserError(err).message, 300) },
      });
    }
  });
}

type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );
}

/**
 * The finalizer-removal form's submission: the form read and checked, then the request created by
 * the user Slack signed, for the object and channel the form was opened for.
 */
function registerFinalizeSubmit(slackApp: SlackApp, deps: ApprovalActionDeps): void {
  slackApp.forms.register(
    FINALIZE_SUBMIT_CALLBACK,
    FinalizeModalField.Reason,
    async ({ ack, body, view, client, context }) => {
      const log = scopeOf(context).log;
      // Identity from the signed payload's user only; the team from the user or, failing that, the workspace.
      const requester: Identity = { userId: body.user.id, teamId: body.user.team_id ?? body.team?.id ?? "" };
      const form = readFinalizeForm(view);
      if ("errors" in form) {
        await ack({ response_action: "errors", errors: form.errors });
        return;
      }
      await submitRemovalRequest({ ack, client, deps, log }, form, requester);
    },
  );
}

/** A finalizer-removal form, read and checked: what `createRemovalRequest` is asked for. */
interface FinalizeForm {
  readonly meta: ModalMetadata;
  /** The one finalizer to remove; `undefined`: all of them. */
  readonly finalizer: string | undefined;
  readonly reason: string;
  readonly statements: ReturnType<typeof parseStatements>["statements"];
}

/**
 * The form's fields, or its errors by field (as Slack shows them, beside the input): unreadable
 * metadata or a malformed finalizer is refused alone; then every missing statement and a short
 * reason at once.
 */
function readFinalizeForm(
  view: FormArgs["view"],
): FinalizeForm | { readonly errors: Record<string, string> } {
  const values = view.state.values;
  const reason = (values[FinalizeModalField.Reason]?.[FinalizeModalField.Reason]?.value ?? "").trim();
  const finalizerRaw = values[FinalizeModalField.Finalizer]?.[FinalizeModalField.Finalizer]?.value;

  let meta: ModalMetadata;
  let finalizer: string | undefined;
  try {
    meta = parseModalMetadata(view.private_metadata);
  } catch (err) {
    return { errors: { [FinalizeModalField.Reason]: toUserError(err).message } };
  }
  try {
    finalizer = parseFinalizer(finalizerRaw);
  } catch (err) {
    return { errors: { [FinalizeModalField.Finalizer]: toUserError(err).message } };
  }
  // Each statement is required (Slack's client enforces it, a crafted submission does not), and the
  // reason's length is enforced here, not only by the modal's `min_length`. All problems at once.
  const { statements, missing } = parseStatements(values);
  const errors: Record<string, string> = Object.fromEntries(
    missing.map((id) => [id, "Tick this to request the removal: approvers are shown it as your statement."]),
  );
  if (reason.length < MIN_REASON_LENGTH) {
    errors[FinalizeModalField.Reason] =
      `Say why recovery comes first in at least ${MIN_REASON_LENGTH} characters (what is down, why the clean-up can follow).`;
  }
  if (Object.keys(errors).length > 0) return { errors };
  return { meta, finalizer, reason, statements };
}

/** What answering a finalizer-removal submission needs: its acknowledgement, the client, the deps, the log. */
interface SubmitContext {
  readonly ack: FormArgs["ack"];
  readonly client: WebClient;
  readonly deps: ApprovalActionDeps;
  readonly log: Logger;
}

/**
 * Create the request from a checked form. A refusal within the acknowledgement budget is shown in
 * the form; past it the form is closed, and the request posted in its channel or its refusal told
 * to the requester privately.
 */
async function submitRemovalRequest(
  ctx: SubmitContext,
  form: FinalizeForm,
  requester: Identity,
): Promise<void> {
  const { ack, client, deps, log } = ctx;
  const { meta, finalizer } = form;
  const work = settle(
    deps.createRemovalRequest(
      {
        ...meta.target,
        ...(finalizer !== undefined ? { finalizer } : {}),
        reason: form.reason,
        statements: form.statements,
        requester,
        channelId: meta.channelId,
      },
      meta.cluster,
    ),
  );
  // Settled within the budget, or `undefined`: answered after the form has closed.
  const early = await orElse(work, deps.submitBudgetMs ?? SUBMIT_ACK_BUDGET_MS, () => undefined);
  if (early !== undefined && !early.ok) {
    log.info({ code: toUserError(early.error).code }, "finalizer removal request refused");
    await ack({
      response_action: "errors",
      errors: { [FinalizeModalField.Reason]: clip(slackUserError(early.error).message, 300) },
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
      `:no_entry_sign: ${slackUserError(settled.error).message}`,
      log,
    );
    return;
  }
  await postRequest(client, deps, settled.value, requester, log);
}

/** The Slack half of a request message's life (the engine's `publishRequest` drives it): the card posted, and repainted. */
export function slackRequestMessenger(client: WebClient, now: () => Date): RequestMessenger {
  return {
    async publish(request) {
      const { text, blocks } = renderApprovalRequest(request, now());
      try {
        const ts = (await client.chat.postMessage({ channel: request.channelId, text, blocks })).ts;
        return ts !== undefined ? { ts } : { error: undefined };
      } catch (err) {
        return { error: slackErrorCode(err) };
      }
    },
    async update(message, request) {
      const { text, blocks } = renderApprovalRequest(request, now());
      await client.chat.update({ channel: message.channel, ts: message.ts, text, blocks });
    },
  };
}

/**
 * Post a new approval request through the engine's one publishing path, for the slash command and
 * every form: Slack is only the messenger. The caller tells the requester when it was not posted.
 */
export function postApprovalRequest(
  client: WebClient,
  deps: Pick<ApprovalActionDeps, "workflow" | "now">,
  request: ApprovalRequest,
  log: Logger,
): Promise<PublishOutcome> {
  return publishRequest(deps.workflow, slackRequestMessenger(client, deps.now), request, log);
}

/** What a form's submitter hears when the request could not be posted. */
export function unpostedText(
  outcome: Extract<PublishOutcome, { posted: false }>,
  request: ApprovalRequest,
): string {
  return outcome.cancelled
    ? ":warning: Your request could not be posted in the channel (invite me with `/invite @unstuck`), so no approver could see it; it was cancelled and nothing was changed."
    : `:warning: Your request could not be posted in the channel, and cancelling it failed: it stays pending (nothing was changed) until it expires at ${request.expiresAt}. Invite the bot and ask again; approvers can see it with \`/unstuck approvals\`.`;
}

/** Post a request made from a form and tell its requester privately if that failed. */
export async function postRequest(
  client: WebClient,
  deps: Pick<ApprovalActionDeps, "workflow" | "now">,
  request: ApprovalRequest,
  requester: Identity,
  log: Logger,
): Promise<void> {
  const outcome = await postApprovalRequest(client, deps, request, log);
  if (!outcome.posted) {
    await tellRequester(client, request.channelId, requester.userId, unpostedText(outcome, request), log);
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
