/**
 * A Redis that stops answering (SIGSTOP on a private redis-server: connections stay open, nothing
 * comes back) after the bot started: a command still gets an answer within the command bound, and
 * the bot still stops within its shutdown bound.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { KubePort } from "../../src/kube/port.js";
import type { Runtime } from "../../src/runtime.js";
import { postSigned, slashCommandBody, startFakeSlack, type FakeSlack } from "../sim/slack/index.js";
import { startPrivateRedis, type PrivateRedis } from "./helpers.js";
import { keyEnv } from "../helpers/keys.js";
import { bootRuntime } from "../helpers/world.js";

const TOKEN = "xoxb-redis-hang-token";
const SECRET = "redis-hang-secret";

const noKube = new Proxy({} as KubePort, {
  get: (_t, p) => () => Promise.reject(new Error(`unexpected kube call ${String(p)}`)),
});

describe("a Redis that hangs after start-up", () => {
  let fake: FakeSlack;
  let redis: PrivateRedis;
  let pid: number;
  let runtime: Runtime;
  let events: string;

  beforeAll(async () => {
    fake = await startFakeSlack({ token: TOKEN });
    redis = await startPrivateRedis(["--save", "", "--appendonly", "no"]);
    const config = loadConfig({
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_SIGNING_SECRET: SECRET,
      SLACK_API_URL: fake.url,
      PORT: "0",
      REDIS_URL: redis.url,
      ...keyEnv(),
      // Command bound = diagnosis deadline + kube timeout + 5 s.
      UNSTUCK_DIAGNOSIS_DEADLINE_SECONDS: "0.5",
      UNSTUCK_KUBE_TIMEOUT_SECONDS: "0.5",
      UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS: "1",
    });
    // On its own redis-server (to freeze it), not the test Redis a world shares: a config of its own.
    ({ runtime, events } = await bootRuntime({ config, services: { kube: noKube } }));
    pid = Number((await runtime.redis.info("server")).match(/process_id:(\d+)/)?.[1]);
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, "SIGSTOP");
  });
  afterAll(async () => {
    process.kill(pid, "SIGCONT");
    await runtime.stop();
    await redis.stop();
    await fake.stop();
  });

  it("a command that waits on Redis is answered within the command bound, with the reason", async () => {
    const responseId = randomBytes(4).toString("hex");
    const started = Date.now();
    const res = await postSigned(
      events,
      SECRET,
      slashCommandBody({
        text: "approvals",
        userId: "U0ONCALL1",
        channelId: "C0INCIDENT",
        responseUrl: fake.responseUrl(responseId),
      }),
    );
    expect(res.status).toBe(200);
    const answer = await fake.waitForResponse(
      (r) => JSON.stringify(r.body).includes("No answer within"),
      15_000,
    );
    expect(Date.now() - started).toBeLessThan(6_000 + 3_000);
    expect(JSON.stringify(answer.body)).toContain("not answering");
  });

  it("stops within the shutdown bound", async () => {
    const started = Date.now();
    await runtime.stop();
    expect(Date.now() - started).toBeLessThan(1_000 + 1_500);
  });
});
