import { finalizerRemoval } from "../../../src/requests/model.js";
import { afterEach, describe, expect, it } from "vitest";
import type { SlackDirectory } from "../../../src/approvals/policy.js";
import { newRequestId } from "../../../src/requests/model.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import { INGRESS } from "./helpers/fake-kube.js";
import {
  alice,
  bob,
  carol,
  createHarness,
  dave,
  mallory,
  requestRemoval,
  seedIngress,
  type Harness,
  type HarnessOptions,
} from "./helpers/harness.js";

let harness: Harness | undefined;
function setup(options: HarnessOptions = {}): Harness {
  harness = createHarness(options);
  return harness;
}
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function rejection(promise: Promise<unknown>): Promise<UnstuckError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof UnstuckError) return err;
    throw err;
  }
  throw new Error("expected a rejection");
}

describe("creating a request", () => {
  it("freezes the object's resourceVersion and finalizers and builds a guarded patch", async () => {
    const h = setup();
    const obj = seedIngress(h, ["ingress.k8s.aws/resources", "example.com/other"]);
    const req = await requestRemoval(h, alice, { finalizer: "ingress.k8s.aws/resources" });
    expect(req.state).toBe("PENDING");
    expect(finalizerRemoval(req.action).precondition).toEqual({
      resourceVersion: obj.resourceVersion,
      finalizers: obj.finalizers,
    });
    expect(finalizerRemoval(req.action).remove).toEqual(["ingress.k8s.aws/resources"]);
    expect(finalizerRemoval(req.action).patch).toEqual([
      { op: "test", path: "/metadata/resourceVersion", value: obj.resourceVersion },
      { op: "test", path: "/metadata/finalizers", value: obj.finalizers },
      { op: "replace", path: "/metadata/finalizers", value: ["example.com/other"] },
    ]);
    expect(await h.workflow.get(req.id)).toEqual(req);
    expect(Date.parse(req.expiresAt) - Date.parse(req.createdAt)).toBe(1800 * 1000);
  });

  it("refuses a request for an object that does not exist", async () => {
    const h = setup();
    const err = await rejection(requestRemoval(h));
    expect(err.code).toBe(ErrorCode.NotFound);
    expect(err.message).toContain("myapp/myapp-worker-ingress");
    expect(await h.workflow.listPending()).toEqual([]);
  });

  it("refuses a finalizer the object does not carry", async () => {
    const h = setup();
    seedIngress(h);
    const err = await rejection(requestRemoval(h, alice, { finalizer: "not/there" }));
    expect(err.code).toBe(ErrorCode.BadInput);
  });

  it("refuses requests from channels outside the allow-list", async () => {
    const h = setup();
    seedIngress(h);
    const err = await rejection(
      h.workflow.requestFinalizerRemoval({
        type: INGRESS,
        namespace: "myapp",
        name: "myapp-worker-ingress",
        reason: "x",
        requester: alice,
        channelId: "CRANDOM",
      }),
    );
    expect(err.code).toBe(ErrorCode.ChannelNotAllowed);
  });

  it("refuses at creation when too few approvers other than the requester exist", async () => {
    const h = setup({ approvers: [alice.userId, bob.userId], approvalsRequired: 2 });
    seedIngress(h);
    const err = await rejection(requestRemoval(h, alice));
    expect(err.code).toBe(ErrorCode.Config);
    expect(err.details).toMatchObject({ required: 2, eligible: 1 });
    // The same configuration works for someone who is not on the list themselves.
    await expect(requestRemoval(h, carol)).resolves.toMatchObject({ state: "PENDING" });
  });
});

describe("voting", () => {
  it("refuses self-approval even when the requester is an approver", async () => {
    const h = setup({ approvers: [alice.userId, bob.userId] });
    seedIngress(h);
    const req = await requestRemoval(h, alice);
    const err = await rejection(h.workflow.vote(req.id, alice, "approve"));
    expect(err.code).toBe(ErrorCode.SelfApproval);
    // Another workspace id does not make the requester someone else.
    const err2 = await rejection(
      h.workflow.vote(req.id, { userId: alice.userId, teamId: "TOTHER" }, "approve"),
    );
    expect(err2.code).toBe(ErrorCode.SelfApproval);
    expect((await h.workflow.get(req.id)).state).toBe("PENDING");
  });

  it("refuses a non-approver", async () => {
    const h = setup();
    seedIngress(h);
    const req = await requestRemoval(h);
    const err = await rejection(h.workflow.vote(req.id, mallory, "approve"));
    expect(err.code).toBe(ErrorCode.NotApprover);
    expect((await h.workflow.get(req.id)).votes).toEqual([]);
  });

  it("resolves user-group approvers through the directory", async () => {
    const calls: string[] = [];
    const directory: SlackDirectory = {
      usergroupMembers: (group) => {
        calls.push(group);
        return Promise.resolve(group === "SONCALL" ? [carol.userId, dave.userId] : []);
      },
    };
    const h = setup({ approvers: ["SONCALL"], directory });
    seedIngress(h);
    const req = await requestRemoval(h);
    expect((await rejection(h.workflow.vote(req.id, bob, "approve"))).code).toBe(ErrorCode.NotApprover);
    const res = await h.workflow.vote(req.id, carol, "approve");
    expect(res.request.state).toBe("APPROVED");
    expect(res.transitioned).toBe(true);
    expect(h.enqueued.map((r) => r.id)).toEqual([req.id]);
    expect(calls.every((g) => g === "SONCALL")).toBe(true);
  });

  it("moves to DENIED on a deny and closes voting", async () => {
    const h = setup();
    seedIngress(h);
    const req = await requestRemoval(h);
    const res = await h.workflow.vote(req.id, bob, "deny");
    expect(res.request.state).toBe("DENIED");
    expect(res.request.votes).toMatchObject([{ voter: bob, decision: "deny" }]);
    const err = await rejection(h.workflow.vote(req.id, carol, "approve"));
    expect(err.code).toBe(ErrorCode.InvalidState);
    expect(h.enqueued).toEqual([]);
  });

  it("needs N distinct approvals and counts one vote per person", async () => {
    const h = setup({ approvalsRequired: 2 });
    seedIngress(h);
    const req = await requestRemoval(h);
    const first = await h.workflow.vote(req.id, bob, "approve");
    expect(first.request.state).toBe("PENDING");
    expect(first.transitioned).toBe(false);
    expect((await rejection(h.workflow.vote(req.id, bob, "approve"))).code).toBe(ErrorCode.AlreadyVoted);
    expect(h.enqueued).toEqual([]);
    const second = await h.workflow.vote(req.id, carol, "approve");
    expect(second.request.state).toBe("APPROVED");
    expect(h.enqueued).toHaveLength(1);
  });

  it("a double click by the same approver approves once", async () => {
    const h = setup();
    seedIngress(h);
    const req = await requestRemoval(h);
    const results = await Promise.allSettled([
      h.workflow.vote(req.id, bob, "approve"),
      h.workflow.vote(req.id, bob, "approve"),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(h.enqueued).toHaveLength(1);
    expect((await h.workflow.get(req.id)).votes).toHaveLength(1);
  });

  it("50 concurrent approvals from several approvers enqueue exactly one execution", async () => {
    const h = setup({ approvalsRequired: 2 });
    seedIngress(h);
    const req = await requestRemoval(h);
    const voters = [bob, carol, dave];
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => h.workflow.vote(req.id, voters[i % voters.length]!, "approve")),
    );
    const transitions = results.filter((r) => r.status === "fulfilled" && r.value.transitioned);
    expect(transitions).toHaveLength(1);
    expect(h.enqueued).toHaveLength(1);
    const final = await h.workflow.get(req.id);
    expect(final.state).toBe("APPROVED");
    expect(final.votes.length).toBe(2);
    expect(new Set(final.votes.map((v) => v.voter.userId)).size).toBe(2);
    for (const r of results) {
      if (r.status === "rejected") {
        expect([ErrorCode.AlreadyVoted, ErrorCode.InvalidState]).toContain((r.reason as UnstuckError).code);
      }
    }
  });

  it("refuses tampered and unknown request ids", async () => {
    const h = setup();
    seedIngress(h);
    const req = await requestRemoval(h);
    for (const id of [newRequestId(), `${req.id}x`, "../../etc", "*", req.id.toUpperCase(), ""]) {
      const err = await rejection(h.workflow.vote(id, bob, "approve"));
      expect(err.code).toBe(ErrorCode.NotFound);
    }
    expect((await h.workflow.get(req.id)).state).toBe("PENDING");
    expect(h.enqueued).toEqual([]);
  });
});

describe("cancel and expiry", () => {
  it("lets only the requester cancel, and only while pending", async () => {
    const h = setup();
    seedIngress(h);
    const req = await requestRemoval(h);
    expect((await rejection(h.workflow.cancel(req.id, bob))).code).toBe(ErrorCode.Forbidden);
    const cancelled = await h.workflow.cancel(req.id, alice);
    expect(cancelled.state).toBe("CANCELLED");
    expect((await rejection(h.workflow.cancel(req.id, alice))).code).toBe(ErrorCode.InvalidState);
    expect((await rejection(h.workflow.vote(req.id, bob, "approve"))).code).toBe(ErrorCode.InvalidState);
    expect(await h.workflow.listPending()).toEqual([]);
  });

  it("expires pending requests in the sweep and refuses late votes", async () => {
    const h = setup({ ttlSeconds: 600 });
    seedIngress(h);
    const early = await requestRemoval(h);
    h.clock.advance(300_000);
    // Another object: one object has at most one pending request.
    h.fake.putObject(INGRESS, "myapp", "myapp-api-ingress", {
      finalizers: ["ingress.k8s.aws/resources"],
      deleting: true,
    });
    const later = await requestRemoval(h, carol, { name: "myapp-api-ingress" });
    expect((await h.workflow.listPending()).map((r) => r.id)).toEqual([early.id, later.id]);

    h.clock.advance(300_000); // `early` is now exactly at its expiry
    const swept = await h.workflow.expireDue();
    expect(swept.map((r) => r.id)).toEqual([early.id]);
    expect(swept[0]?.state).toBe("EXPIRED");
    expect(await h.workflow.expireDue()).toEqual([]);
    expect((await h.workflow.listPending()).map((r) => r.id)).toEqual([later.id]);
    expect((await rejection(h.workflow.vote(early.id, bob, "approve"))).code).toBe(ErrorCode.InvalidState);

    // A vote that arrives after expiry but before the sweep expires the request itself.
    h.clock.advance(300_000);
    expect((await rejection(h.workflow.vote(later.id, bob, "approve"))).code).toBe(ErrorCode.Expired);
    expect((await h.workflow.get(later.id)).state).toBe("EXPIRED");
    expect(h.enqueued).toEqual([]);
  });
});

describe("sweep hygiene", () => {
  it("unlists pending-set members that are not request ids, and still expires the real ones", async () => {
    const h = setup({ ttlSeconds: 600 });
    seedIngress(h);
    const req = await requestRemoval(h);
    const pendingKey = `${h.prefix}:approvals:pending`;
    await h.redis.zadd(pendingKey, 0, "not-an-id", 0, "../../etc");
    h.clock.advance(600_000);
    expect((await h.workflow.expireDue()).map((r) => r.id)).toEqual([req.id]);
    expect(await h.redis.zrange(pendingKey, 0, "-1")).toEqual([]); // ioredis 6 types zrange stop as string | Buffer
  });
});

describe("audit", () => {
  it("records every transition with who, what and before/after", async () => {
    const h = setup({ approvalsRequired: 2 });
    seedIngress(h);
    const req = await requestRemoval(h);
    await h.workflow.vote(req.id, bob, "approve");
    await h.workflow.vote(req.id, carol, "approve");
    const entries = await h.audit.forRequest(req.id);
    expect(entries.map((e) => [e.event, e.before, e.after])).toEqual([
      ["request.created", undefined, "PENDING"],
      ["vote.approve", "PENDING", "PENDING"],
      ["vote.approve", "PENDING", "APPROVED"],
      ["execution.enqueued", "APPROVED", "APPROVED"],
    ]);
    expect(entries[0]?.actor).toEqual({ kind: "user", userId: alice.userId, teamId: alice.teamId });
    expect(entries[2]?.actor).toEqual({ kind: "user", userId: carol.userId, teamId: carol.teamId });
    expect(entries.every((e) => e.target === "Ingress myapp/myapp-worker-ingress")).toBe(true);
    expect(entries.every((e) => e.action === "remove-finalizer")).toBe(true);

    // The object is held until the approved request ends (one request per object); then a new one.
    await h.store.claimExecution(req.id, "tok-audit", h.clock.now());
    await h.store.finishExecution(
      req.id,
      "tok-audit",
      "DONE",
      { outcome: "done", message: "removed", at: h.clock.now().toISOString() },
      h.clock.now(),
    );
    const other = await requestRemoval(h);
    await h.workflow.cancel(other.id, alice);
    const latest = await h.audit.latest(1);
    expect(latest[0]).toMatchObject({ event: "request.cancelled", requestId: other.id, after: "CANCELLED" });
  });

  it("mirrors entries to the audit channel without blocking on it", async () => {
    const h = setup();
    const posted: string[] = [];
    const { AuditLog } = await import("../../../src/audit/log.js");
    const { formatAuditEntry } = await import("../../../src/render/audit-text.js");
    const mirrored = new AuditLog(h.redis, {
      key: `${h.prefix}:audit-mirrored`,
      mirror: {
        postEntry: (entry) => {
          posted.push(formatAuditEntry(entry));
          return Promise.reject(new Error("slack down"));
        },
      },
    });
    const id = await mirrored.append({
      at: new Date().toISOString(),
      actor: { kind: "user", userId: bob.userId, teamId: bob.teamId },
      event: "vote.approve",
      requestId: "r1",
      action: "remove-finalizer",
      target: "Ingress myapp/x",
      before: "PENDING",
      after: "APPROVED",
    });
    expect(id).toMatch(/^\d+-\d+$/);
    expect(posted).toHaveLength(1);
    expect(posted[0]).toContain(
      "<@UBOB> vote.approve remove-finalizer Ingress myapp/x [r1] (PENDING → APPROVED)",
    );
    expect(await mirrored.latest(5)).toHaveLength(1);
  });
});

describe("notifier", () => {
  it("is told about each transition so the Slack message can follow", async () => {
    const h = setup();
    seedIngress(h);
    const req = await requestRemoval(h);
    await h.workflow.attachMessage(req.id, { channel: "COPS", ts: "1700000000.000100" });
    await h.workflow.vote(req.id, bob, "approve");
    expect(h.notifier.updates.at(-1)).toMatchObject({
      id: req.id,
      state: "APPROVED",
      message: { channel: "COPS", ts: "1700000000.000100" },
    });
    expect(h.notifier.replies.at(-1)).toBe("<@UBOB> approved.");
  });
});
