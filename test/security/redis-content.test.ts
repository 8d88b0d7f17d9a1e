/**
 * Jobs and Redis keys carry ids, never content: a Redis writer cannot make the bot write a message of
 * its choosing, nor point it at a message the bot did not post for that purpose. Through the runtime as
 * `npm start` builds it (the durable notify queue and its worker, the request store), the fake Slack and
 * the Kubernetes simulator:
 *
 * - an edit job carrying ready-made Block Kit (`<!channel>`, a link, an Approve button) is refused and
 *   the message it names is left as it is;
 * - a request's `message` rewritten to another message: no repaint or reply touches either;
 * - a reply job with words of its own, or naming an event the signed record does not hold, posts
 *   nothing.
 */
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Runtime } from "../../src/runtime.js";
import { DENY_SUBMIT_CALLBACK } from "../../src/slack/blocks/approval.js";
import { buttonValue } from "../e2e/block-kit.js";
import { eventually, pause } from "../helpers/eventually.js";
import { startTestWorld, type TestWorld } from "../helpers/world.js";
import { postSigned, slashCommandBody, viewSubmissionBody, type FakeSlack } from "../sim/slack/index.js";

const SECRET = "redis-content-signing-secret";
const TOKEN = "xoxb-redis-content-token";
const CHANNEL = "C0INCIDENT";
const REQUESTER = "U0ONCALL1";
const APPROVER = "U0APPROVER1";
const APPROVE = "approval:approve";
/** What an attacker would have the bot say: a ping, a link, and an Approve button for any request. */
const HOSTILE_BLOCKS = [
  { type: "section", text: { type: "mrkdwn", text: "<!channel> <https://evil.example|approve here>" } },
  {
    type: "actions",
    elements: [
      { type: "button", action_id: APPROVE, text: { type: "plain_text", text: "Approve" }, value: "x" },
    ],
  },
];

describe("no content travels through Redis", () => {
  let w: TestWorld;
  let fake: FakeSlack;
  let runtime: Runtime;
  let redis: Redis;
  let events = "";
  let prefix: string;

  beforeAll(async () => {
    w = await startTestWorld({
      token: TOKEN,
      secret: SECRET,
      label: "redis-content",
      kube: { scenario: "test/fixtures/scenarios/seed-incident.yaml" },
      env: {
        UNSTUCK_APPROVERS: APPROVER,
        UNSTUCK_CHANNELS: CHANNEL,
        UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
        UNSTUCK_WAIT_INTERVAL_SECONDS: "600",
      },
      // One try per notification: a refused job fails at once.
      runtime: { notify: { job: { attempts: 1 } } },
      boot: false,
    });
    const sim = w.kube;
    if (sim === undefined) throw new Error("the world has a kube simulator");
    // One object per request (one pending request per object).
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "ops" } });
    for (const name of ["held-a", "held-b", "held-c", "held-d", "held-e"]) {
      sim.store.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: "ops", finalizers: ["example.com/hold"] },
      });
      // Being deleted, held by its finalizer: what a removal request is for.
      sim.store.delete("v1", "ConfigMap", "ops", name);
    }
    ({ runtime, events } = await w.boot());
    ({ fake, redis, prefix } = w);
  });

  afterAll(async () => {
    await w.stop();
  });

  async function request(name: string): Promise<{ id: string; ts: string }> {
    const res = await postSigned(
      events,
      SECRET,
      slashCommandBody({
        text: `finalize configmap/${name} -n ops --reason "cause confirmed: held by a finalizer; recovery first"`,
        userId: REQUESTER,
        channelId: CHANNEL,
        responseUrl: fake.responseUrl(`req-${name}`),
      }),
    );
    expect(res.status).toBe(200);
    const posted = await fake.waitFor(
      "chat.postMessage",
      (c) => JSON.stringify(c.body).includes(APPROVE) && JSON.stringify(c.body).includes(name),
      15_000,
    );
    const id = buttonValue(posted.body["blocks"], APPROVE) ?? "";
    await eventually(async () => (await runtime.workflow.get(id)).message, 10_000, "attached");
    return { id, ts: String(posted.response?.["ts"]) };
  }

  async function failedNotify(jobId: string): Promise<void> {
    const { Queue } = await import("bullmq");
    const queue = new Queue("notify", { connection: redis, prefix: `${prefix}:bull` });
    try {
      await eventually(
        async () => ((await queue.getJobState(jobId)) === "failed" ? true : undefined),
        10_000,
        `${jobId} refused`,
      );
    } finally {
      await queue.close();
    }
  }

  async function addNotify(name: string, data: unknown, jobId: string): Promise<void> {
    const { Queue } = await import("bullmq");
    const queue = new Queue("notify", { connection: redis, prefix: `${prefix}:bull` });
    try {
      await queue.add(name, data, { jobId, attempts: 1 });
    } finally {
      await queue.close();
    }
  }

  it("an edit job carrying ready-made Block Kit is refused: the message it names stays as it is", async () => {
    const { ts } = await request("held-a");
    const before = fake.message(CHANNEL, ts)?.updates ?? 0;
    await addNotify(
      "edit",
      { channel: CHANNEL, ts, text: "<!channel>", blocks: HOSTILE_BLOCKS },
      "forged-edit",
    );
    await failedNotify("forged-edit");
    expect(fake.message(CHANNEL, ts)?.updates ?? 0).toBe(before);
    expect(JSON.stringify(fake.message(CHANNEL, ts)?.blocks)).not.toContain("evil.example");
  });

  it("a request's message pointed at another message: no repaint or reply touches either", async () => {
    const { id, ts } = await request("held-b");
    // Another message of the bot's: the one the attacker wants rewritten.
    const other = await request("held-c");
    const key = `${prefix}:approvals:req:${id}`;
    await redis.hset(key, "message", JSON.stringify({ channel: CHANNEL, ts: other.ts }));
    const [mine, theirs] = [
      fake.message(CHANNEL, ts)?.updates ?? 0,
      fake.message(CHANNEL, other.ts)?.updates ?? 0,
    ];
    // The deny form, submitted as Slack sends it (the click only opens it).
    const click = await postSigned(
      events,
      SECRET,
      viewSubmissionBody({
        callbackId: DENY_SUBMIT_CALLBACK,
        privateMetadata: JSON.stringify({ requestId: id, channelId: CHANNEL }),
        values: { reason: { reason: "" } },
        userId: APPROVER,
      }),
    );
    expect(click.status).toBe(200);
    await eventually(
      async () => ((await runtime.workflow.get(id)).state === "DENIED" ? true : undefined),
      10_000,
      "denied",
    );
    await pause(1_000);
    expect(fake.message(CHANNEL, other.ts)?.updates ?? 0).toBe(theirs);
    expect(fake.thread(CHANNEL, other.ts)).toEqual([]);
    expect(fake.message(CHANNEL, ts)?.updates ?? 0).toBe(mine);
  });

  it("a reply job with words of its own, or naming an event the record does not hold, posts nothing", async () => {
    const { id, ts } = await request("held-d");
    await addNotify(
      "reply",
      { requestId: id, text: "<!channel> approved, click <https://evil.example|here>" },
      "forged-text",
    );
    await addNotify("reply", { requestId: id, reply: { kind: "outcome", state: "DONE" } }, "forged-outcome");
    await addNotify(
      "reply",
      { requestId: id, reply: { kind: "vote", voter: "U0MALLORY", decision: "approve" } },
      "forged-vote",
    );
    for (const j of ["forged-text", "forged-outcome", "forged-vote"]) await failedNotify(j);
    expect(fake.thread(CHANNEL, ts)).toEqual([]);
  });

  it("a wait written into Redis runs nothing: it neither posts in a thread nor edits the message it names", async () => {
    const { ts } = await request("held-e");
    const before = fake.message(CHANNEL, ts)?.updates ?? 0;
    const forged = await runtime.queues.waits.add("ns-gone", {
      cluster: "local",
      namespace: "myapp",
      channel: CHANNEL,
      threadTs: ts,
      // The request's card, as if it were this wait's status message.
      statusTs: ts,
      deadline: Date.now() + 60_000,
      intervalMs: 1_000,
      checks: 1,
    });
    await eventually(
      async () => ((await forged.getState()) === "failed" ? true : undefined),
      10_000,
      "the forged wait refused",
    );
    expect(fake.message(CHANNEL, ts)?.updates ?? 0).toBe(before);
    expect(fake.thread(CHANNEL, ts)).toEqual([]);
  });
});
