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

  it("passes a failure through and still frees the slot", async () => {
    const pace = pacer(1, 60_000);
    await expect(pace.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await pace.run(() => Promise.resolve("after"))).toBe("after");
  });
});
