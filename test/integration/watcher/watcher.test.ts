/**
 * The stuck-namespace watcher against the kube simulator (real client-node: metadata-only list and
 * watch, bookmarks, 410 Gone after a compaction), a real Redis (unique prefix per test) and the fake
 * Slack over HTTP (a real WebClient): one post per episode in the watch channel with the diagnosis
 * card, none for a namespace that finishes in time, a gone note and the card repainted GONE, no
 * duplicate across a 410 re-list, two replicas, or a restart mid-episode; the lease moves on stop
 * and when its holder dies.
 */
import { WebClient } from "@slack/web-api";
import type { Redis } from "ioredis";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { createNamespaceWatchIo } from "../../../src/kube/namespace-watch.js";
import { slackWatcherClient } from "../../../src/slack/watcher-client.js";
import { createWatcherService, type WatcherService } from "../../../src/watcher/service.js";
import type { WatcherSlack } from "../../../src/watcher/watcher.js";
import { client, deleteKeysWithPrefix, uniquePrefix } from "../../helpers/redis.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { startFakeSlack, type FakeSlack, type SlackCall } from "../../sim/slack/index.js";
import { testWatcherReceipts } from "../../helpers/keys.js";
import { eventually, pause } from "../../helpers/eventually.js";
import { startTestWorld } from "../../helpers/world.js";

const TOKEN = "xoxb-watcher-test-token";
const CHANNEL = "C0WATCH";
const FINALIZER = "example.com/hold";

describe("namespace watcher", () => {
  let sim: KubeSim;
  let fake: FakeSlack;
  let redis: Redis;
  let prefix: string;
  const services: WatcherService[] = [];
  const log = pino({ level: process.env.WATCHER_TEST_LOG ?? "silent" });

  beforeEach(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 100, bookmarkIntervalMs: 100 });
    fake = await startFakeSlack({ token: TOKEN });
    redis = client();
    prefix = uniquePrefix("watcher");
  });

  afterEach(async () => {
    for (const s of services.splice(0)) await s.stop();
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
    await fake.stop();
    await sim.stop();
  });

  function watcher(
    o: {
      thresholdSeconds?: number;
      leaseMs?: number;
      watchTimeoutSeconds?: number;
      /** Wraps the Slack client (e.g. to hold a post open). */
      slack?: (s: WatcherSlack) => WatcherSlack;
    } = {},
  ): WatcherService {
    const kube = createKubeAdapter(sim.kubeconfig());
    const thresholdSeconds = o.thresholdSeconds ?? 1;
    const s = createWatcherService({
      redis,
      prefix,
      channel: CHANNEL,
      thresholdMs: thresholdSeconds * 1000,
      leaseMs: o.leaseMs ?? 1_500,
      io: createNamespaceWatchIo(sim.kubeconfig()),
      diagnose: (ns) =>
        diagnoseNamespace(kube, ns, { now: () => new Date(), blockedAfterSeconds: thresholdSeconds }),
      slack: (o.slack ?? ((x) => x))(slackWatcherClient(new WebClient(TOKEN, { slackApiUrl: fake.url }))),
      receipts: testWatcherReceipts(),
      log,
      tuning: {
        watchTimeoutSeconds: o.watchTimeoutSeconds ?? 30,
        recheckMs: 200,
        updateEveryMs: 100,
        backoffMs: { initial: 50, max: 200 },
      },
    });
    services.push(s);
    return s;
  }

  /** A namespace holding a ConfigMap whose finalizer nothing removes. */
  function namespaceWithBlocker(name: string, blocked = true): void {
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    sim.store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "held", namespace: name, ...(blocked ? { finalizers: [FINALIZER] } : {}) },
      data: { k: "v" },
    });
  }
  const deleteNamespace = (name: string): void => {
    sim.store.delete("v1", "Namespace", undefined, name);
  };
  const release = (name: string): void => {
    const cm = sim.store.get("v1", "ConfigMap", name, "held");
    if (cm === undefined) throw new Error("no ConfigMap");
    sim.store.update({ ...cm, metadata: { ...cm.metadata, finalizers: [] } });
  };
  /** Top-level posts (not thread replies) in the watch channel. */
  const cards = (): SlackCall[] =>
    fake
      .calls()
      .filter(
        (c) =>
          c.method === "chat.postMessage" && c.body.channel === CHANNEL && c.body.thread_ts === undefined,
      );
  const leaders = (): number => services.filter((s) => s.isLeader()).length;

  it("posts the diagnosis of a namespace stuck past the threshold exactly once, and nothing for one that finishes in time", async () => {
    const w = watcher();
    w.start();
    await eventually(() => (w.isLeader() ? true : undefined), 5_000, "leader");
    namespaceWithBlocker("stuck-a");
    namespaceWithBlocker("quick-b", false);
    const deletedAt = Date.now();
    deleteNamespace("stuck-a");
    deleteNamespace("quick-b");
    const post = await eventually(() => cards()[0], 8_000, "the card");
    // deletionTimestamp has second precision: at most 1 s early, never more than 2 s late.
    expect(post.at - deletedAt).toBeGreaterThanOrEqual(0);
    expect(post.at - deletedAt).toBeLessThan(1_000 + 2_000 + 1_000);
    expect(JSON.stringify(post.body.blocks)).toContain("stuck-a");
    expect(JSON.stringify(post.body.blocks)).toContain(FINALIZER);
    expect(JSON.stringify(post.body.blocks)).toContain("Noticed by the watcher");
    // A metadata-only list (the watch's own representation is checked once a request of it ended).
    const ns = sim.requests().filter((r) => r.path === "/api/v1/namespaces");
    expect(ns.find((r) => !r.query.includes("watch"))?.served).toBe("PartialObjectMetadataList");
    // Over several thresholds more: still one card, none for the namespace that went.
    await pause(2_500);
    expect(cards()).toHaveLength(1);
    expect(sim.store.get("v1", "Namespace", undefined, "quick-b")).toBeUndefined();
    expect(JSON.stringify(cards())).not.toContain("quick-b");
  }, 20_000);

  it("notes in the thread when the namespace goes and repaints the card GONE without buttons", async () => {
    // deletionTimestamp has second precision: 2 s leave the namespace controller time to delete
    // both objects (so both are blockers) before the check.
    const w = watcher({ thresholdSeconds: 2 });
    w.start();
    namespaceWithBlocker("stuck-c");
    sim.store.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "also-held", namespace: "stuck-c", finalizers: [FINALIZER] },
    });
    deleteNamespace("stuck-c");
    const post = await eventually(() => cards()[0], 8_000, "the card");
    const ts = String(post.response?.ts);
    // Both objects are in the diagnosis (the card may summarise the second one).
    expect(JSON.stringify(post.body.blocks)).toMatch(/also-held|secrets 1/);
    // One blocker goes: an update in the thread says what is left.
    release("stuck-c");
    const update = await eventually(
      () => fake.thread(CHANNEL, ts).find((m) => (m.text ?? "").includes("Still Terminating")),
      8_000,
      "the thread update",
    );
    expect(update.text).toContain("1 blocking object(s) left");
    expect(update.text).toContain("also-held");
    const sec = sim.store.get("v1", "Secret", "stuck-c", "also-held");
    if (sec === undefined) throw new Error("no Secret");
    sim.store.update({ ...sec, metadata: { ...sec.metadata, finalizers: [] } });
    const note = await eventually(
      () => fake.thread(CHANNEL, ts).find((m) => (m.text ?? "").includes("is gone")),
      8_000,
      "the gone note",
    );
    expect(note.text).toContain("stuck-c");
    const card = await eventually(
      () => {
        const m = fake.message(CHANNEL, ts);
        return m !== undefined && m.updates > 0 ? m : undefined;
      },
      5_000,
      "the repaint",
    );
    const blocks = card.blocks as { type: string; text?: { text: string } }[];
    expect(blocks.find((b) => b.type === "header")?.text?.text).toBe("Namespace stuck-c: GONE");
    expect(blocks.some((b) => b.type === "actions")).toBe(false);
    expect(cards()).toHaveLength(1);
  }, 20_000);

  it("an episode record pointed at another message (written into Redis) is left alone: that message is not touched", async () => {
    const w = watcher({ thresholdSeconds: 1 });
    w.start();
    namespaceWithBlocker("stuck-e");
    deleteNamespace("stuck-e");
    const post = await eventually(() => cards()[0], 8_000, "the card");
    // Another message of the bot's (an approval card, say) that a Redis writer wants repainted GONE.
    const other = await new WebClient(TOKEN, { slackApiUrl: fake.url }).chat.postMessage({
      channel: CHANNEL,
      text: "an approval card",
    });
    const [episodeKey] = await redis.keys(`${prefix}:watcher:episode:*`);
    if (episodeKey === undefined) throw new Error("no episode record");
    const rec = JSON.parse((await redis.get(episodeKey)) ?? "{}") as Record<string, unknown>;
    await redis.set(episodeKey, JSON.stringify({ ...rec, ts: other.ts }), "KEEPTTL");
    release("stuck-e");
    await eventually(
      () => (sim.store.get("v1", "Namespace", undefined, "stuck-e") === undefined ? true : undefined),
      8_000,
      "gone",
    );
    await pause(1_000);
    expect(fake.message(CHANNEL, String(other.ts))?.updates ?? 0).toBe(0);
    expect(fake.thread(CHANNEL, String(other.ts))).toEqual([]);
    expect(fake.message(CHANNEL, String(post.response?.ts))?.updates ?? 0).toBe(0);
  }, 20_000);

  it("a blocker that goes while the card is being posted still reaches the thread", async () => {
    // The post is held open until the blocker has gone and the namespace controller has seen it:
    // those changes arrive before the episode is recorded, and must not be lost.
    let releasePost: (() => void) | undefined;
    const held = new Promise<void>((r) => (releasePost = r));
    let posting: (() => void) | undefined;
    const started = new Promise<void>((r) => (posting = r));
    const w = watcher({
      thresholdSeconds: 2,
      slack: (inner) => ({
        post: async (channel, message, threadTs) => {
          if (threadTs === undefined) {
            posting?.();
            await held;
          }
          return inner.post(channel, message, threadTs);
        },
        update: (channel, ts, message) => inner.update(channel, ts, message),
      }),
    });
    w.start();
    namespaceWithBlocker("stuck-p");
    sim.store.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "also-held", namespace: "stuck-p", finalizers: [FINALIZER] },
    });
    deleteNamespace("stuck-p");
    await started;
    release("stuck-p");
    await sim.reconcileNow();
    await pause(300);
    releasePost?.();
    const post = await eventually(() => cards()[0], 8_000, "the card");
    const update = await eventually(
      () =>
        fake
          .thread(CHANNEL, String(post.response?.ts))
          .find((m) => (m.text ?? "").includes("Still Terminating")),
      8_000,
      "the thread update",
    );
    expect(update.text).toContain("1 blocking object(s) left");
    expect(update.text).toContain("also-held");
  }, 20_000);

  it("re-lists after a bookmark and a 410 Gone, and posts no duplicate", async () => {
    const w = watcher({ watchTimeoutSeconds: 1 });
    w.start();
    namespaceWithBlocker("stuck-d");
    deleteNamespace("stuck-d");
    await eventually(() => cards()[0], 8_000, "the card");
    // Bookmarks carry the revision forward with no namespace event: it is persisted.
    const before = sim.store.resourceVersion;
    await eventually(
      async () => ((await redis.get(`${prefix}:watcher:rv`)) === before ? true : undefined),
      3_000,
      "a bookmark's revision in Redis",
    );
    // While no watch is open (a leader stopped; bookmarks keep an open watch's revision fresh),
    // writes the namespace watch does not see, then a compaction: the next leader resumes from a
    // compacted revision, is answered 410 Gone, and re-lists.
    await w.stop();
    sim.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x1", namespace: "default" } });
    sim.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x2", namespace: "default" } });
    sim.store.compact();
    sim.resetRequests();
    const next = watcher({ watchTimeoutSeconds: 1 });
    next.start();
    await eventually(() => (next.stats().lists > 0 ? true : undefined), 5_000, "a re-list");
    const ns = sim.requests().filter((r) => r.path === "/api/v1/namespaces");
    expect(ns[0]?.query).toMatch(/resourceVersion=\d+/);
    expect(ns.some((r) => !r.query.includes("watch=true") && r.status === 200)).toBe(true);
    await pause(1_500);
    expect(cards()).toHaveLength(1);
    // Still following the episode after the re-list: the gone note comes.
    release("stuck-d");
    const ts = String(cards()[0]?.response?.ts);
    await eventually(
      () => fake.thread(CHANNEL, ts).find((m) => (m.text ?? "").includes("is gone")),
      8_000,
      "the gone note",
    );
  }, 25_000);

  it("two replicas on one Redis: one leader, one post", async () => {
    const a = watcher();
    const b = watcher();
    a.start();
    b.start();
    await eventually(() => (leaders() === 1 ? true : undefined), 5_000, "a leader");
    namespaceWithBlocker("stuck-e");
    deleteNamespace("stuck-e");
    await eventually(() => cards()[0], 8_000, "the card");
    await pause(2_000);
    expect(leaders()).toBe(1);
    expect(cards()).toHaveLength(1);
  }, 20_000);

  it("a restart mid-episode resumes from the stored revision and posts no duplicate", async () => {
    const first = watcher();
    first.start();
    namespaceWithBlocker("stuck-f");
    deleteNamespace("stuck-f");
    const post = await eventually(() => cards()[0], 8_000, "the card");
    await first.stop();
    sim.resetRequests();
    const second = watcher({ watchTimeoutSeconds: 1 });
    second.start();
    await eventually(() => (second.isLeader() ? true : undefined), 5_000, "the new leader");
    await pause(2_000);
    expect(cards()).toHaveLength(1);
    // Resumed: a watch from the stored revision, no list.
    const nsRequests = sim.requests().filter((r) => r.path === "/api/v1/namespaces");
    expect(nsRequests.length).toBeGreaterThan(0);
    expect(nsRequests.every((r) => r.query.includes("watch=true"))).toBe(true);
    expect(nsRequests[0]?.query).toMatch(/resourceVersion=\d+/);
    expect(nsRequests[0]?.served).toBe("PartialObjectMetadata");
    release("stuck-f");
    const ts = String(post.response?.ts);
    await eventually(
      () => fake.thread(CHANNEL, ts).find((m) => (m.text ?? "").includes("is gone")),
      8_000,
      "the gone note from the new leader",
    );
    expect(cards()).toHaveLength(1);
  }, 25_000);

  it("a follower takes over when the leader stops, and when a dead leader's lease lapses", async () => {
    const a = watcher({ leaseMs: 1_200 });
    a.start();
    await eventually(() => (a.isLeader() ? true : undefined), 5_000, "a leads");
    const b = watcher({ leaseMs: 1_200 });
    b.start();
    await pause(600);
    expect(b.isLeader()).toBe(false);
    const stoppedAt = Date.now();
    await a.stop();
    await eventually(() => (b.isLeader() ? true : undefined), 2_000, "b leads");
    expect(Date.now() - stoppedAt).toBeLessThan(1_200);
    await b.stop();
    // A holder that died without releasing: its lease lapses after its TTL, then c leads.
    await redis.set(`${prefix}:watcher:leader`, "dead-holder", "PX", 1_000);
    const c = watcher({ leaseMs: 1_200 });
    const started = Date.now();
    c.start();
    await pause(500);
    expect(c.isLeader()).toBe(false);
    await eventually(() => (c.isLeader() ? true : undefined), 3_000, "c leads");
    expect(Date.now() - started).toBeLessThan(1_000 + 1_200);
  }, 20_000);
});

describe("the watcher in the bot runtime", () => {
  it("runs when UNSTUCK_WATCH_CHANNEL is set, posts once, and releases its lease on stop", async () => {
    const w = await startTestWorld({
      token: TOKEN,
      secret: "watcher-runtime-secret",
      label: "watcher-rt",
      kube: { controllerIntervalMs: 100 },
      role: "worker",
      env: {
        UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
        UNSTUCK_BLOCKED_AFTER_SECONDS: "1",
        UNSTUCK_WATCH_CHANNEL: CHANNEL,
        UNSTUCK_WATCH_LEASE_SECONDS: "2",
      },
      boot: false,
    });
    const { fake, redis, prefix } = w;
    const sim = w.kube;
    if (sim === undefined) throw new Error("the world has a kube simulator");
    const config = loadConfig(w.env());
    expect(config.watch).toEqual({ channel: CHANNEL, leaseMs: 2_000 });
    const booted = await w.boot({
      config,
      runtime: { watcher: { io: createNamespaceWatchIo(sim.kubeconfig()) } },
      start: false,
    });
    const { runtime } = booted;
    try {
      await runtime.start();
      await eventually(
        () => (runtime.watcher?.isLeader() === true ? true : undefined),
        5_000,
        "the runtime leads",
      );
      sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "stuck-rt" } });
      sim.store.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "held", namespace: "stuck-rt", finalizers: [FINALIZER] },
      });
      sim.store.delete("v1", "Namespace", undefined, "stuck-rt");
      const post = await fake.waitFor(
        "chat.postMessage",
        (c) => c.body.channel === CHANNEL && c.body.thread_ts === undefined,
        8_000,
      );
      expect(JSON.stringify(post.body.blocks)).toContain("stuck-rt");
      await booted.stop();
      expect(await redis.exists(`${prefix}:watcher:leader`)).toBe(0);
      expect(
        fake.calls().filter((c) => c.method === "chat.postMessage" && c.body.channel === CHANNEL),
      ).toHaveLength(1);
    } finally {
      await w.stop();
    }
  }, 20_000);
});
