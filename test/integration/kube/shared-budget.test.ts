/**
 * The fleet's request budget at one API server, in a real Redis: N simulated replicas (each its
 * own adapter, limiter and Redis connection, all on one prefix) run concurrent diagnoses against
 * the Kubernetes simulator, and the simulator never has more requests in flight than the budget
 * (measured from its request log: each request's arrival and finished answer). A holder that dies
 * holding every lease gives them back when they expire.
 */
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { createLimiter, withoutSharedBudget, withRequestCaller } from "../../../src/kube/limiter.js";
import { redisSharedBudget, sharedBudgetKey } from "../../../src/kube/shared-budget.js";
import type { RequestRecord } from "../../sim/kube/index.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { client, deleteKeys, uniquePrefix } from "../../helpers/redis.js";

const SEED = fileURLToPath(new URL("../../fixtures/scenarios/seed-incident.yaml", import.meta.url));

/** The most requests the simulator was serving at once, from each request's arrival and answer. */
function peakInFlight(records: readonly RequestRecord[]): number {
  const edges = records.flatMap((r) => [
    { at: r.startedAt, d: 1 },
    { at: r.finishedAt, d: -1 },
  ]);
  // An answer finished at the same instant another request arrived is counted as gone first.
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let peak = 0;
  for (const e of edges) {
    now += e.d;
    peak = Math.max(peak, now);
  }
  return peak;
}

describe("shared kube request budget (Redis)", () => {
  let sim: KubeSim;
  const prefix = uniquePrefix("kube-budget");
  const connections: Redis[] = [];
  const connect = (): Redis => {
    const c = client();
    connections.push(c);
    return c;
  };

  beforeAll(async () => {
    // Each request takes a few ms at the server, so concurrent ones overlap there.
    sim = await startKubeSim({ scenario: SEED, controllerIntervalMs: 3_600_000, faults: { latencyMs: 5 } });
  });

  afterAll(async () => {
    const c = client();
    await deleteKeys(c, prefix);
    await c.quit();
    await Promise.all(connections.map((c) => c.quit()));
    await sim.stop();
  });

  it("3 replicas × 4 concurrent diagnoses never exceed a budget of 6 at the API server", async () => {
    const budget = 6;
    const replicas = Array.from({ length: 3 }, () => {
      const limiter = createLimiter({
        concurrency: 64,
        budget: redisSharedBudget(connect(), { prefix, server: sim.url, limit: budget }),
      });
      return { limiter, kube: createKubeAdapter(sim.kubeconfig(), { maxInFlight: limiter }) };
    });
    sim.resetRequests();
    const diagnoses = await Promise.all(
      replicas.flatMap((r, i) =>
        Array.from({ length: 4 }, (_, d) =>
          withRequestCaller(`replica-${i}-diagnosis-${d}`, () =>
            // Each with its own deadline, so none joins another's run (asks for one namespace with
            // the same options in flight together share a diagnosis): twelve diagnoses, not three.
            diagnoseNamespace(r.kube, "myapp", { now: () => new Date(), deadlineMs: 60_000 + d }),
          ),
        ),
      ),
    );
    expect(diagnoses.map((d) => d.verdict)).toEqual(Array(12).fill(diagnoses[0]?.verdict));
    expect(diagnoses.every((d) => d.blockers.length > 0)).toBe(true);
    const records = sim.requests();
    // Far more requests than the budget were made, so the bound was exercised...
    expect(records.length).toBeGreaterThan(budget * 10);
    // ...and the server never had more than the budget in flight.
    expect(peakInFlight(records)).toBeLessThanOrEqual(budget);
    for (const r of replicas) {
      expect(r.limiter.inFlight).toBe(0);
      await r.limiter.close?.();
      await r.kube.close?.();
    }
    // Every lease was given back.
    const redis = connect();
    expect(await redis.zcard(sharedBudgetKey(prefix, sim.url))).toBe(0);
  });

  it("a dead holder's leases are reclaimed once they expire", async () => {
    const server = `${sim.url}/dead-holder`;
    const redis = connect();
    // A replica takes the whole budget, then dies: it never renews nor gives anything back.
    const dead = redisSharedBudget(redis, { prefix, server, limit: 2, leaseMs: 300 });
    expect(await dead.exchange([], 2, 0)).toHaveLength(2);
    const alive = createLimiter({
      concurrency: 4,
      budget: redisSharedBudget(connect(), { prefix, server, limit: 2, leaseMs: 300 }),
    });
    expect(await redis.zcard(sharedBudgetKey(prefix, server))).toBe(2);
    // Waits for a lease, which it gets once the dead replica's have expired.
    const results = await Promise.all([1, 2, 3].map((n) => alive.run(() => Promise.resolve(n))));
    expect(results).toEqual([1, 2, 3]);
    await alive.close?.();
    expect(await redis.zcard(sharedBudgetKey(prefix, server))).toBe(0);
  });

  it("leases written into Redis by hand (expiring far in the future) hold nothing", async () => {
    const server = `${sim.url}/forged`;
    const redis = connect();
    const key = sharedBudgetKey(prefix, server);
    // A Redis writer fills the budget with leases that would live for a year.
    const year = Date.now() + 365 * 86_400_000;
    await redis.zadd(key, year, "forged-1", year, "forged-2");
    const budget = redisSharedBudget(connect(), { prefix, server, limit: 2, leaseMs: 5_000 });
    const granted = await budget.exchange([], 2, 0);
    expect(granted).toHaveLength(2);
    expect(await redis.zscore(key, "forged-1")).toBeNull();
    await budget.exchange(granted, 0, 0);
  });

  it("a request waits a bounded time for a lease, and an approved change's requests not at all", async () => {
    const server = `${sim.url}/bounded`;
    // Another holder keeps the whole budget alive (renewing it), for longer than the test.
    const holder = redisSharedBudget(connect(), { prefix, server, limit: 1, leaseMs: 5_000 });
    const held = await holder.exchange([], 1, 0);
    expect(held).toHaveLength(1);
    const renew = setInterval(() => void holder.renew(held), 1_000);
    try {
      const limiter = createLimiter({
        concurrency: 4,
        budget: redisSharedBudget(connect(), { prefix, server, limit: 1, leaseMs: 5_000 }),
        leaseWaitMs: 400,
      });
      // Exempt (an execution, the guard's reconcile loop): runs at once, on no lease.
      let started = Date.now();
      await withoutSharedBudget(() => limiter.run(() => Promise.resolve(1)));
      expect(Date.now() - started).toBeLessThan(200);
      // Any other request: held back while the budget is spent, then run under the local bound.
      started = Date.now();
      await limiter.run(() => Promise.resolve(2));
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(350);
      expect(waited).toBeLessThan(3_000);
      await limiter.close?.();
    } finally {
      clearInterval(renew);
      await holder.exchange(held, 0, 0);
    }
  });

  it("while replicas wait, none is granted more than its share of the budget", async () => {
    const server = `${sim.url}/shares`;
    const a = redisSharedBudget(connect(), { prefix, server, limit: 4, leaseMs: 5_000 });
    const b = redisSharedBudget(connect(), { prefix, server, limit: 4, leaseMs: 5_000 });
    // B waits (asks, gets nothing while A holds everything)...
    const held = await a.exchange([], 4, 0);
    expect(held).toHaveLength(4);
    expect(await b.exchange([], 4, 0)).toHaveLength(0);
    // ...so A, giving all four back and asking for four again, gets only its half.
    const again = await a.exchange(held, 4, 0);
    expect(again).toHaveLength(2);
    expect(await b.exchange([], 4, 0)).toHaveLength(2);
    await a.exchange(again, 0, 0);
  });
});
