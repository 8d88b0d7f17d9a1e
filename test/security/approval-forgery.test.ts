/**
 * Approvals forged through Redis, against the approval runtime on the simulators (real Redis, the Kubernetes
 * simulator through the real adapter, BullMQ and the actions worker, the Bolt app over HTTP against the fake
 * Slack). Whoever can write to Redis can set any field; none of that must reach the cluster. Each attack
 * ends refused (TAMPERED, "failed verification"), with no PATCH reaching the simulator for the victim object,
 * an `approval.tampered` audit entry and, when the request has a message, a line in its thread that is also
 * broadcast to the channel, and the request message repainted TAMPERED with no buttons.
 */
import { finalizerRemoval } from "../../src/requests/model.js";
import { webApi } from "@slack/bolt";
import { afterEach, describe, expect, it } from "vitest";
import type { ApprovalRequest, Vote } from "../../src/requests/model.js";
import { renderApprovalRequest } from "../../src/slack/blocks/approval.js";
import { eventually } from "../helpers/eventually.js";
import {
  APPROVE,
  BOB,
  CAROL,
  CHANNEL,
  REQUESTER,
  startFixture,
  type Fixture,
  type FixtureOptions,
} from "../e2e/approval-fixture.js";

/** A live Ingress (not being deleted) whose finalizer guards a load balancer still in use. */
const VICTIM = {
  resource: "ingresses",
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  namespace: "payments",
  name: "payments-api",
} as const;
const VICTIM_PATH = "/apis/networking.k8s.io/v1/namespaces/payments/ingresses/payments-api";
const FINALIZER = "ingress.k8s.aws/resources";
const REASON = "Cause confirmed by the diagnosis; recovery first, clean-up after.";

const fixtures: Fixture[] = [];
afterEach(async () => {
  while (fixtures.length > 0) await fixtures.pop()?.stop();
});

async function setup(options: FixtureOptions = {}): Promise<Fixture> {
  const f = await startFixture(options);
  fixtures.push(f);
  f.sim.store.create({
    apiVersion: VICTIM.apiVersion,
    kind: VICTIM.kind,
    metadata: { name: VICTIM.name, namespace: VICTIM.namespace, finalizers: [FINALIZER] },
    spec: { ingressClassName: "alb" },
  });
  return f;
}

/** A request for the live victim, posted in the channel like the runtime posts one. */
async function requestVictim(f: Fixture): Promise<{ request: ApprovalRequest; ts: string }> {
  const request = await f.createRemovalRequest({
    ...VICTIM,
    finalizer: FINALIZER,
    reason: REASON,
    requester: REQUESTER,
    channelId: CHANNEL,
  });
  const client = new webApi.WebClient(f.h.botToken, { slackApiUrl: f.h.fake.url });
  const { text, blocks } = renderApprovalRequest(request, f.clock.now());
  const ts = (await client.chat.postMessage({ channel: CHANNEL, text, blocks })).ts ?? "";
  await f.workflow.attachMessage(request.id, { channel: CHANNEL, ts });
  return { request: await f.workflow.get(request.id), ts };
}

function requestKey(f: Fixture, id: string): string {
  return `${f.storePrefix}:req:${id}`;
}

/** What the attacker does last in every variant: mark it APPROVED and list it for the executor. */
async function forgeApproval(f: Fixture, id: string): Promise<void> {
  await f.redis.hset(requestKey(f, id), "state", "APPROVED");
  await f.redis.zadd(`${f.storePrefix}:approved`, Date.now(), id);
  // The periodic sweep re-enqueues approved, unclaimed requests: exactly what picks the forgery up.
  await f.workflow.requeueApproved(0);
}

function victimPatches(f: Fixture) {
  return f.sim.requests().filter((r) => r.method === "PATCH" && r.path === VICTIM_PATH);
}

async function expectRefused(
  f: Fixture,
  id: string,
  ts?: string,
  realVotes = false,
): Promise<ApprovalRequest> {
  const final = await f.settled(id, ["DONE", "FAILED", "STALE", "TAMPERED"]);
  expect(final.state).toBe("TAMPERED");
  expect(final.result?.message).toMatch(/failed verification/);
  expect(victimPatches(f)).toHaveLength(0);
  expect(
    f.sim.store.get(VICTIM.apiVersion, VICTIM.kind, VICTIM.namespace, VICTIM.name)?.metadata?.finalizers,
  ).toEqual([FINALIZER]);
  const audit = await f.audit.forRequest(id);
  expect(audit.map((e) => e.event)).toContain("approval.tampered");
  // The audit log shows exactly the votes that were really cast.
  expect(audit.some((e) => e.event.startsWith("vote."))).toBe(realVotes);
  expect(audit.find((e) => e.event === "approval.tampered")?.after).toBe("TAMPERED");
  if (ts !== undefined) {
    const reply = await eventually(
      () => f.h.fake.thread(CHANNEL, ts).find((m) => /failed verification/.test(m.text ?? "")),
      10_000,
      "the refusal in the request's thread",
    );
    // Raised loudly: the thread reply is broadcast to the channel as well.
    expect(reply.replyBroadcast).toBe(true);
    const painted = await eventually(
      () => {
        const m = f.h.fake.message(CHANNEL, ts);
        return m && /TAMPERED/.test(JSON.stringify(m.blocks ?? [])) ? m : undefined;
      },
      10_000,
      "the request message repainted TAMPERED",
    );
    expect(JSON.stringify(painted.blocks ?? [])).not.toMatch(/"type":"button"/);
  }
  return final;
}

async function storedVotes(f: Fixture, id: string): Promise<Vote[]> {
  return (await f.redis.lrange(`${requestKey(f, id)}:votes`, 0, -1)).map((v) => JSON.parse(v) as Vote);
}

describe("approvals forged through Redis are refused before any write", () => {
  it("HSET state APPROVED plus the approved-set entry: refused, no PATCH, audited and said in the thread", async () => {
    const f = await setup();
    const { request, ts } = await requestVictim(f);
    await forgeApproval(f, request.id);
    const final = await expectRefused(f, request.id, ts);
    expect(final.result?.message).toMatch(/APPROVED state was not recorded by its signer/);
    expect(final.result?.message).toMatch(/only 0 of the 1 required approval/);
  });

  it("votes copied from another request do not count", async () => {
    const f = await setup();
    // A legitimate approval of the seed Ingress by Bob, executed.
    const legit = await f.postRequest();
    await f.click(APPROVE, legit.request.id, BOB, legit.ts);
    expect((await f.settled(legit.request.id)).state).toBe("DONE");
    const [bobsVote] = await storedVotes(f, legit.request.id);
    expect(bobsVote?.mac).toBeTruthy();

    const { request, ts } = await requestVictim(f);
    await f.redis.rpush(`${requestKey(f, request.id)}:votes`, JSON.stringify(bobsVote));
    await f.redis.sadd(`${requestKey(f, request.id)}:voters`, BOB.userId);
    await forgeApproval(f, request.id);
    const final = await expectRefused(f, request.id, ts);
    expect(final.result?.message).toMatch(/carry no valid signature of the bot for this request/);
  });

  it("a vote's MAC replayed from another request, with this request's id, does not verify", async () => {
    const f = await setup();
    const legit = await f.postRequest();
    await f.click(APPROVE, legit.request.id, BOB, legit.ts);
    await f.settled(legit.request.id);
    const [bobsVote] = await storedVotes(f, legit.request.id);

    const { request, ts } = await requestVictim(f);
    const replayed: Vote = { ...(bobsVote as Vote), requestId: request.id, at: new Date().toISOString() };
    await f.redis.rpush(`${requestKey(f, request.id)}:votes`, JSON.stringify(replayed));
    await forgeApproval(f, request.id);
    await expectRefused(f, request.id, ts);
  });

  it("an edited plan (retargeted after a real vote) invalidates the whole record", async () => {
    const f = await setup({ approvalsRequired: 2 });
    const legit = await f.postRequest();
    await f.click(APPROVE, legit.request.id, CAROL, legit.ts);
    await eventually(async () =>
      (await f.workflow.get(legit.request.id)).votes.length === 1 ? true : undefined,
    );
    // Retarget the frozen plan at the live Ingress; then the second, real approval arrives.
    const key = requestKey(f, legit.request.id);
    const doc = JSON.parse((await f.redis.hget(key, "doc")) ?? "{}") as ApprovalRequest;
    const edited = {
      ...doc,
      action: {
        ...doc.action,
        target: { ...finalizerRemoval(doc.action).target, namespace: VICTIM.namespace, name: VICTIM.name },
      },
    };
    await f.redis.hset(key, "doc", JSON.stringify(edited));
    // The second, real approval is refused with why (it could never lead to an execution), not thanked.
    const late = await f.click(APPROVE, legit.request.id, BOB, legit.ts);
    const answer = (await f.answer(late)).body;
    expect(answer["response_type"]).toBe("ephemeral");
    expect(String(answer["text"])).toMatch(
      /can no longer be executed: its request document is not the bot.s/,
    );
    expect((await f.workflow.get(legit.request.id)).state).toBe("PENDING");
    expect(f.h.fake.thread(CHANNEL, legit.ts).some((m) => /<@U0BOB> approved/.test(m.text ?? ""))).toBe(
      false,
    );
    // Marked APPROVED through Redis all the same: the executor refuses the edited plan.
    await forgeApproval(f, legit.request.id);
    const final = await expectRefused(f, legit.request.id, legit.ts, true);
    expect(final.result?.message).toMatch(/request document is not the bot's/);
    // Nothing reached the original target either.
    expect(f.patches()).toHaveLength(0);
  });

  it("a self-vote by the requester written into Redis is refused", async () => {
    const f = await setup();
    const { request, ts } = await requestVictim(f);
    const selfVote: Vote = {
      requestId: request.id,
      voter: REQUESTER,
      decision: "approve",
      at: new Date().toISOString(),
      channelId: CHANNEL,
      mac: Buffer.alloc(32, 7).toString("base64url"),
    };
    await f.redis.rpush(`${requestKey(f, request.id)}:votes`, JSON.stringify(selfVote));
    await forgeApproval(f, request.id);
    await expectRefused(f, request.id, ts);
  });

  it("a state MAC copied from another request does not make a forged APPROVED verify", async () => {
    const f = await setup();
    const legit = await f.postRequest();
    await f.click(APPROVE, legit.request.id, BOB, legit.ts);
    await f.settled(legit.request.id);
    const { request, ts } = await requestVictim(f);
    const other = requestKey(f, legit.request.id);
    const [stateMac, updatedAt] = await f.redis.hmget(other, "stateMac", "updatedAt");
    await f.redis.hset(requestKey(f, request.id), "stateMac", stateMac ?? "", "updatedAt", updatedAt ?? "");
    await forgeApproval(f, request.id);
    await expectRefused(f, request.id, ts);
  });
});
