/**
 * Cross-cutting rules every Slack listener runs through, in this order:
 *
 * 1. {@link ackFirst} — acknowledge before any I/O: Slack gives up after 3 seconds.
 * 2. {@link requestScope} — a request id and a child logger carrying it with the Slack user, team and
 *    channel; listeners log only through it, so every line of a request can be found by its id.
 * 3. {@link channelAllowList} — refuse, ephemerally, requests from channels outside `UNSTUCK_CHANNELS`.
 *
 * The bindings are picked field by field from the request: the request body (which still carries Slack's
 * legacy verification `token`) and Bolt's `context` (which carries the bot token) are never logged.
 */
import { randomUUID } from "node:crypto";
import type { RequestListener } from "node:http";
import { setImmediate as afterPendingIo } from "node:timers/promises";
import type { AnyMiddlewareArgs, Middleware, RespondFn } from "@slack/bolt";
import type { Actor } from "../command-result.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { Logger } from "../log.js";
import { ChannelGate } from "./channel-gate.js";
import { slackErrorCode } from "./slack-errors.js";
import type { Pacer } from "../util/pacer.js";

/**
 * How far ahead of our clock a Slack request timestamp may be. Bolt's receiver refuses timestamps more
 * than 5 minutes old but accepts any future one, so a signed request captured with a forged future
 * timestamp (or from a skewed clock) would stay replayable until then; beyond this skew it is refused.
 */
export const MAX_FUTURE_SKEW_SECONDS = 60;

/**
 * Why a request's `x-slack-request-timestamp` is refused before Bolt sees it, or `undefined` when it
 * passes this check (a missing or malformed header is left to Bolt's signature verification).
 */
export function futureTimestampRefusal(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  nowMs: number,
  maxSkewSeconds = MAX_FUTURE_SKEW_SECONDS,
): string | undefined {
  const raw = headers["x-slack-request-timestamp"];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  const seconds = Number(value);
  return seconds > Math.floor(nowMs / 1000) + maxSkewSeconds
    ? `x-slack-request-timestamp is more than ${maxSkewSeconds} s in the future`
    : undefined;
}

/**
 * Wrap an HTTP request listener so requests dated in the future (beyond the skew) get 401 and never
 * reach Bolt. Bolt's `HTTPReceiver` reads its `requestListener` property on every request.
 */
export function refuseFutureTimestamps(
  listener: RequestListener,
  log: Logger,
  now: () => number = Date.now,
): RequestListener {
  return (req, res) => {
    const refusal = futureTimestampRefusal(req.headers, now());
    if (refusal !== undefined) {
      log.warn({ path: req.url?.split("?")[0] }, `refused a Slack request: ${refusal}`);
      res.writeHead(401).end();
      return;
    }
    listener(req, res);
  };
}

/** What every listener may rely on once the middleware ran; lives in Bolt's per-request `context`. */
export interface RequestScope {
  readonly requestId: string;
  /** Child logger bound to `requestId`, `userId`, `teamId`, `channelId`. */
  readonly log: Logger;
  /** Who asked — from the signed request's user id, never a display name. */
  readonly actor: Actor;
}

/** The arguments the shared middleware needs; both slash commands and interactions provide them. */
export interface ScopedArgs {
  readonly body: unknown;
  readonly respond: RespondFn;
  readonly ack: () => Promise<void>;
}

/** The key under which the scope is stored in Bolt's context. */
const SCOPE_KEY = "unstuckScope";

/** The identity fields of a slash command or interaction payload; `undefined` when absent. */
export interface RequestIdentity {
  readonly userId?: string;
  readonly teamId?: string;
  readonly channelId?: string;
  /** The slash command, the first action id of an interaction, or a form's callback id. */
  readonly subject?: string;
  readonly kind: "command" | "action" | "form" | "mention" | "other";
}

/**
 * The channel a form was opened for: the `channelId` of its private metadata, which the bot wrote
 * when it opened the form (Slack returns it as it was; the user cannot edit it).
 */
function formChannel(metadata: unknown): string | undefined {
  if (typeof metadata !== "string" || metadata === "") return undefined;
  try {
    const parsed: unknown = JSON.parse(metadata);
    return isRecord(parsed) ? str(parsed["channelId"]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Read who/where from a Slack payload. Slash commands are flat (`user_id`, `team_id`, `channel_id`);
 * interactions nest them (`user.id`, `user.team_id` or `team.id`, `channel.id` or `container.channel_id`).
 */
export function identityOf(body: unknown): RequestIdentity {
  if (!isRecord(body)) return { kind: "other" };
  const command = str(body["command"]);
  if (command !== undefined) {
    return withDefined({
      kind: "command",
      subject: command,
      userId: str(body["user_id"]),
      teamId: str(body["team_id"]),
      channelId: str(body["channel_id"]),
    });
  }
  if (body["type"] === "event_callback") {
    const event = record(body["event"]);
    return withDefined({
      kind: event?.["type"] === "app_mention" ? "mention" : "other",
      subject: str(event?.["type"]),
      userId: str(event?.["user"]),
      teamId: str(body["team_id"]),
      channelId: str(event?.["channel"]),
    });
  }
  if (body["type"] === "view_submission") {
    const view = record(body["view"]);
    return withDefined({
      kind: "form",
      subject: str(view?.["callback_id"]),
      userId: str(record(body["user"])?.["id"]),
      teamId: str(record(body["user"])?.["team_id"]) ?? str(record(body["team"])?.["id"]),
      channelId: formChannel(view?.["private_metadata"]),
    });
  }
  const user = record(body["user"]);
  const team = record(body["team"]);
  const channel = record(body["channel"]);
  const container = record(body["container"]);
  const actions = body["actions"];
  const firstAction = Array.isArray(actions) ? record(actions[0] as unknown) : undefined;
  return withDefined({
    kind: body["type"] === "block_actions" ? "action" : "other",
    subject: str(firstAction?.["action_id"]),
    userId: str(user?.["id"]),
    teamId: str(user?.["team_id"]) ?? str(team?.["id"]),
    channelId: str(channel?.["id"]) ?? str(container?.["channel_id"]),
  });
}

/**
 * Acknowledge at once; everything after runs while Slack already has its 200. The work after the ack
 * starts only once the event loop has read what is waiting on its sockets: in a burst (fifty approvers
 * clicking at once) every request that already arrived is acknowledged before any earlier one's
 * work (a vote's Redis calls, a reply's rendering, their logging) takes the CPU, so no ack queues
 * behind another request's work. Work that was already under way still interleaves.
 */
export function ackFirst<A extends ScopedArgs>(pace?: Pacer): Middleware<A> {
  return async ({ ack, next }) => {
    pace?.arrived();
    await ack();
    await afterPendingIo();
    await (pace !== undefined ? pace.run(next) : next());
  };
}

/** Attach a {@link RequestScope} (request id + bound child logger + actor) to the request's context. */
export function requestScope<A extends { readonly body: unknown }>(
  baseLog: Logger,
  newRequestId: () => string = randomUUID,
): Middleware<A> {
  return async ({ body, context, next }) => {
    const identity = identityOf(body);
    const requestId = newRequestId();
    const log = baseLog.child({
      requestId,
      userId: identity.userId,
      teamId: identity.teamId,
      channelId: identity.channelId,
    });
    const actor: Actor = {
      userId: identity.userId ?? "",
      teamId: identity.teamId ?? "",
      ...(identity.channelId !== undefined ? { channelId: identity.channelId } : {}),
      surface: "slack",
    };
    context[SCOPE_KEY] = { requestId, log, actor } satisfies RequestScope;
    log.info({ kind: identity.kind, subject: identity.subject }, "slack request");
    await next();
  };
}

/**
 * Only allowed channels may use the bot: ids listed in `UNSTUCK_CHANNELS`, or channels whose name
 * matches `UNSTUCK_CHANNEL_PATTERNS` (read with `conversations.info`, cached briefly); neither set
 * allows all. A refused request gets an ephemeral answer naming the channel and how to enable it,
 * and nothing else runs.
 */
export function channelAllowList<A extends ScopedArgs>(
  allowed: readonly string[] | ChannelGate,
): Middleware<A> {
  const gate = allowed instanceof ChannelGate ? allowed : new ChannelGate({ ids: allowed, patterns: [] });
  return async ({ body, respond, context, next, client }) => {
    const channelId = identityOf(body).channelId;
    if (await gateAllows(gate, channelId, client, context, "request")) {
      await next();
      return;
    }
    await respond({
      response_type: "ephemeral",
      text: channelRefusal(channelId, gate),
    });
  };
}

/**
 * The one allow-list check every listener's chain makes (commands, buttons, forms, mentions):
 * whether `channelId` may use the bot. Not knowing the channel's name allows nothing; the log says
 * why, and says a refusal once, with the request's scope.
 */
export async function gateAllows(
  gate: ChannelGate,
  channelId: string | undefined,
  client: { conversations: { info(a: { channel: string }): Promise<{ channel?: { name?: string } }> } },
  context: Readonly<Record<string, unknown>>,
  what: "request" | "form" | "mention",
): Promise<boolean> {
  // The scope is read only to log: an allowed request passes without it.
  const log = (): Logger => scopeOf(context).log;
  let ok: boolean;
  try {
    ok = await gate.allowed(channelId, (id) =>
      client.conversations.info({ channel: id }).then((r) => r.channel?.name),
    );
  } catch (err) {
    log().warn(
      { code: ErrorCode.ChannelNotAllowed, slackError: slackErrorCode(err) ?? "unknown" },
      "could not read the channel's name to match UNSTUCK_CHANNEL_PATTERNS",
    );
    ok = false;
  }
  if (!ok) log().warn({ code: ErrorCode.ChannelNotAllowed }, `${what} from a channel outside the allow-list`);
  return ok;
}

/** An empty allow-list allows every channel; otherwise the channel must be listed. */
export function isChannelAllowed(allowed: ReadonlySet<string>, channelId: string | undefined): boolean {
  if (allowed.size === 0) return true;
  return channelId !== undefined && allowed.has(channelId);
}

/** The message a refused request gets: where, and how an admin enables it. */
export function channelRefusal(channelId: string | undefined, gate?: ChannelGate): string {
  const where = channelId !== undefined ? `<#${channelId}> (${channelId})` : "this conversation";
  const how =
    gate?.howToEnable(channelId) ?? `To enable it, add ${channelId ?? "the channel id"} to UNSTUCK_CHANNELS.`;
  return (
    `:no_entry: unstuck is not enabled in ${where}. ${how} ` +
    `Until then, use the bot from one of the incident channels it is enabled in.`
  );
}

/** The scope {@link requestScope} attached; throws if a listener was registered without it. */
export function scopeOf(context: Readonly<Record<string, unknown>>): RequestScope {
  const scope = context[SCOPE_KEY] as RequestScope | undefined;
  if (scope === undefined) {
    throw new UnstuckError(
      ErrorCode.Internal,
      "Slack listener registered without the requestScope middleware.",
    );
  }
  return scope;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function record(value: unknown): Record<string, unknown> | undefined {
  return isRecord(value) ? value : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** Drop `undefined` members so optional properties stay absent rather than present-but-undefined. */
function withDefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** The origins Slack's response URLs come from: hooks.slack.com, and the configured Web API's (a test Slack). */
export function slackResponseOrigins(apiUrl: string | undefined): readonly string[] {
  const origins = ["https://hooks.slack.com"];
  if (apiUrl !== undefined) {
    try {
      origins.push(new URL(apiUrl).origin);
    } catch {
      // An unparseable API URL is refused by the configuration; nothing to add.
    }
  }
  return origins;
}

/** Why a request's response URL(s) are not Slack's, or undefined when they are (or there are none). */
export function responseUrlRefusal(body: unknown, allowed: readonly string[]): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const b = body as { response_url?: unknown; response_urls?: unknown };
  const urls: unknown[] = [];
  if (b.response_url !== undefined) urls.push(b.response_url);
  if (Array.isArray(b.response_urls))
    for (const r of b.response_urls as { response_url?: unknown }[]) urls.push(r.response_url);
  for (const u of urls) {
    let origin: string;
    try {
      origin = new URL(String(u)).origin;
    } catch {
      return "its response_url is not a URL";
    }
    if (!allowed.includes(origin)) return `its response_url points at ${origin}, not at Slack`;
  }
  return undefined;
}

/**
 * Before every listener: a request whose `response_url` is not Slack's is acknowledged and goes no
 * further, so the bot never POSTs an answer (diagnoses, cluster names) to an address a request chose.
 */
export function onlySlackResponseUrls(
  allowed: readonly string[],
  log: Logger,
): Middleware<AnyMiddlewareArgs> {
  return async (args) => {
    const why = responseUrlRefusal(args.body, allowed);
    if (why !== undefined) {
      log.warn({ why }, "refused a Slack request whose response URL is not Slack's");
      if ("ack" in args && typeof args.ack === "function") await args.ack();
      return;
    }
    await args.next();
  };
}
