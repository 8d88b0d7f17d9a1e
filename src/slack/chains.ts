/**
 * The one chain every Slack listener is registered behind, by kind of listener. Each kind passes the
 * request scope (one request id, the app's logger, the actor) and the channel allow-list; they differ
 * only where Slack does:
 *
 * - slash commands and buttons are acknowledged first (nothing does I/O before it), then paced;
 * - form submissions are acknowledged by their listener (Slack takes a form's errors only in the
 *   acknowledgement), and a refusal is shown inside the form, for the channel it was opened for;
 * - mentions (Events API; Bolt acknowledges the delivery) skip other bots, and a refusal is an
 *   ephemeral answer where the mention was typed.
 */
import type {
  BlockAction,
  Middleware,
  SlackActionMiddlewareArgs,
  SlackCommandMiddlewareArgs,
  SlackEventMiddlewareArgs,
} from "@slack/bolt";
import type { Logger } from "../log.js";
import type { Pacer } from "../util/pacer.js";
import type { ChannelGate } from "./channel-gate.js";
import { formChannelAllowList, type FormArgs } from "./forms.js";
import { mentionChannelAllowList } from "./mention.js";
import { ackFirst, channelAllowList, requestScope, type ScopedArgs } from "./middleware.js";

export interface ListenerChains {
  command(): Middleware<SlackCommandMiddlewareArgs>[];
  action(): Middleware<SlackActionMiddlewareArgs<BlockAction>>[];
  /** `errorField`: the input a refusal is shown under. */
  form(errorField: string): Middleware<FormArgs>[];
  mention(): Middleware<SlackEventMiddlewareArgs<"app_mention">>[];
}

export function listenerChains(deps: {
  readonly log: Logger;
  readonly gate: ChannelGate;
  readonly pace: Pacer;
  readonly newRequestId?: (() => string) | undefined;
}): ListenerChains {
  const { log, gate, pace, newRequestId } = deps;
  const acknowledged = <A extends ScopedArgs>(): Middleware<A>[] => [
    ackFirst<A>(pace),
    requestScope<A>(log, newRequestId),
    channelAllowList<A>(gate),
  ];
  return {
    command: () => acknowledged<SlackCommandMiddlewareArgs>(),
    action: () => acknowledged<SlackActionMiddlewareArgs<BlockAction>>(),
    form: (errorField) => [requestScope<FormArgs>(log, newRequestId), formChannelAllowList(gate, errorField)],
    mention: () => [
      requestScope<SlackEventMiddlewareArgs<"app_mention">>(log, newRequestId),
      mentionChannelAllowList(gate),
    ],
  };
}
