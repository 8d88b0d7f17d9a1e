/**
 * The Redis every test and benchmark uses: the one `REDIS_URL` names (default
 * `redis://127.0.0.1:6379`), a unique key prefix per test, and cleanup. Nothing else in `test/` or
 * `bench/` names a Redis address: a bot or worker started by a test gets `REDIS_URL` from here too,
 * so `REDIS_URL=redis://127.0.0.1:6390 npx vitest run …` runs the suite against another server.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { deleteKeysWithPrefix } from "../sim/redis.js";

export { deleteKeysWithPrefix };

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** A connection BullMQ can block on (it needs `maxRetriesPerRequest: null`). */
export function connect(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: null });
}

/** A plain connection (ioredis' defaults: a command fails after its retries), for reads and cleanup. */
export function client(): Redis {
  return new Redis(REDIS_URL);
}

/** `test-<label>-<12 hex>`: the key prefix of one test (or test file), unique per run. */
export function uniquePrefix(label: string): string {
  return `test-${label}-${randomBytes(6).toString("hex")}`;
}

/** Delete every key starting with `prefix` (`deleteKeysWithPrefix` deletes those under `prefix:`). */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== "0");
}

/** Delete every key under `prefix:` over a connection of its own (a test's teardown). */
export async function deletePrefix(prefix: string): Promise<void> {
  const redis = client();
  await deleteKeysWithPrefix(redis, prefix);
  await redis.quit();
}
