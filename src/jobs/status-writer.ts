/**
 * One writer per status message across processes. A wait's checks move between worker processes
 * (each check is a delayed job any replica may pick up), and each process holds back its own
 * progress edits for a moment (`coalescedReporter`): without a shared order, a progress line held by
 * one process could land after the result another process had just shown.
 *
 * Every edit of a status message therefore goes through Redis: under a short per-message lease it
 * compares its stamp (when its text was written) with the last edit sent, and it is dropped when an
 * edit written later has been sent, or when the message already shows its result (a final edit) and
 * it is only progress. The lease is held while Slack is called, so two edits never cross in flight.
 * The record holds a message id and two numbers, never content.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "../log.js";
import type { ThreadReporter } from "./waits.js";
import { loadScript, type ScriptRedis } from "../redis/scripts.js";
import { RedisKeys } from "../redis/keys.js";

/** The Redis calls the writer needs (a plain or a cluster client: its two keys share a hash slot). */
export type StatusWriterRedis = ScriptRedis;

export interface StatusWriterOptions {
  /** How long the per-message lease lives without renewal (default 10 s); renewed while Slack answers. */
  readonly leaseMs?: number;
  /** How long an edit may hold the lease in all, however long Slack takes (default 60 s). */
  readonly maxHoldMs?: number;
  /** How long an edit waits for another one in flight before it gives up (default 30 s). */
  readonly waitMs?: number;
  /** How long the record of a message's last edit is kept (default 7 days, longer than any wait). */
  readonly ttlSeconds?: number;
  readonly log?: Logger;
}

/** Takes the message's lease and says whether to send, drop or wait (see the file). */
const BEGIN = loadScript("status-edit-begin.2.lua");
/** Records the edit sent and gives the lease back. */
const END = loadScript("status-edit-end.2.lua");
const RENEW = loadScript("renew-if-held.1.lua");

/**
 * `reporter` with its edits ordered across processes (see the module comment). Posts pass through.
 * An edit without a stamp is stamped now.
 */
export function sequencedReporter(
  reporter: ThreadReporter,
  redis: StatusWriterRedis,
  prefix: string,
  options: StatusWriterOptions = {},
): ThreadReporter {
  const leaseMs = options.leaseMs ?? 10_000;
  const maxHoldMs = options.maxHoldMs ?? 60_000;
  const waitMs = options.waitMs ?? 30_000;
  const ttlSeconds = options.ttlSeconds ?? 7 * 86_400;
  const pollMs = Math.max(10, Math.min(100, Math.floor(leaseMs / 20)));
  return {
    post: (channel, threadTs, text) => reporter.post(channel, threadTs, text),
    ...(reporter.postCard !== undefined ? { postCard: reporter.postCard.bind(reporter) } : {}),
    async update(channel, ts, text, updateOptions) {
      const at = updateOptions?.at ?? Date.now();
      const final = updateOptions?.final === true;
      // One hash slot for the record and its lease (a Redis Cluster runs the scripts on one node).
      const record = RedisKeys.statusEdit(prefix, channel, ts);
      const lease = RedisKeys.statusEditLease(prefix, channel, ts);
      const token = randomUUID();
      const deadline = Date.now() + waitMs;
      let leased = false;
      for (;;) {
        const verdict = await BEGIN.run(redis, [record, lease], [token, leaseMs, at, final ? "1" : "0"]);
        if (verdict === "drop") {
          options.log?.debug({ channel, ts, final }, "dropped a status edit older than the one shown");
          return;
        }
        if (verdict === "send" || verdict === "send-beside") {
          leased = verdict === "send";
          break;
        }
        if (Date.now() >= deadline) {
          throw new Error(`another worker is still editing status message ${ts}; its next check edits it`);
        }
        await new Promise((r) => setTimeout(r, pollMs));
      }
      // A hung call keeps the lease at most `maxHoldMs`: the message is not held for ever.
      const heldUntil = Date.now() + maxHoldMs;
      const renewal = setInterval(
        () => {
          if (!leased || Date.now() > heldUntil) return;
          void RENEW.run(redis, [lease], [`${token}:${final ? "1" : "0"}`, leaseMs]).catch(() => undefined);
        },
        Math.max(10, Math.floor(leaseMs / 3)),
      );
      renewal.unref();
      let sent = false;
      try {
        await reporter.update(channel, ts, text, updateOptions);
        sent = true;
      } finally {
        clearInterval(renewal);
        await END.run(
          redis,
          [record, lease],
          [token, at, final ? "1" : "0", ttlSeconds, sent ? "1" : "0"],
        ).catch(() => undefined);
      }
    },
  };
}
