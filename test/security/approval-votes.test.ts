/**
 * The smaller holes in approvals, each tried through the signed HTTP path against the approval runtime on the
 * simulators: a vote from another workspace or another channel, a group member removed since the display
 * cache was filled, a failing membership lookup, a replayed `finalize` while a request is pending, request
 * timestamps in the future, and a reason shorter than the minimum. Each is refused and changes nothing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { blockActionsBody, postSigned, viewSubmissionBody } from "../sim/slack/index.js";
import { FINALIZE_SUBMIT_CALLBACK, FinalizeModalField } from "../../src/slack/finalize-form.js";
import { ErrorCode, UnstuckError } from "../../src/errors.js";
import { eventually } from "../helpers/eventually.js";
import {
  APPROVE,
  BOB,
  CAROL,
  CHANNEL,
  REQUESTER,
  startFixture,
  WORKER_INGRESS,
  type Fixture,
  type FixtureOptions,
} from "../e2e/approval-fixture.js";

const REASON = "Cause confirmed by the diagnosis; recovery first, clean-up after.";

const fixtures: Fixture[] = [];
afterEach(async () => {
  while (fixtures.length > 0) await fixtures.pop()?.stop();
});

async function setup(options: FixtureOptions = {}): Promise<Fixture> {
  const f = await startFixture(options);
  fixtures.push(f);
  return f;
}

async function ephemeralText(f: Fixture, sent: Awaited<ReturnType<Fixture["click"]>>): Promise<string> {
  return String((await f.answer(sent)).body["text"]);
}

async function expectUntouched(f: Fixture, id: string): Promise<void> {
  const after = await f.workflow.get(id);
  expect(after.state).toBe("PENDING");
  expect(after.votes).toEqual([]);
  expect(f.patches()).toHaveLength(0);
}

async function rejection(p: Promise<unknown>): Promise<UnstuckError> {
  return p.then(
    () => {
      throw new Error("expected a refusal");
    },
    (err: unknown) => err as UnstuckError,
  );
}

describe("a vote counts only from the request's workspace and channel", () => {
  it("a vote from another team is refused", async () => {
    const f = await setup();
    const { request, ts } = await f.postRequest();
    const sent = await f.click(APPROVE, request.id, { userId: BOB.userId, teamId: "T0OTHER" }, ts);
    expect(await ephemeralText(f, sent)).toMatch(/another Slack workspace/);
    await expectUntouched(f, request.id);
  });

  it("a vote cast from another channel is refused", async () => {
    const f = await setup();
    const { request, ts } = await f.postRequest();
    const sent = await f.h.action({
      actionId: APPROVE,
      value: request.id,
      userId: BOB.userId,
      teamId: BOB.teamId,
      channelId: "C0ELSEWHERE",
      messageTs: ts,
    });
    // Outside the allowed channels the middleware already refuses; the workflow refuses any channel other
    // than the request's own, allowed or not.
    expect(await ephemeralText(f, sent)).toMatch(/not enabled/);
    const err = await rejection(f.workflow.vote(request.id, BOB, "approve", { channelId: "C0ALLOWED2" }));
    expect(err.code).toBe(ErrorCode.Forbidden);
    expect(err.message).toMatch(/in the channel where it was asked/);
    await expectUntouched(f, request.id);
  });

  it("the channel is bound into the stored, signed vote", async () => {
    const f = await setup({ approvalsRequired: 2 });
    const { request, ts } = await f.postRequest();
    await f.click(APPROVE, request.id, BOB, ts);
    const after = await eventually(async () => {
      const r = await f.workflow.get(request.id);
      return r.votes.length === 1 ? r : undefined;
    });
    expect(after.votes[0]).toMatchObject({ requestId: request.id, channelId: CHANNEL });
    expect(after.votes[0]?.mac).toBeTruthy();
  });
});

describe("user-group membership is checked live at vote time", () => {
  it("a member removed from the approver group since the display cache was filled cannot approve", async () => {
    const f = await setup({ approvers: ["S0ONCALL"], usergroups: { S0ONCALL: [BOB.userId, CAROL.userId] } });
    const { request, ts } = await f.postRequest(); // the request's eligibility check fills the cache
    f.h.fake.setUsergroup("S0ONCALL", [BOB.userId]);
    const sent = await f.click(APPROVE, request.id, CAROL, ts);
    expect(await ephemeralText(f, sent)).toMatch(/not on the approver list/);
    await expectUntouched(f, request.id);
  });

  it("a failed membership lookup refuses the vote with a clear message", async () => {
    const f = await setup({ approvers: ["S0ONCALL"], usergroups: { S0ONCALL: [BOB.userId, CAROL.userId] } });
    const { request, ts } = await f.postRequest();
    f.h.fake.setFault("usergroups.users.list", { kind: "error", error: "ratelimited", times: 100 });
    const sent = await f.click(APPROVE, request.id, CAROL, ts);
    expect(await ephemeralText(f, sent)).toMatch(/could not check the approver group/);
    await expectUntouched(f, request.id);
  });
});

describe("one pending request per object", () => {
  it("a replayed finalize while a request is pending points to the existing request", async () => {
    const f = await setup();
    const { request } = await f.postRequest();
    const err = await rejection(
      f.createRemovalRequest({
        ...WORKER_INGRESS,
        finalizer: "ingress.k8s.aws/resources",
        reason: REASON,
        requester: CAROL,
        channelId: CHANNEL,
      }),
    );
    expect(err.code).toBe(ErrorCode.Conflict);
    expect(err.message).toContain(request.id);
    expect(err.message).toMatch(/already pending/);
    expect((await f.workflow.listPending()).map((r) => r.id)).toEqual([request.id]);
  });

  it("once that request is no longer pending, a new one may be made", async () => {
    const f = await setup({ worker: false });
    const { request } = await f.postRequest();
    await f.workflow.cancel(request.id, REQUESTER);
    const again = await f.createRemovalRequest({
      ...WORKER_INGRESS,
      finalizer: "ingress.k8s.aws/resources",
      reason: REASON,
      requester: REQUESTER,
      channelId: CHANNEL,
    });
    expect(again.id).not.toBe(request.id);
    expect(again.state).toBe("PENDING");
  });
});

describe("Slack request timestamps in the future are refused", () => {
  it("a signed click dated an hour ahead gets 401 and counts nothing; a small skew is accepted", async () => {
    const f = await setup();
    const { request, ts } = await f.postRequest();
    const body = blockActionsBody({
      actionId: APPROVE,
      value: request.id,
      userId: BOB.userId,
      teamId: BOB.teamId,
      channelId: CHANNEL,
      messageTs: ts,
      responseUrl: f.h.fake.responseUrl("future"),
    });
    const now = Math.floor(Date.now() / 1000);
    const future = await postSigned(f.h.eventsUrl, f.h.signingSecret, body, now + 3600);
    expect(future.status).toBe(401);
    await expectUntouched(f, request.id);

    const skewed = await postSigned(f.h.eventsUrl, f.h.signingSecret, body, now + 20);
    expect(skewed.status).toBe(200);
    expect((await f.settled(request.id)).state).toBe("DONE");
  });

  it("a slash command dated in the future gets 401", async () => {
    const f = await setup();
    const sent = await f.h.command("help", {}, { timestamp: Math.floor(Date.now() / 1000) + 600 });
    expect(sent.status).toBe(401);
  });
});

describe("the reason minimum is enforced by the server", () => {
  it("the workflow refuses a reason shorter than 10 characters, whatever the surface", async () => {
    const f = await setup();
    const err = await rejection(
      f.createRemovalRequest({
        ...WORKER_INGRESS,
        reason: "  too shrt ",
        requester: REQUESTER,
        channelId: CHANNEL,
      }),
    );
    expect(err.code).toBe(ErrorCode.BadInput);
    expect(err.message).toMatch(/at least 10 characters/);
    expect(await f.workflow.listPending()).toEqual([]);
  });

  it("a modal submission crafted with a 9-character reason is answered with a field error; no request", async () => {
    const f = await setup();
    const res = await postSigned(
      f.h.eventsUrl,
      f.h.signingSecret,
      viewSubmissionBody({
        callbackId: FINALIZE_SUBMIT_CALLBACK,
        privateMetadata: JSON.stringify({ target: WORKER_INGRESS, channelId: CHANNEL }),
        values: {
          [FinalizeModalField.Reason]: { [FinalizeModalField.Reason]: "123456789" },
          [FinalizeModalField.Finalizer]: { [FinalizeModalField.Finalizer]: null },
        },
        userId: REQUESTER.userId,
        teamId: REQUESTER.teamId,
      }),
    );
    expect(JSON.parse(res.text)).toMatchObject({
      response_action: "errors",
      errors: { [FinalizeModalField.Reason]: expect.stringMatching(/at least 10 characters/) as string },
    });
    expect(await f.workflow.listPending()).toEqual([]);
  });

  it("the slash command refuses a short reason", async () => {
    const f = await setup();
    const sent = await f.h.command('finalize ingress/myapp-worker-ingress -n myapp --reason "short"', {
      userId: REQUESTER.userId,
      teamId: REQUESTER.teamId,
      channelId: CHANNEL,
    });
    expect(sent.status).toBe(200);
    const answer = await f.h.fake.waitForResponse((r) => r.id === sent.responseId, 10_000);
    expect(String(answer.body["text"])).toMatch(/Say why/);
    expect(await f.workflow.listPending()).toEqual([]);
  });
});
