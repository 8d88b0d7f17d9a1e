/**
 * What `/readyz` depends on, by role (`src/ops-target.ts` wired as `src/main.ts` wires it, over the
 * ops server): Redis and the Kubernetes API make any process unready; a worker never checks Slack; for
 * the Slack-facing roles a Slack outage degrades (`degraded` in the body,
 * `unstuck_dependency_up{dependency="slack"} 0`) without making the pod unready — so an outage of
 * Slack does not take every pod of the release out of its Services. Real Redis, the Kubernetes
 * simulator, the fake Slack failing `auth.test` at the HTTP wire.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, type Role } from "../../src/config.js";
import { runtimeTarget } from "../../src/ops-target.js";
import { startOpsServer, type OpsServer } from "../../src/ops/server.js";
import { client, uniquePrefix } from "../helpers/redis.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import { startFakeSlack, type FakeSlack } from "../sim/slack/fake-slack.js";
import { keyEnv } from "../helpers/keys.js";
import { kubeconfigFor } from "../helpers/kubeconfig.js";

const log = pino({ level: "silent" });
const TOKEN = "xoxb-readiness-roles";
const prefix = uniquePrefix("readiness-roles");

let kube: KubeSim;
let slack: FakeSlack;
let redis: Redis;
let dir: string;
let server: OpsServer | undefined;

/** A port nothing listens on: a Redis that is down. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

function configFor(role: Role, env: Record<string, string> = {}) {
  return loadConfig({
    UNSTUCK_ROLE: role,
    SLACK_BOT_TOKEN: TOKEN,
    // The Slack-facing roles receive from Slack; a worker only posts (the bot token alone).
    ...(role === "worker" ? {} : { SLACK_SIGNING_SECRET: "readiness-roles-signing-secret" }),
    SLACK_API_URL: slack.url,
    KUBECONFIG: join(dir, "kubeconfig"),
    ...keyEnv(role),
    UNSTUCK_REDIS_PREFIX: prefix,
    ...env,
  });
}

async function serve(
  role: Role,
  redisConnection: Redis = redis,
  env: Record<string, string> = {},
): Promise<OpsServer> {
  const s = await startOpsServer({ port: 0, host: "127.0.0.1", log, cacheMs: 0, checkTimeoutMs: 2_000 });
  s.attach(
    runtimeTarget(configFor(role, env), { redis: redisConnection, queues: {}, role }, { timeoutMs: 2_000 }),
  );
  return s;
}

async function get(path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${String(server?.port)}${path}`);
  return { status: res.status, body: await res.text() };
}

const authTests = (): number => slack.calls().filter((c) => c.method === "auth.test").length;

beforeAll(async () => {
  kube = await startKubeSim();
  slack = await startFakeSlack({ token: TOKEN });
  dir = await mkdtemp(join(tmpdir(), "unstuck-readiness-"));
  await kube.writeKubeconfig(join(dir, "kubeconfig"));
  redis = client();
}, 30_000);

afterEach(async () => {
  await server?.close();
  server = undefined;
  slack.setFault("auth.test", undefined);
});

afterAll(async () => {
  redis.disconnect();
  await slack.stop();
  await kube.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("/readyz by role", () => {
  it.each(["bot", "all"] as const)(
    "%s: a Slack outage degrades (body and metric) without making the process unready; back to normal once Slack answers",
    async (role) => {
      server = await serve(role);
      slack.setFault("auth.test", { kind: "http", status: 503 });
      const down = await get("/readyz");
      expect(down.status).toBe(200);
      const body = JSON.parse(down.body);
      expect(body).toMatchObject({ ready: true, degraded: true, state: "running" });
      expect(body.checks).toEqual([
        expect.objectContaining({ name: "redis", ok: true, required: true }),
        // Receiving Slack over HTTP (a signing secret, no app token): see the Kubernetes API test below.
        expect.objectContaining({ name: "kubernetes", ok: true, required: false }),
        expect.objectContaining({ name: "slack", ok: false, required: false }),
      ]);
      const metrics = (await get("/metrics")).body.split("\n");
      expect(metrics).toContain('unstuck_dependency_up{dependency="slack"} 0');
      expect(metrics).toContain('unstuck_dependency_up{dependency="redis"} 1');
      expect(metrics).toContain("unstuck_ready 1");
      expect(metrics).toContain("unstuck_degraded 1");

      slack.setFault("auth.test", undefined);
      const up = await get("/readyz");
      expect(up.status).toBe(200);
      expect(JSON.parse(up.body)).toMatchObject({ ready: true, degraded: false });
      const after = (await get("/metrics")).body.split("\n");
      expect(after).toContain('unstuck_dependency_up{dependency="slack"} 1');
      expect(after).toContain("unstuck_degraded 0");
    },
    20_000,
  );

  it("worker: never checks Slack, so a Slack outage leaves it ready and not degraded", async () => {
    server = await serve("worker");
    slack.setFault("auth.test", { kind: "http", status: 503 });
    const before = authTests();
    const r = await get("/readyz");
    expect(r.status).toBe(200);
    const body = JSON.parse(r.body);
    expect(body).toMatchObject({ ready: true, degraded: false });
    expect(body.checks.map((c: { name: string }) => c.name)).toEqual(["redis", "kubernetes"]);
    const metrics = (await get("/metrics")).body;
    expect(metrics).not.toContain('dependency="slack"');
    expect(authTests()).toBe(before);
  }, 20_000);

  it.each([
    { role: "bot", mode: "http", ready: true },
    { role: "all", mode: "http", ready: true },
    { role: "bot", mode: "socket", ready: false },
    { role: "worker", mode: "-", ready: false },
  ] as const)(
    "$role ($mode): the Kubernetes API down makes it unready unless it receives Slack over HTTP, where it degrades",
    async ({ role, mode, ready }) => {
      // A kubeconfig whose API server does not answer.
      const gone = join(dir, "gone.kubeconfig");
      const { writeFile } = await import("node:fs/promises");
      await writeFile(gone, kubeconfigFor(`http://127.0.0.1:${String(await closedPort())}`));
      server = await serve(role, redis, {
        KUBECONFIG: gone,
        ...(mode === "socket" ? { SLACK_APP_TOKEN: "xapp-readiness-roles" } : {}),
      });
      const r = await get("/readyz");
      const body = JSON.parse(r.body);
      expect(r.status).toBe(ready ? 200 : 503);
      expect(body).toMatchObject({ ready, degraded: ready });
      expect(body.checks).toContainEqual(
        expect.objectContaining({ name: "kubernetes", ok: false, required: !ready }),
      );
    },
    20_000,
  );

  it.each(["bot", "worker"] as const)(
    "%s: Redis stays a readiness dependency: unready (503) when it does not answer",
    async (role) => {
      const gone = new Redis(`redis://127.0.0.1:${String(await closedPort())}`, {
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      gone.on("error", () => undefined);
      try {
        server = await serve(role, gone);
        const r = await get("/readyz");
        expect(r.status).toBe(503);
        const body = JSON.parse(r.body);
        expect(body.ready).toBe(false);
        expect(body.checks[0]).toMatchObject({ name: "redis", ok: false, required: true });
      } finally {
        gone.disconnect();
      }
    },
    20_000,
  );
});
