/**
 * Posts a job step makes once (`src/jobs/post-once.ts`), on real Redis: the ledger's own rules (one
 * post per key, a second run waiting for a post in flight, a failed post or a dead poster's lease
 * letting the next run post), then jobs that run again after posting — their job handed back to the
 * queue while Slack (the fake) had not answered yet, as a stopping worker hands it back — posting
 * nothing twice: a namespace wait's status and follow-ups, an approval's thread reply.
 */
import { webApi } from "@slack/bolt";
import type { Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalRequest } from "../../../src/requests/model.js";
import { ErrorCode, isPermanent, UnstuckError } from "../../../src/errors.js";
import { createNotifyQueue, createNotifyWorker, queuedNotifier } from "../../../src/jobs/notify.js";
import { postKey, redisPostLedger, type PostLedger } from "../../../src/jobs/post-once.js";
import { createQueues } from "../../../src/jobs/queues.js";
import { enqueueNamespaceGone, namespaceGoneJobId } from "../../../src/jobs/waits.js";
import { createWaitsWorker } from "../../../src/jobs/workers.js";
import { createSlackApprovalNotifier, createSlackThreadReporter } from "../../../src/slack/notifier.js";
import { startFakeSlack, type FakeSlack, type SlackCall } from "../../sim/slack/index.js";
import { FakeKube } from "../approvals/helpers/fake-kube.js";
import { eventually, pause } from "../../helpers/eventually.js";
import { connect, deleteKeys, uniquePrefix } from "../../helpers/redis.js";
import { testProcessKeys, testWaitSeal, testWaits } from "../../helpers/keys.js";

const CHANNEL = "COPS";
const THREAD = "1770889000.000100";
const log = pino({ level: "silent" });

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function redisFor(label: string): { redis: Redis; prefix: string } {
  const prefix = uniquePrefix(label);
  const redis = connect();
  cleanups.push(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
  });
  return { redis, prefix };
}

async function slack(): Promise<{ fake: FakeSlack; client: webApi.WebClient }> {
  const fake = await startFakeSlack({ token: "xoxb-post-once" });
  cleanups.push(() => fake.stop());
  return {
    fake,
    client: new webApi.WebClient("xoxb-post-once", { slackApiUrl: fake.url, retryConfig: { retries: 0 } }),
  };
}

/** What a stopping worker does with a job it cannot finish in time: back to waiting, its lock freed. */
async function handBack(queue: Queue, redis: Redis, prefix: string, id: string): Promise<void> {
  const token = await redis.get(`${prefix}:${queue.name}:${id}:lock`);
  const job = await queue.getJob(id);
  if (token === null || job === undefined) throw new Error(`job ${id} is not running`);
  await job.moveToWait(token);
}

const text = (c: SlackCall): string => (typeof c.body["text"] === "string" ? c.body["text"] : "");
const postsIn = (fake: FakeSlack, re: RegExp): number =>
  fake
    .calls()
    .filter((c) => c.method === "chat.postMessage" && c.body["thread_ts"] === THREAD && re.test(text(c)))
    .length;

/** A second connection, as another replica has. */
function connectFor(): Redis {
  const r = connect();
  cleanups.push(async () => {
    await r.quit();
  });
  return r;
}

describe("the post ledger", () => {
  it("signed: a record written into Redis names no message — the step posts its own, and records it signed", async () => {
    const { redis, prefix } = redisFor("ledger-signed");
    const keys = testProcessKeys();
    const ledger = redisPostLedger(redis, prefix, {
      seal: { ...(keys.worker !== undefined ? { key: keys.worker } : {}), keyring: keys.keyring },
    });
    // Pointed at another message of the bot's (an approval card), without a signature, or with one
    // of another key's.
    await redis.set(`${prefix}:posted:wait:c:status`, "posted:1700000000.000999");
    await redis.set(`${prefix}:posted:wait:d:status`, "posted:1700000000.000999|x.y");
    let posts = 0;
    const post = () => Promise.resolve({ ts: `2.${String(++posts)}` });
    expect(await ledger.once("wait:c:status", post)).toEqual({ posted: true, ts: "2.1" });
    expect(await ledger.once("wait:d:status", post)).toEqual({ posted: true, ts: "2.2" });
    // What it recorded verifies: the next run finds its own post.
    expect(await ledger.once("wait:c:status", post)).toEqual({ posted: false, ts: "2.1" });
    // A signed record moved to another key does not stand for that one.
    await redis.set(
      `${prefix}:posted:wait:e:status`,
      (await redis.get(`${prefix}:posted:wait:c:status`)) ?? "",
    );
    expect(await ledger.once("wait:e:status", post)).toEqual({ posted: true, ts: "2.3" });
  });

  it("posts once under a key; every later run gets the recorded ts and posts nothing", async () => {
    const { redis, prefix } = redisFor("ledger-once");
    const ledger = redisPostLedger(redis, prefix);
    let posts = 0;
    const post = () => Promise.resolve({ ts: `1.${String(++posts)}` });
    expect(await ledger.once("wait:a:result", post)).toEqual({ posted: true, ts: "1.1" });
    expect(await ledger.once("wait:a:result", post)).toEqual({ posted: false, ts: "1.1" });
    expect(await redisPostLedger(redis, prefix).once("wait:a:result", post)).toEqual({
      posted: false,
      ts: "1.1",
    });
    expect(posts).toBe(1);
    // Another key is another post; a post without a ts is recorded as posted all the same.
    expect(await ledger.once("wait:b:result", () => Promise.resolve(undefined))).toEqual({ posted: true });
    expect(await ledger.once("wait:b:result", post)).toEqual({ posted: false });
    expect(posts).toBe(1);
    // Kept a week under the bot's prefix.
    const ttl = await redis.ttl(`${prefix}:posted:wait:a:result`);
    expect(ttl).toBeGreaterThan(7 * 86_400 - 60);
    expect(ttl).toBeLessThanOrEqual(7 * 86_400);
  });

  it("two runs at once: one posts, the other waits for its record and posts nothing", async () => {
    const { redis, prefix } = redisFor("ledger-race");
    const ledgers = [redisPostLedger(redis, prefix), redisPostLedger(connectFor(), prefix)];
    let posts = 0;
    const slow = async (): Promise<{ ts: string }> => {
      posts += 1;
      await pause(300);
      return { ts: `2.${String(posts)}` };
    };
    const results = await Promise.all([
      ...ledgers.map((l) => l.once("k", slow)),
      ...ledgers.map((l) => l.once("k", slow)),
    ]);
    expect(posts).toBe(1);
    expect(results.filter((r) => r.posted)).toHaveLength(1);
    expect(new Set(results.map((r) => r.ts))).toEqual(new Set(["2.1"]));
  });

  it("a post that failed gives its claim up: the next run posts", async () => {
    const { redis, prefix } = redisFor("ledger-failed");
    const ledger = redisPostLedger(redis, prefix);
    await expect(ledger.once("k", () => Promise.reject(new Error("ratelimited")))).rejects.toThrow(
      "ratelimited",
    );
    expect(await ledger.once("k", () => Promise.resolve({ ts: "3.1" }))).toEqual({ posted: true, ts: "3.1" });
  });

  it("a poster that died after its claim: once its lease runs out, the next run posts", async () => {
    const { redis, prefix } = redisFor("ledger-lease");
    const ledger = redisPostLedger(redis, prefix, { leaseMs: 200 });
    // A process claimed the post and died before it recorded anything: its claim is not renewed.
    await redis.set(`${prefix}:posted:k`, "pending:a-dead-process", "PX", 200);
    // The next run waits for the claim; once it lapses, it posts (Slack may never have got the first).
    const started = Date.now();
    const res = await ledger.once("k", () => Promise.resolve({ ts: "4.1" }));
    expect(res).toEqual({ posted: true, ts: "4.1" });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("a run that waited too long for another's post fails, to be retried, without posting", async () => {
    const { redis, prefix } = redisFor("ledger-patience");
    const poster = redisPostLedger(redis, prefix, { leaseMs: 150 });
    const waiter = redisPostLedger(redis, prefix, { leaseMs: 150, waitMs: 400 });
    const first = poster.once("k", async () => {
      await pause(1_000);
      return { ts: "5.1" };
    });
    await pause(50);
    let posted = false;
    const err = await waiter
      .once("k", () => {
        posted = true;
        return Promise.resolve({ ts: "5.2" });
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnstuckError);
    expect((err as UnstuckError).code).toBe(ErrorCode.Upstream);
    expect(isPermanent(err)).toBe(false);
    expect(posted).toBe(false);
    expect(await first).toEqual({ posted: true, ts: "5.1" });
    expect(await waiter.once("k", () => Promise.resolve({ ts: "5.3" }))).toEqual({
      posted: false,
      ts: "5.1",
    });
  });

  it("keys stay readable and bounded", () => {
    expect(postKey("edge-wait", "http-ok", "https://a.example/x", "C1", "1.2", 17)).toBe(
      "edge-wait:http-ok:https://a.example/x:C1:1.2:17",
    );
    const long = postKey("edge-wait", "x".repeat(500));
    expect(long.length).toBeLessThanOrEqual(200);
    expect(long).not.toBe(postKey("edge-wait", `${"x".repeat(499)}y`));
  });
});

describe("a job that runs again after it posted posts nothing twice", () => {
  it("a namespace wait handed back while its follow-ups were being posted: status and follow-ups once each", async () => {
    const { redis, prefix } = redisFor("posted-ns-gone");
    const { fake, client } = await slack();
    const queues = createQueues({ connection: redis, prefix });
    const posted: PostLedger = redisPostLedger(redis, prefix, { leaseMs: 1_000 });
    const workers: Worker[] = [];
    const start = (): Worker => {
      const w = createWaitsWorker(
        { connection: redis, prefix, concurrency: 1 },
        {
          seal: testWaitSeal(),
          kube: new FakeKube(),
          reporter: createSlackThreadReporter(client),
          describeBlockers: () => Promise.resolve([]),
          now: () => new Date(),
          posted,
          afterGone: (ns) =>
            Promise.resolve([`🧹 orphans of ${ns}: none`, `🛣️ the traffic path of ${ns}: intact`]),
        },
      );
      // The first run's end (moveToFinished) fails: the job is no longer its own. Expected here.
      w.on("error", () => undefined);
      workers.push(w);
      return w;
    };
    cleanups.push(async () => {
      await Promise.all(workers.map((w) => w.close(true)));
      await queues.close();
    });
    // Slack takes the second follow-up and answers late.
    const held = fake.hold("chat.postMessage", (c) => /traffic path of gone-ns/.test(text(c)));
    start();
    await enqueueNamespaceGone(
      testWaits(queues.waits),
      { cluster: "prod-eks", namespace: "gone-ns", channel: CHANNEL, threadTs: THREAD, timeoutMs: 60_000 },
      new Date(),
    );
    await held.arrived;
    const id = namespaceGoneJobId("prod-eks", "gone-ns");
    await handBack(queues.waits, redis, prefix, id);
    // Another worker runs the check again from the start: gone, status, follow-ups.
    start();
    await eventually(
      () =>
        fake.calls().filter((c) => c.method === "chat.update" && /is gone/.test(text(c))).length >= 1 ||
        postsIn(fake, /Namespace gone-ns is gone/) >= 2
          ? true
          : undefined,
      10_000,
      "the check run again (its status edited, or posted again)",
    );
    held.release();
    await eventually(
      async () => ((await queues.waits.getJobState(id)) === "unknown" ? true : undefined),
      10_000,
      "the wait finished",
    );
    await pause(500);
    expect(postsIn(fake, /Namespace gone-ns is gone/)).toBe(1);
    expect(postsIn(fake, /orphans of gone-ns/)).toBe(1);
    expect(postsIn(fake, /traffic path of gone-ns/)).toBe(1);
  });

  it("an approval's thread reply handed back before Slack answered: posted once", async () => {
    const { redis, prefix } = redisFor("posted-reply");
    const { fake, client } = await slack();
    const bull = `${prefix}:bull`;
    const queue = createNotifyQueue(redis, bull);
    const workers: Worker[] = [];
    const start = (): Worker => {
      const w = createNotifyWorker(
        { connection: redis, prefix: bull, concurrency: 1 },
        {
          // The record as its signatures vouch for it: the reply's words are its result's.
          current: () => Promise.resolve({ ok: true, request }),
          slack: createSlackApprovalNotifier({ client, now: () => new Date(), log }),
          isPermanent: () => false,
          log,
          posted: redisPostLedger(redis, prefix, { leaseMs: 1_000 }),
        },
      );
      // The first run's end (moveToFinished) fails: the job is no longer its own. Expected here.
      w.on("error", () => undefined);
      workers.push(w);
      return w;
    };
    cleanups.push(async () => {
      await Promise.all(workers.map((w) => w.close(true)));
      await queue.close();
    });
    const request = {
      id: "abcdefghijklmnopqrstuvwxyz",
      state: "DONE",
      requester: { userId: "UALICE", teamId: "T1" },
      votes: [],
      executionAttempts: 1,
      updatedAt: new Date().toISOString(),
      message: { channel: CHANNEL, ts: THREAD },
      result: {
        outcome: "done",
        message: "✅ Finalizer removed: the Ingress is gone.",
        at: new Date().toISOString(),
      },
    } as unknown as ApprovalRequest;
    const held = fake.hold("chat.postMessage", (c) => /Finalizer removed/.test(text(c)));
    start();
    await queuedNotifier(queue).threadReply(request, {
      kind: "outcome",
      state: "DONE",
      message: "✅ Finalizer removed: the Ingress is gone.",
    });
    await held.arrived;
    const [job] = await queue.getJobs(["active"]);
    if (job?.id === undefined) throw new Error("the reply job is running");
    await handBack(queue, redis, bull, job.id);
    start();
    // The reply job runs again while the first run still waits for Slack; then Slack answers.
    await eventually(
      async () =>
        (await queue.getJobState(job.id ?? "")) === "active" || postsIn(fake, /Finalizer removed/) >= 2
          ? true
          : undefined,
      10_000,
      "the reply job taken again",
    );
    await pause(200);
    held.release();
    await eventually(
      async () => ((await queue.getJobState(job.id ?? "")) === "completed" ? true : undefined),
      10_000,
      "the reply job completed",
    );
    await pause(300);
    expect(postsIn(fake, /Finalizer removed/)).toBe(1);
  });
});
