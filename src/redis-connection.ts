/**
 * The bot's Redis connection: one server (`redis://`, `rediss://`) or a Redis Cluster
 * (`redis+cluster://`, `rediss+cluster://`, several seed nodes). The approval store, the audit log,
 * the watcher and BullMQ take either: on a cluster every key lives under one hash-tagged prefix
 * (`UNSTUCK_REDIS_PREFIX={unstuck}`, checked in `config.ts`), so each script's keys share a slot.
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from "ioredis";
import type { Config } from "./config.js";

/** A single Redis or a Redis Cluster client; both speak the commands the bot sends. */
export type RedisConnection = Redis | Cluster;

/** How one connection behaves; the same words for a single Redis and for each node of a cluster. */
export interface ConnectionTuning {
  readonly lazyConnect?: boolean;
  /** `null` for BullMQ's blocking connections. */
  readonly maxRetriesPerRequest?: number | null;
  readonly connectTimeout?: number;
  readonly enableOfflineQueue?: boolean;
  /** false: one attempt, no reconnection (start-up checks, the CLI). */
  readonly reconnect?: boolean;
}

type Target = Pick<Config, "redisUrl" | "redisTlsCa" | "redisCluster">;

/** Build (not connect, with `lazyConnect`) the connection `config` describes. */
export function createRedisConnection(config: Target, tuning: ConnectionTuning = {}): RedisConnection {
  const cluster = config.redisCluster;
  const perNode: RedisOptions = {
    ...(tuning.maxRetriesPerRequest !== undefined
      ? { maxRetriesPerRequest: tuning.maxRetriesPerRequest }
      : {}),
    ...(tuning.connectTimeout !== undefined ? { connectTimeout: tuning.connectTimeout } : {}),
  };
  if (cluster === undefined) {
    return new Redis(config.redisUrl, {
      ...(config.redisTlsCa !== undefined && config.redisUrl.startsWith("rediss://")
        ? { tls: { ca: config.redisTlsCa } }
        : {}),
      ...perNode,
      ...(tuning.lazyConnect !== undefined ? { lazyConnect: tuning.lazyConnect } : {}),
      ...(tuning.enableOfflineQueue !== undefined ? { enableOfflineQueue: tuning.enableOfflineQueue } : {}),
      ...(tuning.reconnect === false ? { retryStrategy: () => null } : {}),
    });
  }
  const options: ClusterOptions = {
    redisOptions: {
      ...perNode,
      ...(cluster.username !== undefined ? { username: cluster.username } : {}),
      ...(cluster.password !== undefined ? { password: cluster.password } : {}),
      ...(cluster.tls ? { tls: config.redisTlsCa !== undefined ? { ca: config.redisTlsCa } : {} } : {}),
    },
    // Over TLS the nodes are dialled by the names they announce, so certificates match
    // (ElastiCache: the configuration endpoint's nodes); see ioredis "Special note: AWS ElastiCache".
    ...(cluster.tls ? { dnsLookup: (address, callback) => callback(null, address) } : {}),
    ...(tuning.lazyConnect !== undefined ? { lazyConnect: tuning.lazyConnect } : {}),
    ...(tuning.enableOfflineQueue !== undefined ? { enableOfflineQueue: tuning.enableOfflineQueue } : {}),
    ...(tuning.reconnect === false ? { clusterRetryStrategy: () => null } : {}),
  };
  return new Cluster(
    cluster.nodes.map((n) => ({ host: n.host, port: n.port })),
    options,
  );
}

/** The primaries of a cluster (their own connections), or the one server. */
export function redisPrimaries(redis: RedisConnection): Redis[] {
  return redis instanceof Cluster ? redis.nodes("master") : [redis];
}
