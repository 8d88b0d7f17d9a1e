import { describe, expect, it } from "vitest";
import { notedReads, readsOnce } from "../../../src/util/reads-once.js";

describe("readsOnce", () => {
  it("makes each distinct read once and shares its answer or failure", async () => {
    let calls = 0;
    const once = readsOnce();
    const read = once("get", (name: string) => {
      calls++;
      return name === "bad" ? Promise.reject(new Error("refused")) : Promise.resolve(`got ${name}`);
    });
    expect(await Promise.all([read("a"), read("a"), read("b")])).toEqual(["got a", "got a", "got b"]);
    await expect(read("bad")).rejects.toThrow("refused");
    await expect(read("bad")).rejects.toThrow("refused");
    expect(calls).toBe(3);
  });
});

describe("notedReads", () => {
  it("notes each distinct read once, in the order first noted", () => {
    const noted = notedReads<string>();
    noted.note("get", ["a"], "first a");
    noted.note("get", ["b"], "b");
    noted.note("get", ["a"], "second a");
    noted.note("list", ["a"], "list a");
    expect(noted.all()).toEqual(["first a", "b", "list a"]);
  });
});
