/**
 * The engine publishes a filed request through a messenger (the surface's half): posted and attached;
 * not posted and therefore cancelled; a vote cast between the post and the attach repainted at once.
 */
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { publishRequest, type RequestMessenger } from "../../../src/approvals/publish.js";
import type { ApprovalRequest, MessageRef } from "../../../src/requests/model.js";
import {
  alice,
  bob,
  CHANNEL,
  createHarness,
  requestRemoval,
  seedIngress,
  type Harness,
} from "./helpers/harness.js";

const log = pino({ level: "silent" });

/** Records what the engine asked the surface to post and repaint. */
function messenger(publish: RequestMessenger["publish"]): RequestMessenger & {
  readonly updates: { message: MessageRef; request: ApprovalRequest }[];
} {
  const updates: { message: MessageRef; request: ApprovalRequest }[] = [];
  return {
    updates,
    publish,
    update(message, request) {
      updates.push({ message, request });
      return Promise.resolve();
    },
  };
}

describe("publishing a request", () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it("attaches the posted message to the record, with nothing to repaint", async () => {
    h = createHarness();
    seedIngress(h);
    const request = await requestRemoval(h);
    const m = messenger(() => Promise.resolve({ ts: "1700000000.000100" }));
    const outcome = await publishRequest(h.workflow, m, request, log);
    expect(outcome.posted).toBe(true);
    const stored = await h.workflow.getVerified(request.id);
    expect(stored.ok && stored.request.message).toEqual({
      channel: CHANNEL,
      ts: outcome.posted ? outcome.ts : "",
    });
    expect(m.updates).toEqual([]);
  });

  it("cancels a request no approver could see, naming the platform's error", async () => {
    h = createHarness();
    seedIngress(h);
    const request = await requestRemoval(h);
    const m = messenger(() => Promise.resolve({ error: "not_in_channel" }));
    const outcome = await publishRequest(h.workflow, m, request, log);
    expect(outcome).toEqual({ posted: false, cancelled: true, slackError: "not_in_channel" });
    const stored = await h.workflow.getVerified(request.id);
    expect(stored.ok && stored.request.state).toBe("CANCELLED");
    expect(stored.ok && stored.request.message).toBeUndefined();
  });

  it("repaints at once a vote cast between the post and the attach", async () => {
    h = createHarness({ approvalsRequired: 2, approvers: [bob.userId, "UCAROL"] });
    seedIngress(h);
    const request = await requestRemoval(h, alice);
    const m = messenger(async () => {
      // Bob votes while Slack is still answering the post.
      await h.workflow.vote(request.id, bob, "approve");
      return { ts: "1700000001.000200" };
    });
    const outcome = await publishRequest(h.workflow, m, request, log);
    expect(outcome).toEqual({ posted: true, ts: "1700000001.000200" });
    expect(m.updates).toHaveLength(1);
    expect(m.updates[0]?.message).toEqual({ channel: CHANNEL, ts: "1700000001.000200" });
    expect(m.updates[0]?.request.votes.map((v) => v.voter.userId)).toEqual([bob.userId]);
  });
});
