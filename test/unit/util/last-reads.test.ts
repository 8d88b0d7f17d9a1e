import { describe, expect, it } from "vitest";
import { LastReads } from "../../../src/util/last-reads.js";

describe("LastReads", () => {
  it("keeps what `keep` accepts, and forgets a key remembered with nothing", () => {
    const last = new LastReads<number>((n) => n % 2 === 0);
    last.remember("a", [1, 2, 3, 4]);
    expect(last.of("a")).toEqual([2, 4]);
    expect(last.of("b")).toEqual([]);
    last.remember("a", [5]);
    expect(last.of("a")).toEqual([]);
  });

  it("is bounded: the most recently remembered keys, the first reads of each", () => {
    const last = new LastReads<string>(() => true, 100, 60);
    for (let i = 0; i < 150; i++) last.remember(`ns-${String(i)}`, [`read-${String(i)}`]);
    expect(last.of("ns-0")).toEqual([]);
    expect(last.of("ns-49")).toEqual([]);
    expect(last.of("ns-50")).toEqual(["read-50"]);
    expect(last.of("ns-149")).toEqual(["read-149"]);
    // Remembered again, a key is the most recent: the next ones push out others first.
    last.remember("ns-50", ["read-50"]);
    last.remember("ns-new", ["read-new"]);
    expect(last.of("ns-50")).toEqual(["read-50"]);
    expect(last.of("ns-51")).toEqual([]);
    const many = Array.from({ length: 100 }, (_, i) => `many-${String(i)}`);
    last.remember("big", many);
    expect(last.of("big")).toEqual(many.slice(0, 60));
  });
});
