import type { Redis } from "ioredis";

/** Delete every key under `prefix:` (tests and sandboxes clean up after themselves). */
export async function deleteKeysWithPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== "0");
}
