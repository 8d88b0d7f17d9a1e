/**
 * A finalizer-removal request that cannot be posted in the channel (the bot is not a member) is
 * cancelled, not left pending where no approver can see it; the requester is told why.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import { deletePrefix, uniquePrefix } from "../helpers/redis.js";
import type { Runtime } from "../../src/runtime.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import { postSigned, slashCommandBody, startFakeSlack, type FakeSlack } from "../sim/slack/index.js";
import { botEnv, startRuntime } from "./bot-env.js";

const SECRET = "e2e-unposted-secret";
const TOKEN = "xoxb-e2e-unposted";
const CHANNEL = "C0NOTMEMBER";

describe("an approval request the channel never saw", () => {
  let sim: KubeSim;
  let fake: FakeSlack;
  let runtime: Runtime;
  let events: string;
  const prefix = uniquePrefix("e2e-unposted");

  beforeAll(async () => {
    sim = await startKubeSim({ scenario: "test/fixtures/scenarios/seed-incident.yaml" });
    fake = await startFakeSlack({ token: TOKEN });
    fake.setChannel(CHANNEL, { isMember: false });
    const config = loadConfig(
      botEnv(
        { token: TOKEN, secret: SECRET, slackUrl: fake.url, prefix },
        { UNSTUCK_APPROVERS: "U0APPROVER1" },
      ),
    );
    ({ runtime, events } = await startRuntime(config, { kube: createKubeAdapter(sim.kubeconfig()) }));
  });

  afterAll(async () => {
    await runtime.stop();
    await deletePrefix(prefix);
    await fake.stop();
    await sim.stop();
  });

  it("is cancelled, and the requester is told why", async () => {
    const res = await postSigned(
      events,
      SECRET,
      slashCommandBody({
        text: 'finalize ingress/myapp-worker-ingress -n myapp --reason "cause confirmed, recovery first"',
        userId: "U0ONCALL1",
        channelId: CHANNEL,
        responseUrl: fake.responseUrl("unposted"),
      }),
    );
    expect(res.status).toBe(200);
    const answer = await fake.waitForResponse((p) => p.id === "unposted", 15_000);
    expect(JSON.stringify(answer.body)).toContain("it was cancelled and nothing was changed");
    expect(JSON.stringify(answer.body)).toContain("/invite");
    expect(JSON.stringify(answer.body)).not.toContain("approval:approve");
    expect(await runtime.workflow.listPending()).toEqual([]);
    const audited = (await runtime.audit.latest(10)).map((e) => e.event);
    expect(audited).toEqual(expect.arrayContaining(["request.created", "request.cancelled"]));
  });
});
