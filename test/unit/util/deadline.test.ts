/**
 * The one way the code bounds a wait: the promise's own outcome when it settles first (and no timer
 * left behind), the timeout's rejection or fallback when the deadline comes first.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { orElse, settlesWithin, withTimeout } from "../../../src/util/deadline.js";

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: Error) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("util/deadline", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  describe("withTimeout", () => {
    it("resolves with the promise's value and clears its timer when the promise settles first", async () => {
      const d = deferred<string>();
      const onTimeout = vi.fn(() => new Error("late"));
      const bounded = withTimeout(d.promise, 1_000, onTimeout);
      expect(vi.getTimerCount()).toBe(1);
      d.resolve("answer");
      await expect(bounded).resolves.toBe("answer");
      expect(vi.getTimerCount()).toBe(0);
      await vi.advanceTimersByTimeAsync(5_000);
      expect(onTimeout).not.toHaveBeenCalled();
    });

    it("passes the promise's own rejection through and clears its timer", async () => {
      const d = deferred<string>();
      const bounded = withTimeout(d.promise, 1_000, () => new Error("late"));
      d.reject(new Error("refused"));
      await expect(bounded).rejects.toThrow("refused");
      expect(vi.getTimerCount()).toBe(0);
    });

    it("rejects with onTimeout()'s error at the deadline, not before", async () => {
      const d = deferred<string>();
      const late = new Error("no answer within 1 s");
      const onTimeout = vi.fn(() => late);
      const bounded = withTimeout(d.promise, 1_000, onTimeout);
      const outcome = bounded.then(
        () => "resolved",
        (err: unknown) => err,
      );
      await vi.advanceTimersByTimeAsync(999);
      expect(onTimeout).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      expect(await outcome).toBe(late);
      expect(onTimeout).toHaveBeenCalledTimes(1);
      // A later answer changes nothing.
      d.resolve("too late");
      await expect(bounded).rejects.toBe(late);
    });
  });

  describe("orElse", () => {
    it("resolves with the promise's value when it settles first, the fallback never called", async () => {
      const fallback = vi.fn(() => "fallback");
      const bounded = orElse(Promise.resolve(7), 1_000, fallback);
      await expect(bounded).resolves.toBe(7);
      expect(vi.getTimerCount()).toBe(0);
      await vi.advanceTimersByTimeAsync(5_000);
      expect(fallback).not.toHaveBeenCalled();
    });

    it("resolves with fallback()'s value at the deadline", async () => {
      const bounded = orElse(new Promise<number>(() => undefined), 500, () => undefined);
      let settled = false;
      void bounded.then(() => (settled = true));
      await vi.advanceTimersByTimeAsync(499);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await expect(bounded).resolves.toBeUndefined();
      expect(vi.getTimerCount()).toBe(0);
    });

    it("rejects with what fallback() throws", async () => {
      const bounded = orElse(new Promise<number>(() => undefined), 500, () => {
        throw new Error("gave up");
      });
      const outcome = bounded.catch((err: unknown) => err);
      await vi.advanceTimersByTimeAsync(500);
      expect(await outcome).toEqual(new Error("gave up"));
    });
  });

  describe("settlesWithin", () => {
    it("is true when the promise resolves or rejects in time, and leaves no timer", async () => {
      await expect(settlesWithin(Promise.resolve("ok"), 1_000)).resolves.toBe(true);
      await expect(settlesWithin(Promise.reject(new Error("failed")), 1_000)).resolves.toBe(true);
      expect(vi.getTimerCount()).toBe(0);
    });

    it("is false when the promise is still pending at the deadline", async () => {
      const d = deferred<string>();
      const within = settlesWithin(d.promise, 1_000);
      await vi.advanceTimersByTimeAsync(999);
      expect(vi.getTimerCount()).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      await expect(within).resolves.toBe(false);
      d.resolve("too late");
      expect(vi.getTimerCount()).toBe(0);
    });
  });
});
