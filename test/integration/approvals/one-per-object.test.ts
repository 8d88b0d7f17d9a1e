/**
 * One request per object (one truth per thing, docs/design.md), against real Redis: the object's
 * open-request pointer is checked and set in the create script, so concurrent `finalize`s of one
 * object make one request and the others link to it; the pointer holds while the request is PENDING,
 * APPROVED or EXECUTING, and every terminal transition (DENIED, CANCELLED, EXPIRED,
 * DONE/FAILED/STALE) clears it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type ApprovalRequest } from "../../../src/requests/model.js";
import { actionSubject, describeAction } from "../../../src/requests/action-kinds.js";
import { slackErrorMessage } from "../../../src/slack/blocks/error-text.js";
import { messageLink } from "../../../src/slack/links.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import {
  alice,
  bob,
  carol,
  CHANNEL,
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

function setup(): Harness {
  harness = createHarness();
  seedIngress(harness);
  return harness;
}

async function rejection(promise: Promise<unknown>): Promise<UnstuckError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof UnstuckError) return err;
    throw err;
  }
  throw new Error("expected a rejection");
}

const openKey = (h: Harness, r: ApprovalRequest): string =>
  `${h.prefix}:approvals:open:${actionSubject(r.action)}`;

describe("one request per object", () => {
  it("10 concurrent finalize of one object make exactly one request; the other 9 name it", async () => {
    const h = setup();
    const requesters = [alice, carol];
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => requestRemoval(h, requesters[i % 2])),
    );
    const created = results.filter((r) => r.status === "fulfilled");
    expect(created).toHaveLength(1);
    const id = (created[0] as PromiseFulfilledResult<ApprovalRequest>).value.id;
    for (const r of results.filter((x) => x.status === "rejected")) {
      const err = r.reason as UnstuckError;
      expect(err.code).toBe(ErrorCode.Conflict);
      expect(err.details.existingRequestId).toBe(id);
    }
    expect((await h.workflow.listPending()).map((r) => r.id)).toEqual([id]);
  });

  it("a second finalize links to the pending request's message", async () => {
    const h = setup();
    const first = await requestRemoval(h, alice);
    await h.workflow.attachMessage(first.id, { channel: CHANNEL, ts: "1700000000.000100" });
    const err = await rejection(requestRemoval(h, carol));
    expect(err.code).toBe(ErrorCode.Conflict);
    expect(err.message).toContain("already pending");
    expect(err.message).toContain(first.id);
    // The engine's words are plain; Slack's name the requester and link the message.
    expect(err.message).toContain(`by ${alice.userId}); its message is ${CHANNEL}:1700000000.000100;`);
    expect(err.message).not.toMatch(/<@|slack\.com/);
    const slack = slackErrorMessage(err);
    expect(slack).toBe(
      `A request to remove finalizer ingress.k8s.aws/resources from ${describeAction(first.action)} is already pending (request ${first.id} by <@${alice.userId}>); ${messageLink({ channel: CHANNEL, ts: "1700000000.000100" })} vote on that one, or cancel it before asking again.`,
    );
    expect(messageLink({ channel: CHANNEL, ts: "1700000000.000100" })).toBe(
      `https://slack.com/archives/${CHANNEL}/p1700000000000100`,
    );
    expect(err.details).toMatchObject({ existingChannel: CHANNEL, existingTs: "1700000000.000100" });
  });

  it("an approved request still holds the object: no leftover second request to run STALE later", async () => {
    const h = setup();
    const first = await requestRemoval(h, alice);
    await h.workflow.vote(first.id, bob, "approve", { channelId: CHANNEL });
    expect((await h.workflow.get(first.id)).state).toBe("APPROVED");
    const err = await rejection(requestRemoval(h, carol));
    expect(err.code).toBe(ErrorCode.Conflict);
    expect(err.message).toContain("already approved and being applied");
    expect(slackErrorMessage(err)).toContain(`(request ${first.id} by <@${alice.userId}>);`);
    expect(err.details.existingRequestId).toBe(first.id);
    // Executing: still held; finished: the pointer is cleared and the object free again.
    const claim = await h.store.claimExecution(first.id, "tok-1", h.clock.now());
    expect(claim.status).toBe("CLAIMED");
    expect((await rejection(requestRemoval(h, carol))).details.existingRequestId).toBe(first.id);
    await h.store.finishExecution(
      first.id,
      "tok-1",
      "DONE",
      { outcome: "done", message: "removed", at: h.clock.now().toISOString() },
      h.clock.now(),
    );
    expect(await h.redis.exists(openKey(h, first))).toBe(0);
    const next = await requestRemoval(h, carol);
    expect(next.id).not.toBe(first.id);
  });

  it("denied, cancelled and expired requests clear the pointer at once", async () => {
    const h = setup();
    const denied = await requestRemoval(h, alice);
    expect(await h.redis.get(openKey(h, denied))).toBe(denied.id);
    await h.workflow.vote(denied.id, bob, "deny", { channelId: CHANNEL });
    expect(await h.redis.exists(openKey(h, denied))).toBe(0);

    const cancelled = await requestRemoval(h, alice);
    await h.workflow.cancel(cancelled.id, alice);
    expect(await h.redis.exists(openKey(h, cancelled))).toBe(0);

    const expired = await requestRemoval(h, alice);
    h.clock.advance(1801 * 1000);
    const swept = await h.workflow.expireDue();
    expect(swept.map((r) => r.id)).toEqual([expired.id]);
    expect(await h.redis.exists(openKey(h, expired))).toBe(0);

    const fresh = await requestRemoval(h, alice);
    expect(fresh.state).toBe("PENDING");
  });

  it("clearing never removes a pointer that names a newer request", async () => {
    const h = setup();
    const first = await requestRemoval(h, alice);
    // As if the pointer had moved on (the first request's record outlived it): the first's end leaves it.
    await h.redis.set(openKey(h, first), "req-someone-else");
    await h.workflow.cancel(first.id, alice);
    expect(await h.redis.get(openKey(h, first))).toBe("req-someone-else");
  });
});
