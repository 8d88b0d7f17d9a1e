/**
 * First to notice: a metadata-only watch on namespaces that posts the diagnosis card
 * to a channel when a namespace has been Terminating longer than the threshold with content left —
 * once per namespace and episode (episode = uid + deletionTimestamp), with updates in the card's
 * thread and a quiet note there when the namespace finally goes (the card repainted GONE, no buttons).
 *
 * - **List, then watch** from the list's resourceVersion, with bookmarks; the revision and the set of
 *   Terminating namespaces are kept in Redis, so a restarted leader (or the next one) resumes the
 *   watch where the last one stopped instead of listing. A 410 Gone (revision compacted) re-lists:
 *   namespaces absent from the list with an open episode are reported gone.
 * - **No poll**: each Terminating namespace gets one timer at deletionTimestamp + threshold (re-armed
 *   from Redis after a restart); a check runs the existing diagnosis only then.
 * - **Once**: the episode key is claimed with `SET NX` before posting, so a restart or a second
 *   replica never posts twice. A process that dies between the claim and the post leaves the episode
 *   unposted (at most once, never twice).
 *
 * Only the lease holder runs this (see `lease.ts`); `start`/`stop` follow the lease.
 */
import type { RedisConnection } from "../redis-connection.js";
import type { NamespaceDiagnosis } from "../diagnosis/types.js";
import { toUserError } from "../errors.js";
import type { NamespaceMeta, NamespaceWatchEvent, NamespaceWatchIo } from "../kube/namespace-watch.js";
import type { Logger } from "../log.js";
import { WatcherKeys } from "../redis/keys.js";

/**
 * What the watcher tells the channel; the Slack adapter words and renders it
 * (`src/slack/watcher-client.ts`).
 */
export type WatcherMessage =
  /** The card: the namespace has been Terminating longer than `thresholdMs` with content left. */
  | { readonly kind: "notice"; readonly diagnosis: NamespaceDiagnosis; readonly thresholdMs: number }
  /** In the card's thread: what is left changed. */
  | { readonly kind: "still-terminating"; readonly diagnosis: NamespaceDiagnosis }
  /** In the card's thread: the namespace is gone, after this long Terminating (when known). */
  | { readonly kind: "gone"; readonly namespace: string; readonly terminatingSeconds?: number }
  /** The card repainted GONE (rendered from the namespace alone). */
  | { readonly kind: "gone-card"; readonly namespace: string; readonly terminatingSeconds?: number };

/** How the watcher talks to Slack (a WebClient in production; it escapes everything foreign). */
export interface WatcherSlack {
  /** Post a message (in `threadTs`'s thread when given). Returns its ts. */
  post(channel: string, message: WatcherMessage, threadTs?: string): Promise<{ ts: string }>;
  update(channel: string, ts: string, message: WatcherMessage): Promise<void>;
}

export interface WatcherOptions {
  readonly io: NamespaceWatchIo;
  readonly redis: RedisConnection;
  /** Key prefix of the watcher's state, e.g. `unstuck:watcher`. */
  readonly keyPrefix: string;
  readonly channel: string;
  /** `UNSTUCK_BLOCKED_AFTER_SECONDS` in ms. */
  readonly thresholdMs: number;
  readonly diagnose: (namespace: string) => Promise<NamespaceDiagnosis>;
  readonly slack: WatcherSlack;
  readonly log?: Logger;
  readonly now?: () => number;
  /** `timeoutSeconds` of one watch request (default 300); the next resumes from its revision. */
  readonly watchTimeoutSeconds?: number;
  /** Re-check a namespace past the threshold with nothing left yet (default 30 s). */
  readonly recheckMs?: number;
  /** Fewest ms between two thread updates of one episode (default 60 s). */
  readonly updateEveryMs?: number;
  /** Diagnoses at once (default 8). */
  readonly concurrency?: number;
  /** Reconnect backoff (default 500 ms doubling to 30 s). */
  readonly backoffMs?: { readonly initial?: number; readonly max?: number };
  /** How long an episode record is kept (default 30 days). */
  readonly episodeTtlSeconds?: number;
  /**
   * Signs where an episode's card is (this process's key) and checks it: the watcher replies under and
   * repaints only a card whose record it can verify, never a message a Redis writer pointed it at.
   */
  readonly receipts: WatcherReceipts;
}

/** Where a card was posted, signed and checked (`src/trust/`); the fields name the episode and the message. */
export interface WatcherReceipts {
  sign(fields: readonly string[]): string;
  check(fields: readonly string[], sig: unknown): boolean;
}

interface Tracked {
  readonly uid: string;
  readonly deletionTimestamp: string;
  timer?: ReturnType<typeof setTimeout>;
  /** Episode record key once posted (by anyone). */
  episode?: string;
  lastUpdateAt: number;
  updateTimer?: ReturnType<typeof setTimeout>;
}

interface EpisodeRecord {
  readonly state: "posting" | "posted" | "gone";
  readonly namespace: string;
  readonly uid: string;
  readonly deletionTimestamp: string;
  readonly channel?: string;
  readonly ts?: string;
  /** Where the card is, signed (`WatcherReceipts`): nothing is posted under or repainted without it. */
  readonly cardSig?: string;
  /** What the thread last said remains (to post an update only when it changed). */
  readonly signature?: string;
}

export interface WatcherStats {
  readonly lists: number;
  readonly posts: number;
  readonly updates: number;
  readonly gone: number;
  readonly tracked: number;
}

/** What is left, as a comparable line: blocking objects and remaining counts. */
function signatureOf(d: NamespaceDiagnosis): string {
  return [
    ...d.blockers.map((b) => `${b.kind}/${b.namespace}/${b.name}:${b.finalizers.join(",")}`).sort(),
    ...d.remaining.map((r) => `${r.resource}=${String(r.count)}`).sort(),
    ...d.namespaceFinalizers.map((f) => `ns:${f}`),
  ].join("\n");
}

/** What a card's receipt binds: the episode (namespace, uid, deletion) and where the card is. */
function cardFields(
  episode: { readonly namespace: string; readonly uid: string; readonly deletionTimestamp: string },
  channel: string,
  ts: string,
): string[] {
  return [episode.namespace, episode.uid, episode.deletionTimestamp, channel, ts];
}

function contentLeft(d: NamespaceDiagnosis): boolean {
  return (
    d.verdict !== "not-found" &&
    d.verdict !== "active" &&
    (d.blockers.length > 0 || d.remaining.some((r) => r.count > 0))
  );
}

export class NamespaceWatcher {
  private readonly now: () => number;
  private readonly tracked = new Map<string, Tracked>();
  private running = false;
  private loop: Promise<void> | undefined;
  private stopWatch: (() => void) | undefined;
  private wake: (() => void) | undefined;
  private chain: Promise<void> = Promise.resolve();
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly finishing = new Set<string>();
  private counts = { lists: 0, posts: 0, updates: 0, gone: 0 };

  public constructor(private readonly o: WatcherOptions) {
    this.now = o.now ?? Date.now;
  }

  public stats(): WatcherStats {
    return { ...this.counts, tracked: this.tracked.size };
  }

  public start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stop watching and every timer; waits for checks in progress. */
  public async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stopWatch?.();
    this.wake?.();
    for (const t of this.tracked.values()) this.disarm(t);
    this.tracked.clear();
    await this.loop;
    await this.chain;
    await Promise.allSettled([...this.inFlight]);
  }

  private async run(): Promise<void> {
    let failures = 0;
    let rv = await this.o.redis.get(WatcherKeys.resourceVersion(this.o.keyPrefix)).catch(() => null);
    if (rv !== null) {
      // Resume: the Terminating namespaces as last seen, their timers re-armed, then the watch.
      const saved = await this.o.redis.hgetall(WatcherKeys.terminating(this.o.keyPrefix));
      for (const [name, json] of Object.entries(saved)) {
        const v = JSON.parse(json) as { uid: string; deletionTimestamp: string };
        this.track({ name, uid: v.uid, deletionTimestamp: v.deletionTimestamp, resourceVersion: "" });
      }
      this.o.log?.info({ resourceVersion: rv, terminating: this.tracked.size }, "watcher: resuming watch");
    }
    while (this.running) {
      try {
        if (rv === null) rv = await this.relist();
        if (!this.running) return;
        const end = await this.stream(rv, (next) => {
          rv = next;
          failures = 0;
        });
        if (!this.running) return;
        if (end === "gone") {
          this.o.log?.info({ resourceVersion: rv }, "watcher: watch expired (410 Gone); re-listing");
          rv = null;
        }
      } catch (err) {
        if (!this.running) return;
        failures++;
        const pause = Math.min(
          this.o.backoffMs?.max ?? 30_000,
          (this.o.backoffMs?.initial ?? 500) * 2 ** Math.min(failures - 1, 20),
        );
        this.o.log?.warn(
          { err: { message: toUserError(err).message }, retryInMs: pause },
          "watcher: watch failed",
        );
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, pause);
          this.wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
    }
  }

  /** List every namespace: replace what is tracked, report open episodes whose namespace is gone. */
  private async relist(): Promise<string> {
    const { items, resourceVersion } = await this.o.io.list();
    this.counts.lists++;
    await this.serial(async () => {
      const terminating = items.filter((n) => n.deletionTimestamp !== undefined);
      const present = new Set(items.map((n) => n.uid));
      for (const [name, t] of this.tracked) {
        const now = terminating.find((n) => n.name === name);
        if (now?.uid !== t.uid || now.deletionTimestamp !== t.deletionTimestamp) this.untrack(name);
      }
      for (const n of terminating) this.track(n);
      const multi = this.o.redis.multi().del(WatcherKeys.terminating(this.o.keyPrefix));
      for (const n of terminating)
        multi.hset(
          WatcherKeys.terminating(this.o.keyPrefix),
          n.name,
          JSON.stringify({ uid: n.uid, deletionTimestamp: n.deletionTimestamp }),
        );
      multi.set(WatcherKeys.resourceVersion(this.o.keyPrefix), resourceVersion);
      await multi.exec();
      // Episodes whose namespace vanished while nobody watched.
      const open = await this.o.redis.hgetall(WatcherKeys.open(this.o.keyPrefix));
      for (const [uid, episodeKey] of Object.entries(open))
        if (!present.has(uid)) this.spawn(() => this.finish(uid, episodeKey));
    });
    this.o.log?.info(
      { namespaces: items.length, terminating: this.tracked.size, resourceVersion },
      "watcher: listed namespaces",
    );
    return resourceVersion;
  }

  private stream(rv: string, progress: (rv: string) => void): Promise<"gone" | "ended"> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (r: "gone" | "ended" | Error): void => {
        if (settled) return;
        settled = true;
        const stop = this.stopWatch;
        this.stopWatch = undefined;
        stop?.();
        // Events already queued are applied before the next watch starts.
        void this.chain.then(() => (r instanceof Error ? reject(r) : resolve(r)));
      };
      const onEvent = (e: NamespaceWatchEvent): void => {
        if (settled) return;
        if (e.type === "ERROR") {
          if (e.code === 410) finish("gone");
          else finish(Object.assign(new Error(e.message), { statusCode: e.code }));
          return;
        }
        const next = e.type === "BOOKMARK" ? e.resourceVersion : e.namespace.resourceVersion;
        void this.serial(async () => {
          if (e.type !== "BOOKMARK") await this.apply(e.type, e.namespace);
          if (next !== "") {
            await this.o.redis.set(WatcherKeys.resourceVersion(this.o.keyPrefix), next);
            progress(next);
          }
        });
      };
      this.o.io
        .watch(rv, this.o.watchTimeoutSeconds ?? 300, onEvent, (err) =>
          finish(
            err === undefined ? "ended" : err instanceof Error ? err : new Error(toUserError(err).message),
          ),
        )
        .then(
          (stop) => {
            if (settled || !this.running) {
              stop();
              finish("ended");
              return;
            }
            this.stopWatch = stop;
          },
          (err: unknown) => finish(err instanceof Error ? err : new Error(toUserError(err).message)),
        );
    });
  }

  /** Run `fn` after every earlier event (events apply in order; Redis writes included). */
  private serial(fn: () => Promise<void>): Promise<void> {
    const next = this.chain.then(fn).catch((err: unknown) => {
      this.o.log?.warn({ err: { message: toUserError(err).message } }, "watcher: event not applied");
    });
    this.chain = next;
    return next;
  }

  private async apply(type: "ADDED" | "MODIFIED" | "DELETED", n: NamespaceMeta): Promise<void> {
    const t = this.tracked.get(n.name);
    if (type === "DELETED" || n.deletionTimestamp === undefined || (t !== undefined && t.uid !== n.uid)) {
      if (t !== undefined) {
        this.untrack(n.name);
        await this.o.redis.hdel(WatcherKeys.terminating(this.o.keyPrefix), n.name);
      }
      if (type === "DELETED") {
        const episodeKey = await this.o.redis.hget(WatcherKeys.open(this.o.keyPrefix), n.uid);
        if (episodeKey !== null) this.spawn(() => this.finish(n.uid, episodeKey));
        return;
      }
      if (n.deletionTimestamp === undefined) return;
    }
    const cur = this.tracked.get(n.name);
    if (cur === undefined) {
      this.track(n);
      await this.o.redis.hset(
        WatcherKeys.terminating(this.o.keyPrefix),
        n.name,
        JSON.stringify({ uid: n.uid, deletionTimestamp: n.deletionTimestamp }),
      );
    } else if (cur.episode !== undefined && type === "MODIFIED") this.scheduleUpdate(n.name, cur);
  }

  private track(n: NamespaceMeta): void {
    if (!this.running || n.deletionTimestamp === undefined || this.tracked.has(n.name)) return;
    const t: Tracked = { uid: n.uid, deletionTimestamp: n.deletionTimestamp, lastUpdateAt: 0 };
    this.tracked.set(n.name, t);
    const due = Date.parse(n.deletionTimestamp) + this.o.thresholdMs;
    this.arm(n.name, t, due - this.now());
  }

  private arm(name: string, t: Tracked, ms: number): void {
    if (t.timer !== undefined) clearTimeout(t.timer);
    t.timer = setTimeout(
      () => {
        t.timer = undefined;
        this.spawn(() => this.check(name, t));
      },
      Math.max(0, ms),
    );
    t.timer.unref();
  }

  private disarm(t: Tracked): void {
    if (t.timer !== undefined) clearTimeout(t.timer);
    if (t.updateTimer !== undefined) clearTimeout(t.updateTimer);
    t.timer = undefined;
    t.updateTimer = undefined;
  }

  private untrack(name: string): void {
    const t = this.tracked.get(name);
    if (t === undefined) return;
    this.disarm(t);
    this.tracked.delete(name);
  }

  /** Run a check in the background, bounded to `concurrency` at once. */
  private spawn(fn: () => Promise<void>): void {
    const p = (async () => {
      await this.slot();
      try {
        if (this.running) await fn();
      } catch (err) {
        this.o.log?.warn({ err: { message: toUserError(err).message } }, "watcher: check failed");
      } finally {
        this.active--;
        this.waiting.shift()?.();
      }
    })();
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private async slot(): Promise<void> {
    if (this.active < (this.o.concurrency ?? 8)) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
  }

  private episodeKey(t: Tracked): string {
    return WatcherKeys.episode(this.o.keyPrefix, t.uid, t.deletionTimestamp);
  }

  /** Past the threshold: post the card once per episode, if content is left. */
  private async check(name: string, t: Tracked): Promise<void> {
    if (this.tracked.get(name) !== t) return;
    const key = this.episodeKey(t);
    if ((await this.o.redis.exists(key)) === 1) {
      // Posted before (an earlier leader, or before a restart): follow it, never post again.
      t.episode = key;
      return;
    }
    const d = await this.o.diagnose(name);
    if (this.tracked.get(name) !== t || !this.running) return;
    if (!contentLeft(d)) {
      if (d.verdict !== "not-found") this.arm(name, t, this.o.recheckMs ?? 30_000);
      return;
    }
    const ttl = this.o.episodeTtlSeconds ?? 30 * 86_400;
    const base = { namespace: name, uid: t.uid, deletionTimestamp: t.deletionTimestamp };
    const claimed = await this.o.redis.set(
      key,
      JSON.stringify({ ...base, state: "posting" } satisfies EpisodeRecord),
      "EX",
      ttl,
      "NX",
    );
    if (claimed !== "OK") {
      t.episode = key;
      return;
    }
    const { ts } = await this.o.slack.post(this.o.channel, {
      kind: "notice",
      diagnosis: d,
      thresholdMs: this.o.thresholdMs,
    });
    const record: EpisodeRecord = {
      ...base,
      state: "posted",
      channel: this.o.channel,
      ts,
      cardSig: this.o.receipts.sign(cardFields(base, this.o.channel, ts)),
      signature: signatureOf(d),
    };
    await this.o.redis
      .multi()
      .set(key, JSON.stringify(record), "EX", ttl)
      .hset(WatcherKeys.open(this.o.keyPrefix), t.uid, key)
      .exec();
    t.episode = key;
    t.lastUpdateAt = this.now();
    this.counts.posts++;
    // Deleted while the card was being posted: the DELETED event found no open episode yet.
    if (this.tracked.get(name) !== t) this.spawn(() => this.finish(t.uid, key));
    // Changed while it was being posted: those events found no episode yet either. Look once more
    // (after the usual pause); the thread hears of it only if what is left differs from the card.
    else this.scheduleUpdate(name, t);
    this.o.log?.info(
      { namespace: name, channel: this.o.channel, ts, blockers: d.blockers.length, verdict: d.verdict },
      "watcher: posted a stuck namespace",
    );
  }

  /** A change on a reported namespace: re-diagnose (at most every `updateEveryMs`), reply if what is left changed. */
  private scheduleUpdate(name: string, t: Tracked): void {
    if (t.updateTimer !== undefined) return;
    const wait = Math.max(0, t.lastUpdateAt + (this.o.updateEveryMs ?? 60_000) - this.now());
    t.updateTimer = setTimeout(() => {
      t.updateTimer = undefined;
      this.spawn(() => this.update(name, t));
    }, wait);
    t.updateTimer.unref();
  }

  private async update(name: string, t: Tracked): Promise<void> {
    if (this.tracked.get(name) !== t || t.episode === undefined) return;
    const json = await this.o.redis.get(t.episode);
    if (json === null) return;
    const rec = JSON.parse(json) as EpisodeRecord;
    if (rec.state === "posting") {
      // The card is being posted: a change seen now must not be lost — look again once it is.
      t.lastUpdateAt = this.now();
      this.scheduleUpdate(name, t);
      return;
    }
    if (rec.state !== "posted" || !this.ownCard(rec)) return;
    const d = await this.o.diagnose(name);
    t.lastUpdateAt = this.now();
    if (!contentLeft(d)) return;
    const signature = signatureOf(d);
    if (signature === rec.signature) return;
    await this.o.slack.post(rec.channel ?? "", { kind: "still-terminating", diagnosis: d }, rec.ts);
    await this.o.redis.set(t.episode, JSON.stringify({ ...rec, signature }), "KEEPTTL");
    this.counts.updates++;
  }

  /** Whether the record's card is one this install's watcher posted for this episode (its receipt verifies). */
  private ownCard(rec: EpisodeRecord): boolean {
    if (rec.channel === undefined || rec.ts === undefined) return false;
    const ok = this.o.receipts.check(cardFields(rec, rec.channel, rec.ts), rec.cardSig);
    if (!ok)
      this.o.log?.error(
        { namespace: rec.namespace },
        "watcher: an episode's card is not signed by this install; left alone",
      );
    return ok;
  }

  /** The namespace is gone: a quiet note in the thread, the card repainted GONE, the episode closed. */
  private async finish(uid: string, episodeKey: string): Promise<void> {
    // A DELETED event and a re-list may both see it go: one note.
    if (this.finishing.has(uid)) return;
    this.finishing.add(uid);
    try {
      await this.finishOnce(uid, episodeKey);
    } finally {
      this.finishing.delete(uid);
    }
  }

  private async finishOnce(uid: string, episodeKey: string): Promise<void> {
    const json = await this.o.redis.get(episodeKey);
    const rec = json === null ? undefined : (JSON.parse(json) as EpisodeRecord);
    if (rec?.state === "posted" && this.ownCard(rec) && rec.channel !== undefined && rec.ts !== undefined) {
      const since = Date.parse(rec.deletionTimestamp);
      const terminating = Number.isFinite(since)
        ? { terminatingSeconds: Math.max(0, Math.round((this.now() - since) / 1000)) }
        : {};
      await this.o.slack.post(
        rec.channel,
        { kind: "gone", namespace: rec.namespace, ...terminating },
        rec.ts,
      );
      await this.o.slack.update(rec.channel, rec.ts, {
        kind: "gone-card",
        namespace: rec.namespace,
        ...terminating,
      });
      await this.o.redis.set(episodeKey, JSON.stringify({ ...rec, state: "gone" }), "KEEPTTL");
      this.counts.gone++;
      this.o.log?.info(
        { namespace: rec.namespace, channel: rec.channel, ts: rec.ts },
        "watcher: namespace gone",
      );
    }
    await this.o.redis.hdel(WatcherKeys.open(this.o.keyPrefix), uid);
  }
}
