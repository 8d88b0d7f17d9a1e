import { describe, expect, it } from "vitest";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import { ChannelGate, channelNameMatches } from "../../../src/slack/channel-gate.js";

describe("channel-name patterns", () => {
  it("`*` matches any run of characters over the whole name, case-insensitively; nothing else is special", () => {
    expect(channelNameMatches("inc-2031-db-down", "inc-*")).toBe(true);
    expect(channelNameMatches("INC-7", "inc-*")).toBe(true);
    expect(channelNameMatches("incident-42", "inc-*")).toBe(false);
    expect(channelNameMatches("team-inc-1", "inc-*")).toBe(false);
    expect(channelNameMatches("incident-42", "incident-*")).toBe(true);
    expect(channelNameMatches("ops", "ops")).toBe(true);
    expect(channelNameMatches("ops2", "ops")).toBe(false);
    expect(channelNameMatches("a.b", "a*b")).toBe(true);
    expect(channelNameMatches("axb", "a.b")).toBe(false);
  });
});

describe("ChannelGate", () => {
  const names: Record<string, string> = { C1: "inc-1-db", C2: "random", C3: "incident-9" };
  const counting = (): { lookup: (id: string) => Promise<string | undefined>; calls: string[] } => {
    const calls: string[] = [];
    return {
      calls,
      lookup: (id) => {
        calls.push(id);
        return Promise.resolve(names[id]);
      },
    };
  };

  it("allows everything when neither ids nor patterns are set, without a lookup", async () => {
    const { lookup, calls } = counting();
    const gate = new ChannelGate({ ids: [], patterns: [], lookup });
    expect(gate.open).toBe(true);
    expect(await gate.allowed("C2")).toBe(true);
    expect(calls).toEqual([]);
  });

  it("allows listed ids without a lookup, and by name pattern otherwise", async () => {
    const { lookup, calls } = counting();
    const gate = new ChannelGate({ ids: ["C0FIXED"], patterns: ["inc-*", "incident-*"], lookup });
    expect(await gate.allowed("C0FIXED")).toBe(true);
    expect(calls).toEqual([]);
    expect(await gate.allowed("C1")).toBe(true);
    expect(await gate.allowed("C3")).toBe(true);
    expect(await gate.allowed("C2")).toBe(false);
    expect(await gate.allowed("C9")).toBe(false); // no name
    expect(await gate.allowed(undefined)).toBe(false);
  });

  it("ids only: no lookup at all, unlisted refused", async () => {
    const { lookup, calls } = counting();
    const gate = new ChannelGate({ ids: ["C0FIXED"], patterns: [], lookup });
    expect(await gate.allowed("C1")).toBe(false);
    expect(calls).toEqual([]);
  });

  it("caches a name for the TTL, then reads it again (a renamed channel is judged by its new name)", async () => {
    let now = 1_000_000;
    const current: Record<string, string> = { C1: "inc-1" };
    const calls: string[] = [];
    const gate = new ChannelGate({
      ids: [],
      patterns: ["inc-*"],
      ttlMs: 60_000,
      now: () => now,
      lookup: (id) => {
        calls.push(id);
        return Promise.resolve(current[id]);
      },
    });
    expect(await gate.allowed("C1")).toBe(true);
    current["C1"] = "archive-inc-1";
    now += 59_000;
    expect(await gate.allowed("C1")).toBe(true);
    expect(calls).toEqual(["C1"]);
    now += 2_000;
    expect(await gate.allowed("C1")).toBe(false);
    expect(calls).toEqual(["C1", "C1"]);
  });

  it("a failed lookup allows nothing and is not cached", async () => {
    let fail = true;
    const calls: string[] = [];
    const gate = new ChannelGate({
      ids: [],
      patterns: ["inc-*"],
      lookup: (id) => {
        calls.push(id);
        return fail ? Promise.reject(new Error("missing_scope")) : Promise.resolve("inc-2");
      },
    });
    await expect(gate.allowed("C1")).rejects.toThrow("missing_scope");
    fail = false;
    expect(await gate.allowed("C1")).toBe(true);
    expect(calls).toEqual(["C1", "C1"]);
  });

  it("a call's own lookup is used when given; the cache is shared", async () => {
    const own = counting();
    const gate = new ChannelGate({ ids: [], patterns: ["inc-*"] });
    expect(await gate.allowed("C1", own.lookup)).toBe(true);
    // Without a lookup of its own, the cached name still answers.
    expect(await gate.allowed("C1")).toBe(true);
    expect(own.calls).toEqual(["C1"]);
  });

  it("says how to enable a channel, naming both settings", async () => {
    const gate = new ChannelGate({
      ids: ["C0FIXED"],
      patterns: ["inc-*"],
      lookup: () => Promise.resolve("x"),
    });
    expect(gate.howToEnable("C2")).toBe(
      "To enable it, add C2 to UNSTUCK_CHANNELS, or give the channel a name matching UNSTUCK_CHANNEL_PATTERNS (inc-*).",
    );
    expect(new ChannelGate({ ids: ["C0FIXED"], patterns: [] }).howToEnable("C2")).toContain(
      "UNSTUCK_CHANNEL_PATTERNS (e.g. inc-*)",
    );
    const err = await gate.assertAllowed("C2").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnstuckError);
    expect((err as UnstuckError).code).toBe(ErrorCode.ChannelNotAllowed);
  });
});
