/**
 * Messages converge after Slack failures, through the runtime's own wiring (`createRuntime`): signed
 * commands and clicks over HTTP, real Redis and BullMQ, the kube simulator with the seed incident, and
 * the fake Slack with injected `chat.update` faults (rate limiting with `Retry-After`, HTTP 5xx, a
 * permanent platform error). The request message ends showing the stored outcome with no buttons, the
 * outcome reply is posted whatever the edits did, and a click on a request whose record vanished
 * repaints its message "expired / lost" without buttons.
 */
import type { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import type { Runtime, RuntimeOptions } from "../../src/runtime.js";
import type { KubeSim } from "../sim/kube/index.js";
import {
  blockActionsBody,
  postSigned,
  slashCommandBody,
  type FakeSlack,
  type SlackCall,
} from "../sim/slack/index.js";
import { buttonValue } from "../e2e/block-kit.js";
import { eventuallyTrue } from "../helpers/eventually.js";
import { deleteKeysWithPrefix } from "../helpers/redis.js";
import { startTestWorld, type TestWorld } from "../helpers/world.js";

const SECRET = "faults-signing-secret";
const TOKEN = "xoxb-faults-runtime-token";
const CHANNEL = "C0INCIDENT";
const REQUESTER = "U0ONCALL1";
const APPROVER = "U0APPROVER1";
const APPROVE = "approval:approve";

interface Setup {
  readonly sim: KubeSim;
  readonly fake: FakeSlack;
  readonly runtime: Runtime;
  /** Another runtime on the same Redis prefix and configuration (a restarted or second process). */
  readonly another: () => Promise<Runtime>;
  readonly redis: Redis;
  readonly prefix: string;
  readonly events: string;
}

const running: TestWorld[] = [];
afterEach(async () => {
  while (running.length > 0) await running.pop()?.stop();
});

async function setup(extra: Pick<RuntimeOptions, "notify"> = {}): Promise<Setup> {
  const w = await startTestWorld({
    token: TOKEN,
    secret: SECRET,
    label: "faults",
    kube: { scenario: "test/fixtures/scenarios/seed-incident.yaml", controllerIntervalMs: 200 },
    env: {
      UNSTUCK_APPROVERS: APPROVER,
      UNSTUCK_CHANNELS: CHANNEL,
      UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
      UNSTUCK_WAIT_INTERVAL_SECONDS: "600",
    },
    runtime: extra,
  });
  running.push(w);
  const sim = w.kube;
  if (sim === undefined) throw new Error("the world has a kube simulator");
  return {
    sim,
    fake: w.fake,
    runtime: w.runtime,
    // Built, not started: the test starts it when the first process is gone.
    another: async () => (await w.boot({ config: w.config, start: false })).runtime,
    redis: w.redis,
    prefix: w.prefix,
    events: w.events,
  };
}

/** Whether the message still offers a vote or a cancel (an ended request keeps only Details). */
function hasButtons(blocks: unknown): boolean {
  return /"action_id":"approval:(approve|deny|cancel)"/.test(JSON.stringify(blocks ?? []));
}

/** Post the request for the seed Ingress; returns its id and the message ts. */
async function request(s: Setup): Promise<{ id: string; ts: string }> {
  const res = await postSigned(
    s.events,
    SECRET,
    slashCommandBody({
      text: 'finalize ingress/myapp-worker-ingress -n myapp --reason "cause confirmed: SG held by an ENI; recovery first"',
      userId: REQUESTER,
      channelId: CHANNEL,
      responseUrl: s.fake.responseUrl("request"),
    }),
  );
  expect(res.status).toBe(200);
  const posted = await s.fake.waitFor(
    "chat.postMessage",
    (c) => JSON.stringify(c.body).includes(APPROVE),
    15_000,
  );
  const ts = String(posted.response?.["ts"]);
  const id = buttonValue(posted.body["blocks"], APPROVE) ?? "";
  // The request is bound to its message once attached: only then can an edit reach it.
  await eventuallyTrue(
    async () => (await s.runtime.workflow.get(id)).message !== undefined,
    10_000,
    "attached",
  );
  return { id, ts };
}

async function click(s: Setup, id: string, ts: string, blockId?: string): Promise<void> {
  const res = await postSigned(
    s.events,
    SECRET,
    blockActionsBody({
      actionId: APPROVE,
      value: id,
      ...(blockId !== undefined ? { blockId } : {}),
      userId: APPROVER,
      channelId: CHANNEL,
      messageTs: ts,
      responseUrl: s.fake.responseUrl(`click-${id}`),
    }),
  );
  expect(res.status).toBe(200);
}

function updatesOf(s: Setup, ts: string): SlackCall[] {
  return s.fake.calls().filter((c) => c.method === "chat.update" && c.body["ts"] === ts);
}

function outcomeReply(s: Setup, ts: string): string | undefined {
  return s.fake
    .thread(CHANNEL, ts)
    .map((m) => m.text ?? "")
    .find((t) => /finalizer|removed|applied/i.test(t) && !t.includes("approved ("));
}

describe("request messages converge after Slack failures", () => {
  it("rate limited edits wait for Retry-After, the outcome reply is posted meanwhile, and the message ends DONE without buttons", async () => {
    const s = await setup();
    const { id, ts } = await request(s);
    s.fake.setFault("chat.update", { kind: "rate-limited", retryAfterSeconds: 1 });
    await click(s, id, ts);

    await eventuallyTrue(async () => (await s.runtime.workflow.get(id)).state === "DONE", 20_000, "DONE");
    // Every edit is failing, yet the outcome is already reported in the thread.
    await eventuallyTrue(() => outcomeReply(s, ts) !== undefined, 10_000, "outcome reply while edits fail");
    // The edits keep being retried (each after its Retry-After) and none got through.
    await eventuallyTrue(
      () => updatesOf(s, ts).filter((c) => c.fault?.kind === "rate-limited").length >= 2,
      10_000,
      "edits retried while rate limited",
    );
    expect(s.fake.message(CHANNEL, ts)?.blocks).toSatisfy(hasButtons);

    s.fake.setFault("chat.update", undefined);
    await eventuallyTrue(
      () => (s.fake.message(CHANNEL, ts)?.updates ?? 0) > 0,
      20_000,
      "an edit after the fault",
    );
    await eventuallyTrue(
      () => JSON.stringify(s.fake.message(CHANNEL, ts)?.blocks).includes("DONE"),
      20_000,
      "message shows DONE",
    );
    const final = s.fake.message(CHANNEL, ts);
    expect(hasButtons(final?.blocks)).toBe(false);
    expect(String(final?.text)).toContain("[DONE]");
  }, 60_000);

  it("honours Retry-After: no retry of a rate-limited edit comes sooner than Slack asked", async () => {
    const s = await setup();
    const { id, ts } = await request(s);
    s.fake.setFault("chat.update", { kind: "rate-limited", retryAfterSeconds: 2, times: 1 });
    const before = updatesOf(s, ts).length;
    await click(s, id, ts);
    await eventuallyTrue(() => updatesOf(s, ts).length >= before + 2, 20_000, "a retried edit");
    // Arrival times at the fake: the retry follows the 429 by at least Retry-After.
    const updates = updatesOf(s, ts);
    const limited = updates.findIndex((c) => c.fault?.kind === "rate-limited");
    expect(limited).toBeGreaterThanOrEqual(0);
    const retried = updates[limited + 1];
    expect(retried?.fault).toBeUndefined();
    expect((retried?.at ?? 0) - (updates[limited]?.at ?? 0)).toBeGreaterThanOrEqual(2_000);
    await eventuallyTrue(
      () => JSON.stringify(s.fake.message(CHANNEL, ts)?.blocks).includes("DONE"),
      20_000,
      "message shows DONE",
    );
    expect(hasButtons(s.fake.message(CHANNEL, ts)?.blocks)).toBe(false);
  }, 60_000);

  it("HTTP 5xx edits are retried until the message shows the stored state", async () => {
    const s = await setup();
    const { id, ts } = await request(s);
    s.fake.setFault("chat.update", { kind: "http", status: 503, times: 3 });
    await click(s, id, ts);
    await eventuallyTrue(async () => (await s.runtime.workflow.get(id)).state === "DONE", 20_000, "DONE");
    await eventuallyTrue(
      () => JSON.stringify(s.fake.message(CHANNEL, ts)?.blocks).includes("DONE"),
      30_000,
      "message shows DONE",
    );
    expect(updatesOf(s, ts).filter((c) => c.fault?.kind === "http")).toHaveLength(3);
    expect(hasButtons(s.fake.message(CHANNEL, ts)?.blocks)).toBe(false);
    expect(outcomeReply(s, ts)).toBeDefined();
  }, 60_000);

  it("a permanent edit failure during execution never skips the outcome reply", async () => {
    const s = await setup();
    const { id, ts } = await request(s);
    s.fake.setFault("chat.update", { kind: "error", error: "cant_update_message" });
    await click(s, id, ts);
    await eventuallyTrue(async () => (await s.runtime.workflow.get(id)).state === "DONE", 20_000, "DONE");
    await eventuallyTrue(() => outcomeReply(s, ts) !== undefined, 10_000, "outcome reply");
    // A permanent error is not retried: one attempt per notification.
    const failed = updatesOf(s, ts).filter((c) => c.fault !== undefined);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.length).toBeLessThanOrEqual(4);
  }, 60_000);

  it("an edit still failing when its process stops is made by the next process: the notification is a job in Redis", async () => {
    // One in-process attempt per job run, then BullMQ's backoff: the job waits in Redis, not in memory.
    const s = await setup({ notify: { retry: { attempts: 1 }, job: { attempts: 20, backoffMs: 500 } } });
    const { id, ts } = await request(s);
    s.fake.setFault("chat.update", { kind: "http", status: 503 });
    await click(s, id, ts);
    await eventuallyTrue(async () => (await s.runtime.workflow.get(id)).state === "DONE", 20_000, "DONE");
    await eventuallyTrue(() => outcomeReply(s, ts) !== undefined, 10_000, "outcome reply");
    await eventuallyTrue(
      () => updatesOf(s, ts).filter((c) => c.fault?.kind === "http").length >= 2,
      10_000,
      "failed edits",
    );
    await s.runtime.stop();
    s.fake.setFault("chat.update", undefined);
    // The process that owed the edit is gone; the message still shows live buttons.
    expect(hasButtons(s.fake.message(CHANNEL, ts)?.blocks)).toBe(true);

    const next = await s.another();
    await next.start();
    await eventuallyTrue(
      () => JSON.stringify(s.fake.message(CHANNEL, ts)?.blocks).includes("DONE"),
      20_000,
      "the next process paints DONE",
    );
    expect(hasButtons(s.fake.message(CHANNEL, ts)?.blocks)).toBe(false);
    // The outcome reply was posted once, not again by the next process.
    const replies = s.fake.thread(CHANNEL, ts).filter((m) => m.text === outcomeReply(s, ts));
    expect(replies).toHaveLength(1);
  }, 60_000);

  it("a click on a request whose record vanished repaints the message expired / lost, without buttons", async () => {
    const s = await setup();
    const { id, ts } = await request(s);
    expect(hasButtons(s.fake.message(CHANNEL, ts)?.blocks)).toBe(true);
    // Redis lost it (restart without persistence).
    await deleteKeysWithPrefix(s.redis, `${s.prefix}:approvals`);
    await click(s, id, ts, `approval-actions:${id}`);
    const answer = await s.fake.waitForResponse((p) => p.id === `click-${id}`, 10_000);
    expect(String(answer.body["text"])).toContain("No such approval request");
    await eventuallyTrue(
      () => String(s.fake.message(CHANNEL, ts)?.text).includes("EXPIRED / LOST"),
      10_000,
      "message repainted lost",
    );
    const lost = s.fake.message(CHANNEL, ts);
    expect(hasButtons(lost?.blocks)).toBe(false);
    expect(JSON.stringify(lost?.blocks)).toContain("request it again");
    // Nothing reached the cluster for a request that does not exist.
    expect(s.sim.requests().filter((r) => r.method === "PATCH")).toEqual([]);
  }, 60_000);
});
