import { describe, expect, it } from "vitest";
import { singleFlight } from "../../../src/util/single-flight.js";

/** A promise settled from outside. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("singleFlight", () => {
  it("joins a run of the same key in flight that started within the window", async () => {
    let clock = 0;
    const flight = singleFlight<string, number>(1_000, () => clock);
    let runs = 0;
    const d = deferred<number>();
    const work = () => {
      runs++;
      return d.promise;
    };
    const a = flight.run("ns", work);
    clock = 1_000;
    const b = flight.run("ns", work);
    expect(runs).toBe(1);
    d.resolve(7);
    expect(await Promise.all([a, b])).toEqual([7, 7]);
  });

  it("starts a new run for another key, past the window, or once the run settled", async () => {
    let clock = 0;
    const flight = singleFlight<string, number>(1_000, () => clock);
    let runs = 0;
    const pending = deferred<number>();
    const slow = () => {
      runs++;
      return pending.promise;
    };
    void flight.run("a", slow);
    void flight.run("b", slow);
    expect(runs).toBe(2);
    clock = 1_001;
    void flight.run("a", slow);
    expect(runs).toBe(3);
    pending.resolve(1);
    await pending.promise;
    await Promise.resolve();
    expect(flight.size).toBe(0);
    clock = 1_002;
    await flight.run("a", () => Promise.resolve(2));
    expect(flight.size).toBe(0);
  });

  it("shares a failure with every joined caller and keeps nothing after it", async () => {
    const flight = singleFlight<string, number>(1_000, () => 0);
    const d = deferred<number>();
    const a = flight.run("ns", () => d.promise);
    const b = flight.run("ns", () => Promise.resolve(0));
    d.reject(new Error("API server unreachable"));
    await expect(a).rejects.toThrow("API server unreachable");
    await expect(b).rejects.toThrow("API server unreachable");
    expect(flight.size).toBe(0);
    expect(await flight.run("ns", () => Promise.resolve(3))).toBe(3);
  });
});
