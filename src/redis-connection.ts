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
import {
  Cluster,
  Redis,
  SentinelConnector,
  type ClusterOptions,
  type RedisOptions,
  type SentinelAddress,
  type SentinelConnectionOptions,
} from "ioredis";
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

/** How ioredis' connector reports to the connection it serves (`silentEmit` of that connection). */
type ConnectorReport = Parameters<SentinelConnector["connect"]>[0];
type OpenSentinel = (endpoint: Partial<SentinelAddress>, options?: Partial<RedisOptions>) => Redis;

/**
 * ioredis' Sentinel connector, except that the connections its failover detector opens (one to each
 * known sentinel, subscribed to `+switch-master`, opened again at each reconnection) get an `error`
 * listener. ioredis gives them none, so a sentinel that is down or unreachable made each of them
 * print "[ioredis] Unhandled error event" on stderr, once per connection and per attempt. Their
 * errors now reach the connection they serve as a `sentinelError` event (ioredis' own event for a
 * sentinel that fails to answer while the master is resolved), which its owner logs
 * (`src/wiring/redis.ts`). Set as the `Connector` option, so `duplicate()` (BullMQ's connections)
 * keeps it.
 */
class ListenedSentinelConnector extends SentinelConnector {
  private report: ConnectorReport | undefined;

  // ioredis hands a `Connector` its whole options (unknown, in its types).
  constructor(options: unknown) {
    super(options as SentinelConnectionOptions);
    // `connectToSentinel` is private in ioredis' types; if a release renames it, this degrades to
    // ioredis' own behaviour.
    const self = this as unknown as { connectToSentinel?: OpenSentinel };
    const open = self.connectToSentinel;
    if (typeof open !== "function") return;
    self.connectToSentinel = (endpoint, options) => {
      const client = open.call(this, endpoint, options);
      // Only the failover detector passes options; resolving the master listens to its own client
      // and reports a failure itself.
      if (options !== undefined) {
        const where = `${endpoint.host ?? "127.0.0.1"}:${String(endpoint.port ?? 26379)}`;
        client.on("error", (err: Error) => {
          this.report?.("sentinelError", new Error(`sentinel ${where} (failover detector): ${err.message}`));
        });
      }
      return client;
    };
  }

  override connect(report: ConnectorReport): ReturnType<SentinelConnector["connect"]> {
    this.report = report;
    return super.connect(report);
  }
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
    Connector: ListenedSentinelConnector,
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
