/**
 * The watcher as the bot runs it: a lease among replicas, and the namespace watcher running only
 * while this replica holds it. Off unless `UNSTUCK_WATCH_CHANNEL` is set (see `src/wiring/watcher.ts`).
 */
import { hostname } from "node:os";
import type { RedisConnection } from "../redis-connection.js";
import type { NamespaceDiagnosis } from "../diagnosis/types.js";
import type { NamespaceWatchIo } from "../kube/namespace-watch.js";
import type { Logger } from "../log.js";
import { LeaderLease } from "./lease.js";
import {
  NamespaceWatcher,
  type WatcherOptions,
  type WatcherReceipts,
  type WatcherSlack,
  type WatcherStats,
} from "./watcher.js";
import { RedisKeys, WatcherKeys } from "../redis/keys.js";

export interface WatcherServiceOptions {
  readonly redis: RedisConnection;
  /** Redis key prefix of the bot (`UNSTUCK_REDIS_PREFIX`); the watcher keeps its keys under `<prefix>:watcher`. */
  readonly prefix: string;
  readonly channel: string;
  readonly thresholdMs: number;
  /** Life of the leader lease (default 15 s). */
  readonly leaseMs?: number;
  readonly io: NamespaceWatchIo;
  readonly diagnose: (namespace: string) => Promise<NamespaceDiagnosis>;
  readonly slack: WatcherSlack;
  /** Signs and checks where an episode's card is (see `WatcherOptions.receipts`). */
  readonly receipts: WatcherReceipts;
  readonly log?: Logger;
  /** Tuning passed to the watcher (tests shorten them). */
  readonly tuning?: Pick<
    WatcherOptions,
    "watchTimeoutSeconds" | "recheckMs" | "updateEveryMs" | "concurrency" | "backoffMs"
  >;
}

export interface WatcherService {
  start(): void;
  /** Stop watching and release the lease (the next replica leads at once). */
  stop(): Promise<void>;
  isLeader(): boolean;
  stats(): WatcherStats;
}

export function createWatcherService(o: WatcherServiceOptions): WatcherService {
  const keyPrefix = RedisKeys.watcher(o.prefix);
  const log = o.log?.child({ component: "watcher" });
  const watcher = new NamespaceWatcher({
    io: o.io,
    redis: o.redis,
    keyPrefix,
    channel: o.channel,
    thresholdMs: o.thresholdMs,
    diagnose: o.diagnose,
    slack: o.slack,
    receipts: o.receipts,
    ...(log !== undefined ? { log } : {}),
    ...o.tuning,
  });
  const lease = new LeaderLease({
    redis: o.redis,
    key: WatcherKeys.leader(keyPrefix),
    ...(o.leaseMs !== undefined ? { ttlMs: o.leaseMs } : {}),
    holder: `${hostname()}:${String(process.pid)}`,
    ...(log !== undefined ? { log } : {}),
    onElected: () => watcher.start(),
    onDemoted: () => watcher.stop(),
  });
  return {
    start: () => lease.start(),
    stop: () => lease.stop(),
    isLeader: () => lease.isLeader,
    stats: () => watcher.stats(),
  };
}
