/**
 * One leader among replicas: a Redis lease (`SET key token NX PX ttl`), renewed by the holder with
 * a compare-and-extend script every third of its life and released on stop with a compare-and-delete
 * (never someone else's lease). A replica that is not the leader tries to take the lease at the same
 * pace, so when the leader dies its lease lapses and a follower leads within `ttlMs` (+ one period).
 *
 * A leader that cannot renew (Redis unreachable, lease taken) steps down at once, and steps down on
 * its own once its last successful renewal is older than the lease's life: two leaders at once would
 * only be possible across a clock jump larger than the margin (a third of the TTL).
 */
import { randomBytes } from "node:crypto";
import type { RedisConnection } from "../redis-connection.js";
import type { Logger } from "../log.js";
import { loadScript } from "../redis/scripts.js";

const RENEW = loadScript("renew-if-held.1.lua");
const RELEASE = loadScript("release-if-held.1.lua");

export interface LeaseOptions {
  readonly redis: RedisConnection;
  readonly key: string;
  /** Life of the lease (default 15 s): how long a dead leader blocks the others. */
  readonly ttlMs?: number;
  /** Who holds it, for logs (the token itself is random). */
  readonly holder?: string;
  readonly log?: Logger;
  /** Called when this replica becomes the leader. */
  readonly onElected: () => void | Promise<void>;
  /** Called when it stops being the leader (lost, or stopped). */
  readonly onDemoted: () => void | Promise<void>;
}

export class LeaderLease {
  private readonly token = randomBytes(16).toString("hex");
  private readonly ttlMs: number;
  private leader = false;
  private renewedAt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running = false;
  private tick: Promise<void> = Promise.resolve();

  public constructor(private readonly o: LeaseOptions) {
    this.ttlMs = o.ttlMs ?? 15_000;
  }

  public get isLeader(): boolean {
    return this.leader;
  }

  /** Start contending; the first attempt runs now. */
  public start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Stop contending; a leader steps down (onDemoted) and releases the lease for the next one. */
  public async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.tick;
    if (this.leader) {
      await this.demote("stopped");
      await RELEASE.run(this.o.redis, [this.o.key], [this.token]).catch((err: unknown) => {
        this.o.log?.warn(
          { err: { message: (err as Error).message } },
          "watcher: could not release the lease",
        );
      });
    }
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.tick = this.attempt().finally(() => {
        if (this.running) this.schedule(Math.max(200, Math.floor(this.ttlMs / 3)));
      });
    }, ms);
    this.timer.unref();
  }

  private async attempt(): Promise<void> {
    try {
      if (this.leader) {
        const ok = (await RENEW.run(this.o.redis, [this.o.key], [this.token, String(this.ttlMs)])) === 1;
        if (!this.running) return;
        if (ok) this.renewedAt = Date.now();
        else await this.demote("lease lost");
        return;
      }
      const got = await this.o.redis.set(this.o.key, this.token, "PX", this.ttlMs, "NX");
      if (!this.running) {
        if (got === "OK") await RELEASE.run(this.o.redis, [this.o.key], [this.token]);
        return;
      }
      if (got === "OK") {
        this.leader = true;
        this.renewedAt = Date.now();
        this.o.log?.info({ holder: this.o.holder, ttlMs: this.ttlMs }, "watcher: became leader");
        await this.o.onElected();
      }
    } catch (err) {
      this.o.log?.warn({ err: { message: (err as Error).message } }, "watcher: lease attempt failed");
      // Cannot prove the lease is still ours once its life is over: step down.
      if (this.leader && Date.now() - this.renewedAt >= this.ttlMs - Math.floor(this.ttlMs / 3))
        await this.demote("lease not renewed");
    }
  }

  private async demote(why: string): Promise<void> {
    if (!this.leader) return;
    this.leader = false;
    this.o.log?.info({ holder: this.o.holder, why }, "watcher: no longer leader");
    await this.o.onDemoted();
  }
}
