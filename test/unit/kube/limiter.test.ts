/**
 * The adapter's shared request limiter: a bound on requests in flight across every
 * caller, FIFO, and a 429's Retry-After holding back every new request.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLimiter } from "../../../src/kube/limiter.js";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("request limiter", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("never has more than its bound in flight: 20 concurrent callers × 50 requests", async () => {
    const limiter = createLimiter({ concurrency: 8 });
    let inFlight = 0;
    let peak = 0;
    let done = 0;
    const request = async () => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      expect(limiter.inFlight).toBeLessThanOrEqual(8);
      // Uneven durations, so that callers interleave.
      await new Promise((r) => setTimeout(r, Math.random() < 0.5 ? 0 : 2));
      inFlight--;
      done++;
    };
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        for (let i = 0; i < 50; i++) await limiter.run(request);
      }),
    );
    expect(done).toBe(1000);
    expect(peak).toBe(8);
    expect(limiter.peak).toBe(8);
    expect(limiter.inFlight).toBe(0);
    expect(limiter.waiting).toBe(0);
  });

  it("starts waiting requests in arrival order; a retry goes ahead of those not yet started", async () => {
    const limiter = createLimiter({ concurrency: 1 });
    const gate = deferred();
    const started: string[] = [];
    const first = limiter.run(async () => {
      started.push("first");
      await gate.promise;
    });
    const rest = ["a", "b", "c", "d", "e"].map((id) =>
      limiter.run(() => {
        started.push(id);
        return Promise.resolve(id);
      }),
    );
    const retried = limiter.run(
      () => {
        started.push("retry");
        return Promise.resolve("retry");
      },
      { retry: true },
    );
    await tick();
    expect(started).toEqual(["first"]);
    expect(limiter.waiting).toBe(6);
    gate.resolve();
    await first;
    expect(await Promise.all(rest)).toEqual(["a", "b", "c", "d", "e"]);
    await retried;
    expect(started).toEqual(["first", "retry", "a", "b", "c", "d", "e"]);
  });

  it("a failing request frees its slot and its caller gets the error", async () => {
    const limiter = createLimiter({ concurrency: 1 });
    await expect(limiter.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(
      limiter.run(() => {
        throw new Error("sync boom");
      }),
    ).rejects.toThrow("sync boom");
    expect(await limiter.run(() => Promise.resolve(7))).toBe(7);
    expect(limiter.inFlight).toBe(0);
  });

  it("holds back every new request for a Retry-After, letting those in flight finish", async () => {
    vi.useFakeTimers();
    const limiter = createLimiter({ concurrency: 4 });
    const gate = deferred();
    const running = limiter.run(() => gate.promise);
    await vi.advanceTimersByTimeAsync(0);
    expect(limiter.inFlight).toBe(1);

    limiter.holdFor(2_000);
    const started: number[] = [];
    const t0 = Date.now();
    const held = Array.from({ length: 6 }, (_, i) =>
      limiter.run(() => {
        started.push(Date.now() - t0);
        return Promise.resolve(i);
      }),
    );
    gate.resolve();
    await running;
    await vi.advanceTimersByTimeAsync(1_999);
    expect(started).toEqual([]);
    expect(limiter.waiting).toBe(6);

    // A longer hold extends it; a shorter one never shortens it.
    limiter.holdFor(1_000);
    limiter.holdFor(500);
    await vi.advanceTimersByTimeAsync(1);
    expect(started).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await Promise.all(held)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(started.every((ms) => ms >= 2_999)).toBe(true);
    expect(limiter.peak).toBeLessThanOrEqual(4);
  });
});
