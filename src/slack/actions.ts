/**
 * Button interactions (`block_actions`). Other modules (approvals) register their action ids here with
 * {@link registerActions}; each handler runs behind the same middleware as slash commands (ack first, request
 * scope, channel allow-list). Everything in an interaction payload except the signature and the user id is
 * client-supplied, so handlers get the actor and the raw `value` and must look up anything they act on by an
 * id the bot issued itself.
 */
import type {
  AllMiddlewareArgs,
  App,
  BlockAction,
  Middleware,
  RespondFn,
  SlackActionMiddlewareArgs,
} from "@slack/bolt";
import { scopeOf, type RequestScope } from "./middleware.js";

/** What a handler receives; the request was already acknowledged. */
export interface ActionContext {
  readonly scope: RequestScope;
  readonly action: { readonly actionId: string; readonly blockId?: string; readonly value?: string };
  /**
   * The message holding the button, for `chat.update` (the `response_url` expires after 30 minutes),
   * with its blocks as Slack sent them (client-supplied: repaint from them, never act on them).
   */
  readonly message?: {
    readonly channelId: string;
    readonly ts: string;
    readonly blocks?: readonly unknown[];
  };
  /** Lets the handler open a modal (`views.open`); Slack honours it for 3 seconds after the click. */
  readonly triggerId?: string;
  readonly respond: RespondFn;
  readonly client: AllMiddlewareArgs["client"];
}

export type ActionHandler = (ctx: ActionContext) => Promise<void>;

/** One action id (exact, e.g. `approval:approve`) or pattern, and its handler. */
export interface ActionRegistration {
  readonly actionId: string | RegExp;
  readonly handler: ActionHandler;
}

type BlockActionArgs = SlackActionMiddlewareArgs<BlockAction>;

/** Registers action listeners on one app behind its shared middleware, and knows which ids are taken. */
export interface ActionRouter {
  register(registrations: readonly ActionRegistration[]): void;
  /** `true` when a registered handler will take this action id (the fallback then stays silent). */
  handles(actionId: string): boolean;
}

/** Anything holding an {@link ActionRouter}, such as the `SlackApp` from `createSlackApp`. */
export interface HasActionRouter {
  readonly actions: ActionRouter;
}

/** Register button handlers on a Slack app created by `createSlackApp`. */
export function registerActions(target: HasActionRouter, registrations: readonly ActionRegistration[]): void {
  target.actions.register(registrations);
}

/**
 * Create the router and install the fallback: an action nobody registered is acknowledged (so Slack does not
 * show the user an error) and otherwise ignored.
 */
export function createActionRouter(app: App, shared: readonly Middleware<BlockActionArgs>[]): ActionRouter {
  const patterns: (string | RegExp)[] = [];
  const handles = (actionId: string): boolean =>
    patterns.some((p) =>
      typeof p === "string" ? p === actionId : new RegExp(p.source, p.flags).test(actionId),
    );

  app.action<BlockAction>({ type: "block_actions", action_id: /.*/ }, async ({ action, ack, logger }) => {
    // Bolt runs every matching listener; a registered one acknowledges itself, and a second ack would throw.
    if (handles(action.action_id)) return;
    await ack();
    logger.debug(`ignored unknown action ${action.action_id}`);
  });

  return {
    handles,
    register(registrations) {
      for (const { actionId, handler } of registrations) {
        patterns.push(actionId);
        app.action<BlockAction>(
          { type: "block_actions", action_id: actionId },
          ...shared,
          async ({ action, body, respond, client, context }) => {
            const scope = scopeOf(context);
            // Bolt types `container` as any; read only the two fields we need, as strings.
            const container = body.container as { channel_id?: unknown; message_ts?: unknown } | undefined;
            const channelId = asString(container?.channel_id) ?? body.channel?.id;
            const ts = asString(container?.message_ts) ?? body.message?.ts;
            const value = asString((action as { value?: unknown }).value);
            const triggerId = asString((body as { trigger_id?: unknown }).trigger_id);
            const blocks: unknown = (body.message as { blocks?: unknown } | undefined)?.blocks;
            await handler({
              scope,
              action: {
                actionId: action.action_id,
                blockId: action.block_id,
                ...(value !== undefined ? { value } : {}),
              },
              ...(channelId !== undefined && ts !== undefined
                ? {
                    message: {
                      channelId,
                      ts,
                      ...(Array.isArray(blocks) && blocks.length > 0 ? { blocks } : {}),
                    },
                  }
                : {}),
              ...(triggerId !== undefined ? { triggerId } : {}),
              respond,
              client,
            });
          },
        );
      }
    },
  };
}

function asString(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}
