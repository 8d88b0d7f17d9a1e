/**
 * The *Fix the path* button of a traffic-path card: a form asks why, then the path is traced and
 * planned afresh (never from what the card showed: the button value only names the hostnames or the
 * namespace, and in a fleet the cluster of the card) and the plan is posted as an approval request
 * like `/unstuck repoint … --reason`.
 *
 * The value comes back from Slack: it is re-validated (namespace or DNS names) before any read.
 */
import type { ViewSubmitAction } from "@slack/bolt";
import type { KnownBlock, View } from "@slack/types";
import { pino } from "pino";
import { MIN_REASON_LENGTH } from "../approvals/reason.js";
import { assertHostname } from "../edge/hostname.js";
import type { ApprovalRequest, Identity } from "../approvals/types.js";
import { ErrorCode, toUserError, UnstuckError } from "../errors.js";
import { assertNamespaceName } from "../kube/names.js";
import type { Logger } from "../log.js";
import type { RepairSubject } from "../traffic/repoint.js";
import { registerActions, type ActionContext } from "./actions.js";
import type { SlackApp } from "./slack-app.js";
import { postRequest, tellRequester, type ApprovalActionDeps } from "./approvals.js";
import { clusterField, clusterOfValue } from "./blocks/cluster-value.js";
import { REPAIR_PATH_ACTION } from "./blocks/trace.js";
import { clip, esc, safe } from "./blocks/text.js";
import { requestScope, scopeOf } from "./middleware.js";
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
}

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

function repairModal(subject: RepairSubject, channelId: string, cluster: string | undefined): View {
  // The same shape as the button's value, re-validated by the same parser when the form comes back.
  const metadata = {
    subject: "namespace" in subject ? { ns: subject.namespace } : { hosts: subject.hostnames },
    channelId,
    ...(cluster !== undefined ? { cluster } : {}),
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
    title: { type: "plain_text", text: "Fix the traffic path" },
    submit: { type: "plain_text", text: "Request approval" },
    close: { type: "plain_text", text: "Cancel" },
    blocks,
  };
}

export interface RepairActionDeps extends Pick<ApprovalActionDeps, "workflow" | "now" | "log"> {
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

export function registerRepairActions(slackApp: SlackApp, deps: RepairActionDeps): void {
  registerActions(slackApp, [
    {
      actionId: REPAIR_PATH_ACTION,
      handler: async (ctx: ActionContext) => {
        const channelId = ctx.message?.channelId ?? ctx.scope.actor.channelId;
        try {
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
            throw new UnstuckError(
              ErrorCode.BadInput,
              "Slack sent no trigger id, so I cannot open the form.",
            );
          }
          await ctx.client.views.open({
            trigger_id: ctx.triggerId,
            view: repairModal(subject, channelId, cluster),
          });
          ctx.scope.log.info({ subject }, "path repair form opened");
        } catch (err) {
          const code = slackErrorCode(err);
          const text =
            code !== undefined
              ? `:warning: Slack did not open the form (${code}). Click the button again.`
              : `:no_entry_sign: ${toUserError(err).message}`;
          await ctx.respond({ response_type: "ephemeral", replace_original: false, text: safe(text, 1000) });
        }
      },
    },
  ]);

  const baseLog: Logger = deps.log ?? pino({ level: "silent" });
  slackApp.app.view<ViewSubmitAction>(
    { callback_id: REPAIR_SUBMIT_CALLBACK, type: "view_submission" },
    requestScope(baseLog),
    async ({ ack, body, view, client, context }) => {
      const log = scopeOf(context).log;
      const requester: Identity = { userId: body.user.id, teamId: body.user.team_id ?? body.team?.id ?? "" };
      const reason = (view.state.values[REASON_FIELD]?.[REASON_FIELD]?.value ?? "").trim();
      let meta: RepairMetadata;
      try {
        const parsed = JSON.parse(view.private_metadata) as Record<string, unknown>;
        const channelId = parsed["channelId"];
        if (typeof channelId !== "string" || !CHANNEL_ID.test(channelId)) throw bad("channel");
        const cluster = clusterField(parsed["cluster"]);
        meta = {
          subject: parseRepairSubject(parsed["subject"]),
          channelId,
          ...(cluster !== undefined ? { cluster } : {}),
        };
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
