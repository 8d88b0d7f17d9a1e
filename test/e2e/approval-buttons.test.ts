/**
 * Approval buttons end to end: signed clicks over HTTP, the real workflow on real Redis, the seed incident in
 * the Kubernetes simulator, and the request message in the fake Slack. Refusals answer only the clicker and
 * leave the message and the request as they were.
 */
import { finalizerRemoval } from "../../src/requests/model.js";
import { afterEach, describe, expect, it } from "vitest";
import { postSigned } from "../sim/slack/index.js";
import {
  APPROVE,
  BOB,
  buttonIds,
  CANCEL,
  CAROL,
  CHANNEL,
  DENY,
  DETAILS,
  MALLORY,
  REQUESTER,
  startFixture,
  TEAM,
  type Fixture,
  type FixtureOptions,
} from "./approval-fixture.js";
import { eventuallyTrue } from "../helpers/eventually.js";

const fixtures: Fixture[] = [];
afterEach(async () => {
  while (fixtures.length > 0) await fixtures.pop()?.stop();
});

async function setup(options: FixtureOptions = {}): Promise<Fixture> {
  const f = await startFixture(options);
  fixtures.push(f);
  return f;
}

function expectEphemeral(body: Record<string, unknown>, contains: string): void {
  expect(body["response_type"]).toBe("ephemeral");
  expect(body["replace_original"]).toBe(false);
  expect(String(body["text"])).toContain(contains);
}

describe("approval request message and buttons", () => {
  it("the card says what changes, why, what it leaves and who asks in five lines; Details answers the rest privately", async () => {
    const f = await setup();
    const { request, ts } = await f.postRequest();
    const m = f.message(ts);
    const card = JSON.stringify(m.blocks);
    expect(card).toContain("PENDING");
    expect(card).toContain(
      "*Changes*: remove `ingress.k8s.aws/resources` from Ingress `myapp/myapp-worker-ingress`",
    );
    expect(card).toContain(`*Why*: ${request.evidence[0] ?? "?"}`);
    expect(card).toContain(`*Leaves behind*: ${request.cleanupPlan[0] ?? "?"}`);
    expect(card).toContain(`*Asked by* <@${REQUESTER.userId}>`);
    expect(card).toContain(request.expiresAt);
    // The binding and the patch are not on the card: they are one click away.
    expect(card).not.toContain("/metadata/finalizers");
    expect(buttonIds(m.blocks).sort()).toEqual([APPROVE, CANCEL, DENY, DETAILS].sort());

    const sent = await f.click(DETAILS, request.id, CAROL, ts);
    const details = (await f.answer(sent)).body;
    expect(details["response_type"]).toBe("ephemeral");
    expect(details["replace_original"]).toBe(false);
    const all = JSON.stringify(details["blocks"]);
    expect(all).toContain(finalizerRemoval(request.action).precondition.resourceVersion);
    expect(all).toContain("/metadata/finalizers");
    for (const line of [...request.evidence, ...request.cleanupPlan])
      expect(all).toContain(JSON.stringify(line.slice(0, 30)).slice(1, -1));
    // Nothing changed for anyone else, and the request is as it was.
    expect(f.message(ts).updates).toBe(0);
    expect(f.h.fake.thread(CHANNEL, ts)).toEqual([]);
    expect((await f.workflow.get(request.id)).state).toBe("PENDING");

    // A click carrying the id from another channel is refused, and shown nothing.
    const elsewhere = await f.h.action({
      actionId: DETAILS,
      value: request.id,
      userId: CAROL.userId,
      teamId: CAROL.teamId,
      channelId: "C0ELSEWHERE",
      messageTs: ts,
    });
    const refused = (await f.answer(elsewhere)).body;
    expect(String(refused["text"])).toMatch(/^:no_entry/);
    expect(JSON.stringify(refused)).not.toContain("/metadata/finalizers");
  });

  it("refuses the requester's own approval ephemerally and changes nothing", async () => {
    const f = await setup();
    const { request, ts } = await f.postRequest();
    const sent = await f.click(APPROVE, request.id, REQUESTER, ts);
    expect(sent.status).toBe(200);
    expectEphemeral((await f.answer(sent)).body, "someone else has to approve");
    const after = await f.workflow.get(request.id);
    expect(after.state).toBe("PENDING");
    expect(after.votes).toEqual([]);
    expect(f.message(ts).updates).toBe(0);
    expect(f.patches()).toHaveLength(0);
  });

  it("refuses someone who is not an approver", async () => {
    const f = await setup();
    const { request, ts } = await f.postRequest();
    const sent = await f.click(APPROVE, request.id, MALLORY, ts);
    expectEphemeral((await f.answer(sent)).body, "not on the approver list");
    expect((await f.workflow.get(request.id)).state).toBe("PENDING");
    expect(f.message(ts).updates).toBe(0);
  });

  it("accepts an approver who is in an approver user group (usergroups.users.list)", async () => {
    const f = await setup({
      approvers: ["S0ONCALL"],
      usergroups: { S0ONCALL: ["U0GROUPIE"] },
      worker: false,
    });
    const { request, ts } = await f.postRequest();
    await f.click(APPROVE, request.id, { userId: "U0GROUPIE", teamId: TEAM }, ts);
    const approved = await f.settled(request.id, ["APPROVED"]);
    expect(approved.votes.map((v) => v.voter.userId)).toEqual(["U0GROUPIE"]);
    expect(f.h.fake.calls().some((c) => c.method === "usergroups.users.list")).toBe(true);
    // The message follows the state and has no buttons once votes are closed.
    const m = await waitForMessage(f, ts, (text) => text.includes("APPROVED"));
    expect(buttonIds(m.blocks)).toEqual([DETAILS]);
  });

  it("deny → a form with an optional reason → DENIED: the reason in the thread and the audit", async () => {
    const f = await setup();
    const { request, ts } = await f.postRequest();
    // Someone who may not vote is told so in the form; nothing changes.
    const refused = await f.deny(request.id, MALLORY, ts, "not mine to say");
    expect(refused.text).toContain("not on the approver list");
    expect((await f.workflow.get(request.id)).state).toBe("PENDING");
    expect(f.message(ts).updates).toBe(0);

    const sent = await f.deny(request.id, BOB, ts, "the ENI is released in minutes <!channel>; wait for it");
    expect(sent.status).toBe(200);
    const denied = await f.settled(request.id, ["DENIED"]);
    expect(denied.votes).toHaveLength(1);
    expect(denied.votes[0]?.reason).toBe("the ENI is released in minutes <!channel>; wait for it");
    const m = await waitForMessage(f, ts, (text) => text.includes("DENIED"));
    expect(buttonIds(m.blocks)).toEqual([DETAILS]);
    // Who denied and why is said once, in the thread, the denier's words escaped; the card points there.
    expect(JSON.stringify(m.blocks)).toContain("What happened is in the thread.");
    expect(JSON.stringify(m.blocks)).not.toContain("the ENI is released");
    await eventuallyTrue(() =>
      f.h.fake
        .thread(CHANNEL, ts)

        .some(
          (r) =>
            r.text ===
            `<@${BOB.userId}> denied: “the ENI is released in minutes &lt;!channel&gt;; wait for it”.`,
        ),
    );
    const audit = await f.audit.forRequest(request.id);
    expect(audit.find((e) => e.event === "vote.deny")?.result).toBe(
      "0/1 approvals; why: the ENI is released in minutes <!channel>; wait for it",
    );
    expect(f.patches()).toHaveLength(0);
  });

  it("deny without a reason is a deny, said as before", async () => {
    const f = await setup();
    const { request, ts } = await f.postRequest();
    await f.deny(request.id, BOB, ts);
    const denied = await f.settled(request.id, ["DENIED"]);
    expect(denied.votes[0]?.reason).toBeUndefined();
    await eventuallyTrue(() =>
      f.h.fake.thread(CHANNEL, ts).some((r) => r.text === `<@${BOB.userId}> denied.`),
    );
  });

  it("cancel: refused for someone else, CANCELLED for the requester", async () => {
    const f = await setup();
    const { request, ts } = await f.postRequest();
    const byBob = await f.click(CANCEL, request.id, BOB, ts);
    expectEphemeral((await f.answer(byBob)).body, "Only the person who made the request");
    expect((await f.workflow.get(request.id)).state).toBe("PENDING");
    expect(f.message(ts).updates).toBe(0);

    await f.click(CANCEL, request.id, REQUESTER, ts);
    await f.settled(request.id, ["CANCELLED"]);
    const m = await waitForMessage(f, ts, (text) => text.includes("CANCELLED"));
    expect(buttonIds(m.blocks)).toEqual([DETAILS]);
  });

  it("expiry: the sweep on an advanced clock turns the message into EXPIRED without buttons", async () => {
    const f = await setup({ ttlSeconds: 600 });
    const { request, ts } = await f.postRequest();
    f.clock.advance(601_000);
    const expired = await f.workflow.expireDue();
    expect(expired.map((r) => r.id)).toEqual([request.id]);
    const m = await waitForMessage(f, ts, (text) => text.includes("EXPIRED"));
    expect(buttonIds(m.blocks)).toEqual([DETAILS]);
    // A late click is refused and changes nothing.
    const late = await f.click(APPROVE, request.id, BOB, ts);
    expectEphemeral((await f.answer(late)).body, "EXPIRED");
    expect(f.patches()).toHaveLength(0);
  });

  it("stale target: the Ingress changed after the request → STALE, the thread says what changed, no patch applied", async () => {
    const f = await setup();
    const { request, ts } = await f.postRequest();
    const cur = f.sim.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress")!;
    const edited = f.sim.store.update({
      ...cur,
      metadata: { ...cur.metadata, labels: { ...(cur.metadata?.labels ?? {}), resynced: "true" } },
    });
    await f.click(APPROVE, request.id, BOB, ts);
    const stale = await f.settled(request.id);
    expect(stale.state).toBe("STALE");
    const newVersion = edited.metadata?.resourceVersion ?? "?";
    // The card says STALE; what changed (both resourceVersions) is said once, in the thread.
    const m = await waitForMessage(f, ts, (text) => text.includes("STALE"));
    expect(buttonIds(m.blocks)).toEqual([DETAILS]);
    const was = finalizerRemoval(request.action).precondition.resourceVersion;
    await eventuallyTrue(() =>
      f.h.fake
        .thread(CHANNEL, ts)
        .some((r) => (r.text ?? "").includes(newVersion) && (r.text ?? "").includes(was)),
    );
    expect(f.patches().filter((p) => p.status < 300)).toHaveLength(0);
    expect(
      f.sim.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress")?.metadata
        ?.finalizers,
    ).toEqual(["ingress.k8s.aws/resources"]);
  });

  it("a double click counts one vote", async () => {
    const f = await setup({ approvalsRequired: 2 });
    const { request, ts } = await f.postRequest();
    const [a, b] = await Promise.all([
      f.click(APPROVE, request.id, BOB, ts),
      f.click(APPROVE, request.id, BOB, ts),
    ]);
    // Exactly one of the two is refused; waiting for it also means both were handled.
    const refusal = await f.h.fake.waitForResponse((r) => r.id === a.responseId || r.id === b.responseId);
    expectEphemeral(refusal.body, "already voted");
    const after = await f.workflow.get(request.id);
    expect(after.state).toBe("PENDING");
    expect(after.votes.map((v) => v.voter.userId)).toEqual([BOB.userId]);
    await waitForMessage(f, ts, (text) => text.includes("1/2"));
    await f.click(APPROVE, request.id, CAROL, ts);
    await f.settled(request.id, ["APPROVED", "EXECUTING", "DONE"]);
    expect(f.h.fake.responses().filter((r) => r.id === a.responseId || r.id === b.responseId)).toHaveLength(
      1,
    );
  });

  it("an unsigned or forged click is answered 401 and changes nothing", async () => {
    const f = await setup();
    const { request, ts } = await f.postRequest();
    const body = new URLSearchParams({
      payload: JSON.stringify({
        type: "block_actions",
        user: { id: BOB.userId, team_id: TEAM },
        team: { id: TEAM },
        channel: { id: CHANNEL },
        container: { type: "message", message_ts: ts, channel_id: CHANNEL },
        actions: [{ type: "button", action_id: APPROVE, block_id: "b", value: request.id }],
        response_url: f.h.fake.responseUrl("forged"),
      }),
    }).toString();
    const unsigned = await fetch(f.h.eventsUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
    });
    expect(unsigned.status).toBe(401);
    const forged = await postSigned(f.h.eventsUrl, "not-the-signing-secret", body);
    expect(forged.status).toBe(401);
    const old = await postSigned(
      f.h.eventsUrl,
      f.h.signingSecret,
      body,
      Math.floor(Date.now() / 1000) - 3600,
    );
    expect(old.status).toBe(401);

    // A signed, refused click afterwards is the barrier: had a forged one run, its effects would be visible.
    const barrier = await f.click(APPROVE, request.id, REQUESTER, ts);
    await f.answer(barrier);
    const after = await f.workflow.get(request.id);
    expect(after.state).toBe("PENDING");
    expect(after.votes).toEqual([]);
    expect(f.message(ts).updates).toBe(0);
    expect(f.h.fake.responses().filter((r) => r.id === "forged")).toEqual([]);
  });

  it("a tampered request id in the button value is refused and changes nothing", async () => {
    const f = await setup();
    const { request, ts } = await f.postRequest();
    const last = request.id.at(-1) === "a" ? "b" : "a";
    const tampered = [`${request.id.slice(0, -1)}${last}`, `${request.id}x`, "../../req:*", ""];
    for (const value of tampered) {
      const sent = await f.click(APPROVE, value, BOB, ts);
      expectEphemeral((await f.answer(sent)).body, "No such approval request");
    }
    const after = await f.workflow.get(request.id);
    expect(after.state).toBe("PENDING");
    expect(after.votes).toEqual([]);
    expect(f.message(ts).updates).toBe(0);
    expect(f.patches()).toHaveLength(0);
  });
});

/** Poll the fake Slack until the request message's current text matches. */
async function waitForMessage(f: Fixture, ts: string, match: (text: string) => boolean) {
  const text = () => {
    const m = f.message(ts);
    return `${m.text ?? ""}\n${JSON.stringify(m.blocks)}`;
  };
  await eventuallyTrue(() => match(text())).catch(() => {
    throw new Error(`message never matched; it is now:\n${text()}`);
  });
  return f.message(ts);
}
