/**
 * Form submissions (`view_submission`), registered here and nowhere else, each behind the form
 * chain of `chains.ts`: the request scope and the channel allow-list, for the channel the form was
 * opened for (its private metadata's `channelId`, written by the bot). A form from a channel that is
 * not — or no longer — allowed is refused inside the form, and its listener never runs. Forms are
 * not acknowledged first: Slack takes a form's errors only in the acknowledgement, which the
 * listener gives.
 */
import type { App, Middleware, SlackViewMiddlewareArgs, ViewSubmitAction } from "@slack/bolt";
import type { ChannelGate } from "./channel-gate.js";
import { channelRefusal, gateAllows, identityOf } from "./middleware.js";

export type FormArgs = SlackViewMiddlewareArgs<ViewSubmitAction>;
export type FormListener = Middleware<FormArgs>;

export interface FormRouter {
  /**
   * `errorField`: the block a refusal is shown under (each form names its first input), since
   * Slack shows a form's errors only beside one of its inputs.
   */
  register(callbackId: string, errorField: string, listener: FormListener): void;
}

/** Anything holding a {@link FormRouter}, such as the `SlackApp` from `createSlackApp`. */
export interface HasFormRouter {
  readonly forms: FormRouter;
}

/** Only forms opened for an allowed channel run; a refusal is shown in the form. */
export function formChannelAllowList(gate: ChannelGate, errorField: string): FormListener {
  return async ({ body, ack, next, client, context }) => {
    const channelId = identityOf(body).channelId;
    if (await gateAllows(gate, channelId, client, context, "form")) {
      await next();
      return;
    }
    await ack({
      response_action: "errors",
      errors: { [errorField]: channelRefusal(channelId, gate).slice(0, 300) },
    });
  };
}

export function createFormRouter(
  app: App,
  chain: (errorField: string) => Middleware<FormArgs>[],
): FormRouter {
  return {
    register(callbackId, errorField, listener) {
      app.view<ViewSubmitAction>(
        { callback_id: callbackId, type: "view_submission" },
        ...chain(errorField),
        listener,
      );
    },
  };
}
