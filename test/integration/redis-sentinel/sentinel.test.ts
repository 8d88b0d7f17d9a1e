/**
 * The bot on a Redis behind Sentinel: a master and a replica (`redis-server` on loopback ports) and a
 * `redis-sentinel` monitoring them, each from its own temporary config, killed after. The bot's
 * connection is built as the runtime builds it (`loadConfig` → `connectRedis`) from
 * `REDIS_URL=redis+sentinel://…/unstuck-master?db=2`, whose first sentinel answers nothing (the client
 * tries the next). An approval request → approve → the BullMQ action job runs exactly once, its keys
 * on the master the sentinel names; then `SENTINEL FAILOVER` promotes the replica and the same
 * connection, the approval store and BullMQ's workers carry on against the new master. The start-up
 * check names the master and the sentinels.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "bullmq";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, type Config } from "../../../src/config.js";
import { createQueues, executionEnqueuer, executionJobId, type Queues } from "../../../src/jobs/queues.js";
import { createActionsWorker } from "../../../src/jobs/workers.js";
import type { RedisConnection } from "../../../src/redis-connection.js";
import { checkStartup, StartupError } from "../../../src/startup.js";
import { connectRedis } from "../../../src/wiring/redis.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { INGRESS } from "../approvals/helpers/fake-kube.js";
import {
  alice,
  bob,
  createHarness,
  requestRemoval,
  seedIngress,
  type Harness,
} from "../approvals/helpers/harness.js";
import { eventually } from "../../helpers/eventually.js";

const MASTER_NAME = "unstuck-master";
const DB = 2;

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

function cli(port: number, ...args: string[]): string {
  return spawnSync("redis-cli", ["-p", String(port), ...args], { encoding: "utf8" }).stdout.trim();
}

let dir: string;
const children: ChildProcess[] = [];
let masterPort: number;
let replicaPort: number;
let sentinelPort: number;
let deadSentinelPort: number;
let config: Config;
let connection: RedisConnection;
let sentinel: Redis;

function serverArgs(port: number): string[] {
  return ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir];
}

function start(command: string, args: string[]): void {
  const child = spawn(command, args, { stdio: "ignore" });
  children.push(child);
}

beforeAll(async () => {
  for (const tool of ["redis-server", "redis-sentinel", "redis-cli"]) {
    if (!which(tool)) {
      const pkg = tool === "redis-cli" ? "redis-tools" : tool;
      throw new Error(
        `${tool} is missing: the Redis Sentinel test starts a local master, replica and sentinel; install it (apt-get install -y ${pkg}; .ci/run installs it)`,
      );
    }
  }
  dir = await mkdtemp(join(tmpdir(), "unstuck-sentinel-"));
  [masterPort, replicaPort, sentinelPort, deadSentinelPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  start("redis-server", serverArgs(masterPort));
  start("redis-server", [...serverArgs(replicaPort), "--replicaof", "127.0.0.1", String(masterPort)]);
  // The replica is linked before the sentinel starts, so the sentinel's first INFO of the master names it.
  await eventually(
    () => (/master_link_status:up/.test(cli(replicaPort, "info", "replication")) ? true : undefined),
    15_000,
    "the replica linked to the master",
  );
  const conf = join(dir, "sentinel.conf");
  await writeFile(
    conf,
    [
      `port ${String(sentinelPort)}`,
      "bind 127.0.0.1",
      "daemonize no",
      `dir ${dir}`,
      `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${String(masterPort)} 1`,
      `sentinel down-after-milliseconds ${MASTER_NAME} 2000`,
      `sentinel failover-timeout ${MASTER_NAME} 10000`,
      "",
    ].join("\n"),
  );
  start("redis-sentinel", [conf]);
  sentinel = new Redis({ port: sentinelPort, host: "127.0.0.1", maxRetriesPerRequest: 3 });
  await eventually(
    async () => {
      const replicas = (await sentinel
        .call("SENTINEL", "REPLICAS", MASTER_NAME)
        .catch(() => [])) as string[][];
      return replicas.some((r) => r.join(" ").includes(String(replicaPort))) ? true : undefined;
    },
    20_000,
    "the sentinel to know the replica",
  );
  config = loadConfig({
    REDIS_URL: `redis+sentinel://127.0.0.1:${String(deadSentinelPort)},127.0.0.1:${String(sentinelPort)}/${MASTER_NAME}?db=${String(DB)}`,
  });
  connection = await connectRedis(config, pino({ level: "silent" }));
}, 60_000);

afterAll(async () => {
  await connection?.quit().catch(() => undefined);
  sentinel?.disconnect();
  for (const c of children) c.kill("SIGTERM");
  await Promise.all(
    children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once("exit", r)))),
  );
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The port of the server the sentinel names as the master now. */
async function masterNow(): Promise<number> {
  const [, port] = (await sentinel.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)) as string[];
  return Number(port);
}

/** Request → approve → the action job; the request once it is DONE. */
async function approveAndRun(h: Harness, queues: Queues): Promise<string> {
  seedIngress(h, ["ingress.k8s.aws/resources", "example.com/keep"]);
  const applied = h.fake.applied.length;
  const req = await requestRemoval(h, alice, { finalizer: "ingress.k8s.aws/resources" });
  await h.workflow.vote(req.id, bob, "approve");
  const done = await eventually(
    async () => {
      const r = await h.store.get(req.id);
      return r && ["DONE", "FAILED", "STALE", "TAMPERED"].includes(r.state) ? r : undefined;
    },
    20_000,
    "the request to finish",
  );
  expect(done.state).toBe("DONE");
  expect(h.fake.applied).toHaveLength(applied + 1);
  expect(h.fake.peek(INGRESS, "myapp", "myapp-worker-ingress")?.finalizers).toEqual(["example.com/keep"]);
  const job = await queues.actions.getJob(executionJobId(req.id));
  expect(await job?.getState()).toBe("completed");
  expect(job?.attemptsMade).toBe(1);
  return req.id;
}

describe("Redis Sentinel (REDIS_URL=redis+sentinel://…)", () => {
  it("reads the URL: the sentinels, the master's name, the database", () => {
    expect(config.redisSentinel).toEqual({
      sentinels: [
        { host: "127.0.0.1", port: deadSentinelPort },
        { host: "127.0.0.1", port: sentinelPort },
      ],
      masterName: MASTER_NAME,
      db: DB,
      tls: false,
    });
    expect(config.redisPrefix).toBe("unstuck");
  });

  it("approval → BullMQ action exactly once on the master; after SENTINEL FAILOVER the same connection and workers carry on", async () => {
    const prefix = `unstuck-sentinel-${randomBytes(4).toString("hex")}`;
    const queues = createQueues({ connection, prefix: `${prefix}:bull` });
    const enqueue = executionEnqueuer(queues.actions, { attempts: 3, backoffMs: 20 });
    const h = createHarness({ prefix, redis: connection, enqueue });
    const workers: Worker[] = [];
    const direct: Redis[] = [];
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
      const first = await approveAndRun(h, queues);
      // The keys are on the master the sentinel names, in database 2.
      expect(await masterNow()).toBe(masterPort);
      const onMaster = new Redis({ port: masterPort, db: DB, maxRetriesPerRequest: 3 });
      direct.push(onMaster);
      expect((await onMaster.keys(`${prefix}:*`)).length).toBeGreaterThan(3);
      expect((await onMaster.keys(`${prefix}:*`)).some((k) => k.includes(first))).toBe(true);
      const db0 = new Redis({ port: masterPort, db: 0, maxRetriesPerRequest: 3 });
      direct.push(db0);
      expect(await db0.dbsize()).toBe(0);

      // Failover: the sentinel promotes the replica; the client follows it.
      await eventually(
        async () =>
          await sentinel.call("SENTINEL", "FAILOVER", MASTER_NAME).then(
            () => true,
            () => undefined,
          ),
        15_000,
        "the sentinel to accept SENTINEL FAILOVER",
      );
      await eventually(
        async () => ((await masterNow()) === replicaPort ? true : undefined),
        20_000,
        "the sentinel to name the promoted replica",
      );
      await eventually(
        async () => {
          const port = await connection.config("GET", "port");
          return port[1] === String(replicaPort) ? true : undefined;
        },
        // The sentinels' +switch-master moves it at once (ioredis' failover detector); without it the
        // client would stay on the old master until the sentinel demotes it, about ten seconds later.
        5_000,
        "the bot's connection to reach the new master",
      );
      const second = await approveAndRun(h, queues);
      const onNew = new Redis({ port: replicaPort, db: DB, maxRetriesPerRequest: 3 });
      direct.push(onNew);
      expect(((await onNew.call("ROLE")) as unknown[])[0]).toBe("master");
      const keys = await onNew.keys(`${prefix}:*`);
      expect(keys.some((k) => k.includes(first))).toBe(true);
      expect(keys.some((k) => k.includes(second))).toBe(true);
      // The first request, written before the failover, is still readable through the bot.
      expect((await h.store.get(first))?.state).toBe("DONE");
    } finally {
      await Promise.all(workers.map((w) => w.close()));
      await queues.close();
      for (const r of direct) r.disconnect();
    }
  }, 90_000);

  describe("the start-up check", () => {
    let sim: KubeSim;
    let kubeconfig: string;
    beforeAll(async () => {
      sim = await startKubeSim({ scenario: "test/fixtures/scenarios/seed-incident.yaml" });
      kubeconfig = join(dir, "kubeconfig");
      await sim.writeKubeconfig(kubeconfig);
    });
    afterAll(async () => {
      await sim?.stop();
    });

    it("names the master and its sentinels; a master without persistence is refused, started with the override", async () => {
      const env = {
        REDIS_URL: `redis+sentinel://127.0.0.1:${String(sentinelPort)}/${MASTER_NAME}`,
        KUBECONFIG: kubeconfig,
        UNSTUCK_STARTUP_TIMEOUT_SECONDS: "5",
      };
      const refused = await checkStartup(loadConfig(env)).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(StartupError);
      const message = (refused as Error).message;
      expect(message).toContain(
        `Redis at master "${MASTER_NAME}" via sentinels 127.0.0.1:${String(sentinelPort)} is not fit to keep approvals and jobs: no persistence`,
      );
      expect(message).toContain("UNSTUCK_ALLOW_VOLATILE_REDIS");
      const report = await checkStartup(loadConfig({ ...env, UNSTUCK_ALLOW_VOLATILE_REDIS: "true" }));
      expect(report.ok).toEqual(expect.arrayContaining(["redis", "kubernetes"]));
    });

    it("a master name the sentinel does not monitor: unreachable, naming the master", async () => {
      const refused = await checkStartup(
        loadConfig({
          REDIS_URL: `redis+sentinel://127.0.0.1:${String(sentinelPort)}/no-such-master`,
          KUBECONFIG: kubeconfig,
          UNSTUCK_STARTUP_TIMEOUT_SECONDS: "5",
        }),
      ).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(StartupError);
      expect((refused as Error).message).toMatch(
        new RegExp(
          `Redis at master "no-such-master" via sentinels 127\\.0\\.0\\.1:${String(sentinelPort)} (is unreachable|did not answer)`,
        ),
      );
    });
  });
});
