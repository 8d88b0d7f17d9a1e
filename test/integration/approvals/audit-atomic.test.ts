/**
 * Each state transition and its audit entry are written by the same Lua script: the entry exists
 * exactly when the transition happened, whatever the process does next. Tested on real Redis by
 * driving the store directly — nobody calls `AuditLog.append` — and by refused transitions, which
 * must leave no entry.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { AuditEntry } from "../../../src/audit/entry.js";
import {
  alice,
  bob,
  carol,
  createHarness,
  requestRemoval,
  seedIngress,
  type Harness,
} from "./helpers/harness.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function template(requestId: string, event: string, before?: string): AuditEntry {
  return {
    at: new Date().toISOString(),
    actor: { kind: "user", userId: bob.userId, teamId: bob.teamId },
    event,
    requestId,
    action: "remove-finalizer",
    target: "Ingress myapp/myapp-worker-ingress",
    ...(before !== undefined ? { before } : {}),
  };
}

/** A request Bob approved, and the template of its executor's claim entry. */
async function approvedRequest(h: Harness) {
  seedIngress(h);
  const req = await requestRemoval(h, alice);
  await h.workflow.vote(req.id, bob, "approve");
  const claimT = {
    ...template(req.id, "execution.claimed", "APPROVED"),
    actor: { kind: "system", component: "executor" } as const,
  };
  return { req, claimT };
}

describe("transitions write their own audit entries", () => {
  it("a vote's entry is in the stream with the state the script reached, though nothing appended it", async () => {
    harness = createHarness({ approvalsRequired: 2 });
    const h = harness;
    seedIngress(h);
    const req = await requestRemoval(h, alice);
    const before = (await h.audit.forRequest(req.id)).length;
    // Straight to the store, as if the process died right after the script returned.
    const first = await h.store.vote(
      req.id,
      bob,
      "approve",
      h.clock.now(),
      undefined,
      template(req.id, "vote.approve", "PENDING"),
    );
    expect(first.state).toBe("PENDING");
    const second = await h.store.vote(
      req.id,
      carol,
      "approve",
      h.clock.now(),
      undefined,
      template(req.id, "vote.approve", "PENDING"),
    );
    expect(second.state).toBe("APPROVED");
    const entries = (await h.audit.forRequest(req.id)).slice(before);
    expect(entries.map((e) => [e.event, e.after, e.result])).toEqual([
      ["vote.approve", "PENDING", "1/2 approvals"],
      ["vote.approve", "APPROVED", "2/2 approvals"],
    ]);
    expect(entries[0]?.actor).toEqual({ kind: "user", userId: bob.userId, teamId: bob.teamId });
  });

  it("a refused vote (self-approval, double vote) writes no entry", async () => {
    harness = createHarness({ approvalsRequired: 2 });
    const h = harness;
    seedIngress(h);
    const req = await requestRemoval(h, alice);
    const before = (await h.audit.forRequest(req.id)).length;
    const self = await h.store.vote(
      req.id,
      alice,
      "approve",
      h.clock.now(),
      undefined,
      template(req.id, "vote.approve"),
    );
    expect(self.status).toBe("SELF_APPROVAL");
    await h.store.vote(req.id, bob, "approve", h.clock.now(), undefined, template(req.id, "vote.approve"));
    const again = await h.store.vote(
      req.id,
      bob,
      "approve",
      h.clock.now(),
      undefined,
      template(req.id, "vote.approve"),
    );
    expect(again.status).toBe("ALREADY_VOTED");
    expect((await h.audit.forRequest(req.id)).slice(before).map((e) => e.event)).toEqual(["vote.approve"]);
  });

  it("a vote that finds the request past its expiry records the expiry, not the vote", async () => {
    harness = createHarness({ ttlSeconds: 60 });
    const h = harness;
    seedIngress(h);
    const req = await requestRemoval(h, alice);
    const late = new Date(Date.parse(req.expiresAt) + 1000);
    const out = await h.store.vote(
      req.id,
      bob,
      "approve",
      late,
      undefined,
      template(req.id, "vote.approve", "PENDING"),
    );
    expect(out.status).toBe("EXPIRED");
    const last = (await h.audit.forRequest(req.id)).at(-1);
    expect([last?.event, last?.after]).toEqual(["request.expired", "EXPIRED"]);
  });

  it("claim and finish: claimed, resumed by a second attempt, outcome — one entry each, in order", async () => {
    harness = createHarness();
    const h = harness;
    const { req, claimT } = await approvedRequest(h);
    expect((await h.store.claimExecution(req.id, "t1", h.clock.now(), claimT)).status).toBe("CLAIMED");
    // The first attempt dies; a second takes over.
    expect((await h.store.claimExecution(req.id, "t2", h.clock.now(), claimT)).status).toBe("RESUMED");
    // The dead attempt's token no longer finishes anything: no entry.
    const stale = await h.store.finishExecution(
      req.id,
      "t1",
      "DONE",
      { outcome: "done", message: "x", at: new Date().toISOString() },
      h.clock.now(),
      { ...claimT, event: "execution.done" },
    );
    expect(stale.status).toBe("TOKEN_MISMATCH");
    await h.store.finishExecution(
      req.id,
      "t2",
      "DONE",
      { outcome: "done", message: "removed", at: new Date().toISOString() },
      h.clock.now(),
      { ...claimT, event: "execution.done", before: "EXECUTING", result: "removed" },
    );
    const tail = (await h.audit.forRequest(req.id)).filter((e) => e.event.startsWith("execution."));
    expect(tail.map((e) => [e.event, e.before, e.after])).toEqual([
      ["execution.enqueued", "APPROVED", "APPROVED"],
      ["execution.claimed", "APPROVED", "EXECUTING"],
      ["execution.resumed", "EXECUTING", "EXECUTING"],
      ["execution.done", "EXECUTING", "DONE"],
    ]);
    expect(tail[2]?.result).toBe("attempt 2 takes over from an interrupted attempt");
  });

  it("a finish sent again by the attempt that made it answers as the first time and writes nothing more", async () => {
    harness = createHarness();
    const h = harness;
    const { req, claimT } = await approvedRequest(h);
    expect((await h.store.claimExecution(req.id, "t1", h.clock.now(), claimT)).status).toBe("CLAIMED");
    const finish = (token: string, state: "DONE" | "FAILED") =>
      h.store.finishExecution(
        req.id,
        token,
        state,
        { outcome: state === "DONE" ? "done" : "failed", message: "removed", at: new Date().toISOString() },
        h.clock.now(),
        { ...claimT, event: `execution.${state.toLowerCase()}`, before: "EXECUTING" },
        { cluster: "prod" },
      );
    expect(await finish("t1", "DONE")).toEqual({ status: "OK", state: "DONE" });
    // Its answer lost with the connection, the client sends the same script again.
    expect(await finish("t1", "DONE")).toEqual({ status: "OK", state: "DONE" });
    // Another attempt, or another outcome, is still refused.
    expect(await finish("t2", "DONE")).toEqual({ status: "INVALID_STATE", state: "DONE" });
    expect(await finish("t1", "FAILED")).toEqual({ status: "INVALID_STATE", state: "DONE" });
    const events = (await h.audit.forRequest(req.id)).map((e) => e.event);
    expect(events.filter((e) => e === "execution.done")).toHaveLength(1);
    expect(events).not.toContain("execution.failed");
    expect(await h.store.followUpsDue("prod", new Date(Date.now() + 60_000))).toEqual([req.id]);
  });

  it("the sweep's expiries are written by the expiring script, one per request it expired", async () => {
    harness = createHarness({ ttlSeconds: 60 });
    const h = harness;
    seedIngress(h);
    const req = await requestRemoval(h, alice);
    h.clock.advance(61_000);
    const expired = await h.workflow.expireDue();
    expect(expired.map((r) => r.id)).toEqual([req.id]);
    // Run again: nothing left to expire, no second entry.
    await h.workflow.expireDue();
    const entries = (await h.audit.forRequest(req.id)).filter((e) => e.event === "request.expired");
    expect(entries).toHaveLength(1);
    expect(entries[0]?.after).toBe("EXPIRED");
  });
});
