/**
 * Benchmark for the waits queue: 1,000 concurrent CloudFront-Deployed waits on 2
 * worker processes with concurrency 5, side by side with the naive design in the same run.
 *
 * - unstuck: the product's `enqueueEdgeWait` and `createWaitsWorker` (`checkEdgeWait`): each check
 *   runs once and moves its job back to the delayed set, so a wait between checks holds no slot.
 * - naive: a BullMQ job whose processor polls in a loop (`while (!deployed) await sleep(interval)`),
 *   which is what a worker awaiting the SDK's `waitUntilDistributionDeployed` does: it holds its
 *   slot for the whole deployment, so 2 × 5 slots progress 10 waits at a time.
 *
 * Both run against the Redis at `REDIS_URL` (test/helpers/redis.ts, as the tests use) under a unique key
 * prefix deleted at the end, with 2 worker processes each (this file with `--worker`). AWS is a
 * fake `distributionStatus` that answers `Deployed` once its distribution's deploy time has passed
 * (10–20 s after the enqueue, spread over the waits; encoded in the distribution id); the thread
 * reporter is a fake that counts posts and edits. The bench measures scheduling, not AWS or Slack.
 *
 * Figures: each check's lateness against its schedule (the first check against the enqueue, each
 * later one against the previous check + the interval), checks per second, slots held while
 * waiting (active jobs sampled every 100 ms whose activation is older than 1 s: a check takes
 * milliseconds), Redis memory per wait (MEMORY USAGE of the prefix's keys, and INFO used_memory).
 * Checks: every wait ends Deployed on its first check after the deploy time, the reporter saw one
 * status message per wait, edited on each later check and to its result (no second reply); no failed job; no key
 * left. Timings are reported, never failed on.
 *
 * A second unstuck run puts the same waits on a tenth as many distributions (1,000 waits on 100):
 * GetDistribution calls per check interval, mean over the run and the busiest interval (target, for
 * the busiest: one per distribution per interval, which waits that share their checks reach and
 * waits that check alone do not: about one per wait).
 *
 * `BENCH_WAITS` (default 1000 × `UNSTUCK_BENCH_SCALE`) waits; `BENCH_QUICK=1` for 100; `BENCH_NAIVE_WINDOW_MS` (default
 * 40,000; 15,000 quick) bounds the naive run. `npx tsx bench/waits.ts`.
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Queue, Worker, type Job } from "bullmq";
import { Redis } from "ioredis";
import type { EdgeProbe } from "../src/net/port.js";
import { enqueueEdgeWait, type EdgeWaitDeps } from "../src/jobs/edge-waits.js";
import { createQueues } from "../src/jobs/queues.js";
import type { ThreadReporter } from "../src/jobs/waits.js";
import { closeWorker, createWaitsWorker } from "../src/jobs/workers.js";
import { redisSharedChecks } from "../src/jobs/edge-waits.js";
import type { KubePort } from "../src/kube/port.js";
import { deleteKeysWithPrefix, REDIS_URL } from "../test/helpers/redis.js";
import {
  benchOptions,
  check,
  isolatedEnv,
  LineProcess,
  ms,
  percentile,
  type BenchOptions,
  type BenchResult,
  type Check,
  type Figure,
} from "./common.js";
import { testSeal, testWaitSeal, testWaits } from "../test/helpers/keys.js";

const WORKERS = 2;
const CONCURRENCY = 5;
const INTERVAL_MS = 2000;
/** Distribution i is Deployed DEPLOY_BASE_MS + (i mod 11) s after the enqueue starts. */
const DEPLOY_BASE_MS = 10_000;
const DEPLOY_SPREAD = 11;
const LATE_TARGET_MS = 2000;
/** An active job older than this is holding its slot while it waits (a check takes milliseconds). */
const HELD_MS = 1000;
const SAMPLE_MS = 100;
const NAIVE_QUEUE = "naive-waits";

type Design = "unstuck" | "naive";

/** What a worker process reports. */
interface WorkerStats {
  /** Distribution id → epoch ms of every `distributionStatus` call. */
  readonly calls: Record<string, number[]>;
  readonly posts: number;
  readonly updates: number;
}

function deployAtOf(id: string): number {
  return Number(/D(\d+)$/.exec(id)?.[1] ?? "0");
}

/** The fakes a worker checks with: CloudFront by the clock, Slack by counting. */
function fakes(): {
  aws: EdgeWaitDeps["aws"];
  reporter: ThreadReporter;
  stats: () => WorkerStats;
} {
  const calls: Record<string, number[]> = {};
  let posts = 0;
  let updates = 0;
  return {
    aws: {
      distributionStatus(id: string) {
        const at = Date.now();
        (calls[id] ??= []).push(at);
        return Promise.resolve({ status: at >= deployAtOf(id) ? "Deployed" : "InProgress", etag: "E1" });
      },
      changeStatus() {
        return Promise.reject(new Error("not used by this benchmark"));
      },
    },
    reporter: {
      post() {
        posts += 1;
        return Promise.resolve({ ts: `${process.pid}.${posts}` });
      },
      update() {
        updates += 1;
        return Promise.resolve();
      },
    },
    stats: () => ({ calls, posts, updates }),
  };
}

interface NaiveData {
  readonly distributionId: string;
  readonly intervalMs: number;
}

/** `--worker <design> <prefix>`: one worker process; `stats` → JSON; ends when stdin closes. */
async function workerProcess(design: Design, prefix: string): Promise<void> {
  const url = REDIS_URL;
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const f = fakes();
  const now = (): Date => new Date();
  let worker: Worker;
  if (design === "unstuck") {
    const probe: EdgeProbe = {
      resolve: () => Promise.reject(new Error("not used by this benchmark")),
      http: () => Promise.reject(new Error("not used by this benchmark")),
    };
    worker = createWaitsWorker(
      { connection, prefix, concurrency: CONCURRENCY },
      {
        seal: testWaitSeal(),
        // The namespace wait's dependencies: never called, only edge waits are enqueued.
        kube: {} as unknown as KubePort,
        reporter: f.reporter,
        describeBlockers: () => Promise.resolve([]),
        now,
        // As the runtime wires it: one look per target per interval, shared through Redis.
        edge: {
          aws: f.aws,
          reporter: f.reporter,
          probe,
          now,
          shared: redisSharedChecks(connection, prefix, { seal: testSeal() }),
        },
      },
    );
  } else {
    worker = new Worker<NaiveData>(
      NAIVE_QUEUE,
      async (job: Job<NaiveData>) => {
        const { distributionId: id, intervalMs } = job.data;
        const { ts } = await f.reporter.post("C0BENCH", "1.0", `⏳ CloudFront ${id}`);
        for (;;) {
          const { status } = await f.aws.distributionStatus(id);
          await f.reporter.update("C0BENCH", ts, `CloudFront ${id} is ${status}`);
          if (status === "Deployed") {
            await f.reporter.post("C0BENCH", "1.0", `✅ CloudFront ${id} is Deployed`);
            return;
          }
          await sleep(intervalMs);
        }
      },
      { connection, prefix, concurrency: CONCURRENCY },
    );
  }
  await worker.waitUntilReady();
  process.stdout.write("ready\n");
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === "stats") process.stdout.write(`${JSON.stringify(f.stats())}\n`);
  }
  // The naive jobs still sleep in their slots: do not wait for them.
  await closeWorker(worker, design === "naive");
  connection.disconnect();
}

/** Bytes held by every key under `prefix:` (MEMORY USAGE), and their count. */
async function prefixMemory(redis: Redis, prefix: string): Promise<{ bytes: number; keys: number }> {
  let cursor = "0";
  let bytes = 0;
  let keys = 0;
  do {
    const [next, batch] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = next;
    const sizes = await Promise.all(
      batch.map((k) => redis.call("MEMORY", "USAGE", k, "SAMPLES", "0") as Promise<number | null>),
    );
    for (const s of sizes) bytes += s ?? 0;
    keys += batch.length;
  } while (cursor !== "0");
  return { bytes, keys };
}

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info("memory");
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? "0");
}

/** Active jobs sampled every 100 ms: how many, and how many of them have been active > 1 s. */
function sampleActive(queue: Queue): { stop: () => Promise<{ active: number[]; held: number[] }> } {
  const active: number[] = [];
  const held: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const jobs = await queue.getActive(0, 100);
      const t = Date.now();
      active.push(jobs.length);
      held.push(jobs.filter((j) => j.processedOn !== undefined && t - j.processedOn > HELD_MS).length);
      await sleep(SAMPLE_MS);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { active, held };
    },
  };
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

function distributionId(i: number, t0: number): string {
  return `E${String(i).padStart(5, "0")}D${t0 + DEPLOY_BASE_MS + (i % DEPLOY_SPREAD) * 1000}`;
}

/** The outcome of one design's run. */
interface DesignRun {
  readonly design: Design;
  readonly ids: readonly string[];
  readonly enqueuedAt: ReadonlyMap<string, number>;
  readonly calls: ReadonlyMap<string, readonly number[]>;
  readonly posts: number;
  readonly updates: number;
  readonly active: readonly number[];
  readonly held: readonly number[];
  readonly wallMs: number;
  readonly memory?: { readonly prefixBytes: number; readonly usedMemoryDelta: number; readonly keys: number };
  readonly failed: number;
  readonly left: number;
}

async function runDesign(
  design: Design,
  n: number,
  prefix: string,
  redisUrl: string,
  stats: Redis,
  windowMs: number,
  /** Waits share this many distributions (wait i watches distribution i mod this); default one each. */
  distributions = n,
): Promise<DesignRun> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queues = createQueues({ connection, prefix });
  const naive = new Queue<NaiveData>(NAIVE_QUEUE, { connection, prefix });
  const queue: Queue = design === "unstuck" ? queues.waits : naive;
  const workers = Array.from(
    { length: WORKERS },
    () =>
      new LineProcess(
        process.execPath,
        ["--import", "tsx", fileURLToPath(import.meta.url), "--worker", design, prefix],
        isolatedEnv({ REDIS_URL: redisUrl }),
      ),
  );
  try {
    for (const w of workers) {
      const line = await w.request(undefined, 60_000);
      if (line !== "ready") throw new Error(`a ${design} worker said ${line}`);
    }
    await queue.waitUntilReady();
    const before = await prefixMemory(stats, prefix);
    const usedBefore = await usedMemory(stats);
    const sampler = sampleActive(queue);
    const t0 = Date.now();
    const started = performance.now();
    const ids = Array.from({ length: n }, (_, i) => distributionId(i % distributions, t0));
    const enqueuedAt = new Map<string, number>();
    for (let i = 0; i < n; i += 100) {
      await Promise.all(
        ids.slice(i, i + 100).map(async (id, k) => {
          const at = new Date();
          enqueuedAt.set(id, at.getTime());
          if (design === "unstuck") {
            await enqueueEdgeWait(
              testWaits(queues.waits),
              {
                target: { kind: "cloudfront-deployed", distributionId: id },
                cluster: "bench",
                channel: "C0BENCH",
                threadTs: `${String(i + k)}.000100`,
                intervalMs: INTERVAL_MS,
                maxIntervalMs: INTERVAL_MS,
                timeoutMs: 10 * 60_000,
              },
              at,
            );
          } else {
            await naive.add(
              "naive-wait",
              { distributionId: id, intervalMs: INTERVAL_MS },
              { jobId: `naive.${id}`, removeOnComplete: true, removeOnFail: { age: 86_400 } },
            );
          }
        }),
      );
    }
    // Redis memory while every wait is pending (the unstuck ones between checks, in the delayed set).
    await sleep(3000);
    const after = await prefixMemory(stats, prefix);
    const usedAfter = await usedMemory(stats);
    const memory = {
      prefixBytes: after.bytes - before.bytes,
      usedMemoryDelta: usedAfter - usedBefore,
      keys: after.keys - before.keys,
    };
    // Until every wait is done (unstuck), or the window ends (naive).
    const lastDeploy = t0 + DEPLOY_BASE_MS + (DEPLOY_SPREAD - 1) * 1000;
    const deadline = design === "unstuck" ? lastDeploy + 60_000 : t0 + windowMs;
    for (;;) {
      const counts = await queue.getJobCounts("active", "waiting", "delayed", "prioritized");
      const pending = Object.values(counts).reduce((a, b) => a + b, 0);
      if (pending === 0 || Date.now() >= deadline) break;
      await sleep(200);
    }
    const wallMs = performance.now() - started;
    const { active, held } = await sampler.stop();
    const failed = await queue.getFailedCount();
    const counts = await queue.getJobCounts("active", "waiting", "delayed", "prioritized");
    const left = Object.values(counts).reduce((a, b) => a + b, 0);
    const calls = new Map<string, number[]>();
    let posts = 0;
    let updates = 0;
    for (const w of workers) {
      const s = JSON.parse(await w.request("stats", 60_000)) as WorkerStats;
      posts += s.posts;
      updates += s.updates;
      for (const [id, times] of Object.entries(s.calls)) calls.set(id, [...(calls.get(id) ?? []), ...times]);
    }
    for (const times of calls.values()) times.sort((a, b) => a - b);
    return {
      design,
      ids,
      enqueuedAt,
      calls,
      posts,
      updates,
      active,
      held,
      wallMs,
      memory,
      failed,
      left,
    };
  } finally {
    await Promise.all(workers.map((w) => w.close()));
    await naive.close();
    await queues.close();
    connection.disconnect();
  }
}

/** Lateness of every check against its schedule, and of each wait's first check. */
function lateness(r: DesignRun): {
  all: number[];
  first: number[];
  later: number[];
  unstarted: number;
  checks: number;
} {
  const first: number[] = [];
  const later: number[] = [];
  let unstarted = 0;
  let checks = 0;
  for (const id of r.ids) {
    const times = r.calls.get(id) ?? [];
    const enq = r.enqueuedAt.get(id) ?? 0;
    checks += times.length;
    if (times.length === 0) {
      unstarted += 1;
      continue;
    }
    first.push((times[0] ?? 0) - enq);
    for (let j = 1; j < times.length; j++) later.push((times[j] ?? 0) - (times[j - 1] ?? 0) - INTERVAL_MS);
  }
  return { all: [...first, ...later], first, later, unstarted, checks };
}

/** For each wait that saw Deployed: how long after the deploy time its check saw it. */
function detection(r: DesignRun): { delays: number[]; unseen: number } {
  const delays: number[] = [];
  let unseen = 0;
  for (const id of r.ids) {
    const seen = (r.calls.get(id) ?? []).find((t) => t >= deployAtOf(id));
    if (seen === undefined) unseen += 1;
    else delays.push(seen - deployAtOf(id));
  }
  return { delays, unseen };
}

function pct(values: readonly number[]): string {
  return `p50 ${ms(percentile(values, 50))}, p99 ${ms(percentile(values, 99))}, max ${ms(Math.max(0, ...values))}`;
}

/** Status calls per check interval: the mean over the run's span, and the busiest interval. */
function callsPerInterval(r: DesignRun): { mean: number; max: number; total: number; intervals: number } {
  const times = [...r.calls.values()].flat().sort((a, b) => a - b);
  const first = times[0] ?? 0;
  const span = (times.at(-1) ?? 0) - first;
  const windows = new Map<number, number>();
  for (const t of times) {
    const w = Math.floor((t - first) / INTERVAL_MS);
    windows.set(w, (windows.get(w) ?? 0) + 1);
  }
  const intervals = Math.max(1, span / INTERVAL_MS);
  return {
    mean: times.length / intervals,
    max: Math.max(0, ...windows.values()),
    total: times.length,
    intervals,
  };
}

function checkRate(r: DesignRun): number {
  const times = [...r.calls.values()].flat();
  if (times.length < 2) return 0;
  const span = Math.max(...times) - Math.min(...times);
  return span > 0 ? (times.length / span) * 1000 : 0;
}

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  const v = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
  return v;
}

export async function benchWaits(options: BenchOptions): Promise<BenchResult> {
  const quick = process.env.BENCH_QUICK === "1";
  const n = envInt("BENCH_WAITS", quick ? 100 : 1000 * options.scale);
  const windowMs = envInt("BENCH_NAIVE_WINDOW_MS", quick ? 15_000 : 40_000);
  const redisUrl = REDIS_URL;
  const prefix = `unstuck-bench-waits-${randomBytes(4).toString("hex")}`;
  const stats = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
  const checks: Check[] = [];
  try {
    const unstuck = await runDesign("unstuck", n, prefix, redisUrl, stats, windowMs);
    // The same waits on a tenth as many distributions: the checks of one distribution may be shared.
    const distributions = Math.max(1, Math.round(n / 10));
    const shared = await runDesign("unstuck", n, prefix, redisUrl, stats, windowMs, distributions);
    const naive = await runDesign("naive", n, prefix, redisUrl, stats, windowMs);

    // unstuck: correctness.
    const u = lateness(unstuck);
    const wrongEnd = unstuck.ids.filter((id) => {
      const times = unstuck.calls.get(id) ?? [];
      const deployAt = deployAtOf(id);
      return times.filter((t) => t >= deployAt).length !== 1;
    });
    checks.push(
      check(
        `waits: all ${n} unstuck waits end Deployed on their first check after the deploy time`,
        wrongEnd.length === 0 && unstuck.left === 0 && unstuck.failed === 0,
        wrongEnd.length === 0 && unstuck.left === 0 && unstuck.failed === 0
          ? `${u.checks} checks, ${(u.checks / n).toFixed(1)} per wait; none failed, none left`
          : `${wrongEnd.length} ended wrong (e.g. ${wrongEnd.slice(0, 3).join(", ")}); ${unstuck.failed} failed; ${unstuck.left} still pending`,
      ),
    );
    checks.push(
      check(
        "waits: one status message per wait, edited on each later check and to its result, no other reply",
        unstuck.posts === n && unstuck.updates === u.checks - n,
        `posts ${unstuck.posts} (expected ${n}), edits ${unstuck.updates} (expected ${u.checks - n})`,
      ),
    );
    const uHeldMax = Math.max(0, ...unstuck.held);
    const nHeldMean = mean(naive.held);
    const nl = lateness(naive);
    const done = naive.ids.filter((id) => (naive.calls.get(id) ?? []).some((t) => t >= deployAtOf(id)));
    const uSeen = detection(unstuck);
    const nSeen = detection(naive);
    // A wait never checked in the window is at least this late on its first check.
    const windowEnd = Math.max(...naive.ids.map((id) => naive.enqueuedAt.get(id) ?? 0)) + naive.wallMs;
    const unstartedLate = naive.ids
      .filter((id) => (naive.calls.get(id) ?? []).length === 0)
      .map((id) => windowEnd - (naive.enqueuedAt.get(id) ?? 0));
    const naiveFirst = [...nl.first, ...unstartedLate];

    const figures: Figure[] = [
      {
        what: `unstuck: lateness of every check (${u.checks} checks)`,
        value: pct(u.all),
        target: `max ≤ ${ms(LATE_TARGET_MS)}`,
        met: Math.max(0, ...u.all) <= LATE_TARGET_MS,
      },
      { what: "unstuck: first check after the enqueue", value: pct(u.first) },
      {
        what: "unstuck: checks per second; all waits done after",
        value: `${checkRate(unstuck).toFixed(0)}/s; ${ms(unstuck.wallMs)} (last deploy at ${ms(DEPLOY_BASE_MS + (DEPLOY_SPREAD - 1) * 1000)})`,
      },
      {
        what: `unstuck: slots held while waiting (active > ${ms(HELD_MS)}, sampled every ${SAMPLE_MS} ms)`,
        value: `max ${uHeldMax}, mean ${mean(unstuck.held).toFixed(2)}; active jobs (checks in progress) max ${Math.max(0, ...unstuck.active)}, mean ${mean(unstuck.active).toFixed(2)} of ${WORKERS * CONCURRENCY}`,
        target: "= 0",
        met: uHeldMax === 0,
      },
      {
        what: "unstuck: Redis memory per wait",
        value: `${((unstuck.memory?.prefixBytes ?? 0) / n / 1024).toFixed(2)} KiB (MEMORY USAGE of the prefix's keys, ${unstuck.memory?.keys ?? 0} new keys); INFO used_memory delta / ${n}: ${((unstuck.memory?.usedMemoryDelta ?? 0) / n / 1024).toFixed(2)} KiB`,
      },
      ...((): Figure[] => {
        const one = callsPerInterval(unstuck);
        const few = callsPerInterval(shared);
        return [
          {
            what: `unstuck: GetDistribution calls per ${ms(INTERVAL_MS)} interval, ${n} waits on ${n} distributions`,
            value: `mean ${one.mean.toFixed(0)}, busiest ${one.max}; ${one.total} calls in ${one.intervals.toFixed(1)} intervals`,
          },
          {
            what: `unstuck: GetDistribution calls per ${ms(INTERVAL_MS)} interval, ${n} waits on ${distributions} distributions`,
            value: `mean ${few.mean.toFixed(0)}, busiest ${few.max}; ${few.total} calls in ${few.intervals.toFixed(1)} intervals (${(few.total / n).toFixed(1)} per wait); ${shared.failed} failed, ${shared.left} left; ${shared.posts} posts`,
            target: `≤ ${distributions} (one per distribution per interval)`,
            met: few.max <= distributions,
          },
        ];
      })(),
      {
        what: `naive: waits done (window ${ms(windowMs)})`,
        value: `${done.length} of ${n} after ${ms(naive.wallMs)}, ${nl.unstarted} never checked once; ${nl.checks} checks (${checkRate(naive).toFixed(1)}/s)`,
      },
      {
        what: "naive: first check after the enqueue (never checked: at least the window)",
        value: `${pct(naiveFirst)}${unstartedLate.length > 0 ? " (≥)" : ""}`,
        target: `max ≤ ${ms(LATE_TARGET_MS)}`,
        met: Math.max(0, ...naiveFirst) <= LATE_TARGET_MS,
      },
      {
        what: "naive: later checks of a started wait (it sleeps in its slot)",
        value: pct(nl.later),
      },
      {
        what: `naive: slots held while waiting (active > ${ms(HELD_MS)})`,
        value: `mean ${nHeldMean.toFixed(2)}, max ${Math.max(0, ...naive.held)} of ${WORKERS * CONCURRENCY}`,
        target: "= 0",
        met: Math.max(0, ...naive.held) === 0,
      },
      {
        what: "Deployed → seen (the check that saw it − the deploy time): unstuck | naive",
        value: `${pct(uSeen.delays)} | ${pct(nSeen.delays)}${nSeen.unseen > 0 ? `; ${nSeen.unseen} not seen in the window` : ""}`,
      },
      {
        what: "naive: Redis memory per wait",
        value: `${((naive.memory?.prefixBytes ?? 0) / n / 1024).toFixed(2)} KiB (MEMORY USAGE)`,
      },
    ];
    checks.push(
      check(
        `waits: all ${n} waits on ${distributions} distributions end, none failed`,
        shared.left === 0 && shared.failed === 0,
        `${shared.failed} failed, ${shared.left} still pending`,
      ),
    );
    checks.push(
      check(
        "waits: the naive run made progress (the comparison is real)",
        nl.checks > 0 && naive.failed === 0,
        `${nl.checks} checks, ${done.length} waits done, ${naive.failed} failed`,
      ),
    );
    return {
      name: "waits",
      context: [
        `${n} CloudFront-Deployed waits, check interval ${ms(INTERVAL_MS)} (fixed: maxIntervalMs = intervalMs), each distribution Deployed ${ms(DEPLOY_BASE_MS)}–${ms(DEPLOY_BASE_MS + (DEPLOY_SPREAD - 1) * 1000)} after the enqueue; all enqueued at once, so their checks come in waves of ${n}`,
        `${WORKERS} worker processes × concurrency ${CONCURRENCY} per design, Redis ${redisUrl.replace(/\/\/[^@/]*@/, "//…@")}, prefix ${prefix}`,
        "AWS is an in-memory fake distributionStatus (Deployed once its time has passed) and Slack a counting fake reporter: this measures scheduling, not AWS or Slack",
        "unstuck = enqueueEdgeWait + createWaitsWorker (check once, moveToDelayed, DelayedError); naive = a job looping `while (!deployed) await sleep(interval)` in its slot, as a worker awaiting the SDK waiter does",
        "lateness: first check − enqueue; each later check − (previous check + interval), from the fake's per-call timestamps",
        "a distribution deploys at its time whether or not a check is running, so a naive wait that gets a slot late finds it Deployed at once: its cost is the first check's lateness and Deployed seen late, while the 10 slots sleep",
      ],
      figures,
      checks,
    };
  } finally {
    await deleteKeysWithPrefix(stats, prefix);
    const left = await prefixMemory(stats, prefix);
    checks.push(check(`waits: Redis keys under ${prefix}: deleted`, left.keys === 0, `${left.keys} left`));
    await stats.quit();
  }
}

/** Lines a person reads: context, figures against targets, checks. */
export function resultLines(r: BenchResult): string[] {
  return [
    ...r.context,
    ...r.figures.map(
      (f) =>
        `${f.what}: ${f.value}${f.target !== undefined ? ` — target ${f.target}: ${f.met === true ? "met" : "MISSED"}` : ""}`,
    ),
    ...r.checks.map((c) => `${c.ok ? "ok  " : "FAIL"} ${c.what}: ${c.detail}`),
  ];
}

/** The standalone shape: lines to print, `ok` false only when a correctness check failed. */
export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const r = await benchWaits(benchOptions());
  return { name: r.name, lines: resultLines(r), ok: r.checks.every((c) => c.ok) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (process.argv[2] === "--worker") {
    await workerProcess(process.argv[3] === "naive" ? "naive" : "unstuck", process.argv[4] ?? "");
  } else {
    const r = await run();
    for (const line of r.lines) process.stdout.write(`${line}\n`);
    process.exitCode = r.ok ? 0 : 1;
  }
}
