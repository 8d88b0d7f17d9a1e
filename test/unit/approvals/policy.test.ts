import { describe, expect, it } from "vitest";
import { ApprovalPolicy, type SlackDirectory } from "../../../src/approvals/policy.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";

const alice = { userId: "UALICE", teamId: "T1" };
const bob = { userId: "UBOB", teamId: "T1" };
const carol = { userId: "WCAROL", teamId: "T2" };

function directory(groups: Record<string, string[]>) {
  const calls: string[] = [];
  const dir: SlackDirectory = {
    usergroupMembers: (id) => {
      calls.push(id);
      return Promise.resolve(groups[id] ?? []);
    },
  };
  return { dir, calls };
}

async function codeOf(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (err) {
    if (err instanceof UnstuckError) return err.code;
    throw err;
  }
  return "none";
}

describe("ApprovalPolicy", () => {
  it("allows requests only in allow-listed channels (any channel when the list is empty)", async () => {
    const strict = new ApprovalPolicy({ channels: ["COPS"], approvers: [], now: () => new Date() });
    expect(await codeOf(() => strict.assertMayRequest("COPS"))).toBe("none");
    expect(await codeOf(() => strict.assertMayRequest("CGENERAL"))).toBe(ErrorCode.ChannelNotAllowed);
    const open = new ApprovalPolicy({ channels: [], approvers: [], now: () => new Date() });
    expect(await codeOf(() => open.assertMayRequest("CGENERAL"))).toBe("none");
  });

  it("rejects approver entries that are not Slack ids, and groups without a directory", () => {
    expect(() => new ApprovalPolicy({ channels: [], approvers: ["@bob"], now: () => new Date() })).toThrow(
      /UNSTUCK_APPROVERS/,
    );
    expect(() => new ApprovalPolicy({ channels: [], approvers: ["SONCALL"], now: () => new Date() })).toThrow(
      /user groups/,
    );
  });

  it("never lets the requester vote, even when listed as approver", async () => {
    const p = new ApprovalPolicy({
      channels: [],
      approvers: [alice.userId, bob.userId],
      now: () => new Date(),
    });
    expect(await codeOf(p.assertMayVote(alice, { requester: alice }))).toBe(ErrorCode.SelfApproval);
    expect(await codeOf(p.assertMayVote(bob, { requester: alice }))).toBe("none");
    expect(await codeOf(p.assertMayVote(carol, { requester: alice }))).toBe(ErrorCode.NotApprover);
  });

  it("resolves user groups, caching them briefly for display only", async () => {
    let now = new Date("2026-02-12T09:00:00Z");
    const { dir, calls } = directory({ SONCALL: [bob.userId, carol.userId, "not-a-user"] });
    const p = new ApprovalPolicy({
      channels: [],
      approvers: ["SONCALL"],
      directory: dir,
      now: () => now,
      groupCacheSeconds: 60,
    });
    expect([...(await p.approverIds())].sort()).toEqual([bob.userId, carol.userId]);
    await p.approverIds();
    expect(calls).toEqual(["SONCALL"]);
    // A vote looks the group up live, whatever the cache holds.
    expect(await codeOf(p.assertMayVote(carol, { requester: alice }))).toBe("none");
    expect(calls).toEqual(["SONCALL", "SONCALL"]);
    now = new Date(now.getTime() + 61_000);
    await p.approverIds();
    expect(calls).toEqual(["SONCALL", "SONCALL", "SONCALL"]);
  });

  it("refuses a vote from someone removed from the group since the cache was filled", async () => {
    const groups: Record<string, string[]> = { SONCALL: [bob.userId, carol.userId] };
    const p = new ApprovalPolicy({
      channels: [],
      approvers: ["SONCALL"],
      directory: { usergroupMembers: (g) => Promise.resolve(groups[g] ?? []) },
      now: () => new Date(),
      groupCacheSeconds: 600,
    });
    expect((await p.approverIds()).has(carol.userId)).toBe(true);
    groups["SONCALL"] = [bob.userId];
    expect(await codeOf(p.assertMayVote(carol, { requester: alice }))).toBe(ErrorCode.NotApprover);
    // The live answer also refreshes what is displayed.
    expect((await p.approverIds()).has(carol.userId)).toBe(false);
  });

  it("refuses a vote with a clear message when the live membership lookup fails", async () => {
    let failing = false;
    const p = new ApprovalPolicy({
      channels: [],
      approvers: ["SONCALL"],
      directory: {
        usergroupMembers: () =>
          failing ? Promise.reject(new Error("ratelimited")) : Promise.resolve([bob.userId]),
      },
      now: () => new Date(),
    });
    await p.approverIds(); // fills the display cache
    failing = true;
    const err = await p.assertMayVote(bob, { requester: alice }).then(
      () => undefined,
      (e: unknown) => e as UnstuckError,
    );
    expect(err?.code).toBe(ErrorCode.Unreachable);
    expect(err?.message).toMatch(/could not check the approver group/);
  });

  it("counts eligible approvers without the requester", async () => {
    const { dir } = directory({ SONCALL: [alice.userId, bob.userId] });
    const p = new ApprovalPolicy({
      channels: [],
      approvers: ["SONCALL", alice.userId],
      directory: dir,
      now: () => new Date(),
    });
    expect(await p.eligibleApprovers(alice)).toEqual([bob.userId]);
    expect(await codeOf(p.assertApprovable(alice, 1))).toBe("none");
    expect(await codeOf(p.assertApprovable(alice, 2))).toBe(ErrorCode.Config);
    expect(await p.eligibleApprovers(carol)).toEqual([alice.userId, bob.userId]);
  });
});
