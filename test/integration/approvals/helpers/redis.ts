/** Real-Redis test plumbing: one connection per suite, a unique prefix per test, full cleanup. */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";

export const REDIS_URL = "redis://127.0.0.1:6379";

/** BullMQ needs `maxRetriesPerRequest: null` on connections it blocks on. */
export function connect(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: null });
}

export function uniquePrefix(label: string): string {
  return `test-${label}-${randomBytes(6).toString("hex")}`;
}

/** Delete every key starting with `prefix`. */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== "0");
}

/** Poll `check` until it returns a value other than undefined, or fail after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
