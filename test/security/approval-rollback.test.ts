/**
 * A request that reached a terminal state never runs again and never loops, even when its record in
 * Redis is rolled back: its earlier fields (the APPROVED state with its state MAC, and its place in the
 * approved set) were validly signed by the bot, so they verify — only the record of how it ended, kept
 * outside the request hash, says they are old. Real Redis, the Kubernetes simulator through the real
 * adapter, BullMQ and the actions worker, the fake Slack.
 *
 * And the sweep's requeue of an approved request is bounded: a job that is still waiting is left to
 * run (nothing written), and one that ended without claiming its request is queued again only a few
 * times before the request ends FAILED, with one audit entry.
 */
import { randomUUID } from "node:crypto";
import { UnrecoverableError, Worker } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import { executeApproved } from "../../src/actions/execute.js";
import { closeWorker, createActionsWorker } from "../../src/jobs/workers.js";
import { executionJobId, QueueName } from "../../src/jobs/queues.js";
import { eventually } from "../helpers/eventually.js";
import { connect } from "../helpers/redis.js";
import { APPROVE, BOB, CHANNEL, startFixture, type Fixture } from "../e2e/approval-fixture.js";

/** The workflow's default bound on the sweep's requeues of one request (`DEFAULT_MAX_REQUEUES`). */
const MAX_REQUEUES = 5;

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()?.();
});

async function setup(): Promise<Fixture> {
  // No worker of the fixture's own: the test runs the executor when it wants.
  const f = await startFixture({ worker: false });
  stops.push(() => f.stop());
  return f;
}

const bullPrefix = (f: Fixture): string => `${f.storePrefix.replace(/:approvals$/, "")}:bull`;

/** The fixture's executor dependencies, as its worker would have them. */
function deps(f: Fixture) {
  return {
    store: f.store,
    signer: f.signer,
    policy: f.policy,
    kube: f.kube,
    audit: f.audit,
    now: () => new Date(),
  };
}

/** Run the actions worker over the queue until `id` is settled, then stop it. */
async function runWorker(f: Fixture, id: string): Promise<void> {
  const bull = connect();
  const worker = createActionsWorker({ connection: bull, prefix: bullPrefix(f) }, deps(f));
  try {
    await f.settled(id);
  } finally {
    await closeWorker(worker);
    await bull.quit();
  }
}

/** Approve the seed Ingress's request by clicking, and keep the APPROVED fields the bot signed. */
async function approved(f: Fixture) {
  const { request, ts } = await f.postRequest();
  await f.click(APPROVE, request.id, BOB, ts);
  await f.settled(request.id, ["APPROVED"]);
  const key = `${f.storePrefix}:req:${request.id}`;
  const [state, updatedAt, stateMac] = await f.redis.hmget(key, "state", "updatedAt", "stateMac");
  const score = await f.redis.zscore(`${f.storePrefix}:approved`, request.id);
  /** Put the record back as it was when approved: every field validly signed, just old. */
  const rollBack = async () => {
    await f.redis.hset(key, "state", state ?? "", "updatedAt", updatedAt ?? "", "stateMac", stateMac ?? "");
    await f.redis.hdel(key, "result");
    await f.redis.zadd(`${f.storePrefix}:approved`, score ?? String(Date.now()), request.id);
  };
  return { request, ts, key, rollBack };
}

async function events(f: Fixture, id: string): Promise<string[]> {
  return (await f.audit.forRequest(id)).map((e) => e.event);
}

describe("a finished request put back to APPROVED in Redis", () => {
  it("the sweep refuses it once, restores it, never queues it again and never loops", async () => {
    const f = await setup();
    const { request, key, rollBack } = await approved(f);
    await runWorker(f, request.id);
    const done = await f.workflow.get(request.id);
    expect(done.state).toBe("DONE");
    expect(f.patches()).toHaveLength(1);
    const before = (await events(f, request.id)).length;

    await rollBack();
    expect((await f.workflow.get(request.id)).state).toBe("APPROVED");
    for (let sweep = 0; sweep < 10; sweep++) expect(await f.workflow.requeueApproved(0)).toEqual([]);
    // Put back once more: still one refusal in all, and no requeue ever.
    await rollBack();
    for (let sweep = 0; sweep < 5; sweep++) expect(await f.workflow.requeueApproved(0)).toEqual([]);

    const after = (await events(f, request.id)).slice(before);
    expect(after).toEqual(["execution.refused"]);
    const refusal = (await f.audit.forRequest(request.id)).at(-1);
    expect(refusal).toMatchObject({ before: "APPROVED", after: "DONE" });
    expect(refusal?.result).toMatch(/had already ended DONE.*never run again/);
    // Restored as it ended, and off the approved set.
    const restored = await f.workflow.get(request.id);
    expect(restored.state).toBe("DONE");
    expect(restored.result?.message).toBe(done.result?.message);
    expect(await f.redis.hget(key, "stateMac")).not.toBe("");
    expect(await f.redis.zscore(`${f.storePrefix}:approved`, request.id)).toBeNull();
    expect(f.patches()).toHaveLength(1);
  });

  it("the executor's claim refuses it too (a job delivered again): never executed twice, one audit entry", async () => {
    const f = await setup();
    const { request, rollBack } = await approved(f);
    await runWorker(f, request.id);
    const before = (await events(f, request.id)).length;

    await rollBack();
    for (let delivery = 0; delivery < 3; delivery++) {
      const outcome = await executeApproved(deps(f), request.id, {
        token: randomUUID(),
        finalAttempt: true,
      });
      expect(outcome).toEqual({ kind: "skipped", state: "DONE" });
    }
    expect((await events(f, request.id)).slice(before)).toEqual(["execution.refused"]);
    expect((await f.workflow.get(request.id)).state).toBe("DONE");
    expect(f.patches()).toHaveLength(1);
  });

  it("a vote on a finished request put back to PENDING is refused, and it is not approved again", async () => {
    const f = await setup();
    const { request, ts } = await f.postRequest();
    const key = `${f.storePrefix}:req:${request.id}`;
    const [updatedAt, stateMac] = await f.redis.hmget(key, "updatedAt", "stateMac");
    await f.workflow.cancel(request.id, request.requester);
    await f.redis.hset(key, "state", "PENDING", "updatedAt", updatedAt ?? "", "stateMac", stateMac ?? "");
    await f.redis.zadd(`${f.storePrefix}:pending`, Date.parse(request.expiresAt), request.id);
    const sent = await f.click(APPROVE, request.id, BOB, ts);
    expect(String((await f.answer(sent)).body["text"])).toMatch(/already ended CANCELLED/);
    expect((await f.workflow.get(request.id)).state).toBe("CANCELLED");
    expect((await events(f, request.id)).filter((e) => e.startsWith("vote."))).toEqual([]);
    expect(await f.redis.zscore(`${f.storePrefix}:approved`, request.id)).toBeNull();
  });
});

describe("the sweep's requeue of an approved request is bounded", () => {
  it("a job still waiting is left to run: nothing counted, nothing written", async () => {
    const f = await setup();
    const { request } = await approved(f);
    const before = (await events(f, request.id)).length;
    for (let sweep = 0; sweep < 10; sweep++) expect(await f.workflow.requeueApproved(0)).toEqual([]);
    expect((await events(f, request.id)).length).toBe(before);
    expect((await f.workflow.get(request.id)).state).toBe("APPROVED");
    // It runs when a worker takes it.
    await runWorker(f, request.id);
    expect((await f.workflow.get(request.id)).state).toBe("DONE");
  });

  it("a job that ended without claiming its request: queued a bounded number of times, then FAILED with one entry", async () => {
    const f = await setup();
    const { request, ts } = await approved(f);
    // The execution job fails before it ever claims the request (say, every attempt met a broken
    // connection): the request stays APPROVED, and adding its job again changes nothing.
    const bull = connect();
    const failing = new Worker(
      QueueName.Actions,
      (): Promise<null> => Promise.reject(new UnrecoverableError("connection lost before the claim")),
      { connection: bull, prefix: bullPrefix(f) },
    );
    await eventually(async () => {
      const job = await f.queues.actions.getJob(executionJobId(request.id));
      return job !== undefined && (await job.isFailed()) ? true : undefined;
    });
    await closeWorker(failing);
    await bull.quit();
    expect((await f.workflow.get(request.id)).state).toBe("APPROVED");

    const requeued: string[][] = [];
    for (let sweep = 0; sweep < 3 * MAX_REQUEUES; sweep++) requeued.push(await f.workflow.requeueApproved(0));
    expect(requeued.flat()).toHaveLength(MAX_REQUEUES);
    const all = await events(f, request.id);
    expect(all.filter((e) => e === "execution.requeued")).toHaveLength(MAX_REQUEUES);
    expect(all.filter((e) => e === "execution.requeue-limit")).toHaveLength(1);
    expect(all.at(-1)).toBe("execution.requeue-limit");
    const failed = await f.workflow.get(request.id);
    expect(failed.state).toBe("FAILED");
    expect(failed.result?.message).toMatch(/queued 5 times without ever being started/);
    expect(await f.redis.zscore(`${f.storePrefix}:approved`, request.id)).toBeNull();
    // Said in the request's thread; nothing was patched; a late delivery of its job does nothing.
    await eventually(() =>
      f.h.fake.thread(CHANNEL, ts).some((m) => /without ever being started/.test(m.text ?? ""))
        ? true
        : undefined,
    );
    const late = await executeApproved(deps(f), request.id, {
      token: randomUUID(),
      finalAttempt: true,
    });
    expect(late).toEqual({ kind: "skipped", state: "FAILED" });
    expect(f.patches()).toHaveLength(0);
  });
});
