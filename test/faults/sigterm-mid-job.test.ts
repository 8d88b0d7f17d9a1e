/**
 * SIGTERM with an approved change in flight, on the real entry point as a process: the bot
 * (`UNSTUCK_ROLE=all`) takes the request and the approval over signed HTTP, its worker claims the
 * execution and sends the PATCH, which the API server (the kube simulator's `hang` fault) never
 * answers. SIGTERM then: the process stops within UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS, handing the
 * running job back; a second process (`UNSTUCK_ROLE=worker`) takes it at once (not after the lock
 * expires), resumes the interrupted attempt and finishes it exactly once: the request ends DONE
 * with one applied PATCH, nothing lost.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../helpers/redis.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import { eventually, pause } from "../helpers/eventually.js";
import {
  blockActionsBody,
  postSigned,
  slashCommandBody,
  startFakeSlack,
  type FakeSlack,
} from "../sim/slack/index.js";
import { buttonValue } from "../e2e/block-kit.js";
import { freePort, runMain, stopChild, type MainRun } from "./helpers.js";
import { keyEnv } from "../helpers/keys.js";

const TOKEN = "xoxb-sigterm-test-token";
const SECRET = "sigterm-signing-secret";
const CHANNEL = "C0INCIDENT";
const REQUESTER = "U0ONCALL1";
const APPROVER = "U0APPROVER1";
const APPROVE = "approval:approve";
const SHUTDOWN_SECONDS = 4;
const INGRESS = ["networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress"] as const;

describe("SIGTERM while an approved change is being executed", () => {
  let fake: FakeSlack;
  let sim: KubeSim;
  let dir: string;
  let redis: Redis;
  let env: Record<string, string>;
  const prefix = uniquePrefix("sigterm");
  const runs: MainRun[] = [];

  beforeAll(async () => {
    fake = await startFakeSlack({ token: TOKEN });
    sim = await startKubeSim({
      scenario: "test/fixtures/scenarios/seed-incident.yaml",
      controllerIntervalMs: 200,
    });
    dir = await mkdtemp(join(tmpdir(), "unstuck-sigterm-"));
    await sim.writeKubeconfig(join(dir, "kubeconfig"));
    redis = client();
    env = {
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_API_URL: fake.url,
      KUBECONFIG: join(dir, "kubeconfig"),
      REDIS_URL,
      UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
      UNSTUCK_REDIS_PREFIX: prefix,
      ...keyEnv(),
      UNSTUCK_APPROVERS: APPROVER,
      UNSTUCK_CHANNELS: CHANNEL,
      UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS: String(SHUTDOWN_SECONDS),
      // The hung PATCH must outlast the shutdown: it is the stop that ends it, not a timeout.
      UNSTUCK_KUBE_TIMEOUT_SECONDS: "60",
      UNSTUCK_WAIT_INTERVAL_SECONDS: "600",
      UNSTUCK_STARTUP_TIMEOUT_SECONDS: "10",
      UNSTUCK_LOG_LEVEL: "info",
    };
  });
  afterAll(async () => {
    for (const run of runs) await stopChild(run.child);
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
    await fake.stop();
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const started = async (run: MainRun): Promise<void> => {
    runs.push(run);
    await eventually(
      () => (run.stdout().includes("unstuck is running") ? true : undefined),
      30_000,
      `the process started (stderr: ${run.stderr()})`,
    );
  };

  it("exits within the shutdown bound, and a second process finishes the job exactly once", async () => {
    const port = await freePort();
    const slackEvents = `http://127.0.0.1:${String(port)}/slack/events`;
    const first = runMain({
      ...env,
      UNSTUCK_ROLE: "all",
      SLACK_SIGNING_SECRET: SECRET,
      PORT: String(port),
    });
    await started(first);

    const res = await postSigned(
      slackEvents,
      SECRET,
      slashCommandBody({
        text: 'finalize ingress/myapp-worker-ingress -n myapp --reason "cause confirmed: SG held by an ENI; recovery first"',
        userId: REQUESTER,
        channelId: CHANNEL,
        responseUrl: fake.responseUrl("request"),
      }),
    );
    expect(res.status).toBe(200);
    const posted = await fake.waitFor(
      "chat.postMessage",
      (c) => JSON.stringify(c.body).includes(APPROVE),
      20_000,
    );
    const id = buttonValue(posted.body["blocks"], APPROVE) ?? "";
    const ts = String(posted.response?.["ts"]);
    expect(id).not.toBe("");

    // The API server takes the PATCH and never answers.
    sim.setFaults({ hang: { method: "PATCH" } });
    sim.resetRequests();
    const click = await postSigned(
      slackEvents,
      SECRET,
      blockActionsBody({
        actionId: APPROVE,
        value: id,
        userId: APPROVER,
        channelId: CHANNEL,
        messageTs: ts,
        responseUrl: fake.responseUrl("approve"),
      }),
    );
    expect(click.status).toBe(200);
    // Claimed and executing (the message says so), then the PATCH is sent and hangs.
    await eventually(
      () =>
        fake
          .calls()
          .some(
            (c) =>
              c.method === "chat.update" && c.body["ts"] === ts && /EXECUTING/.test(String(c.body["text"])),
          )
          ? true
          : undefined,
      20_000,
      "the request EXECUTING",
    );
    await pause(1_000);
    expect(sim.store.get(...INGRESS)?.metadata?.finalizers).toEqual(["ingress.k8s.aws/resources"]);

    const signalled = Date.now();
    first.child.kill("SIGTERM");
    const exit = await first.exited;
    const stopMs = Date.now() - signalled;
    expect(exit.code, first.stderr()).toBe(0);
    expect(stopMs).toBeLessThan(SHUTDOWN_SECONDS * 1000 + 1_000);
    expect(first.stdout()).toContain("job handed back on shutdown");
    // The hung PATCH was never applied.
    expect(sim.store.get(...INGRESS)?.metadata?.finalizers).toEqual(["ingress.k8s.aws/resources"]);

    // The API server answers again; a worker process takes the job over.
    sim.setFaults({});
    sim.resetRequests();
    const second = runMain({
      ...env,
      ...keyEnv("worker"),
      UNSTUCK_BOT_SIGNING_KEY: "",
      UNSTUCK_ROLE: "worker",
      PORT: "0",
    });
    const takenOver = Date.now();
    await started(second);
    await eventually(
      () => (/\[DONE\]/.test(String(fake.message(CHANNEL, ts)?.text)) ? true : undefined),
      // Well under a lock expiry (30 s) plus a stalled check: the job was handed back, not found stalled.
      20_000,
      "the request DONE",
    );
    expect(Date.now() - takenOver).toBeLessThan(25_000);
    const patches = sim.requests().filter((r) => r.method === "PATCH");
    expect(patches).toHaveLength(1);
    expect(patches[0]?.status).toBe(200);
    // The Ingress lost its finalizer (and, being deleted, is gone).
    expect(sim.store.get(...INGRESS)?.metadata?.finalizers ?? []).toEqual([]);
    // The second attempt resumed the first one's claim; the request ended once.
    const events = (await redis.xrange(`${prefix}:audit`, "-", "+"))
      .map(
        ([, fields]) =>
          JSON.parse(fields[1] ?? "{}") as { event?: string; requestId?: string; after?: string },
      )
      .filter((e) => e.requestId === id);
    expect(events.filter((e) => e.event === "execution.resumed")).toHaveLength(1);
    expect(events.filter((e) => e.after === "DONE")).toHaveLength(1);

    second.child.kill("SIGTERM");
    const secondExit = await second.exited;
    expect(secondExit.code, second.stderr()).toBe(0);
  });
});
