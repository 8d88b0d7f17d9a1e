/**
 * One writer per status message across processes: two worker processes' status reporters (each with
 * its own held-back progress, as `createWorkers` builds them) over one real Redis and one recording
 * Slack. A progress line one process still holds never lands after the result the other has shown.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sequencedReporter } from "../../../src/jobs/status-writer.js";
import { coalescedReporter, type ThreadReporter } from "../../../src/jobs/waits.js";
import { connect, deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../helpers/redis.js";
import { startTcpProxy, viaProxy } from "../../helpers/tcp-proxy.js";
import { pause } from "../../helpers/eventually.js";

const CHANNEL = "C0INCIDENT";
const TS = "1770888000.000200";
const prefix = uniquePrefix("status-writer");
let redis: Redis;

beforeAll(() => {
  redis = connect();
});
afterAll(async () => {
  await deleteKeysWithPrefix(redis, prefix);
  await redis.quit();
});

/** A Slack that records each edit as it lands, and can answer one edit late. */
function slack() {
  const landed: string[] = [];
  let slowNext: { ms: number } | undefined;
  const reporter: ThreadReporter = {
    post: () => Promise.resolve({ ts: TS }),
    async update(_channel, _ts, text) {
      const slow = slowNext;
      slowNext = undefined;
      if (slow !== undefined) await new Promise((r) => setTimeout(r, slow.ms));
      landed.push(text);
    },
  };
  return { reporter, landed, slowNext: (ms: number) => (slowNext = { ms }) };
}

describe("status edits from two worker processes", () => {
  it("a progress line held back by one process is dropped once another has shown the result", async () => {
    const s = slack();
    const process = (key: string) =>
      coalescedReporter(sequencedReporter(s.reporter, redis, `${prefix}:${key}`), { windowMs: 300 });
    // Both processes write to the same Redis prefix, as a release's worker replicas do.
    const a = process("one");
    const b = process("one");
    await a.update(CHANNEL, TS, "⏳ answers 502 (check 1)");
    // Within A's window: held back for its end.
    await a.update(CHANNEL, TS, "⏳ answers 502 (check 3)");
    // The wait's next check ran on B and found the result.
    await b.update(CHANNEL, TS, "✅ answers 200", { final: true });
    await pause(700);
    expect(s.landed).toEqual(["⏳ answers 502 (check 1)", "✅ answers 200"]);
  });

  it("an older progress edit never lands after a newer one, and two edits never cross in flight", async () => {
    const s = slack();
    const a = sequencedReporter(s.reporter, redis, `${prefix}:two`);
    const b = sequencedReporter(s.reporter, redis, `${prefix}:two`);
    const t0 = Date.now();
    // A's edit is slow in Slack; B's newer one waits for it instead of landing first and being overwritten.
    s.slowNext(300);
    const first = a.update(CHANNEL, TS, "⏳ check 4", { at: t0 + 4 });
    await pause(50);
    const second = b.update(CHANNEL, TS, "⏳ check 5", { at: t0 + 5 });
    await Promise.all([first, second]);
    // An edit written before the last one shown (a process that was behind) is dropped.
    await a.update(CHANNEL, TS, "⏳ check 3", { at: t0 + 3 });
    expect(s.landed).toEqual(["⏳ check 4", "⏳ check 5"]);
  });

  it("two results may both be sent (either landing last shows the result); progress after them is dropped", async () => {
    const s = slack();
    const a = sequencedReporter(s.reporter, redis, `${prefix}:three`);
    const b = sequencedReporter(s.reporter, redis, `${prefix}:three`);
    s.slowNext(200);
    const first = a.update(CHANNEL, TS, "✅ done", { final: true });
    await pause(30);
    // The same result said again by a re-run of the check does not wait for the first to be answered.
    const started = Date.now();
    await b.update(CHANNEL, TS, "✅ done", { final: true });
    expect(Date.now() - started).toBeLessThan(150);
    await first;
    await a.update(CHANNEL, TS, "⏳ check 9", { at: Date.now() + 1_000 });
    expect(s.landed).toEqual(["✅ done", "✅ done"]);
  });

  it("an edit whose lease answer was lost takes the lease it holds as its own and is sent", async () => {
    // Redis runs the lease script; the connection drops before its answer and the client sends it again.
    let lost = 0;
    const proxy = await startTcpProxy(REDIS_URL, {
      loseAnswer: () => (chunk) => {
        if (lost > 0 || !chunk.toString("latin1").includes(`${prefix}:lost:status-edit:`)) return false;
        lost++;
        return true;
      },
    });
    const through = new Redis(viaProxy(REDIS_URL, proxy), { maxRetriesPerRequest: null });
    // The cut connection is reported, then made again.
    through.on("error", () => undefined);
    try {
      const s = slack();
      // A lease far longer than the wait: an edit that took its own lease for another's gives up.
      const a = sequencedReporter(s.reporter, through, `${prefix}:lost`, { leaseMs: 60_000, waitMs: 1_000 });
      await a.update(CHANNEL, TS, "⏳ answers 502 (check 9)");
      await a.update(CHANNEL, TS, "✅ answers 200", { final: true });
      expect(lost).toBe(1);
      expect(s.landed).toEqual(["⏳ answers 502 (check 9)", "✅ answers 200"]);
    } finally {
      through.disconnect();
      await proxy.close();
    }
  });
});
