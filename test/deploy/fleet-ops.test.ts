/**
 * The ops endpoints of a fleet (`src/ops-target.ts` wired as `src/main.ts` wires it, over the ops
 * server): the bot (`UNSTUCK_ROLE=bot`, no `UNSTUCK_CLUSTER_NAME`) holds no kubeconfig, so `/readyz`
 * checks Redis (and Slack, degrading) and never a Kubernetes API; `/metrics` counts the jobs of every
 * cluster's queues and says how many live workers each cluster has. A fleet's worker keeps its
 * Kubernetes check and counts its own cluster's queues. Real Redis, the Kubernetes simulator, the fake
 * Slack.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { FleetPresence } from "../../src/fleet/presence.js";
import { runtimeTarget } from "../../src/ops-target.js";
import { startOpsServer, type OpsServer } from "../../src/ops/server.js";
import { FleetQueues } from "../../src/wiring/fleet.js";
import { client, deleteKeysWithPrefix, uniquePrefix } from "../helpers/redis.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import { startFakeSlack, type FakeSlack } from "../sim/slack/fake-slack.js";

const log = pino({ level: "silent" });
const TOKEN = "xoxb-fleet-ops";
const prefix = uniquePrefix("fleet-ops");
const CLUSTERS_YAML = "clusters:\n  c1: { region: r }\n  c2: { region: r }\n  c3: { region: r }\n";

let kube: KubeSim;
let slack: FakeSlack;
let redis: Redis;
let queueRedis: Redis;
let dir: string;
let queues: FleetQueues;
let presence: FleetPresence;
let server: OpsServer | undefined;

function configFor(extra: Record<string, string>) {
  return loadConfig(
    {
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_SIGNING_SECRET: "fleet-ops-signing-secret",
      SLACK_API_URL: slack.url,
      UNSTUCK_REDIS_PREFIX: prefix,
      UNSTUCK_CLUSTERS_FILE: "/etc/unstuck/clusters.yaml",
      ...extra,
    },
    () => CLUSTERS_YAML,
  );
}

async function serve(config: ReturnType<typeof configFor>, connection: Redis = redis): Promise<OpsServer> {
  const s = await startOpsServer({ port: 0, host: "127.0.0.1", log, cacheMs: 0, checkTimeoutMs: 2_000 });
  const own = queues.queues(config.clusterName ?? "c1");
  s.attach(
    runtimeTarget(
      config,
      { redis: connection, queues: own, fleet: { queues, presence } },
      { timeoutMs: 2_000 },
    ),
  );
  return s;
}

async function get(path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${String(server?.port)}${path}`);
  return { status: res.status, body: await res.text() };
}

/** A port nothing listens on: a Redis that is down. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  kube = await startKubeSim();
  slack = await startFakeSlack({ token: TOKEN });
  dir = await mkdtemp(join(tmpdir(), "unstuck-fleet-ops-"));
  await kube.writeKubeconfig(join(dir, "kubeconfig"));
  redis = client();
  queueRedis = client();
  queues = new FleetQueues(queueRedis, `${prefix}:bull`, log);
  presence = new FleetPresence(redis, prefix);
  // c1: two live workers; c2: one that stopped; c3: never seen.
  const now = new Date();
  await presence.beat("c1", "w1", 60_000, now);
  await presence.beat("c1", "w2", 60_000, now);
  await presence.beat("c2", "w3", 60_000, now);
  await presence.leave("c2", "w3", now);
  // Work waiting on c2 and c3 only: the bot's metrics must see it although its "own" queues are c1's.
  await queues.queues("c2").actions.add("remove-finalizer", { requestId: "r-c2" });
  await queues.queues("c3").waits.add("ns-gone", { namespace: "myapp" });
  await queues.queues("c3").waits.add("ns-gone", { namespace: "payments" });
}, 30_000);

afterEach(async () => {
  await server?.close();
  server = undefined;
});

afterAll(async () => {
  await queues.close();
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
  queueRedis.disconnect();
  await slack.stop();
  await kube.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("ops endpoints of a fleet", () => {
  it("the bot is ready on Redis alone (no Kubernetes check: it has no kubeconfig)", async () => {
    // A kubeconfig path that does not exist: a check of it would fail.
    const config = configFor({ UNSTUCK_ROLE: "bot", KUBECONFIG: join(dir, "missing-kubeconfig") });
    expect(config.fleet?.clusters).toHaveLength(3);
    expect(config.clusterName).toBeUndefined();
    server = await serve(config);
    const r = await get("/readyz");
    expect(r.status).toBe(200);
    const body = JSON.parse(r.body);
    expect(body).toMatchObject({ ready: true });
    expect(body.checks.map((c: { name: string }) => c.name)).toEqual(["redis", "slack"]);
    expect((await get("/metrics")).body).not.toContain('dependency="kubernetes"');
  }, 20_000);

  it("the bot is unready when Redis does not answer", async () => {
    const gone = new Redis(`redis://127.0.0.1:${String(await closedPort())}`, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    gone.on("error", () => undefined);
    try {
      server = await serve(configFor({ UNSTUCK_ROLE: "bot" }), gone);
      const r = await get("/readyz");
      expect(r.status).toBe(503);
      expect(JSON.parse(r.body).checks[0]).toMatchObject({ name: "redis", ok: false, required: true });
    } finally {
      gone.disconnect();
    }
  }, 20_000);

  it("the bot's metrics count every cluster's queues and each cluster's live workers", async () => {
    server = await serve(configFor({ UNSTUCK_ROLE: "bot" }));
    const lines = (await get("/metrics")).body.split("\n");
    expect(lines).toContain('unstuck_cluster_workers{cluster="c1"} 2');
    expect(lines).toContain('unstuck_cluster_workers{cluster="c2"} 0');
    expect(lines).toContain('unstuck_cluster_workers{cluster="c3"} 0');
    expect(lines).toContain('unstuck_jobs{queue="actions@c2",state="waiting"} 1');
    expect(lines).toContain('unstuck_jobs{queue="waits@c3",state="waiting"} 2');
    for (const c of ["c1", "c2", "c3"]) {
      for (const q of ["actions", "waits", "commands"]) {
        expect(lines.some((l) => l.startsWith(`unstuck_jobs{queue="${q}@${c}",state="waiting"}`))).toBe(true);
      }
    }
  }, 20_000);

  it("a fleet's worker checks its Kubernetes API and counts its own cluster's queues", async () => {
    const config = configFor({
      UNSTUCK_ROLE: "worker",
      UNSTUCK_CLUSTER_NAME: "c2",
      KUBECONFIG: join(dir, "kubeconfig"),
    });
    server = await serve(config);
    const r = await get("/readyz");
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).checks.map((c: { name: string }) => c.name)).toEqual(["redis", "kubernetes"]);
    const lines = (await get("/metrics")).body.split("\n");
    expect(lines).toContain('unstuck_jobs{queue="actions@c2",state="waiting"} 1');
    expect(lines.some((l) => l.includes('queue="waits@c3"'))).toBe(false);
    expect(lines.some((l) => l.includes('queue="actions@c1"'))).toBe(false);
    expect(lines).toContain('unstuck_cluster_workers{cluster="c1"} 2');
  }, 20_000);
});
