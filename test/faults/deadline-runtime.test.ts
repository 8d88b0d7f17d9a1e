/**
 * Deadlines through the product's own wiring (`createRuntime`, signed requests, the fake Slack Web
 * API, real Redis and BullMQ, the kube simulator): a hanging API server still gets the requester an
 * answer; a PATCH that never answers ends the request in a definite state that the requester is told
 * about; and a stop with an execution hung on the API server completes within its bound.
 */
import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ApprovalRequest } from "../../src/requests/model.js";
import { loadConfig } from "../../src/config.js";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import type { Runtime } from "../../src/runtime.js";
import { client, deleteKeysWithPrefix, uniquePrefix } from "../helpers/redis.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import { eventually } from "../helpers/eventually.js";
import {
  blockActionsBody,
  postSigned,
  slashCommandBody,
  startFakeSlack,
  type FakeSlack,
  type SlackCall,
} from "../sim/slack/index.js";
import { buttonValue } from "../e2e/block-kit.js";
import { botEnv, startRuntime } from "../e2e/bot-env.js";
import { keyEnv } from "../helpers/keys.js";

const SECRET = "faults-signing-secret";
const TOKEN = "xoxb-faults-runtime-token";
const CHANNEL = "C0INCIDENT";
const REQUESTER = "U0ONCALL1";
const APPROVER = "U0APPROVER1";
const SEED = "test/fixtures/scenarios/seed-incident.yaml";
const INGRESSES = "/apis/networking.k8s.io/v1/namespaces/myapp/ingresses";
const REASON = '--reason "cause confirmed: SG held by an ENI; recovery first"';

const text = (c: SlackCall): string => JSON.stringify(c.body);

interface Bot {
  readonly runtime: Runtime;
  readonly events: string;
  readonly prefix: string;
}

describe("deadlines through the runtime", () => {
  let sim: KubeSim;
  let fake: FakeSlack;
  const bots: Bot[] = [];

  beforeAll(async () => {
    sim = await startKubeSim({ scenario: SEED, controllerIntervalMs: 100 });
    fake = await startFakeSlack({ token: TOKEN });
  });
  afterEach(() => sim.setFaults({}));
  afterAll(async () => {
    const redis = client();
    for (const bot of bots) {
      await bot.runtime.stop();
      await deleteKeysWithPrefix(redis, bot.prefix);
    }
    await redis.quit();
    await fake.stop();
    await sim.stop();
  });

  async function startBot(env: Record<string, string>, kubeTimeoutMs: number): Promise<Bot> {
    const prefix = uniquePrefix("faults");
    const config = loadConfig(
      botEnv(
        { token: TOKEN, secret: SECRET, slackUrl: fake.url, prefix },
        {
          UNSTUCK_APPROVERS: APPROVER,
          UNSTUCK_CHANNELS: CHANNEL,
          ...keyEnv(),
          ...env,
        },
      ),
    );
    const { runtime, events } = await startRuntime(
      config,
      { kube: createKubeAdapter(sim.kubeconfig(), { requestTimeoutMs: kubeTimeoutMs, maxAttempts: 1 }) },
      {
        // One job attempt: the executor's own re-read and bounded re-sends decide the outcome.
        execution: { attempts: 1, backoffMs: 100 },
        worker: { lockDuration: 5_000, stalledInterval: 5_000 },
      },
    );
    const bot = { runtime, events, prefix };
    bots.push(bot);
    return bot;
  }

  async function command(bot: Bot, commandText: string): Promise<number> {
    const res = await postSigned(
      bot.events,
      SECRET,
      slashCommandBody({
        text: commandText,
        userId: REQUESTER,
        channelId: CHANNEL,
        responseUrl: fake.responseUrl(randomBytes(4).toString("hex")),
      }),
    );
    return res.status;
  }

  /** `finalize` the seed Ingress and approve it as the second person; the request once approved. */
  async function requestAndApprove(bot: Bot): Promise<ApprovalRequest> {
    const before = fake.calls().length;
    expect(await command(bot, `finalize ingress/myapp-worker-ingress -n myapp ${REASON}`)).toBe(200);
    const posted = await fake.waitFor(
      "chat.postMessage",
      (c) => fake.calls().indexOf(c) >= before && text(c).includes("approval:approve"),
      20_000,
    );
    const id = buttonValue(posted.body.blocks, "approval:approve");
    if (id === undefined) throw new Error("no approve button");
    const request = await eventually(async () => {
      const r = await bot.runtime.workflow.get(id);
      return r.message ? r : undefined;
    });
    const res = await postSigned(
      bot.events,
      SECRET,
      blockActionsBody({
        actionId: "approval:approve",
        value: id,
        userId: APPROVER,
        channelId: CHANNEL,
        messageTs: request.message?.ts ?? "",
        responseUrl: fake.responseUrl(`click-${randomBytes(3).toString("hex")}`),
      }),
    );
    expect(res.status).toBe(200);
    return request;
  }

  it("`ns` against a hanging list answers in the channel within the bound, partial, naming what hung", async () => {
    const bot = await startBot({ UNSTUCK_DIAGNOSIS_DEADLINE_SECONDS: "2" }, 30_000);
    sim.setFaults({ hang: { pathPrefix: INGRESSES } });
    const before = fake.calls().length;
    const started = Date.now();
    expect(await command(bot, "ns myapp")).toBe(200);
    const answer = await fake.waitFor(
      "chat.postMessage",
      (c) => fake.calls().indexOf(c) >= before && text(c).includes("myapp"),
      10_000,
    );
    expect(Date.now() - started).toBeLessThan(2_000 + 3_000);
    expect(text(answer)).toContain("Partial result");
    // The hung list is named, and what it may hold is not claimed gone.
    expect(text(answer)).toContain("could not be listed (ingresses.networking.k8s.io)");
    expect(text(answer)).not.toMatch(/all content is gone/i);
  });

  it("a PATCH that never answers ends the approved request in a definite state, and the requester is told", async () => {
    const bot = await startBot({}, 800);
    sim.setFaults({ hang: { method: "PATCH" } });
    const request = await requestAndApprove(bot);
    const started = Date.now();
    const ended = await eventually(
      async () => {
        const r = await bot.runtime.workflow.get(request.id);
        return r.state === "FAILED" || r.state === "DONE" || r.state === "STALE" ? r : undefined;
      },
      20_000,
      "a final state",
    );
    expect(Date.now() - started).toBeLessThan(20_000);
    // Nothing answered, and a re-read shows the finalizer still there: not DONE.
    expect(ended.state).toBe("FAILED");
    const ingress = sim.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress");
    expect(ingress?.metadata?.finalizers).toEqual(["ingress.k8s.aws/resources"]);
    // Told in the request's thread, with the reason.
    const reply = await fake.waitFor(
      "chat.postMessage",
      (c) => c.body.thread_ts === request.message?.ts && /fail/i.test(text(c)),
      10_000,
    );
    expect(text(reply)).toMatch(/did not answer in time|no answer within/);
  });

  it("stops within its bound while an execution hangs on the API server", async () => {
    const bot = await startBot({ UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS: "1.5" }, 60_000);
    sim.setFaults({ hang: { method: "PATCH" } });
    const request = await requestAndApprove(bot);
    await eventually(
      async () => ((await bot.runtime.workflow.get(request.id)).state === "EXECUTING" ? true : undefined),
      10_000,
      "EXECUTING",
    );
    const started = Date.now();
    await bot.runtime.stop();
    expect(Date.now() - started).toBeLessThan(1_500 + 1_500);
  });
});
