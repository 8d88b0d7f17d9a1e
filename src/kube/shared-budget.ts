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
import type { SharedBudget } from "./limiter.js";

/** The Redis call the budget needs (a plain client or a cluster client alike). */
export interface SharedBudgetRedis {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

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

/**
 * KEYS: leases, waiting. ARGV: limit, lease ms, process id, leases the process keeps, how many to
 * give back, the ids to give back, then the ids it would like (as many as it wants).
 */
const EXCHANGE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local held = tonumber(ARGV[4])
local nrel = tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
-- A lease never lives beyond one lease time from now: one scored later was not granted here (written
-- into Redis by hand) and is dropped, so it cannot hold the budget.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '(' .. (now + ttl), '+inf')
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '(' .. (now + ${WAITING_MS}), '+inf')
for i = 6, 5 + nrel do redis.call('ZREM', KEYS[1], ARGV[i]) end
local first = 6 + nrel
local want = #ARGV - first + 1
local granted = {}
if want > 0 then
  redis.call('ZADD', KEYS[2], now + ${WAITING_MS}, ARGV[3])
  local free = limit - redis.call('ZCARD', KEYS[1])
  local share = math.ceil(limit / math.max(1, redis.call('ZCARD', KEYS[2])))
  local give = math.min(want, free, share - held)
  for i = 1, give do
    redis.call('ZADD', KEYS[1], now + ttl, ARGV[first + i - 1])
    granted[i] = ARGV[first + i - 1]
  end
  if give >= want then redis.call('ZREM', KEYS[2], ARGV[3]) end
  redis.call('PEXPIRE', KEYS[2], ${WAITING_MS})
else
  redis.call('ZREM', KEYS[2], ARGV[3])
end
if redis.call('ZCARD', KEYS[1]) > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return granted`;

/** KEYS: leases. ARGV: lease ms, then the ids to keep alive (only those still held). */
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', now + ttl, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ttl)
return 0`;

/** The key of the budget of `server` under `prefix`. */
export function sharedBudgetKey(prefix: string, server: string): string {
  return `${prefix}:kube-budget:${server}`;
}

export function redisSharedBudget(redis: SharedBudgetRedis, options: SharedBudgetOptions): SharedBudget {
  const limit = Math.max(1, Math.floor(options.limit));
  const leaseMs = Math.max(100, Math.floor(options.leaseMs ?? 15_000));
  const key = sharedBudgetKey(options.prefix, options.server);
  const waitingKey = `${key}:waiting`;
  const owner = randomUUID();
  let seq = 0;
  return {
    leaseMs,
    name: options.server,
    async exchange(release, want, held) {
      const ids = Array.from({ length: want }, () => `${owner}:${(seq++).toString(36)}`);
      const granted = await redis.eval(
        EXCHANGE,
        2,
        key,
        waitingKey,
        limit,
        leaseMs,
        owner,
        held,
        release.length,
        ...release,
        ...ids,
      );
      return Array.isArray(granted) ? granted.map(String) : [];
    },
    async renew(ids) {
      if (ids.length === 0) return;
      await redis.eval(RENEW, 1, key, leaseMs, ...ids);
    },
  };
}
