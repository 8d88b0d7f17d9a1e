/**
 * The *Fix the path* button of a traffic-path card: a form opens at once ("tracing…") while the path
 * is planned afresh; with nothing to repair the form says so and the card loses its button, otherwise
 * the form asks why. On submit the path is traced and planned afresh again (never from what the card
 * showed: the button value only names the hostnames or the namespace, and in a fleet the cluster of
 * the card) and the plan is posted as an approval request like `/unstuck repoint … --reason`; once
 * that repair is made, the worker repaints the card without its button.
 *
 * The value comes back from Slack: it is re-validated (namespace or DNS names) before any read.
 */
import type { KnownBlock, View } from "@slack/types";
import { MIN_REASON_LENGTH } from "../approvals/reason.js";
import { assertHostname } from "../edge/hostname.js";
import type { ApprovalRequest, Identity } from "../requests/model.js";
import { ErrorCode, toUserError, UnstuckError } from "../errors.js";
import { assertNamespaceName } from "../kube/names.js";
import type { RepairCards } from "../jobs/repair-cards.js";
import type { RepairCheck, RepairSubject } from "../traffic/repoint.js";
import { registerActions, type ActionContext, type ActionHandler } from "./actions.js";
import type { SlackApp } from "./slack-app.js";
import { postRequest, tellRequester, type ApprovalActionDeps } from "./approvals.js";
import { clusterField, clusterOfValue } from "./blocks/cluster-value.js";
import { hasRepairButton, REPAIR_PATH_ACTION, renderTraceNothingToRepair } from "./blocks/trace.js";
import { clip, esc, safe } from "./blocks/text.js";
import { scopeOf } from "./middleware.js";
import { slackErrorCode } from "./slack-errors.js";
import { slackUserError } from "./blocks/error-text.js";

export const REPAIR_SUBMIT_CALLBACK = "path-repair-submit";
const REASON_FIELD = "reason";
const CHANNEL_ID = /^[CGD][A-Z0-9]{2,}$/;

interface RepairMetadata {
  readonly subject: RepairSubject;
  readonly channelId: string;
  /** In a fleet: the cluster of the card whose button opened the form. */
  readonly cluster?: string;
  /** The card whose button opened the form (its ts, in `channelId`), repainted once the repair is made. */
  readonly cardTs?: string;
}
const MESSAGE_TS = /^\d{1,12}\.\d{1,8}$/;

function bad(what: string): UnstuckError {
  return new UnstuckError(ErrorCode.BadInput, `The repair button carried an invalid ${what}.`);
}

/** Re-validate a button value or form metadata subject: `{ns}` or `{hosts: [...]}` (at most 20). */
export function parseRepairSubject(raw: unknown): RepairSubject {
  if (typeof raw !== "object" || raw === null) throw bad("value");
  const v = raw as Record<string, unknown>;
  if (typeof v["ns"] === "string") return { namespace: assertNamespaceName(v["ns"]) };
  const hosts = v["hosts"];
  if (Array.isArray(hosts) && hosts.length > 0 && hosts.length <= 20) {
    return { hostnames: hosts.map((h) => assertHostname(typeof h === "string" ? h : "")) };
  }
  throw bad("value");
}

function describeSubject(s: RepairSubject): string {
  return "namespace" in s ? `namespace ${s.namespace}` : s.hostnames.join(", ");
}

const MODAL_TITLE = { type: "plain_text", text: "Fix the traffic path" } as const;

/** What the form shows while the path is planned afresh (no submit: there is nothing to answer yet). */
function checkingModal(subject: RepairSubject): View {
  return {
    type: "modal",
    title: MODAL_TITLE,
    close: { type: "plain_text", text: "Cancel" },
    blocks: [
      {
        type: "section",
        text: {
          type: "mrkdwn",
          text: clip(
            `:hourglass_flowing_sand: Tracing the traffic path of *${esc(describeSubject(subject))}* again, to see what is left to repair…`,
          ),
        },
      },
    ],
  };
}

/** The form once the check found nothing to do, or could not check: no reason is asked for. */
function answerModal(text: string): View {
  return {
    type: "modal",
    title: MODAL_TITLE,
    close: { type: "plain_text", text: "Close" },
    blocks: [{ type: "section", text: { type: "mrkdwn", text: safe(text, 2900) } }],
  };
}

function repairModal(meta: RepairMetadata): View {
  const { subject, channelId, cluster, cardTs } = meta;
  // The same shape as the button's value, re-validated by the same parser when the form comes back.
  const metadata = {
    subject: "namespace" in subject ? { ns: subject.namespace } : { hosts: subject.hostnames },
    channelId,
    ...(cluster !== undefined ? { cluster } : {}),
    ...(cardTs !== undefined ? { cardTs } : {}),
  };
  const blocks: KnownBlock[] = [
    {
      type: "section",
      text: {
        type: "mrkdwn",
        text: clip(
          `Ask for approval to repair the traffic path of *${esc(describeSubject(subject))}*.\n` +
            `The path is traced again when you submit; the plan (exact Route 53 and CloudFront changes) is posted in <#${channelId}> and applied only after someone else on the approver list approves it.`,
        ),
      },
    },
    {
      type: "input",
      block_id: REASON_FIELD,
      label: { type: "plain_text", text: "Why this repair?" },
      hint: {
        type: "plain_text",
        text: "What is broken (e.g. 502 since 08:52) and why the new target is right.",
      },
      element: {
        type: "plain_text_input",
        action_id: REASON_FIELD,
        multiline: true,
        min_length: MIN_REASON_LENGTH,
        max_length: 2000,
      },
    },
  ];
  return {
    type: "modal",
    callback_id: REPAIR_SUBMIT_CALLBACK,
    private_metadata: JSON.stringify(metadata),
    title: MODAL_TITLE,
    submit: { type: "plain_text", text: "Request approval" },
    close: { type: "plain_text", text: "Cancel" },
    blocks,
  };
}

export interface RepairActionDeps extends Pick<ApprovalActionDeps, "workflow" | "now" | "log"> {
  /**
   * Plans `subject` afresh to say whether there is anything to repair, before a reason is asked for
   * (in a fleet on `cluster`, the one the button named). Throws `UnstuckError` when it cannot tell.
   */
  readonly checkRepair: (
    subject: RepairSubject,
    cluster?: string,
    channelId?: string,
  ) => Promise<RepairCheck>;
  /** Where the card a repair was asked from is remembered, so the worker can take its button off. */
  readonly cards?: Pick<RepairCards, "remember" | "link">;
  /**
   * Trace and plan `subject` afresh and create the request; throws `UnstuckError` (e.g. nothing to
   * repair). In a fleet on `cluster`, the one the button named (`undefined`: chosen as before).
   */
  readonly requestRepair: (
    input: {
      readonly subject: RepairSubject;
      readonly reason: string;
      readonly requester: Identity;
      readonly channelId: string;
    },
    cluster?: string,
  ) => Promise<ApprovalRequest>;
}

/** A *Fix the path* click, re-validated: what to repair, in which channel and cluster, and the form's trigger. */
interface RepairClick {
  readonly subject: RepairSubject;
  readonly cluster: string | undefined;
  readonly channelId: string;
  readonly triggerId: string;
}

/** Re-validate a click's button value, channel and trigger id; throws `UnstuckError(BadInput)`. */
function parseRepairClick(ctx: ActionContext): RepairClick {
  const channelId = ctx.message?.channelId ?? ctx.scope.actor.channelId;
  let raw: unknown;
  try {
    raw = JSON.parse(ctx.action.value ?? "");
  } catch {
    throw bad("value");
  }
  const subject = parseRepairSubject(raw);
  const cluster = clusterOfValue(ctx.action.value);
  if (channelId === undefined || !CHANNEL_ID.test(channelId)) throw bad("channel");
  if (ctx.triggerId === undefined) {
    throw new UnstuckError(ErrorCode.BadInput, "Slack sent no trigger id, so I cannot open the form.");
  }
  return { subject, cluster, channelId, triggerId: ctx.triggerId };
}

/** The form a click opened: later answers replace what it says (by its id, and hash when given). */
interface OpenedForm {
  readonly id: string;
  readonly hash?: string;
}

/**
 * Open the form now, saying the path is being traced: the trigger lasts 3 s and a trace may take
 * longer. `undefined` when Slack named no form.
 */
async function openCheckingForm(ctx: ActionContext, click: RepairClick): Promise<OpenedForm | undefined> {
  const opened = await ctx.client.views.open({
    trigger_id: click.triggerId,
    view: checkingModal(click.subject),
  });
  if (opened.view?.id === undefined) return undefined;
  return { id: opened.view.id, ...(opened.view.hash !== undefined ? { hash: opened.view.hash } : {}) };
}

/** Replace what the open form says; nothing when no form is open. */
async function showInForm(ctx: ActionContext, form: OpenedForm | undefined, view: View): Promise<void> {
  if (form === undefined) return;
  await ctx.client.views.update({
    view_id: form.id,
    ...(form.hash !== undefined ? { hash: form.hash } : {}),
    view,
  });
}

/**
 * Nothing to repair: the form says why, and so does the card instead of its button, which can do
 * nothing more (best effort; a card whose button is already gone, repaired meanwhile, stays as it is).
 */
async function answerNothingToRepair(
  ctx: ActionContext,
  deps: Pick<RepairActionDeps, "now">,
  form: OpenedForm | undefined,
  why: string,
): Promise<void> {
  await showInForm(ctx, form, answerModal(`:information_source: ${why}`));
  const card = ctx.message;
  if (card?.blocks !== undefined && hasRepairButton(card.blocks)) {
    await ctx.client.chat
      .update({
        channel: card.channelId,
        ts: card.ts,
        ...renderTraceNothingToRepair(card.blocks, why, ctx.scope.actor.userId, deps.now()),
      })
      .catch((err: unknown) =>
        ctx.scope.log.warn({ code: slackErrorCode(err) }, "the path card could not be repainted"),
      );
  }
}

/** Something to repair: the card is remembered (for the worker to repaint it) and the form asks why. */
async function askForReason(
  ctx: ActionContext,
  deps: Pick<RepairActionDeps, "cards">,
  form: OpenedForm | undefined,
  click: RepairClick,
): Promise<void> {
  const card = ctx.message;
  if (card?.blocks !== undefined && deps.cards !== undefined) {
    await deps.cards
      .remember({ channel: card.channelId, ts: card.ts })
      .catch((err: unknown) =>
        ctx.scope.log.warn({ err: toUserError(err).message }, "the path card was not remembered"),
      );
  }
  await showInForm(
    ctx,
    form,
    repairModal({
      subject: click.subject,
      channelId: click.channelId,
      ...(click.cluster !== undefined ? { cluster: click.cluster } : {}),
      ...(card !== undefined && MESSAGE_TS.test(card.ts) ? { cardTs: card.ts } : {}),
    }),
  );
}

/**
 * A click that could not be answered: said in the form when it is open (the asker is looking at
 * it), else privately in the channel.
 */
async function reportRepairFormFailure(
  ctx: ActionContext,
  form: OpenedForm | undefined,
  err: unknown,
): Promise<void> {
  const code = slackErrorCode(err);
  const text =
    code !== undefined
      ? `:warning: Slack did not ${form === undefined ? "open" : "update"} the form (${code}). Click the button again.`
      : `:no_entry_sign: ${toUserError(err).message}`;
  const told = await showInForm(ctx, form, answerModal(text)).then(
    () => form !== undefined,
    () => false,
  );
  if (!told)
    await ctx.respond({
      response_type: "ephemeral",
      replace_original: false,
      text: safe(text, 1000),
    });
}

/**
 * The *Fix the path* button: the form opens at once, the path is planned afresh, and the form then
 * either says there is nothing to repair or asks why.
 */
function repairButtonHandler(deps: RepairActionDeps): ActionHandler {
  return async (ctx) => {
    let form: OpenedForm | undefined;
    try {
      const click = parseRepairClick(ctx);
      form = await openCheckingForm(ctx, click);
      const check = await deps.checkRepair(click.subject, click.cluster, click.channelId);
      if (!check.repairable) {
        await answerNothingToRepair(ctx, deps, form, check.why);
        ctx.scope.log.info({ subject: click.subject }, "path repair: nothing to repair");
        return;
      }
      await askForReason(ctx, deps, form, click);
      ctx.scope.log.info({ subject: click.subject }, "path repair form opened");
    } catch (err) {
      await reportRepairFormFailure(ctx, form, err);
    }
  };
}

/** The form's private metadata, re-validated like the button value; throws when it is not ours. */
function parseRepairMetadata(privateMetadata: string): RepairMetadata {
  const parsed = JSON.parse(privateMetadata) as Record<string, unknown>;
  const channelId = parsed["channelId"];
  if (typeof channelId !== "string" || !CHANNEL_ID.test(channelId)) throw bad("channel");
  const cluster = clusterField(parsed["cluster"]);
  const cardTs = parsed["cardTs"];
  if (cardTs !== undefined && (typeof cardTs !== "string" || !MESSAGE_TS.test(cardTs))) throw bad("card");
  return {
    subject: parseRepairSubject(parsed["subject"]),
    channelId,
    ...(cluster !== undefined ? { cluster } : {}),
    ...(typeof cardTs === "string" ? { cardTs } : {}),
  };
}

/**
 * The form's submission: the reason is checked in the form, which then closes; the path is traced
 * and planned afresh and the request posted in the channel (a refusal is told to the requester).
 */
function registerRepairSubmit(slackApp: SlackApp, deps: RepairActionDeps): void {
  slackApp.forms.register(
    REPAIR_SUBMIT_CALLBACK,
    REASON_FIELD,
    async ({ ack, body, view, client, context }) => {
      const log = scopeOf(context).log;
      const requester: Identity = { userId: body.user.id, teamId: body.user.team_id ?? body.team?.id ?? "" };
      const reason = (view.state.values[REASON_FIELD]?.[REASON_FIELD]?.value ?? "").trim();
      let meta: RepairMetadata;
      try {
        meta = parseRepairMetadata(view.private_metadata);
      } catch (err) {
        await ack({ response_action: "errors", errors: { [REASON_FIELD]: toUserError(err).message } });
        return;
      }
      if (reason.length < MIN_REASON_LENGTH) {
        await ack({
          response_action: "errors",
          errors: { [REASON_FIELD]: `Say why in at least ${String(MIN_REASON_LENGTH)} characters.` },
        });
        return;
      }
      // Tracing takes longer than Slack waits for a form: close it now, report in the channel.
      await ack();
      try {
        const request = await deps.requestRepair(
          { subject: meta.subject, reason, requester, channelId: meta.channelId },
          meta.cluster,
        );
        await postRequest(client, deps, request, requester, log);
        // Once this repair is made, the card it was asked from loses its button (the worker repaints it).
        if (meta.cardTs !== undefined && deps.cards !== undefined) {
          await deps.cards
            .link(request.id, { channel: meta.channelId, ts: meta.cardTs })
            .catch((err: unknown) =>
              log.warn({ err: toUserError(err).message }, "the path card was not linked to its request"),
            );
        }
      } catch (err) {
        log.info({ code: toUserError(err).code }, "path repair request refused");
        await tellRequester(
          client,
          meta.channelId,
          requester.userId,
          `:no_entry_sign: ${slackUserError(err).message}`,
          log,
        );
      }
    },
  );
}

/** Register the *Fix the path* button and the form it opens. */
export function registerRepairActions(slackApp: SlackApp, deps: RepairActionDeps): void {
  registerActions(slackApp, [{ actionId: REPAIR_PATH_ACTION, handler: repairButtonHandler(deps) }]);
  registerRepairSubmit(slackApp, deps);
}
