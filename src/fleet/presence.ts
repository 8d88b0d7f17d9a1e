/**
 * Which clusters of a fleet have a live worker. Each worker process heartbeats
 * `<prefix>:fleet:<cluster>:alive`: a sorted set of worker ids scored by when each one's heartbeat
 * runs out, the key itself expiring three intervals after the last beat, so a cluster whose workers all
 * died reads as absent within three intervals and one whose workers stopped cleanly at once (each takes
 * itself out). `<prefix>:fleet:<cluster>:seen` keeps the last beat for "last seen 2 min ago".
 */
import { plural } from "../util/format.js";
import { FleetKeys } from "../redis/keys.js";

/** The Redis calls presence needs (a plain client or a cluster client alike). */
export interface PresenceRedis {
  zadd(key: string, score: number, member: string): Promise<unknown>;
  zrem(key: string, member: string): Promise<unknown>;
  zremrangebyscore(key: string, min: number | string, max: number | string): Promise<unknown>;
  zcount(key: string, min: number | string, max: number | string): Promise<number>;
  pexpire(key: string, ms: number): Promise<unknown>;
  set(key: string, value: string, px: "PX", ms: number): Promise<unknown>;
  get(key: string): Promise<string | null>;
}

/** What the bot knows of one cluster's workers. */
export interface ClusterPresence {
  readonly cluster: string;
  /** Workers whose heartbeat has not run out. */
  readonly live: number;
  /** The last heartbeat of any of its workers, when one was ever seen (kept 30 days). */
  readonly lastSeen?: Date;
}

/** How long the last-seen time is kept after the last beat. */
const SEEN_KEPT_MS = 30 * 86_400_000;

export class FleetPresence {
  public constructor(
    private readonly redis: PresenceRedis,
    private readonly prefix: string,
  ) {}

  private alive(cluster: string): string {
    return FleetKeys.alive(this.prefix, cluster);
  }

  private seen(cluster: string): string {
    return FleetKeys.seen(this.prefix, cluster);
  }

  /** One beat of one worker: alive until `now + ttlMs`. */
  public async beat(cluster: string, worker: string, ttlMs: number, now: Date): Promise<void> {
    const at = now.getTime();
    await this.redis.zadd(this.alive(cluster), at + ttlMs, worker);
    await this.redis.pexpire(this.alive(cluster), ttlMs);
    await this.redis.zremrangebyscore(this.alive(cluster), "-inf", at);
    await this.redis.set(this.seen(cluster), String(at), "PX", SEEN_KEPT_MS);
  }

  /** A worker stopping: it no longer counts (the others of its cluster still do). */
  public async leave(cluster: string, worker: string, now: Date): Promise<void> {
    await this.redis.zrem(this.alive(cluster), worker);
    await this.redis.set(this.seen(cluster), String(now.getTime()), "PX", SEEN_KEPT_MS);
  }

  public async status(cluster: string, now: Date): Promise<ClusterPresence> {
    const [live, seen] = await Promise.all([
      this.redis.zcount(this.alive(cluster), `(${String(now.getTime())}`, "+inf"),
      this.redis.get(this.seen(cluster)),
    ]);
    const at = seen !== null ? Number(seen) : NaN;
    return { cluster, live, ...(Number.isFinite(at) ? { lastSeen: new Date(at) } : {}) };
  }
}

/** "2 min ago", "40 s ago", "3 h ago", "5 days ago". */
export function ago(then: Date, now: Date): string {
  const s = Math.max(0, Math.round((now.getTime() - then.getTime()) / 1000));
  if (s < 90) return `${String(s)} s ago`;
  const min = Math.round(s / 60);
  if (min < 90) return `${String(min)} min ago`;
  const h = Math.round(min / 60);
  if (h < 36) return `${String(h)} h ago`;
  return `${plural(Math.round(h / 24), "day", "days")} ago`;
}

/** How a cluster's presence reads: "live (2 workers)", "no live workers (last seen 2 min ago)". */
export function presenceWords(p: ClusterPresence, now: Date): string {
  if (p.live > 0) return `live (${plural(p.live, "worker", "workers")})`;
  return `no live workers (${p.lastSeen !== undefined ? `last seen ${ago(p.lastSeen, now)}` : "never seen"})`;
}
