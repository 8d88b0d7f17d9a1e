/**
 * The limiter's fair queue and its shared budget (an in-memory stand-in here; the Redis one is
 * tested against a real Redis in test/integration/kube/shared-budget.test.ts): callers are served
 * round-robin, leases bound every process together, and a budget that fails or never answers is
 * set aside (logged once) so requests still run under the local bound.
 */
import { describe, expect, it } from "vitest";
import type { SharedBudget } from "../../../src/kube/budget-leases.js";
import { createLimiter, withRequestCaller } from "../../../src/kube/limiter.js";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A budget of `limit` leases in memory, shared by whoever holds this object. */
function memoryBudget(limit: number): SharedBudget & { held: Set<string>; peak: number; calls: number } {
  let seq = 0;
  const b = {
    held: new Set<string>(),
    peak: 0,
    calls: 0,
    leaseMs: 60_000,
    name: "memory",
    exchange(release: readonly string[], want: number): Promise<readonly string[]> {
      b.calls++;
      for (const id of release) b.held.delete(id);
      const granted: string[] = [];
      while (granted.length < want && b.held.size < limit) {
        const id = `l${seq++}`;
        b.held.add(id);
        granted.push(id);
      }
      b.peak = Math.max(b.peak, b.held.size);
      return Promise.resolve(granted);
    },
    renew: () => Promise.resolve(),
  };
  return b;
}

function recordingLog() {
  const warned: string[] = [];
  const infos: string[] = [];
  return {
    warned,
    infos,
    warn: (_o: object, msg: string) => void warned.push(msg),
    info: (_o: object, msg: string) => void infos.push(msg),
  };
}

describe("fair request limiter", () => {
  it("serves callers round-robin: a caller with 5 requests is not starved by one with 100", async () => {
    const limiter = createLimiter({ concurrency: 1 });
    const order: string[] = [];
    const op = (who: string) => async () => {
      order.push(who);
      await tick();
    };
    const big = withRequestCaller("diagnosis-big", () =>
      Promise.all(Array.from({ length: 100 }, () => limiter.run(op("big")))),
    );
    await tick();
    const small = withRequestCaller("diagnosis-small", () =>
      Promise.all(Array.from({ length: 5 }, () => limiter.run(op("small")))),
    );
    await Promise.all([big, small]);
    expect(order).toHaveLength(105);
    // The small caller's last request started within the first dozen, not after the big one's 100.
    expect(order.lastIndexOf("small")).toBeLessThan(12);
    // Within one caller, arrival order holds: the big caller's requests all ran.
    expect(order.filter((w) => w === "big")).toHaveLength(100);
  });

  it("an outer caller key wins over an inner one unless replaced", () => {
    const seen: string[] = [];
    withRequestCaller("outer", () => {
      withRequestCaller("inner", () => seen.push("kept"));
    });
    expect(seen).toEqual(["kept"]);
  });

  it("limiters sharing one budget never hold more than it in flight together", async () => {
    const budget = memoryBudget(3);
    const limiters = [0, 1, 2].map(() => createLimiter({ concurrency: 8, budget }));
    let inFlight = 0;
    let peak = 0;
    const request = async () => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, Math.random() < 0.5 ? 0 : 2));
      inFlight--;
    };
    await Promise.all(
      limiters.flatMap((l, i) =>
        Array.from({ length: 4 }, (_, c) =>
          withRequestCaller(`r${i}-d${c}`, async () => {
            for (let k = 0; k < 10; k++) await l.run(request);
          }),
        ),
      ),
    );
    expect(peak).toBeLessThanOrEqual(3);
    expect(budget.peak).toBeLessThanOrEqual(3);
    for (const l of limiters) await l.close?.();
    expect(budget.held.size).toBe(0);
  });

  it("a budget that fails is set aside, logged once, and the local bound alone applies", async () => {
    const log = recordingLog();
    let calls = 0;
    const budget: SharedBudget = {
      leaseMs: 60_000,
      name: "down",
      exchange: () => {
        calls++;
        return Promise.reject(new Error("Connection is closed."));
      },
      renew: () => Promise.resolve(),
    };
    const limiter = createLimiter({ concurrency: 4, budget, log, budgetRetryMs: 60_000 });
    let inFlight = 0;
    let peak = 0;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        limiter.run(async () => {
          inFlight++;
          peak = Math.max(peak, inFlight);
          await tick();
          inFlight--;
          return i;
        }),
      ),
    );
    expect(results).toHaveLength(50);
    expect(peak).toBeLessThanOrEqual(4);
    expect(log.warned).toHaveLength(1);
    // Set aside for its retry period: not asked once per request.
    expect(calls).toBe(1);
  });

  it("a budget that never answers is set aside after its timeout; its recovery is logged once", async () => {
    const log = recordingLog();
    let hang = true;
    const memory = memoryBudget(2);
    const budget: SharedBudget = {
      ...memory,
      exchange: (release, want, held) =>
        hang ? new Promise<readonly string[]>(() => undefined) : memory.exchange(release, want, held),
    };
    const limiter = createLimiter({ concurrency: 4, budget, log, budgetTimeoutMs: 20, budgetRetryMs: 30 });
    await expect(limiter.run(() => Promise.resolve("ran"))).resolves.toBe("ran");
    expect(log.warned).toHaveLength(1);
    hang = false;
    // Past the set-aside period the budget is asked again.
    await new Promise((r) => setTimeout(r, 50));
    await expect(limiter.run(() => Promise.resolve("leased"))).resolves.toBe("leased");
    expect(log.infos).toHaveLength(1);
    await limiter.close?.();
  });
});
