import { afterEach, describe, expect, it, vi } from "vitest";
import { pacer } from "../../../src/util/pacer.js";

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe("pacer", () => {
  afterEach(() => vi.useRealTimers());

  it("starts at most `slots` pieces of work at once; the next starts when one settles", async () => {
    const pace = pacer(2, 60_000);
    const started: number[] = [];
    const gates = [deferred(), deferred(), deferred()];
    const runs = gates.map((g, i) =>
      pace.run(async () => {
        started.push(i);
        await g.promise;
        return i;
      }),
    );
    await flush();
    expect(started).toEqual([0, 1]);
    expect(pace.waiting).toBe(1);
    gates[1]?.resolve();
    await flush();
    expect(started).toEqual([0, 1, 2]);
    gates[0]?.resolve();
    gates[2]?.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2]);
  });

  it("gives a slot back after the head start, so work waiting on I/O holds nobody for long", async () => {
    vi.useFakeTimers();
    const pace = pacer(1, 100);
    const slow = deferred();
    const started: string[] = [];
    const first = pace.run(async () => {
      started.push("slow");
      await slow.promise;
    });
    const second = pace.run(() => {
      started.push("next");
      return Promise.resolve();
    });
    await flush();
    expect(started).toEqual(["slow"]);
    await vi.advanceTimersByTimeAsync(100);
    expect(started).toEqual(["slow", "next"]);
    await second;
    slow.resolve();
    await first;
    expect(pace.waiting).toBe(0);
  });

  it("with a quiet window, work waits while requests keep arriving, and starts once they stop", async () => {
    vi.useFakeTimers();
    const pace = pacer(8, 60_000, { quietMs: 15, maxDeferMs: 500 });
    const started: number[] = [];
    pace.arrived();
    const first = pace.run(() => {
      started.push(Date.now());
      return Promise.resolve();
    });
    // Another request every 10 ms for 100 ms: the burst is still arriving, nothing starts.
    for (let i = 0; i < 10; i++) {
      await vi.advanceTimersByTimeAsync(10);
      pace.arrived();
    }
    expect(started).toEqual([]);
    const quietFrom = Date.now();
    await vi.advanceTimersByTimeAsync(15);
    await first;
    expect(started).toHaveLength(1);
    expect((started[0] ?? 0) - quietFrom).toBeGreaterThanOrEqual(15);
  });

  it("once work has run, a lone request starts at once, and a burst's later requests still wait", async () => {
    vi.useFakeTimers();
    const pace = pacer(8, 60_000, { quietMs: 15, maxDeferMs: 500 });
    const started: number[] = [];
    const work = (): Promise<void> => {
      started.push(Date.now());
      return Promise.resolve();
    };
    // The first work after start-up waits for quiet, lone or not.
    pace.arrived();
    const cold = pace.run(work);
    await vi.advanceTimersByTimeAsync(14);
    expect(started).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    await cold;
    expect(started).toHaveLength(1);

    // A minute later, one request alone: no wait.
    await vi.advanceTimersByTimeAsync(60_000);
    pace.arrived();
    const askedAt = Date.now();
    await pace.run(work);
    expect(started[1]).toBe(askedAt);

    // A burst: the second request arrives 2 ms after the first, and waits for quiet.
    await vi.advanceTimersByTimeAsync(60_000);
    pace.arrived();
    await vi.advanceTimersByTimeAsync(2);
    pace.arrived();
    const second = pace.run(work);
    await vi.advanceTimersByTimeAsync(10);
    expect(started).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(5);
    await second;
    expect(started).toHaveLength(3);
  });

  it("a steady stream of requests never holds work back longer than maxDeferMs", async () => {
    vi.useFakeTimers();
    const pace = pacer(8, 60_000, { quietMs: 15, maxDeferMs: 500 });
    const asked = Date.now();
    let startedAt: number | undefined;
    pace.arrived();
    const run = pace.run(() => {
      startedAt = Date.now();
      return Promise.resolve();
    });
    for (let i = 0; i < 100 && startedAt === undefined; i++) {
      await vi.advanceTimersByTimeAsync(5);
      pace.arrived();
    }
    await run;
    expect((startedAt ?? 0) - asked).toBeGreaterThanOrEqual(500);
    expect((startedAt ?? 0) - asked).toBeLessThan(520);
  });

  it("passes a failure through and still frees the slot", async () => {
    const pace = pacer(1, 60_000);
    await expect(pace.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await pace.run(() => Promise.resolve("after"))).toBe("after");
  });
});
