/**
 * The fleet's budget of Kubernetes requests in flight at one API server, in Redis: every bot and
 * worker replica on the same prefix asks it before each request (`limiter.ts` queues locally in
 * front of it). A distributed semaphore of leases:
 *
 * - `<prefix>:kube-budget:<server>` is a sorted set of lease ids scored by their expiry (Redis
 *   server time, so replicas' clocks do not matter). A lease is renewed while its request runs; a
 *   process that dies stops renewing, and its leases are reclaimed once they expire.
 * - `<prefix>:kube-budget:<server>:waiting` names the processes waiting for a lease (scored by
 *   when they stop counting as waiting). While several wait, none is granted more than its share
 *   (the budget divided among them), so one replica's burst does not shut another out.
 *
 * Giving leases back and asking for new ones is one script call. Both keys carry the prefix, so on
 * a Redis Cluster (hash-tagged prefix) they share a slot.
 */
import { randomUUID } from "node:crypto";
import type { SharedBudget } from "./budget-leases.js";
import { loadScript, type ScriptRedis } from "../redis/scripts.js";
import { RedisKeys } from "../redis/keys.js";

/** The Redis call the budget needs (a plain client or a cluster client alike). */
export type SharedBudgetRedis = ScriptRedis;

export interface SharedBudgetOptions {
  /** The bot's Redis prefix (`UNSTUCK_REDIS_PREFIX`). */
  readonly prefix: string;
  /** The API server this budget bounds (its URL): one budget per server, whoever asks. */
  readonly server: string;
  /** Most requests in flight at that server across every process (≥ 1). */
  readonly limit: number;
  /** How long a lease lives unrenewed (default 15 s; renewed every third of it). */
  readonly leaseMs?: number;
}

/** How long a process counts as waiting after it last asked (it asks at least every 100 ms while it waits). */
const WAITING_MS = 2_000;

const EXCHANGE = loadScript("kube-budget-exchange.2.lua");
const RENEW = loadScript("kube-budget-renew.1.lua");

/** The key of the budget of `server` under `prefix`. */
export function sharedBudgetKey(prefix: string, server: string): string {
  return RedisKeys.kubeBudget(prefix, server);
}

export function redisSharedBudget(redis: SharedBudgetRedis, options: SharedBudgetOptions): SharedBudget {
  const limit = Math.max(1, Math.floor(options.limit));
  const leaseMs = Math.max(100, Math.floor(options.leaseMs ?? 15_000));
  const key = sharedBudgetKey(options.prefix, options.server);
  const waitingKey = RedisKeys.kubeBudgetWaiting(options.prefix, options.server);
  const owner = randomUUID();
  let seq = 0;
  return {
    leaseMs,
    name: options.server,
    async exchange(release, want, held) {
      const ids = Array.from({ length: want }, () => `${owner}:${(seq++).toString(36)}`);
      const granted = await EXCHANGE.run(
        redis,
        [key, waitingKey],
        [limit, leaseMs, owner, held, release.length, WAITING_MS, ...release, ...ids],
      );
      return Array.isArray(granted) ? granted.map(String) : [];
    },
    async renew(ids) {
      if (ids.length === 0) return;
      await RENEW.run(redis, [key], [leaseMs, ...ids]);
    },
  };
}
