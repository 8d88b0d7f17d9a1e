/**
 * Discovery, cached for the long-running bot: the first `discover()` fills the cache and later
 * ones answer from it, so a warm diagnosis is one round of parallel lists. What discovery
 * returns changes only when a CustomResourceDefinition or an APIService is added, changed or
 * deleted; the cache watches both (metadata only, from the resourceVersion of a one-item list,
 * with bookmarks) and drops its entry on any such event. A 410 Gone re-lists (events may have been
 * missed, so that drops the entry too); any other failure reconnects with backoff. While a watch
 * is not established — RBAC forbids it, the API server is unreachable — the entry lives `ttlMs`
 * at most, as kubectl's own discovery cache does; discovery itself never fails for the watch.
 *
 * I/O-free: the adapter supplies the uncached discovery, the list and the watch.
 */
import type { Logger } from "../log.js";
import type { DiscoverySnapshot } from "./types.js";
import { type OpenWatch, type WatchEvent, WatchLoop, type WatchLoopOptions } from "./watch-loop.js";

export interface DiscoveryCacheOptions {
  /** Watch CRDs and APIServices to invalidate (default true); without it the cache is TTL-only. */
  readonly watch?: boolean;
  /** Longest life of an entry while the watches are not both established (default 60 s). */
  readonly ttlMs?: number;
  /**
   * Longest life of an entry that holds discovery failures (default 10 s): a group that failed
   * (503, stale) is retried soon even if no APIService changed.
   */
  readonly failureTtlMs?: number;
  /** `timeoutSeconds` of one watch request; the watch resumes from its resourceVersion (default 300). */
  readonly watchTimeoutSeconds?: number;
  /** Reconnect backoff after an error: first and longest pause (default 500 ms and 30 s). */
  readonly backoffMs?: { readonly initial?: number; readonly max?: number };
}

/** The two kinds whose changes change discovery. */
export const DISCOVERY_WATCHES = [
  {
    path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    resource: "customresourcedefinitions",
    group: "apiextensions.k8s.io",
  },
  {
    path: "/apis/apiregistration.k8s.io/v1/apiservices",
    resource: "apiservices",
    group: "apiregistration.k8s.io",
  },
] as const;

export type WatchTarget = (typeof DISCOVERY_WATCHES)[number];

export interface DiscoveryCacheIo {
  /** Discovery without the cache. */
  load(): Promise<DiscoverySnapshot>;
  /** The resourceVersion of a list of `target` (to watch from). */
  listResourceVersion(target: WatchTarget): Promise<string>;
  /** The watch of `target` (see {@link OpenWatch}). */
  watch(target: WatchTarget): OpenWatch;
  readonly log?: Logger;
  readonly now?: () => number;
}

export interface DiscoveryCacheStats {
  /** Discovery loads (cache misses). */
  readonly loads: number;
  /** Answers from the cache. */
  readonly hits: number;
  /** Times the entry was dropped by a watch event or a re-list. */
  readonly invalidations: number;
  /** Both watches are connected now. */
  readonly watching: boolean;
}

interface Entry {
  readonly snapshot: DiscoverySnapshot;
  readonly epoch: number;
  readonly loadedAt: number;
  /** Both watches were connected when the load started: no change can have slipped by unseen. */
  readonly watched: boolean;
}

interface Loop {
  readonly loop: WatchLoop;
  /** Its watch is connected now. */
  readonly state: { connected: boolean };
}

export class DiscoveryCache {
  private readonly ttlMs: number;
  private readonly failureTtlMs: number;
  private readonly now: () => number;
  private readonly loops: Loop[];
  private epoch = 0;
  private entry: Entry | undefined;
  private loading: { readonly epoch: number; readonly promise: Promise<DiscoverySnapshot> } | undefined;
  private started = false;
  private closed = false;
  private loads = 0;
  private hits = 0;
  private invalidations = 0;

  public constructor(
    private readonly io: DiscoveryCacheIo,
    options: DiscoveryCacheOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 60_000;
    this.failureTtlMs = options.failureTtlMs ?? 10_000;
    this.now = io.now ?? Date.now;
    const loopOptions = {
      name: "discovery cache",
      fallback: `discovery is re-read after ${this.ttlMs} ms instead`,
      timeoutSeconds: options.watchTimeoutSeconds ?? 300,
      slowPauseMs: this.ttlMs,
      backoffMs: { initial: options.backoffMs?.initial ?? 500, max: options.backoffMs?.max ?? 30_000 },
      ...(io.log !== undefined ? { log: io.log } : {}),
    };
    this.loops =
      options.watch === false ? [] : DISCOVERY_WATCHES.map((target) => this.loopFor(target, loopOptions));
  }

  private loopFor(target: WatchTarget, options: Omit<WatchLoopOptions, "resource">): Loop {
    const state = { connected: false };
    const loop = new WatchLoop(
      {
        list: async (again) => {
          const rv = await this.io.listResourceVersion(target);
          // Changes between the broken watch and this list were never seen.
          if (again) this.invalidate(`${target.resource} re-listed`);
          return rv;
        },
        watch: this.io.watch(target),
        changed: (e: WatchEvent) => {
          const meta = e.object.metadata;
          const name =
            meta !== null && typeof meta === "object" ? (meta as Record<string, unknown>).name : undefined;
          this.invalidate(`${e.type} ${target.resource} ${typeof name === "string" ? name : ""}`);
        },
        connected: (up) => {
          state.connected = up;
        },
      },
      { ...options, resource: target.resource },
    );
    return { loop, state };
  }

  /** The cached snapshot, or a fresh one (concurrent misses share one load). */
  public async get(): Promise<DiscoverySnapshot> {
    if (this.closed) return this.io.load();
    this.start();
    const e = this.entry;
    if (e !== undefined && this.valid(e)) {
      this.hits++;
      return e.snapshot;
    }
    if (this.loading?.epoch !== this.epoch) {
      const loading = { epoch: this.epoch, promise: this.fill(this.epoch) };
      this.loading = loading;
      void loading.promise
        .finally(() => {
          if (this.loading === loading) this.loading = undefined;
        })
        .catch(() => undefined);
    }
    return this.loading.promise;
  }

  /** Drop the entry: the next `get` loads. */
  public invalidate(reason: string): void {
    this.epoch++;
    this.entry = undefined;
    this.invalidations++;
    this.io.log?.debug({ reason }, "discovery cache invalidated");
  }

  public stats(): DiscoveryCacheStats {
    return {
      loads: this.loads,
      hits: this.hits,
      invalidations: this.invalidations,
      watching: this.watching(),
    };
  }

  /** Stop the watches; later `get`s load every time. */
  public close(): void {
    if (this.closed) return;
    this.closed = true;
    this.entry = undefined;
    for (const l of this.loops) l.loop.close();
  }

  private watching(): boolean {
    return this.loops.length > 0 && this.loops.every((l) => l.state.connected);
  }

  private valid(e: Entry): boolean {
    if (e.epoch !== this.epoch) return false;
    const age = this.now() - e.loadedAt;
    if (e.snapshot.failures.length > 0 && age >= Math.min(this.failureTtlMs, this.ttlMs)) return false;
    return (e.watched && this.watching()) || age < this.ttlMs;
  }

  private async fill(epoch: number): Promise<DiscoverySnapshot> {
    const watched = this.watching();
    const loadedAt = this.now();
    this.loads++;
    const snapshot = await this.io.load();
    // A change seen while loading may or may not be in this answer: hand it out, keep it not.
    if (this.epoch === epoch && !this.closed) this.entry = { snapshot, epoch, loadedAt, watched };
    return snapshot;
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    for (const l of this.loops) l.loop.start();
  }
}
