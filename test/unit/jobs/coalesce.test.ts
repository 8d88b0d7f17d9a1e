/**
 * A wait's status message: progress edits close together collapse into one edit carrying the
 * latest state; the final state (the wait's result) is never held back nor overwritten.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { coalescedReporter, statusMessage, type ThreadReporter } from "../../../src/jobs/waits.js";
import { unrecordedPosts } from "../../../src/jobs/post-once.js";

function recording() {
  const edits: string[] = [];
  const posts: string[] = [];
  const reporter: ThreadReporter = {
    post: (_c, _t, text) => {
      posts.push(text);
      return Promise.resolve({ ts: "1.1" });
    },
    update: (_c, _ts, text) => {
      edits.push(text);
      return Promise.resolve();
    },
  };
  return { reporter, edits, posts };
}

describe("coalesced status edits", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("five progress edits within the window make two edits: the first, then the latest", async () => {
    const r = recording();
    const c = coalescedReporter(r.reporter, { windowMs: 1_000 });
    for (let i = 1; i <= 5; i++) await c.update("C", "1.1", `progress ${i}`);
    expect(r.edits).toEqual(["progress 1"]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(r.edits).toEqual(["progress 1", "progress 5"]);
    // Nothing more is pending.
    await vi.advanceTimersByTimeAsync(5_000);
    expect(r.edits).toEqual(["progress 1", "progress 5"]);
  });

  it("the final state is sent at once and no held-back progress lands over it", async () => {
    const r = recording();
    const c = coalescedReporter(r.reporter, { windowMs: 1_000 });
    await statusMessage(c, unrecordedPosts, "k", { channel: "C", threadTs: "1.0", statusTs: "1.1" }, "p1");
    await statusMessage(c, unrecordedPosts, "k", { channel: "C", threadTs: "1.0", statusTs: "1.1" }, "p2");
    await statusMessage(
      c,
      unrecordedPosts,
      "k",
      { channel: "C", threadTs: "1.0", statusTs: "1.1" },
      "✅ done",
      true,
    );
    expect(r.edits).toEqual(["p1", "✅ done"]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(r.edits).toEqual(["p1", "✅ done"]);
  });

  it("edits further apart than the window each go out; other messages are not held back", async () => {
    const r = recording();
    const c = coalescedReporter(r.reporter, { windowMs: 1_000 });
    await c.update("C", "1.1", "a1");
    await c.update("C", "2.2", "b1");
    await vi.advanceTimersByTimeAsync(1_500);
    await c.update("C", "1.1", "a2");
    expect(r.edits).toEqual(["a1", "b1", "a2"]);
  });

  it("posts pass through", async () => {
    const r = recording();
    const c = coalescedReporter(r.reporter);
    await expect(c.post("C", "1.0", "hello")).resolves.toEqual({ ts: "1.1" });
    expect(r.posts).toEqual(["hello"]);
  });
});
