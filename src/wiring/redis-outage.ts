/**
 * A Redis outage, said once. Every client of the bot's Redis reports a lost connection on each
 * reconnect attempt — the shared connection, each BullMQ worker's own, a QueueEvents' — so a Redis
 * gone for two minutes wrote over a hundred identical lines. Connection errors from all of them go
 * through one `RedisOutage`: the first says that Redis is unreachable, later ones are counted and
 * summed up in a reminder every few minutes, and the shared connection's `ready` says that it is
 * back and for how long it was gone. An error that is not about the connection is logged each time.
 */
import type { Logger } from "../log.js";

/** How often a continuing outage is said again. */
export const OUTAGE_REMINDER_MS = 5 * 60_000;

const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/** Whether `err` says the connection is gone (rather than something Redis or a job did). */
export function isConnectionError(err: Error): boolean {
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && CONNECTION_CODES.has(code)) return true;
  return /Connection is closed|connect ETIMEDOUT|ECONNREFUSED|ECONNRESET|Stream isn't writeable/i.test(
    err.message,
  );
}

export class RedisOutage {
  private since: number | undefined;
  private lastSaid = 0;
  private repeats = 0;

  public constructor(
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    private readonly reminderMs: number = OUTAGE_REMINDER_MS,
  ) {}

  /** An error from one of Redis's clients (`source`: which one, for the first line). */
  public failed(source: string, err: Error): void {
    if (!isConnectionError(err)) {
      this.log.error({ source, err: { message: err.message } }, "redis client error");
      return;
    }
    const now = this.now();
    if (this.since === undefined) {
      this.since = now;
      this.lastSaid = now;
      this.repeats = 0;
      this.log.warn({ source, err: { message: err.message } }, "redis unreachable");
      return;
    }
    this.repeats++;
    if (now - this.lastSaid < this.reminderMs) return;
    this.log.warn(
      {
        err: { message: err.message },
        downSeconds: Math.round((now - this.since) / 1000),
        errors: this.repeats,
      },
      "redis still unreachable",
    );
    this.lastSaid = now;
    this.repeats = 0;
  }

  /** The shared connection is ready again. */
  public recovered(): void {
    if (this.since === undefined) return;
    this.log.info({ downSeconds: Math.round((this.now() - this.since) / 1000) }, "redis connection restored");
    this.since = undefined;
  }
}

const outages = new WeakMap<object, RedisOutage>();

/** The outage record of one Redis connection (and of every client duplicated from it). */
export function outageOf(connection: object, log: Logger): RedisOutage {
  let outage = outages.get(connection);
  if (outage === undefined) {
    outage = new RedisOutage(log);
    outages.set(connection, outage);
  }
  return outage;
}
