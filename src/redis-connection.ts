/**
 * The bot's Redis connection: one server (`redis://`, `rediss://`), a Redis Cluster
 * (`redis+cluster://`, `rediss+cluster://`, several seed nodes) or a Redis behind Sentinel
 * (`redis+sentinel://`, `rediss+sentinel://`: the sentinels and the master group's name). The
 * approval store, the audit log, the watcher and BullMQ take any of them: on a cluster every key lives
 * under one hash-tagged prefix (`UNSTUCK_REDIS_PREFIX={unstuck}`, checked in `config.ts`), so each
 * script's keys share a slot; behind Sentinel the client asks the sentinels where the master is, at
 * each (re)connection and when they announce a failover, and BullMQ's own connections, duplicated
 * from this one, do the same.
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

type Target = Pick<Config, "redisUrl" | "redisTlsCa" | "redisCluster" | "redisSentinel">;

/** Build (not connect, with `lazyConnect`) the connection `config` describes. */
export function createRedisConnection(config: Target, tuning: ConnectionTuning = {}): RedisConnection {
  const cluster = config.redisCluster;
  const perNode: RedisOptions = {
    ...(tuning.maxRetriesPerRequest !== undefined
      ? { maxRetriesPerRequest: tuning.maxRetriesPerRequest }
      : {}),
    ...(tuning.connectTimeout !== undefined ? { connectTimeout: tuning.connectTimeout } : {}),
  };
  if (config.redisSentinel !== undefined) return new Redis(sentinelOptions(config, tuning, perNode));
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

/** The ioredis options of a Redis behind Sentinel: the one place its URL becomes a client. */
export function sentinelOptions(
  config: Target,
  tuning: ConnectionTuning = {},
  perNode: RedisOptions = {},
): RedisOptions {
  const sentinel = config.redisSentinel;
  if (sentinel === undefined) throw new Error("sentinelOptions: REDIS_URL is not a redis+sentinel:// URL");
  const tls = config.redisTlsCa !== undefined ? { ca: config.redisTlsCa } : {};
  return {
    sentinels: sentinel.sentinels.map((s) => ({ host: s.host, port: s.port })),
    name: sentinel.masterName,
    ...(sentinel.db !== undefined ? { db: sentinel.db } : {}),
    ...(sentinel.username !== undefined ? { username: sentinel.username } : {}),
    ...(sentinel.password !== undefined ? { password: sentinel.password } : {}),
    ...(sentinel.sentinelUsername !== undefined ? { sentinelUsername: sentinel.sentinelUsername } : {}),
    ...(sentinel.sentinelPassword !== undefined ? { sentinelPassword: sentinel.sentinelPassword } : {}),
    ...(sentinel.tls ? { tls, sentinelTLS: tls, enableTLSForSentinelMode: true } : {}),
    // Reconnect at once when the sentinels announce a new master (+switch-master), not only when the
    // old one drops the connection.
    failoverDetector: true,
    ...perNode,
    ...(tuning.lazyConnect !== undefined ? { lazyConnect: tuning.lazyConnect } : {}),
    ...(tuning.enableOfflineQueue !== undefined ? { enableOfflineQueue: tuning.enableOfflineQueue } : {}),
    ...(tuning.reconnect === false
      ? { retryStrategy: () => null, sentinelRetryStrategy: () => null, failoverDetector: false }
      : {}),
  };
}

/** The primaries of a cluster (their own connections), or the one server. */
export function redisPrimaries(redis: RedisConnection): Redis[] {
  return redis instanceof Cluster ? redis.nodes("master") : [redis];
}
