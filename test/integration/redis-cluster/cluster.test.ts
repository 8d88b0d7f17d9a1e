/**
 * BullMQ and the approval store on a Redis Cluster: three `redis-server --cluster-enabled yes`
 * processes on loopback ports, joined by `redis-cli --cluster create`. Every key lives under one
 * hash-tagged prefix (`{unstuck-…}`), so a BullMQ queue's keys and each approval script's keys
 * (request, votes, pending set, open pointer, audit stream) hash to one slot, as Lua on a cluster
 * requires. An approval request → approve → the action job runs exactly once.
 *
 * Then the runtime as `main.ts` builds it, from `REDIS_URL=redis+cluster://…` and a hash-tagged
 * `UNSTUCK_REDIS_PREFIX`: the start-up checks look at every primary, the ops readiness pings the
 * cluster, and a signed slash command → approval click → exactly one PATCH reaches the Kubernetes
 * simulator; the terminal reads the same request through the cluster.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "bullmq";
import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../src/cli.js";
import { loadConfig } from "../../../src/config.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { runtimeTarget } from "../../../src/ops-target.js";
import type { RedisConnection } from "../../../src/redis-connection.js";
import type { Runtime } from "../../../src/runtime.js";
import { checkStartup, StartupError } from "../../../src/startup.js";
import { buttonValue } from "../../e2e/block-kit.js";
import { botEnv } from "../../e2e/bot-env.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import {
  blockActionsBody,
  postSigned,
  slashCommandBody,
  startFakeSlack,
  type FakeSlack,
} from "../../sim/slack/index.js";
import { createQueues, executionEnqueuer, executionJobId } from "../../../src/jobs/queues.js";
import { createActionsWorker } from "../../../src/jobs/workers.js";
import { INGRESS } from "../approvals/helpers/fake-kube.js";
import { alice, bob, createHarness, requestRemoval, seedIngress } from "../approvals/helpers/harness.js";
import { eventually, pause } from "../../helpers/eventually.js";
import { requestSettled, SETTLED_STATES } from "../../helpers/requests.js";
import { bootRuntime } from "../../helpers/world.js";
import { linesIo } from "../../helpers/cli-io.js";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function which(tool: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0;
}

let dir: string;
const servers: ChildProcess[] = [];
let ports: number[] = [];
let cluster: Cluster;

beforeAll(async () => {
  for (const tool of ["redis-server", "redis-cli"]) {
    if (!which(tool)) {
      throw new Error(
        `${tool} is missing: the Redis Cluster test starts a local cluster (.ci/run installs it)`,
      );
    }
  }
  dir = await mkdtemp(join(tmpdir(), "unstuck-cluster-"));
  ports = [await freePort(), await freePort(), await freePort()];
  for (const port of ports) {
    const child = spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        join(dir, `nodes-${String(port)}.conf`),
        "--appendonly",
        "no",
        "--save",
        "",
        "--dir",
        dir,
      ],
      { stdio: "ignore" },
    );
    servers.push(child);
  }
  for (const port of ports) {
    await eventually(
      () =>
        spawnSync("redis-cli", ["-p", String(port), "ping"])
          .stdout.toString()
          .trim() === "PONG"
          ? true
          : undefined,
      10_000,
      `redis-server on ${String(port)}`,
    );
  }
  const created = spawnSync(
    "redis-cli",
    [
      "--cluster",
      "create",
      ...ports.map((p) => `127.0.0.1:${String(p)}`),
      "--cluster-replicas",
      "0",
      "--cluster-yes",
    ],
    { encoding: "utf8" },
  );
  if (created.status !== 0)
    throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
  await eventually(
    () =>
      /cluster_state:ok/.test(
        spawnSync("redis-cli", ["-p", String(ports[0]), "cluster", "info"]).stdout.toString(),
      )
        ? true
        : undefined,
    15_000,
    "cluster_state:ok",
  );
  cluster = new Cluster(
    ports.map((port) => ({ host: "127.0.0.1", port })),
    { redisOptions: { maxRetriesPerRequest: null } },
  );
}, 60_000);

afterAll(async () => {
  await cluster?.quit().catch(() => undefined);
  for (const s of servers) s.kill("SIGTERM");
  await Promise.all(
    servers.map((s) => new Promise((r) => (s.exitCode !== null ? r(null) : s.once("exit", r)))),
  );
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("Redis Cluster", () => {
  it("approval request -> approve -> the action job runs exactly once, every key of the prefix in one slot", async () => {
    const prefix = `{unstuck-${randomBytes(4).toString("hex")}}`;
    // The approval store, the audit log and BullMQ take a single Redis or a Cluster alike.
    const connection: RedisConnection = cluster;
    const queues = createQueues({ connection, prefix: `${prefix}:bull` });
    const enqueue = executionEnqueuer(queues.actions, { attempts: 3, backoffMs: 20 });
    const h = createHarness({ prefix, redis: connection, enqueue });
    const workers: Worker[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        workers.push(
          createActionsWorker(
            { connection, prefix: `${prefix}:bull` },
            {
              store: h.store,
              signer: h.signer,
              policy: h.policy,
              kube: h.fake,
              audit: h.audit,
              now: () => new Date(),
              notifier: h.notifier,
            },
          ),
        );
      }
      seedIngress(h, ["ingress.k8s.aws/resources", "example.com/keep"]);
      const req = await requestRemoval(h, alice, { finalizer: "ingress.k8s.aws/resources" });
      await h.workflow.vote(req.id, bob, "approve");
      const done = await requestSettled(h.store, req.id, SETTLED_STATES, 20_000);
      expect(done.state).toBe("DONE");
      expect(h.fake.applied).toHaveLength(1);
      expect(h.fake.peek(INGRESS, "myapp", "myapp-worker-ingress")?.finalizers).toEqual(["example.com/keep"]);
      const job = await queues.actions.getJob(executionJobId(req.id));
      expect(await job?.getState()).toBe("completed");
      expect(job?.attemptsMade).toBe(1);

      // Every key written lives on one node, in the prefix's slot.
      const slot = await cluster.cluster("KEYSLOT", prefix);
      const keysPerNode = await Promise.all(
        cluster.nodes("master").map(async (node) => node.keys(`${prefix}*`)),
      );
      const keys = keysPerNode.flat();
      expect(keys.length).toBeGreaterThan(3);
      expect(keysPerNode.filter((k) => k.length > 0)).toHaveLength(1);
      for (const key of keys) expect(await cluster.cluster("KEYSLOT", key)).toBe(slot);
    } finally {
      await Promise.all(workers.map((w) => w.close()));
      await queues.close();
    }
  }, 60_000);
});

describe("the runtime on a Redis Cluster (REDIS_URL=redis+cluster://…)", () => {
  const SECRET = "cluster-runtime-signing-secret";
  const TOKEN = "xoxb-cluster-runtime-token";
  const CHANNEL = "C0INCIDENT";
  const REQUESTER = "U0ONCALL1";
  const APPROVER = "U0APPROVER1";
  const APPROVE = "approval:approve";
  let sim: KubeSim;
  let fake: FakeSlack;
  let runtime: Runtime | undefined;
  let kubeconfig: string;
  const prefix = `{unstuck-rt-${randomBytes(4).toString("hex")}}`;

  beforeAll(async () => {
    sim = await startKubeSim({
      scenario: "test/fixtures/scenarios/seed-incident.yaml",
      controllerIntervalMs: 200,
    });
    fake = await startFakeSlack({ token: TOKEN });
    kubeconfig = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kubeconfig);
  });

  afterAll(async () => {
    await runtime?.stop();
    await fake?.stop();
    await sim?.stop();
  });

  const env = (extra: Record<string, string> = {}): Record<string, string> =>
    botEnv(
      { token: TOKEN, secret: SECRET, slackUrl: fake.url, prefix },
      {
        REDIS_URL: `redis+cluster://${ports.map((p) => `127.0.0.1:${String(p)}`).join(",")}`,
        KUBECONFIG: kubeconfig,
        UNSTUCK_ROLE: "all",
        UNSTUCK_APPROVERS: APPROVER,
        UNSTUCK_CHANNELS: CHANNEL,
        UNSTUCK_WAIT_INTERVAL_SECONDS: "1",
        UNSTUCK_STARTUP_TIMEOUT_SECONDS: "5",
        ...extra,
      },
    );

  it("start-up checks every primary: a cluster without persistence is refused per node, started with the override", async () => {
    const strict = loadConfig(env());
    expect(strict.redisCluster?.nodes).toHaveLength(3);
    expect(strict.redisPrefix).toBe(prefix);
    const refused = await checkStartup(strict).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(StartupError);
    const message = (refused as Error).message;
    expect(message).toContain(`Redis at cluster ${ports.map((p) => `127.0.0.1:${String(p)}`).join(",")}`);
    for (const port of ports) expect(message).toContain(`127.0.0.1:${String(port)}: no persistence`);
    expect(message).toContain("UNSTUCK_ALLOW_VOLATILE_REDIS");

    const report = await checkStartup(loadConfig(env({ UNSTUCK_ALLOW_VOLATILE_REDIS: "true" })));
    expect(report.ok).toContain("redis");
    expect(report.warnings.join("\n")).toContain("started anyway");
  });

  it("slash command -> approval click -> exactly one PATCH, DONE; ready; the terminal reads it through the cluster", async () => {
    const config = loadConfig(env({ UNSTUCK_ALLOW_VOLATILE_REDIS: "true" }));
    // On a Redis Cluster URL, not the test Redis a world shares: a config of its own; started below.
    ({ runtime } = await bootRuntime({
      config,
      services: { kube: createKubeAdapter(sim.kubeconfig()) },
      start: false,
    }));
    expect(runtime.redis).toBeInstanceOf(Cluster);
    const { port } = await runtime.start();
    const events = `http://127.0.0.1:${String(port)}/slack/events`;

    // The ops readiness pings the runtime's own (cluster) connection.
    const redisCheck = runtimeTarget(config, runtime).checks.find((c) => c.name === "redis");
    await expect(redisCheck?.run()).resolves.toBeUndefined();

    const slash = await postSigned(
      events,
      SECRET,
      slashCommandBody({
        text: 'finalize ingress/myapp-worker-ingress -n myapp --reason "cause confirmed: SG held by an ENI; recovery first"',
        userId: REQUESTER,
        channelId: CHANNEL,
        responseUrl: fake.responseUrl("request"),
      }),
    );
    expect(slash.status).toBe(200);
    const posted = await fake.waitFor(
      "chat.postMessage",
      (c) => JSON.stringify(c.body).includes(APPROVE),
      20_000,
    );
    const id = buttonValue(posted.body["blocks"], APPROVE) ?? "";
    const ts = String(posted.response?.["ts"]);
    const rt = runtime;
    await eventually(
      async () => ((await rt.workflow.get(id))?.message !== undefined ? true : undefined),
      10_000,
      "the request attached to its message",
    );

    sim.resetRequests();
    const click = await postSigned(
      events,
      SECRET,
      blockActionsBody({
        actionId: APPROVE,
        value: id,
        userId: APPROVER,
        channelId: CHANNEL,
        messageTs: ts,
        responseUrl: fake.responseUrl("click"),
      }),
    );
    expect(click.status).toBe(200);
    const done = await requestSettled(rt.workflow, id, [...SETTLED_STATES, "TAMPERED"], 20_000);
    expect(done.state).toBe("DONE");
    // A duplicate execution, if any, would have reached the simulator by now.
    await pause(1_500);
    const patches = sim.requests().filter((r) => r.method === "PATCH");
    expect(patches).toHaveLength(1);
    expect(patches[0]?.status).toBe(200);
    expect(patches[0]?.path).toContain("/namespaces/myapp/ingresses/myapp-worker-ingress");

    // Every key the runtime wrote hashes to the prefix's slot.
    const slot = await cluster.cluster("KEYSLOT", prefix);
    const keys = (await Promise.all(cluster.nodes("master").map((n) => n.keys(`${prefix}*`)))).flat();
    expect(keys.length).toBeGreaterThan(3);
    for (const key of keys) expect(await cluster.cluster("KEYSLOT", key)).toBe(slot);

    // The terminal's `audit` reads the bot's Redis Cluster too.
    const lines: string[] = [];
    const code = await runCli(["audit"], env(), linesIo(lines));
    expect(lines.join("\n")).toContain(id);
    expect(code).toBe(0);
  }, 60_000);
});
