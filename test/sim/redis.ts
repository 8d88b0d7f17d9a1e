import type { Redis } from "ioredis";

/** Delete every key under `prefix:` (tests and sandboxes clean up after themselves). */
/** Deletes every key under `prefix:`; resolves with how many there were. */
export async function deleteKeysWithPrefix(redis: Redis, prefix: string): Promise<number> {
  let cursor = "0";
  let removed = 0;
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    if (keys.length > 0) removed += await redis.del(...keys);
    cursor = next;
  } while (cursor !== "0");
  return removed;
}
