import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { isConnectionError, OUTAGE_REMINDER_MS, RedisOutage } from "../../../src/wiring/redis-outage.js";

function recorder(): {
  outage: RedisOutage;
  lines: () => Record<string, unknown>[];
  advance: (ms: number) => void;
} {
  const out: Record<string, unknown>[] = [];
  let now = 1_000_000;
  const log = pino(
    { level: "debug" },
    { write: (l: string) => void out.push(JSON.parse(l) as Record<string, unknown>) },
  );
  return {
    outage: new RedisOutage(log, () => now),
    lines: () => out,
    advance: (ms) => {
      now += ms;
    },
  };
}

const refused = (): Error =>
  Object.assign(new Error("connect ECONNREFUSED redis.internal"), { code: "ECONNREFUSED" });

describe("RedisOutage", () => {
  it("says an outage once, reminds every few minutes with the errors in between, and says its end", () => {
    const { outage, lines, advance } = recorder();
    outage.failed("connection", refused());
    for (let i = 0; i < 50; i++) {
      advance(1_000);
      outage.failed(`worker w${String(i % 3)}`, new Error("Connection is closed."));
    }
    expect(lines().map((l) => l["msg"])).toEqual(["redis unreachable"]);
    expect(lines()[0]?.["source"]).toBe("connection");
    advance(OUTAGE_REMINDER_MS);
    outage.failed("connection", refused());
    expect(lines().map((l) => l["msg"])).toEqual(["redis unreachable", "redis still unreachable"]);
    expect(lines()[1]).toMatchObject({ errors: 51, downSeconds: 350 });
    advance(10_000);
    outage.recovered();
    outage.recovered();
    expect(lines().map((l) => l["msg"])).toEqual([
      "redis unreachable",
      "redis still unreachable",
      "redis connection restored",
    ]);
    expect(lines()[2]).toMatchObject({ level: 30, downSeconds: 360 });
    // The next outage is a new one.
    outage.failed("connection", refused());
    expect(lines().at(-1)?.["msg"]).toBe("redis unreachable");
  });

  it("logs an error that is not about the connection every time, outage or not", () => {
    const { outage, lines } = recorder();
    outage.failed("connection", refused());
    outage.failed("worker actions", new Error("Missing lock for job 12. moveToFinished"));
    outage.failed("worker actions", new Error("Missing lock for job 13. moveToFinished"));
    expect(lines().map((l) => l["msg"])).toEqual([
      "redis unreachable",
      "redis client error",
      "redis client error",
    ]);
  });

  it("tells connection errors by code or by ioredis's own messages", () => {
    expect(isConnectionError(refused())).toBe(true);
    expect(isConnectionError(Object.assign(new Error("read"), { code: "ECONNRESET" }))).toBe(true);
    expect(isConnectionError(new Error("Connection is closed."))).toBe(true);
    expect(isConnectionError(new Error("ERR unknown command 'FOO'"))).toBe(false);
    expect(isConnectionError(new Error("Missing lock for job 1"))).toBe(false);
  });
});
