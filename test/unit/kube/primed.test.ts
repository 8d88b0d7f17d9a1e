import { describe, expect, it } from "vitest";
import { primeNamespaceReads } from "../../../src/kube/primed.js";
import type { KubePort } from "../../../src/kube/port.js";
import type { DiscoverySnapshot, NamespaceSnapshot } from "../../../src/kube/types.js";

/** A port that counts its reads: each answer names the call that made it. */
function countingPort(fail = false): { port: KubePort; calls: string[] } {
  const calls: string[] = [];
  const port = {
    discover: () => {
      calls.push("discover");
      const n = calls.length;
      return fail
        ? Promise.reject(new Error(`discovery ${String(n)} failed`))
        : Promise.resolve({ resources: [], failures: [], call: n } as unknown as DiscoverySnapshot);
    },
    getNamespace: (name: string) => {
      calls.push(`ns ${name}`);
      const n = calls.length;
      return fail
        ? Promise.reject(new Error(`read ${String(n)} failed`))
        : Promise.resolve({ name, call: n } as unknown as NamespaceSnapshot);
    },
    listNamespaces: () => {
      calls.push("list");
      return Promise.resolve([]);
    },
  } as unknown as KubePort;
  return { port, calls };
}

const callOf = (x: unknown): unknown => (x as { call: number }).call;

describe("primeNamespaceReads", () => {
  it("sends the namespace and discovery at once and hands each to its first caller", async () => {
    const { port, calls } = countingPort();
    const primed = primeNamespaceReads(port, "myapp");
    expect(calls).toEqual(["discover", "ns myapp"]);
    expect(callOf(await primed.getNamespace("myapp"))).toBe(2);
    expect(callOf(await primed.discover())).toBe(1);
    expect(calls).toEqual(["discover", "ns myapp"]);
    // Later calls read afresh, as does another namespace and every other method.
    expect(callOf(await primed.getNamespace("myapp"))).toBe(3);
    expect(callOf(await primed.discover())).toBe(4);
    expect(callOf(await primed.getNamespace("other"))).toBe(5);
    await primed.listNamespaces();
    expect(calls).toEqual(["discover", "ns myapp", "ns myapp", "discover", "ns other", "list"]);
  });

  it("leaves a namespace of another name to the port, and keeps the early read for its own", async () => {
    const { port, calls } = countingPort();
    const primed = primeNamespaceReads(port, "myapp");
    expect(callOf(await primed.getNamespace("myapp2"))).toBe(3);
    expect(callOf(await primed.getNamespace("myapp"))).toBe(2);
    expect(calls).toEqual(["discover", "ns myapp", "ns myapp2"]);
  });

  it("hands a failed early read to its first caller, and never leaves an unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const asked = primeNamespaceReads(countingPort(true).port, "myapp");
      await expect(asked.getNamespace("myapp")).rejects.toThrow("read 2 failed");
      await expect(asked.discover()).rejects.toThrow("discovery 1 failed");
      // Nobody asks (the line turned out to need something else): the failures stay quiet.
      primeNamespaceReads(countingPort(true).port, "myapp");
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});
