/**
 * One answer per Slack event. When an Events API delivery is not acknowledged within 3 seconds (or
 * fails), Slack sends the same event again — up to three times, each with the same `event_id`: over
 * HTTP with `X-Slack-Retry-Num: 1…3` and `X-Slack-Retry-Reason`, in Socket Mode with `retry_attempt`
 * and `retry_reason` in the envelope (Bolt hands both over as `context.retryNum` / `retryReason`).
 * Every delivery is acknowledged (Bolt acks events before any middleware runs); only the first one
 * that claims its `event_id` is processed. The claim is a Redis `SET NX` with a TTL under the bot's
 * key prefix, so every replica of the bot — and every transport — sees the same claim.
 *
 * Slash commands and interactions are never re-delivered by Slack; they carry no `event_id` and
 * pass untouched.
 */
import type { AnyMiddlewareArgs, Middleware } from "@slack/bolt";
import type { Logger } from "../log.js";
import { RedisKeys } from "../redis/keys.js";

/** Claims an event id: true for the first claim within the TTL, false for every later one. */
export interface EventClaims {
  claim(eventId: string): Promise<boolean>;
}

/** The Redis call the claim needs (a plain client or a cluster client alike). */
export interface EventClaimsRedis {
  set(key: string, value: string, ex: "EX", seconds: number, nx: "NX"): Promise<"OK" | null>;
}

/** An hour: Slack's retries of one event come within minutes (immediately, after 1 min, after 5 min). */
export const EVENT_CLAIM_TTL_SECONDS = 3600;

/** Claims shared by every replica: `<prefix>:slack-event:<event_id>`, kept an hour. */
export function redisEventClaims(
  redis: EventClaimsRedis,
  prefix: string,
  ttlSeconds = EVENT_CLAIM_TTL_SECONDS,
): EventClaims {
  return {
    async claim(eventId) {
      const first = await redis.set(
        RedisKeys.slackEvent(prefix, eventId),
        String(Date.now()),
        "EX",
        ttlSeconds,
        "NX",
      );
      return first === "OK";
    },
  };
}

/**
 * Claims kept in this process only (an app built without Redis, as in some tests): re-deliveries to
 * this process are dropped, those to another replica are not. Bounded: the oldest go first.
 */
export function memoryEventClaims(ttlSeconds = EVENT_CLAIM_TTL_SECONDS, max = 10_000): EventClaims {
  const seen = new Map<string, number>();
  return {
    claim(eventId) {
      const now = Date.now();
      const until = seen.get(eventId);
      if (until !== undefined && until > now) return Promise.resolve(false);
      seen.delete(eventId);
      seen.set(eventId, now + ttlSeconds * 1000);
      while (seen.size > max) {
        const oldest = seen.keys().next().value;
        if (oldest === undefined) break;
        seen.delete(oldest);
      }
      return Promise.resolve(true);
    },
  };
}

/** The `event_id` of an Events API callback, or `undefined` for anything else. */
export function eventIdOf(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const b = body as Record<string, unknown>;
  const id = b["event_id"];
  return b["type"] === "event_callback" && typeof id === "string" && id.length > 0 ? id : undefined;
}

/**
 * Global middleware: an event whose id was claimed already goes no further (it was acknowledged;
 * no listener runs, nothing is posted or uploaded). When the claim itself fails (Redis not
 * answering), a first delivery is processed — an answer twice is better than none — and a
 * re-delivery is dropped, since its first delivery was most likely processed.
 */
export function dedupeEvents(claims: EventClaims, log: Logger): Middleware<AnyMiddlewareArgs> {
  return async ({ body, context, next }) => {
    const eventId = eventIdOf(body);
    if (eventId === undefined) {
      await next();
      return;
    }
    const retryNum = typeof context.retryNum === "number" ? context.retryNum : undefined;
    const retryReason = typeof context.retryReason === "string" ? context.retryReason : undefined;
    let first: boolean;
    try {
      first = await claims.claim(eventId);
    } catch (err) {
      first = retryNum === undefined || retryNum === 0;
      log.warn(
        {
          eventId,
          retryNum,
          err: { message: err instanceof Error ? err.message : String(err) },
        },
        first
          ? "could not record a Slack event's delivery; processing it"
          : "could not record a Slack event's re-delivery; dropping it",
      );
    }
    if (!first) {
      log.info({ eventId, retryNum, retryReason }, "Slack delivered an event again; already taken, ignored");
      return;
    }
    await next();
  };
}
