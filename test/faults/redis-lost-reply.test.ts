/**
 * Redis ran a transition's script and the answer never came back: the connection dropped between the
 * two, and the client sent the same script again once it reconnected. Through the runtime's own
 * wiring and a TCP proxy in front of the test's Redis that forwards the script, then cuts the
 * connection when Redis answers:
 *
 * - a wait's status edit: the lease it took comes back as its own, so its progress keeps showing
 *   instead of stopping until that lease lapses;
 * - the executor's claim: read as this attempt's own, not as a take-over of a dead one (no
 *   `execution.resumed` entry in the incident's audit);
 * - the executor's finish: the request still ends DONE once, its card says so, its outcome is
 *   replied in the thread and what follows it (the namespace's wait) starts at once — not two minutes
 *   later, when the sweep finds the follow-up in the outbox;
 * - the approving vote: the approver is not told that votes are closed, the execution is enqueued at
 *   once (not when the sweep finds an approved request nobody claimed) and runs once;
 * - a thread reply's claim in the post ledger: the run that made it posts at once, once, instead of
 *   waiting for its own claim to lapse.
 */
import { afterEach, describe, expect, it } from "vitest";
import { postSigned, slashCommandBody } from "../sim/slack/index.js";
import { buttonValue } from "../e2e/block-kit.js";
import { FAST_LBC } from "../integration/helpers/aws-world.js";
import { eventually } from "../helpers/eventually.js";
import { REDIS_URL } from "../helpers/redis.js";
import { clickButton } from "../helpers/slack-click.js";
import { startTcpProxy, viaProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { startTestWorld, type TestWorld, type WorldOptions } from "../helpers/world.js";

const SECRET = "lost-reply-signing-secret";
const CHANNEL = "C0INCIDENT";
const REQUESTER = "U0ONCALL1";
const APPROVER = "U0APPROVER1";
const APPROVE = "approval:approve";
const INGRESS = "/apis/networking.k8s.io/v1/namespaces/myapp/ingresses/myapp-worker-ingress";

let world: TestWorld | undefined;
let proxy: TcpProxy | undefined;
afterEach(async () => {
  await world?.stop();
  await proxy?.close();
  world = undefined;
  proxy = undefined;
});

/** The world's bot, whose Redis connections go through a proxy that loses one answer: the first to a script whose text matches `sent`. */
async function startLosing(
  sent: RegExp,
  runtime?: WorldOptions["runtime"],
): Promise<{ w: TestWorld; lost: () => number }> {
  let lost = 0;
  proxy = await startTcpProxy(REDIS_URL, {
    loseAnswer: () => (chunk) => {
      const text = chunk.toString("latin1");
      if (lost > 0 || !/evalsha|eval/i.test(text) || !sent.test(text)) return false;
      lost++;
      return true;
    },
  });
  world = await startTestWorld({
    secret: SECRET,
    label: "lost-reply",
    sim: { scenario: "test/fixtures/scenarios/seed-incident.yaml", lbc: FAST_LBC, controllerIntervalMs: 50 },
    env: {
      REDIS_URL: viaProxy(REDIS_URL, proxy),
      UNSTUCK_APPROVERS: APPROVER,
      UNSTUCK_CHANNELS: CHANNEL,
      UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
    },
    role: "all",
    ...(runtime !== undefined ? { runtime } : {}),
  });
  return { w: world, lost: () => lost };
}

/** Ask for the seed Ingress's finalizer to be removed, and approve it: the request's id and card. */
async function requestAndApprove(w: TestWorld): Promise<{ id: string; ts: string }> {
  const res = await postSigned(
    w.events,
    SECRET,
    slashCommandBody({
      text: 'finalize ingress/myapp-worker-ingress -n myapp --reason "SG held by the ELB ENI; recovery first"',
      userId: REQUESTER,
      channelId: CHANNEL,
      responseUrl: w.fake.responseUrl("cmd"),
    }),
  );
  expect(res.status).toBe(200);
  const post = await eventually(
    () =>
      w.fake
        .calls()
        .find(
          (c) =>
            c.method === "chat.postMessage" &&
            c.response?.["ok"] === true &&
            JSON.stringify(c.body["blocks"] ?? "").includes(APPROVE),
        ),
    30_000,
    "the approval card",
  );
  const id = buttonValue(post.body["blocks"], APPROVE) ?? "";
  const ts = String(post.response?.["ts"]);
  await eventually(
    async () => ((await w.runtime.workflow.get(id))?.message ? true : undefined),
    15_000,
    "the request's message recorded",
  );
  await clickButton(
    { events: w.events, fake: w.fake, secret: SECRET, channel: CHANNEL },
    APPROVE,
    id,
    APPROVER,
    ts,
  );
  return { id, ts };
}

/** Within `ms` (inside the sweep's graces): the card DONE, the outcome and the namespace's wait in its thread. */
async function settledAtOnce(w: TestWorld, ts: string, ms = 30_000): Promise<void> {
  await eventually(
    () => {
      const thread = w.fake.thread(CHANNEL, ts).map((m) => m.text ?? "");
      const card = w.fake.message(CHANNEL, ts)?.text ?? "";
      return /^\[DONE\]/.test(card) &&
        thread.some((t) => /^Removed \[ingress\.k8s\.aws\/resources\]/.test(t)) &&
        thread.some((t) => /Namespace myapp is gone|Waiting for namespace myapp/.test(t))
        ? true
        : undefined;
    },
    ms,
    "the DONE card, the outcome and the namespace's wait in the thread",
  );
}

/** Done once: one effective PATCH, one `execution.done` entry. */
async function doneOnce(w: TestWorld, id: string): Promise<void> {
  const sim = w.sim;
  if (sim === undefined) throw new Error("the world has its simulators");
  expect((await w.runtime.workflow.get(id))?.state).toBe("DONE");
  const events = (await w.runtime.audit.forRequest(id)).map((e) => e.event);
  expect(events.filter((e) => e === "execution.done")).toHaveLength(1);
  expect(events.filter((e) => e === "execution.enqueued")).toHaveLength(1);
  expect(
    sim.kube.requests().filter((q) => q.method === "PATCH" && q.path === INGRESS && q.status < 400),
  ).toHaveLength(1);
}

/**
 * The seed Ingress's finalizer asked for and approved with the first answer to a script matching `sent`
 * lost: it settles within `settleMs`, the answer was lost once, and the removal is done once. The
 * request, its card and its audit events, for what each case checks besides.
 */
async function approvedLosingOne(
  sent: RegExp,
  settleMs?: number,
): Promise<{ w: TestWorld; id: string; ts: string; events: string[] }> {
  const { w, lost } = await startLosing(sent);
  const { id, ts } = await requestAndApprove(w);
  await settledAtOnce(w, ts, settleMs);
  expect(lost()).toBe(1);
  await doneOnce(w, id);
  const events = (await w.runtime.audit.forRequest(id)).map((e) => e.event);
  return { w, id, ts, events };
}

describe("a transition's answer lost after Redis applied it", () => {
  it("the finish sent again ends the request DONE once, says so and starts what follows", async () => {
    await approvedLosingOne(/"event":"execution\.done"/);
  }, 90_000);

  it("the approving vote sent again counts once, enqueues the execution and refuses nothing", async () => {
    const { w, ts, events } = await approvedLosingOne(/"event":"vote\.approve"/);
    expect(events.filter((e) => e === "vote.approve")).toHaveLength(1);
    const said = w.fake.responses().map((r) => JSON.stringify(r.body));
    expect(said.filter((b) => /votes are closed|already voted/i.test(b))).toEqual([]);
    expect(w.fake.thread(CHANNEL, ts).filter((m) => /approved\.?$/.test(m.text ?? ""))).toHaveLength(1);
  }, 90_000);

  it("a thread reply's claim sent again is its own: posted once, without waiting for the claim to lapse", async () => {
    // The post ledger's claim carries `pending:<uuid>`. Its lease is 30 s: waiting on its own claim, the
    // run posted only once that claim lapsed or a retry took over, over 10 s later.
    const { w, ts } = await approvedLosingOne(/:posted:[^\r]*\r\n\$[0-9]+\r\npending:[0-9a-f]{8}-/, 8_000);
    await eventually(
      () => (w.fake.thread(CHANNEL, ts).some((m) => /approved\.?$/.test(m.text ?? "")) ? true : undefined),
      1_000,
      "the vote's reply in the thread",
    );
    const texts = w.fake.thread(CHANNEL, ts).map((m) => m.text ?? "");
    expect(texts.filter((t, k) => t !== "" && texts.indexOf(t) !== k)).toEqual([]);
  }, 90_000);

  it("the claim sent again is the attempt's own: no take-over recorded, done once", async () => {
    const { events } = await approvedLosingOne(/"event":"execution\.claimed"/);
    expect(events.filter((e) => e === "execution.claimed")).toHaveLength(1);
    expect(events).not.toContain("execution.resumed");
  }, 90_000);

  it("a status edit's lease sent again is its own: the wait's progress keeps showing", async () => {
    // Checks every 300 ms, the path's wait edits its status line; the lease it takes lives 10 s.
    const { w, lost } = await startLosing(/:status-edit:\{/, { pathRecheck: { intervalMs: 300 } });
    const { ts } = await requestAndApprove(w);
    await settledAtOnce(w, ts);
    const waiting = await eventually(
      () => w.fake.thread(CHANNEL, ts).find((m) => /^⏳ Waiting for the controller/.test(m.text ?? "")),
      15_000,
      "the path's wait in the thread",
    );
    await eventually(
      () =>
        /\(check [4-9]|\(check \d\d/.test(w.fake.message(CHANNEL, waiting.ts)?.text ?? "") ? true : undefined,
      // Inside the 10 s the old answer waited for its own lease to lapse.
      8_000,
      "the wait's status line at its fourth check or later",
    );
    expect(lost()).toBe(1);
  }, 90_000);
});
