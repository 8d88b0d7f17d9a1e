/**
 * Posts a job step makes at most once, however often the step runs. A wait or a notification is a
 * BullMQ job, and a job runs again whenever it was not marked done: its worker was handed the job
 * back on shutdown or killed, its lock expired while Redis restarted. Each thread reply and file a
 * job posts is therefore named by an idempotency key (which wait or request, which message of it)
 * and recorded in Redis, `<prefix>:posted:<key>` → the posted message's `ts`; a step that runs
 * again finds the record and posts nothing (a status message it finds is edited instead).
 *
 * The record is claimed before the post (`pending`, a lease the poster renews while it waits for
 * Slack) and holds the `ts` once Slack answered, so a second run of the same step while the first
 * is still posting waits for it instead of posting beside it. A poster that dies between its claim
 * and the record leaves only the lease, which expires: the step then posts again, since Slack might
 * never have received the first post (Slack's Web API has no idempotency key of its own; that one
 * window can still repeat a post, never lose one).
 *
 * With keys (`seal`), a record is signed by the process that posted: a step edits the message a record
 * names only when the record verifies, so a record written into Redis cannot point a status edit at
 * another message (one that does not verify is not trusted: the step posts its own).
 */
import { createHash, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { SealKeys } from "../trust/sealed.js";
import { loadScript, type ScriptRedis } from "../redis/scripts.js";
import { RedisKeys } from "../redis/keys.js";

export interface PostOnceResult {
  /** True when this call posted; false when the post was made before (by this step's earlier run). */
  readonly posted: boolean;
  /** The posted message's `ts` (recorded by the run that posted), when the post returned one. */
  readonly ts?: string;
}

/** Runs a post unless the same post (same key) was made already. */
export interface PostLedger {
  once(key: string, post: () => Promise<{ readonly ts?: string } | undefined>): Promise<PostOnceResult>;
}

/** No record at all: every call posts (for callers that run each step once, e.g. unit tests). */
export const unrecordedPosts: PostLedger = {
  async once(_key, post) {
    const res = await post();
    return { posted: true, ...(res?.ts !== undefined ? { ts: res.ts } : {}) };
  },
};

/** The Redis calls the ledger needs (a plain client or a cluster client alike: one key per call). */
export type PostLedgerRedis = ScriptRedis;

export interface PostLedgerOptions {
  /** How long a claim lives without renewal (default 30 s); renewed every third of it while posting. */
  readonly leaseMs?: number;
  /** How long a second run waits for a post in flight before giving up for a retry (default 2 leases). */
  readonly waitMs?: number;
  /** How long a record is kept (default 7 days: longer than any wait and any notification's retries). */
  readonly ttlSeconds?: number;
  /** Signs each record with this process's key and checks records with the keyring (any signer of this install). */
  readonly seal?: SealKeys;
}

const PENDING = "pending:";
const POSTED = "posted:";

const CLAIM = loadScript("post-claim.1.lua");
const RENEW = loadScript("renew-if-held.1.lua");
const RELEASE = loadScript("release-if-held.1.lua");
const RECORD = loadScript("post-record.1.lua");

/** A key of bounded length: long parts (URLs, thread ids) are kept readable up to a point, then hashed. */
export function postKey(...parts: readonly (string | number)[]): string {
  const key = parts.map(String).join(":");
  if (key.length <= 200) return key;
  return `${key.slice(0, 120)}…${createHash("sha256").update(key).digest("hex").slice(0, 32)}`;
}

export function redisPostLedger(
  redis: PostLedgerRedis,
  prefix: string,
  options: PostLedgerOptions = {},
): PostLedger {
  const leaseMs = options.leaseMs ?? 30_000;
  const waitMs = options.waitMs ?? 2 * leaseMs;
  const ttlSeconds = options.ttlSeconds ?? 7 * 86_400;
  const pollMs = Math.max(20, Math.min(250, Math.floor(leaseMs / 10)));
  const keyOf = (key: string): string => RedisKeys.posted(prefix, key);
  const seal = options.seal;
  /** `<ts>` or, signed, `<ts>|<signature>`; `undefined` when a signed record does not verify. */
  const recordOf = (key: string, ts: string): string =>
    seal?.key !== undefined ? `${ts}|${seal.key.sign("posted", [key, ts])}` : ts;
  const tsOf = (key: string, value: string): string | undefined => {
    if (seal === undefined) return value;
    const bar = value.indexOf("|");
    const ts = bar < 0 ? value : value.slice(0, bar);
    const sig = bar < 0 ? "" : value.slice(bar + 1);
    return seal.keyring.verify("posted", [key, ts], sig, () => true).ok ? ts : undefined;
  };

  return {
    async once(key, post) {
      const redisKey = keyOf(key);
      const claim = `${PENDING}${randomUUID()}`;
      const deadline = Date.now() + waitMs;
      for (;;) {
        const seen = await CLAIM.run(redis, [redisKey], [claim, leaseMs]);
        // Our own claim: the script ran, its answer was lost with the connection and the client
        // sent it again. The step is this run's to post.
        if (typeof seen !== "string" || seen === claim) break;
        if (seen.startsWith(POSTED)) {
          const ts = tsOf(key, seen.slice(POSTED.length));
          if (ts !== undefined) return { posted: false, ...(ts !== "" ? { ts } : {}) };
          // Not a record of this install's: it names no message of ours. Taken over, and posted anew.
          await RELEASE.run(redis, [redisKey], [seen]).catch(() => undefined);
          continue;
        }
        // Another run of this step is posting it right now (a job handed over mid-post): its
        // record, or its lease running out, decides.
        if (Date.now() >= deadline) {
          throw new UnstuckError(
            ErrorCode.Upstream,
            `Another worker is still posting ${key}; retrying later rather than posting it twice.`,
            { key },
          );
        }
        await sleep(pollMs);
      }
      const renewal = setInterval(
        () => void RENEW.run(redis, [redisKey], [claim, leaseMs]).catch(() => undefined),
        Math.max(10, Math.floor(leaseMs / 3)),
      );
      renewal.unref();
      let res: { readonly ts?: string } | undefined;
      try {
        res = await post();
      } catch (err) {
        clearInterval(renewal);
        // Not posted (as far as Slack told us): the next run may post it.
        await RELEASE.run(redis, [redisKey], [claim]).catch(() => undefined);
        throw err;
      }
      clearInterval(renewal);
      const ts = res?.ts;
      await RECORD.run(redis, [redisKey], [`${POSTED}${recordOf(key, ts ?? "")}`, ttlSeconds]);
      return { posted: true, ...(ts !== undefined ? { ts } : {}) };
    },
  };
}
