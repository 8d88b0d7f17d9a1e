/**
 * BullMQ and the approval store on a Redis Cluster: three `redis-server --cluster-enabled yes`
 * processes on loopback ports, joined by `redis-cli --cluster create`. Every key lives under one
 * hash-tagged prefix (`{unstuck-…}`), so a BullMQ queue's keys and each approval script's keys
 * (request, votes, pending set, open pointer, audit stream) hash to one slot, as Lua on a cluster
 * requires. An approval request → approve → the action job runs exactly once.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "bullmq";
import { Cluster, type Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueues, executionEnqueuer, executionJobId } from "../../../src/jobs/queues.js";
import { createActionsWorker } from "../../../src/jobs/workers.js";
import { INGRESS } from "../approvals/helpers/fake-kube.js";
import { alice, bob, createHarness, requestRemoval, seedIngress } from "../approvals/helpers/harness.js";
import { eventually } from "../approvals/helpers/redis.js";

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
    // The approval store and BullMQ take ioredis's Redis; a Cluster client speaks the same commands.
    const connection = cluster as unknown as Redis;
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
      const done = await eventually(
        async () => {
          const r = await h.store.get(req.id);
          return r && ["DONE", "FAILED", "STALE"].includes(r.state) ? r : undefined;
        },
        20_000,
        "the request to finish",
      );
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
