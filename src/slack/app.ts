/**
 * The Bolt app: transport (HTTP with request signing, or Socket Mode), the slash command and button listeners
 * behind the shared middleware, and `GET /healthz`. Receivers carry bytes; the rules live in `middleware.ts`, the
 * command semantics in `commands/`, the rendering in `blocks/`.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  App,
  HTTPReceiver,
  SocketModeReceiver,
  type Authorize,
  type CustomRoute,
  type Receiver,
} from "@slack/bolt";
import type { CommandDispatcher, CommandServices } from "../command-contract.js";
import type { Config } from "../config.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { Logger } from "../log.js";
import { createActionRouter } from "./actions.js";
import { boltLogger } from "./bolt-logger.js";
import { ChannelGate } from "./channel-gate.js";
import { commandListener, shareAction, type AfterPost, type PostApprovalRequest } from "./command.js";
import { dedupeEvents, memoryEventClaims, type EventClaims } from "./event-dedupe.js";
import { mentionListener } from "./mention.js";
import { listenerChains } from "./chains.js";
import { onlySlackResponseUrls, refuseFutureTimestamps, slackResponseOrigins } from "./middleware.js";
import { slackErrorCode } from "./slack-errors.js";
import { createFormRouter } from "./forms.js";
import type { SlackApp } from "./slack-app.js";
import { pacer } from "../util/pacer.js";

export type { SlackApp };

/** Where Slack sends commands, events and interactions in HTTP mode. */
export const SLACK_EVENTS_PATH = "/slack/events";
/**
 * Handlers (commands, clicks) that start their work at once after their acknowledgement; more
 * wait until one settles or has had {@link HANDLER_HEAD_START_MS}: a burst of fifty commands then
 * never puts fifty handlers' CPU between two reads of new requests, so the last of them is
 * acknowledged about as fast as the first.
 */
export const HANDLERS_STARTED_AT_ONCE = 8;
export const HANDLER_HEAD_START_MS = 25;
/**
 * And work waits while requests keep coming (15 ms without one, 500 ms at the most): a burst is
 * acknowledged whole before its handlers take the CPU (the first burst after start-up, whose code is
 * still cold, otherwise spends it between reads of the burst's own requests). A lone request, once
 * the bot has handled one, does not wait: there is no burst behind it (the wait was 15 of a seed
 * answer's ~35 ms).
 */
export const HANDLERS_AFTER_QUIET = { quietMs: 15, maxDeferMs: 500 } as const;
export const HEALTH_PATH = "/healthz";

export interface SlackAppDeps {
  readonly config: Config;
  readonly registry: CommandDispatcher;
  readonly services: CommandServices;
  readonly log: Logger;
  readonly now?: () => Date;
  /** Request ids; random UUIDs unless a test wants predictable ones. */
  readonly newRequestId?: () => string;
  /**
   * Runs after a command result was posted in the channel, with where it landed: the runtime attaches an
   * approval request to its message, or starts a namespace wait in the message's thread. Errors are logged
   * and swallowed (the answer is already in the channel).
   */
  readonly afterPost?: AfterPost;
  /**
   * Posts a new approval request through the path every form uses (attach, catch up, or cancel one
   * approvers could never see); without it a request is posted like any result.
   */
  readonly postApprovalRequest?: PostApprovalRequest;
  /** Which channels may use the bot; built from the configuration when absent. */
  readonly channelGate?: ChannelGate;
  /**
   * Claims of Events API `event_id`s, so an event Slack re-delivers is answered once: in Redis (every
   * replica agrees) from the runtime; within this process when absent.
   */
  readonly eventClaims?: EventClaims;
}

/** Where Slack's requests arrive: Socket Mode with an app token, else signed HTTP; both serve `GET /healthz`. */
function createReceiver(
  slack: NonNullable<Config["slack"]>,
  config: Config,
  logger: ReturnType<typeof boltLogger>,
  log: Logger,
): { readonly receiver: Receiver; readonly mode: "socket" | "http" } {
  const healthRoute: CustomRoute = {
    path: HEALTH_PATH,
    method: ["GET"],
    handler: (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("ok");
    },
  };

  const mode = slack.appToken !== undefined ? "socket" : "http";
  const receiver: Receiver =
    slack.appToken !== undefined
      ? new SocketModeReceiver({
          appToken: slack.appToken,
          logger,
          customRoutes: [healthRoute],
          // The receiver builds its own Web API client for `apps.connections.open`: it must use the
          // same SLACK_API_URL as the app's client, or Socket Mode bypasses a configured endpoint.
          installerOptions: {
            port: config.port,
            ...(slack.apiUrl !== undefined ? { clientOptions: { slackApiUrl: slack.apiUrl } } : {}),
          },
        })
      : new HTTPReceiver({
          signingSecret: slack.signingSecret,
          endpoints: SLACK_EVENTS_PATH,
          port: config.port,
          customRoutes: [healthRoute],
          logger,
          // Ack answers the HTTP request at once; the listener keeps running after it.
          processBeforeResponse: false,
        });

  // Bolt refuses stale timestamps but not future ones: refuse those before Bolt sees the request.
  if (receiver instanceof HTTPReceiver) {
    receiver.requestListener = refuseFutureTimestamps(receiver.requestListener, log);
  }
  return { receiver, mode };
}

/** The bot's identity as `auth.test` answers for its token. */
interface BotIdentity {
  readonly botId: string;
  readonly botUserId: string;
  readonly teamId: string;
}

/**
 * One `auth.test` for the life of the process (Bolt's lazy mode would repeat it on every request);
 * a failure is forgotten, so the next call asks again, and names SLACK_BOT_TOKEN.
 */
function tokenVerifier(botToken: string, client: () => App["client"]): () => Promise<BotIdentity> {
  let identity: Promise<BotIdentity> | undefined;
  return () => {
    identity ??= client()
      .auth.test({ token: botToken })
      .then(
        (r) => ({ botId: r.bot_id ?? "", botUserId: r.user_id ?? "", teamId: r.team_id ?? "" }),
        (err: unknown) => {
          identity = undefined;
          const code = slackErrorCode(err);
          throw new UnstuckError(
            code === "invalid_auth" || code === "not_authed" || code === "token_revoked"
              ? ErrorCode.Config
              : ErrorCode.Unreachable,
            code !== undefined
              ? `Slack rejected SLACK_BOT_TOKEN (${code}).`
              : `Could not reach the Slack Web API to verify SLACK_BOT_TOKEN.`,
            { variable: "SLACK_BOT_TOKEN", ...(code !== undefined ? { slackError: code } : {}) },
            { cause: err },
          );
        },
      );
    return identity;
  };
}

/** Build the app; nothing listens and no request is made until `start()`. */
export function createSlackApp(deps: SlackAppDeps): SlackApp {
  const { config, log } = deps;
  const slack = config.slack;
  if (slack === undefined) {
    const missing = config.missingSlack;
    throw new UnstuckError(ErrorCode.Config, `Slack is not configured: set ${missing.join(" and ")}.`, {
      variable: missing[0],
    });
  }
  const now = deps.now ?? (() => new Date());
  const logger = boltLogger(log.child({ component: "bolt" }), [
    slack.botToken,
    slack.signingSecret,
    slack.appToken ?? "",
  ]);
  const { receiver, mode } = createReceiver(slack, config, logger, log);

  const verifyToken = tokenVerifier(slack.botToken, () => app.client);
  const authorize: Authorize<boolean> = async () => {
    const who = await verifyToken();
    return { botToken: slack.botToken, botId: who.botId, botUserId: who.botUserId, teamId: who.teamId };
  };

  const app = new App({
    receiver,
    authorize,
    logger,
    // Bolt's conversation store (context.conversation) is unused: without it no request awaits a
    // rejected lookup (a new Error each time) before its listeners run and acknowledge it.
    convoStore: false,
    ...(slack.apiUrl !== undefined ? { clientOptions: { slackApiUrl: slack.apiUrl } } : {}),
  });

  // Before every listener: an event Slack delivers again (X-Slack-Retry-Num, Socket Mode's
  // retry_attempt) is acknowledged and goes no further once one delivery has claimed its event_id.
  app.use(dedupeEvents(deps.eventClaims ?? memoryEventClaims(), log));
  // Answers go to Slack's own response URLs only (hooks.slack.com, or the configured API's origin).
  app.use(onlySlackResponseUrls(slackResponseOrigins(slack.apiUrl), log));

  app.error(async (err) => {
    log.error(
      { code: err.code, err: { name: err.name, message: err.message } },
      "unhandled error in a Slack listener",
    );
    await Promise.resolve();
  });

  // UNSTUCK_CHANNELS ids and UNSTUCK_CHANNEL_PATTERNS names; one gate (one name cache) for all listeners.
  const channelGate =
    deps.channelGate ?? new ChannelGate({ ids: config.channels, patterns: config.channelPatterns });
  // Every listener registers behind its kind's chain (request scope, channel gate; ack first where Slack allows).
  const chains = listenerChains({
    log,
    gate: channelGate,
    pace: pacer(HANDLERS_STARTED_AT_ONCE, HANDLER_HEAD_START_MS, HANDLERS_AFTER_QUIET),
    newRequestId: deps.newRequestId,
  });

  app.command(
    config.command,
    ...chains.command(),
    commandListener({
      registry: deps.registry,
      services: deps.services,
      command: config.command,
      now,
      ...(deps.afterPost !== undefined ? { afterPost: deps.afterPost } : {}),
      ...(deps.postApprovalRequest !== undefined ? { postApprovalRequest: deps.postApprovalRequest } : {}),
    }),
  );

  // `@unstuck timeline` in a thread (slash commands cannot be typed in threads).
  app.event(
    "app_mention",
    ...chains.mention(),
    mentionListener({ registry: deps.registry, services: deps.services, command: config.command }),
  );

  const actions = createActionRouter(app, chains.action());
  // *Share in channel* on a private answer.
  actions.register([
    shareAction({ registry: deps.registry, services: deps.services, command: config.command }),
  ]);

  const forms = createFormRouter(app, (errorField) => chains.form(errorField));

  return { app, actions, forms, mode, ...appLifecycle(app, mode, config, verifyToken, log) };
}

/** Start (verify the token, then connect or listen) and stop, safe to call twice or before a start. */
function appLifecycle(
  app: App,
  mode: "socket" | "http",
  config: Config,
  verifyToken: () => Promise<BotIdentity>,
  log: Logger,
): Pick<SlackApp, "start" | "stop"> {
  let running = false;
  // A start that failed half-way (Socket Mode opens its health server before connecting) must
  // still be stoppable.
  let attempted = false;
  return {
    async start() {
      const who = await verifyToken();
      if (mode === "socket") {
        attempted = true;
        await app.start();
        running = true;
        log.info({ mode, botUserId: who.botUserId, teamId: who.teamId }, "slack app connected");
        return config.port !== 0 ? { port: config.port } : {};
      }
      attempted = true;
      const server = (await app.start(
        config.listenHost !== undefined ? { port: config.port, host: config.listenHost } : config.port,
      )) as Server;
      running = true;
      const port = (server.address() as AddressInfo).port;
      log.info({ mode, port, path: SLACK_EVENTS_PATH, botUserId: who.botUserId }, "slack app listening");
      return { port };
    },
    async stop() {
      // Shutdown paths (signal handlers, test teardown) may call this twice or before start.
      if (!running && !attempted) return;
      const wasRunning = running;
      running = false;
      attempted = false;
      await app.stop().catch((err: unknown) => {
        if (wasRunning) throw err;
      });
    },
  };
}
