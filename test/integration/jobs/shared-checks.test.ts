/**
 * Edge waits share their looks: 1,000 CloudFront waits on 100 distributions (ten threads waiting
 * on each) against the AWS simulator through the real SDK, and a real Redis holding the last look
 * at each distribution. Each round of checks (every wait checks once, the clock one interval on)
 * makes at most one GetDistribution call per distribution, counted in the simulator's call log —
 * and still sees each deployment finish in the round it finishes. No timing is asserted.
 */
import { type Job } from "bullmq";
import { DelayedError } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAwsClients, destroyAwsClients, type AwsClients } from "../../../src/aws/clients.js";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import {
  checkEdgeWait,
  EDGE_JITTER,
  redisSharedChecks,
  type EdgeWaitData,
  type EdgeWaitDeps,
  type EdgeWaitResult,
} from "../../../src/jobs/edge-waits.js";
import type { ThreadReporter } from "../../../src/jobs/waits.js";
import type { EdgeProbe } from "../../../src/net/port.js";
import { startAwsSim, type AwsSim } from "../../sim/aws/index.js";
import { client, connect, deleteKeys, uniquePrefix } from "../../helpers/redis.js";
import { testSeal } from "../../helpers/keys.js";

const INTERVAL = 20_000;
const DISTRIBUTIONS = 100;
const WAITS = 1_000;
const T0 = Date.parse("2030-01-01T00:00:00Z");

/** A job as the worker hands it to `checkEdgeWait`: data, updateData, moveToDelayed. */
interface FakeJob {
  readonly id: string;
  data: EdgeWaitData;
  delayedUntil?: number;
  result?: EdgeWaitResult;
}

function asJob(j: FakeJob): Job<EdgeWaitData, EdgeWaitResult> {
  return {
    id: j.id,
    get data() {
      return j.data;
    },
    updateData: (d: EdgeWaitData) => {
      j.data = d;
      return Promise.resolve();
    },
    moveToDelayed: (at: number) => {
      j.delayedUntil = at;
      return Promise.resolve();
    },
  } as unknown as Job<EdgeWaitData, EdgeWaitResult>;
}

const reporter: ThreadReporter = {
  post: (_c, threadTs) => Promise.resolve({ ts: `${threadTs}.status` }),
  update: () => Promise.resolve(),
};
const probe: EdgeProbe = {
  resolve: () => Promise.reject(new Error("not used")),
  http: () => Promise.reject(new Error("not used")),
};

describe("edge waits share one look per target per interval", () => {
  let clock = T0;
  let sim: AwsSim;
  let clients: AwsClients;
  const redis = client();
  const prefix = uniquePrefix("shared-looks");
  const ids: string[] = [];

  beforeAll(async () => {
    sim = await startAwsSim({ now: () => new Date(clock), cloudFrontDeployMs: 3 * INTERVAL });
    const world = sim.world;
    for (let i = 0; i < DISTRIBUTIONS; i++) {
      const config = world.buildDistributionConfig({
        origins: [{ id: "o", domainName: `origin-${i}.example.com` }],
        callerReference: `ref-${i}`,
      });
      // InProgress for three intervals from now.
      ids.push(world.createDistribution({ config, deployed: false }).id);
    }
    clients = createAwsClients({
      region: world.region,
      endpoint: sim.url,
      credentials: { accessKeyId: "AKIAUNSTUCKTEST00001", secretAccessKey: "x" },
      maxAttempts: 1,
    });
  });

  afterAll(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
    destroyAwsClients(clients);
    await sim.stop();
  });

  const waitsOn = (label: string): FakeJob[] =>
    Array.from({ length: WAITS }, (_, i) => ({
      id: `${label}-${i}`,
      data: {
        target: { kind: "cloudfront-deployed", distributionId: ids[i % DISTRIBUTIONS] ?? "" },
        cluster: "prod",
        channel: "COPS",
        threadTs: `1700000000.${String(i).padStart(6, "0")}`,
        startedAt: clock,
        deadline: clock + 45 * 60_000,
        intervalMs: INTERVAL,
        firstIntervalMs: INTERVAL,
        maxIntervalMs: INTERVAL,
        checks: 0,
      },
    }));

  /** Every unfinished wait checks once at the current clock; the GetDistribution calls it took. */
  async function round(jobs: FakeJob[], deps: EdgeWaitDeps): Promise<number> {
    const before = sim.calls().filter((c) => c.action === "GetDistribution").length;
    await Promise.all(
      jobs
        .filter((j) => j.result === undefined)
        .map(async (j) => {
          try {
            j.result = await checkEdgeWait(asJob(j), "token", deps);
          } catch (err) {
            if (!(err instanceof DelayedError)) throw err;
          }
        }),
    );
    return sim.calls().filter((c) => c.action === "GetDistribution").length - before;
  }

  it("1,000 waits on 100 distributions: ≤ 100 GetDistribution calls per round, each finish seen", async () => {
    const deps: EdgeWaitDeps = {
      aws: createAwsAdapter(clients),
      reporter,
      probe,
      now: () => new Date(clock),
      shared: redisSharedChecks(redis, prefix, { seal: testSeal() }),
    };
    const jobs = waitsOn("shared");
    const perRound: number[] = [];
    for (let r = 0; r < 5 && jobs.some((j) => j.result === undefined); r++) {
      clock = T0 + r * INTERVAL;
      perRound.push(await round(jobs, deps));
      if (r < 3) {
        // Still InProgress: every wait re-delayed, by its pause plus up to the jitter, never less.
        expect(jobs.every((j) => j.result === undefined)).toBe(true);
        const pauses = jobs.map((j) => (j.delayedUntil ?? 0) - clock);
        expect(Math.min(...pauses)).toBeGreaterThanOrEqual(INTERVAL);
        expect(Math.max(...pauses)).toBeLessThanOrEqual(Math.ceil(INTERVAL * (1 + EDGE_JITTER)));
        expect(new Set(pauses).size).toBeGreaterThan(1);
      }
    }
    // Deployed three intervals in: every wait saw it in the fourth round, none a round late.
    expect(perRound).toHaveLength(4);
    expect(jobs.every((j) => j.result?.outcome === "done")).toBe(true);
    for (const calls of perRound) {
      expect(calls).toBeGreaterThan(0);
      expect(calls).toBeLessThanOrEqual(DISTRIBUTIONS);
    }
  });

  it("waits whose checks drift apart still look at a distribution at most once per interval", async () => {
    const config = sim.world.buildDistributionConfig({
      origins: [{ id: "o", domainName: "origin-drift.example.com" }],
      callerReference: "ref-drift",
    });
    const start = T0 + 20 * INTERVAL;
    clock = start;
    const id = sim.world.createDistribution({ config, deployed: false }).id;
    const deps: EdgeWaitDeps = {
      aws: createAwsAdapter(clients),
      reporter,
      probe,
      now: () => new Date(clock),
      shared: redisSharedChecks(redis, prefix, { seal: testSeal() }),
    };
    // Ten waits on it, started a tenth of an interval apart: their checks are spread over the
    // whole interval from the start, and drift further with every jittered pause.
    const jobs: FakeJob[] = Array.from({ length: 10 }, (_, i) => ({
      id: `drift-${i}`,
      delayedUntil: start + (i * INTERVAL) / 10,
      data: {
        target: { kind: "cloudfront-deployed", distributionId: id },
        cluster: "prod",
        channel: "COPS",
        threadTs: `1700000001.${String(i).padStart(6, "0")}`,
        startedAt: start + (i * INTERVAL) / 10,
        deadline: start + 45 * 60_000,
        intervalMs: INTERVAL,
        firstIntervalMs: INTERVAL,
        maxIntervalMs: INTERVAL,
        checks: 0,
      },
    }));
    const looks: number[] = [];
    const calls = () => sim.calls().filter((c) => c.action === "GetDistribution").length;
    let checks = 0;
    for (;;) {
      const open = jobs.filter((j) => j.result === undefined);
      if (open.length === 0) break;
      const next = open.reduce((a, b) => ((a.delayedUntil ?? 0) <= (b.delayedUntil ?? 0) ? a : b));
      clock = next.delayedUntil ?? clock;
      const before = calls();
      try {
        next.result = await checkEdgeWait(asJob(next), "token", deps);
      } catch (err) {
        if (!(err instanceof DelayedError)) throw err;
      }
      checks++;
      if (calls() > before) looks.push(clock);
    }
    // Deployed three intervals after it was created: every wait saw it, within an interval or so.
    expect(jobs.every((j) => j.result?.outcome === "done")).toBe(true);
    expect(checks).toBeGreaterThan(30);
    // One look per interval at most: consecutive looks a whole interval apart …
    for (let i = 1; i < looks.length; i++) {
      expect((looks[i] ?? 0) - (looks[i - 1] ?? 0)).toBeGreaterThanOrEqual(INTERVAL);
    }
    // … and the waits were not left with an old answer: a look in every interval until Deployed.
    expect(looks.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...jobs.map((j) => j.delayedUntil ?? 0))).toBeLessThan(start + 6 * INTERVAL);
  });

  it("a wait alone on its target, on the real clock: its own look is never its answer, and looks stay a pause apart", async () => {
    const pause = 150;
    const calls: number[] = [];
    let status = "InProgress";
    const deps: EdgeWaitDeps = {
      aws: {
        ...createAwsAdapter(clients),
        distributionStatus: () => {
          calls.push(Date.now());
          return Promise.resolve({ status, etag: "E1" });
        },
      },
      reporter,
      probe,
      now: () => new Date(),
      shared: redisSharedChecks(redis, prefix, { seal: testSeal() }),
      // No jitter: each check starts exactly a pause after the one before began.
      random: () => 0,
    };
    const start = Date.now();
    const job: FakeJob = {
      id: "alone-real-clock",
      data: {
        target: { kind: "cloudfront-deployed", distributionId: "E0ALONEREALCLK" },
        cluster: "prod",
        channel: "COPS",
        threadTs: "1700000002.000001",
        startedAt: start,
        deadline: start + 60_000,
        intervalMs: pause,
        firstIntervalMs: pause,
        maxIntervalMs: pause,
        checks: 0,
      },
    };
    // A check whose own last look is younger than a pause runs again later without looking.
    for (let i = 0; i < 40 && calls.length < 8 && job.result === undefined; i++) {
      if (calls.length === 7) status = "Deployed";
      const due = (job.delayedUntil ?? start) - Date.now();
      if (due > 0) await new Promise((r) => setTimeout(r, due));
      try {
        job.result = await checkEdgeWait(asJob(job), "token", deps);
      } catch (err) {
        if (!(err instanceof DelayedError)) throw err;
      }
    }
    // Every check looked (its own last look never answered it) and saw the deployment when it came …
    expect(calls).toHaveLength(8);
    expect(job.result?.outcome).toBe("done");
    // … and no two looks at the target came within a pause of each other. A look is stamped just
    // before it is sent and the fake AWS times it on its own reading of the clock, which may fall a
    // millisecond tick later: the stamps are a pause apart, the fake's times within a tick of it.
    for (let i = 1; i < calls.length; i++)
      expect((calls[i] ?? 0) - (calls[i - 1] ?? 0)).toBeGreaterThanOrEqual(pause - 1);
  });

  it('a look written into Redis ("Deployed" when it is not) is no answer; one this install signed is', async () => {
    const redis = connect();
    const prefix = uniquePrefix("shared-forged");
    try {
      const shared = redisSharedChecks(redis, prefix, { seal: testSeal() });
      const key = "cloudfront-deployed:E2MYAPPTEST0001";
      const at = Date.now();
      await redis.set(
        `${prefix}:edge-look:${key}`,
        `${String(at)}|${JSON.stringify({ look: { kind: "cloudfront-deployed", status: "Deployed" } })}`,
      );
      expect(await shared.read(key, at - 1_000)).toBeUndefined();
      await shared.write(key, at + 1, { kind: "cloudfront-deployed", status: "InProgress" }, undefined, "w1");
      expect(await shared.read(key, at - 1_000)).toEqual({
        at: at + 1,
        by: "w1",
        look: { kind: "cloudfront-deployed", status: "InProgress" },
      });
      // A signed look of another target does not stand for this one.
      const other = await redis.get(`${prefix}:edge-look:${key}`);
      await redis.set(`${prefix}:edge-look:cloudfront-deployed:EOTHER`, other ?? "");
      expect(await shared.read("cloudfront-deployed:EOTHER", at - 1_000)).toBeUndefined();
    } finally {
      await deleteKeys(redis, prefix);
      await redis.quit();
    }
  });

  it("without the shared looks, the same round costs one call per wait", async () => {
    clock = T0 + 10 * INTERVAL;
    const deps: EdgeWaitDeps = {
      aws: createAwsAdapter(clients),
      reporter,
      probe,
      now: () => new Date(clock),
    };
    expect(await round(waitsOn("alone"), deps)).toBe(WAITS);
  });
});
