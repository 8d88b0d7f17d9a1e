/**
 * Redis ran the executor's finish and the answer never came back: the connection dropped between the
 * two, and the client sent the same script again once it reconnected. Through the runtime's own
 * wiring and a TCP proxy in front of the test's Redis that forwards the finish, then cuts the
 * connection when Redis answers: the request still ends DONE once, its card says so, its outcome is
 * replied in the thread and what follows it (the namespace's wait) starts at once — not two minutes
 * later, when the sweep finds the follow-up in the outbox.
 */
import { afterEach, describe, expect, it } from "vitest";
import { postSigned, slashCommandBody } from "../sim/slack/index.js";
import { buttonValue } from "../e2e/block-kit.js";
import { FAST_LBC } from "../integration/helpers/aws-world.js";
import { eventually } from "../helpers/eventually.js";
import { REDIS_URL } from "../helpers/redis.js";
import { clickButton } from "../helpers/slack-click.js";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { startTestWorld, type TestWorld } from "../helpers/world.js";

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

/** The test's Redis address with the proxy's host and port (its password and database kept). */
function through(p: TcpProxy): string {
  const url = new URL(REDIS_URL);
  url.host = new URL(p.url).host;
  return url.toString();
}

describe("a transition's answer lost after Redis applied it", () => {
  it("the finish sent again ends the request DONE once, says so and starts what follows", async () => {
    let lost = 0;
    proxy = await startTcpProxy(REDIS_URL, {
      loseAnswer: () => (chunk) => {
        const text = chunk.toString("latin1");
        if (lost > 0 || !/evalsha|eval/i.test(text) || !text.includes("execution.done")) return false;
        lost++;
        return true;
      },
    });
    world = await startTestWorld({
      secret: SECRET,
      label: "lost-reply",
      sim: {
        scenario: "test/fixtures/scenarios/seed-incident.yaml",
        lbc: FAST_LBC,
        controllerIntervalMs: 50,
      },
      env: {
        REDIS_URL: through(proxy),
        UNSTUCK_APPROVERS: APPROVER,
        UNSTUCK_CHANNELS: CHANNEL,
        UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
      },
      role: "all",
    });
    const w = world;
    const sim = w.sim;
    if (sim === undefined) throw new Error("the world has its simulators");
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

    // Well inside the sweep's two-minute grace for a follow-up nobody ran.
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
      30_000,
      "the DONE card, the outcome and the namespace's wait in the thread",
    );
    expect(lost).toBe(1);
    expect((await w.runtime.workflow.get(id))?.state).toBe("DONE");
    const events = (await w.runtime.audit.forRequest(id)).map((e) => e.event);
    expect(events.filter((e) => e === "execution.done")).toHaveLength(1);
    expect(
      sim.kube.requests().filter((q) => q.method === "PATCH" && q.path === INGRESS && q.status < 400),
    ).toHaveLength(1);
  }, 90_000);
});
