/**
 * The slash command listener: dispatch the text to the command registry and deliver the result. Reads (a
 * diagnosis) are posted in the channel where they were asked, so the whole incident channel sees the same
 * evidence; answers that concern only the asker go back only to them: `help`, errors (usage too), a
 * namespace that does not exist or is not stuck, the list of requests, a `repoint` with nothing to
 * request yet. Those worth showing the channel carry a *Share in channel* button, which runs the same
 * read again and posts it.
 */
import type { Middleware, RespondFn, SlackCommandMiddlewareArgs } from "@slack/bolt";
import type { CommandDispatcher, CommandServices } from "../command-contract.js";
import type { CommandResult } from "../command-result.js";
import { takeClusterFlag } from "../fleet/cluster-flag.js";
import { clusterOfResult, dispatchLine } from "../fleet/dispatcher.js";
import type { ActionRegistration } from "./actions.js";
import { answerFile, renderSlackMessage, type SlackMessage } from "./blocks/index.js";
import { attachAnswerFile } from "./answer-file.js";
import { clip, safe, SlackLimit } from "./blocks/text.js";
import { scopeOf } from "./middleware.js";
import { slackErrorCode } from "./slack-errors.js";
import type { WebClient } from "@slack/web-api";
import type { ApprovalRequest } from "../requests/model.js";
import type { Logger } from "../log.js";
import type { PublishOutcome } from "../approvals/publish.js";
import { unpostedText } from "./approvals.js";
import { attachTimelineFile, renderTimelineCard } from "./timeline.js";

export interface CommandListenerDeps {
  readonly registry: CommandDispatcher;
  readonly services: CommandServices;
  /** The slash command as configured (`/unstuck`), used as the prefix in help. */
  readonly command: string;
  /** Clock for timing; injected like everywhere else. */
  readonly now: () => Date;
  readonly afterPost?: AfterPost;
  /** Posts a new approval request (the path every form uses too); absent: posted like any result. */
  readonly postApprovalRequest?: PostApprovalRequest;
}

/** The shared request-posting path (`slack/approvals.ts` `postApprovalRequest`), bound to the workflow. */
export type PostApprovalRequest = (
  client: WebClient,
  request: ApprovalRequest,
  log: Logger,
) => Promise<PublishOutcome>;

/** Where a posted result landed: the channel and the message `ts` (for `chat.update` and threads). */
export interface PostedMessage {
  readonly channel: string;
  readonly ts: string;
}

/** Called once a result is in the channel (see `SlackAppDeps.afterPost`). */
export type AfterPost = (result: CommandResult, posted: PostedMessage) => Promise<void>;

/**
 * Results that only the requester should see. `line` is what was typed (it tells a `repoint` plan
 * from a `trace` with the same result type).
 */
export function isPrivateResult(result: CommandResult, line = ""): boolean {
  // A namespace that does not exist is most often a typo: tell the one who asked, not the channel.
  if ((result.type === "diagnosis" || result.type === "watch") && result.diagnosis.verdict === "not-found")
    return true;
  // A namespace that is not stuck is nothing the incident channel needs to read.
  if (result.type === "diagnosis" && result.diagnosis.verdict === "active") return true;
  // A list asked for is the asker's to read.
  if (result.type === "approvals") return true;
  // A `repoint` with nothing to request (yet): its questions are the asker's next step.
  if (result.type === "trace" && verbOf(line) === "repoint" && result.repair?.action === undefined)
    return true;
  return result.type === "help" || result.type === "error";
}

/** The verb of a typed line (after a leading `--cluster NAME`), lower-case; "" if none. */
function verbOf(line: string): string {
  let text = line;
  try {
    text = takeClusterFlag(line).text;
  } catch {
    // A bad flag: the dispatch answers it; the first word is still the verb.
  }
  return (text.trim().split(/\s+/)[0] ?? "").toLowerCase();
}

/** The button that posts a private answer in the channel. */
export const SHARE_ACTION = "answer:share";

/** Verbs whose private answer may be shared: reads only, so a shared click can never change anything. */
const SHAREABLE_VERBS: ReadonlySet<string> = new Set(["ns", "diagnose", "approvals", "repoint"]);

/** Whether a private answer is worth a *Share in channel* button (a diagnosis, a list, a plan). */
function shareable(result: CommandResult, line: string): boolean {
  if (line.length > SHARE_VALUE_MAX || !SHAREABLE_VERBS.has(verbOf(line))) return false;
  if (result.type === "diagnosis") return result.diagnosis.verdict === "active";
  return result.type === "approvals" || result.type === "trace";
}

/** Slack's limit on a button's value. */
const SHARE_VALUE_MAX = 2000;

function withShareButton(message: SlackMessage, line: string): SlackMessage {
  return {
    text: message.text,
    blocks: [
      ...message.blocks.slice(0, 49),
      {
        type: "actions",
        elements: [
          {
            type: "button",
            action_id: SHARE_ACTION,
            text: { type: "plain_text", text: "Share in channel" },
            value: line,
          },
        ],
      },
    ],
  };
}

/** The listener body; runs after `ackFirst`, `requestScope` and `channelAllowList`. */
export function commandListener(deps: CommandListenerDeps): Middleware<SlackCommandMiddlewareArgs> {
  return async ({ body, respond, client, context }) => {
    const scope = scopeOf(context);
    const started = deps.now().getTime();
    // `--cluster NAME` is taken out of the line here and chooses the cluster in a fleet.
    const result = await dispatchLine(
      deps.registry,
      body.text,
      { actor: scope.actor, services: { ...deps.services, log: scope.log } },
      deps.command,
    );
    // In a fleet the buttons name the cluster that answered.
    const cluster = clusterOfResult(result);
    const message = renderSlackMessage(result, {
      command: deps.command,
      ...(cluster !== undefined ? { cluster } : {}),
    });
    scope.log.info(
      {
        result: result.type,
        ...(result.type === "error" ? { code: result.error.code } : {}),
        elapsedMs: deps.now().getTime() - started,
      },
      "command handled",
    );
    if (isPrivateResult(result, body.text)) {
      await respondEphemeral(
        respond,
        shareable(result, body.text) ? withShareButton(message, body.text) : message,
      );
      return;
    }
    if (result.type === "approval-request" && deps.postApprovalRequest !== undefined) {
      const outcome = await deps.postApprovalRequest(client, result.request, scope.log);
      if (!outcome.posted) {
        const text = unpostedText(outcome, result.request);
        await respondEphemeral(
          respond,
          withHint(
            { text, blocks: [{ type: "section", text: { type: "mrkdwn", text: safe(text, 2000) } }] },
            postFailureHint(outcome.slackError),
          ),
        );
      }
      return;
    }
    let posted: PostedMessage | undefined;
    try {
      // A timeline's card names the file its thread will hold (uploaded below).
      const card = result.type === "timeline" ? renderTimelineCard(result) : message;
      const res = await client.chat.postMessage({
        channel: body.channel_id,
        text: card.text,
        blocks: card.blocks,
      });
      if (res.ts !== undefined) posted = { channel: res.channel ?? body.channel_id, ts: res.ts };
    } catch (err) {
      // The requester must still get the answer; say why it did not reach the channel.
      const code = slackErrorCode(err);
      scope.log.warn(
        { slackError: code ?? "unknown" },
        "chat.postMessage failed; answering via response_url",
      );
      await respondEphemeral(respond, withHint(message, postFailureHint(code)));
      return;
    }
    if (posted !== undefined && result.type === "timeline") {
      // The card starts a thread; the whole draft goes into it as a file (or the card says why not).
      await attachTimelineFile(client, result, posted, posted.ts, scope.log);
    }
    // A command too long for the card is whole in a file in its thread, as the card says.
    const file = answerFile(result, message);
    if (posted !== undefined && file !== undefined && result.type !== "timeline")
      await attachAnswerFile(client, file, { channel: posted.channel, threadTs: posted.ts }, scope.log);
    if (posted === undefined || deps.afterPost === undefined) return;
    try {
      await deps.afterPost(result, posted);
    } catch (err) {
      // The answer is already in the channel; a failed follow-up must not turn it into an error.
      scope.log.warn({ err, result: result.type }, "after-post step failed");
    }
  };
}

/** Why a post failed, phrased as what to do about it. */
export function postFailureHint(code: string | undefined): string {
  switch (code) {
    case "not_in_channel":
    case "channel_not_found":
      return ":information_source: I could not post this in the channel because I am not a member. Invite me with `/invite @unstuck` so the whole channel sees the answer; until then only you see it.";
    case "is_archived":
      return ":information_source: This channel is archived, so only you see this answer.";
    default:
      return `:warning: Posting to the channel failed (${safe(code ?? "unknown error", 60)}); only you see this answer.`;
  }
}

function withHint(message: SlackMessage, hint: string): SlackMessage {
  return {
    text: `${message.text}\n\n${hint}`,
    blocks: [...message.blocks, { type: "context", elements: [{ type: "mrkdwn", text: hint }] }],
  };
}

async function respondEphemeral(respond: RespondFn, message: SlackMessage): Promise<void> {
  // The renderers bound every piece; this bounds the whole, so no input can make the reply huge.
  await respond({
    response_type: "ephemeral",
    text: clip(message.text, SlackLimit.Fallback),
    blocks: message.blocks,
  });
}

export interface ShareDeps {
  readonly registry: CommandDispatcher;
  readonly services: CommandServices;
  /** The slash command as configured (`/unstuck`). */
  readonly command: string;
}

/**
 * *Share in channel*: the read behind a private answer is run again as the one who clicked (the
 * button's value is client-supplied: only read verbs, and never a line that asks for a change) and
 * its answer posted in the channel, saying who shared it; the private copy is then removed.
 */
export function shareAction(deps: ShareDeps): ActionRegistration {
  return {
    actionId: SHARE_ACTION,
    handler: async ({ scope, action, message, respond, client }) => {
      const line = action.value ?? "";
      // An ephemeral message's click names its channel (its `ts` is not always given).
      const channel = message?.channelId ?? scope.actor.channelId;
      const refuse = (text: string): Promise<unknown> =>
        respond({ response_type: "ephemeral", replace_original: false, text });
      if (
        line.length > SHARE_VALUE_MAX ||
        !SHAREABLE_VERBS.has(verbOf(line)) ||
        /(^|\s)--(reason|delete)\b/.test(line) ||
        channel === undefined
      ) {
        await refuse("This answer cannot be shared from here: type the command again in the channel.");
        return;
      }
      const result = await dispatchLine(
        deps.registry,
        line,
        { actor: scope.actor, services: { ...deps.services, log: scope.log } },
        deps.command,
      );
      if (result.type === "error" || result.type === "approval-request") {
        await refuse(renderSlackMessage(result, { command: deps.command }).text);
        return;
      }
      const rendered = renderSlackMessage(result, { command: deps.command });
      const by = `Shared by <@${safe(scope.actor.userId, 30)}>: \`${safe(`${deps.command} ${line}`, 200)}\``;
      try {
        const res = await client.chat.postMessage({
          channel,
          text: rendered.text,
          blocks: [
            ...rendered.blocks.slice(0, 49),
            { type: "context", elements: [{ type: "mrkdwn", text: by }] },
          ] as never,
        });
        const file = answerFile(result, rendered);
        if (file !== undefined && res.ts !== undefined)
          await attachAnswerFile(
            client,
            file,
            { channel: res.channel ?? channel, threadTs: res.ts },
            scope.log,
          );
      } catch (err) {
        await refuse(postFailureHint(slackErrorCode(err)));
        return;
      }
      await respond({ delete_original: true }).catch(() => undefined);
    },
  };
}
