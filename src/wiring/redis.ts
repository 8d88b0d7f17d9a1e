/** The Redis connection a running bot holds: connected at start, or an error naming `REDIS_URL`. */
import type { Config } from "../config.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { Logger } from "../log.js";
import { createRedisConnection, type RedisConnection } from "../redis-connection.js";
import { outageOf } from "./redis-outage.js";

export async function connectRedis(config: Config, log: Logger): Promise<RedisConnection> {
  // BullMQ needs maxRetriesPerRequest: null on connections its workers block on.
  const redis = createRedisConnection(config, { maxRetriesPerRequest: null, lazyConnect: true });
  const outage = outageOf(redis, log);
  redis.on("error", (err: Error) => {
    outage.failed("connection", err);
  });
  redis.on("ready", () => {
    outage.recovered();
  });
  // Behind Sentinel: a sentinel that does not answer (the others still serve).
  redis.on("sentinelError", (err: Error) =>
    log.warn({ err: { message: err.message } }, "redis sentinel error"),
  );
  await redis.connect().catch((err: unknown) => {
    throw new UnstuckError(
      ErrorCode.Unreachable,
      `Cannot reach Redis at REDIS_URL (${err instanceof Error ? err.message : String(err)}).`,
      { variable: "REDIS_URL" },
    );
  });
  return redis;
}
