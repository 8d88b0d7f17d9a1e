/**
 * The bot on a Redis behind Sentinel: a master and a replica (`redis-server` on loopback ports) and a
 * `redis-sentinel` monitoring them, each from its own temporary config, killed after. The bot's
 * connection is built as the runtime builds it (`loadConfig` → `connectRedis`) from
 * `REDIS_URL=redis+sentinel://…/unstuck-master?db=2`, whose first sentinel answers nothing (the client
 * tries the next). An approval request → approve → the BullMQ action job runs exactly once, its keys
 * on the master the sentinel names; then `SENTINEL FAILOVER` promotes the replica (once it holds
 * everything the master wrote) and the same connection, the approval store and BullMQ's workers carry
 * on against the new master, none of them left on the old one. The start-up check names the master
 * and the sentinels.
 *
 * Every wait is bounded and names what did not happen; a Redis call inside a wait is bounded too
 * (`eventually`'s `boundEachCheck`: a command queued on a connection that never reconnects would
 * otherwise wait for ever).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
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
import { eventually, type EventuallyOptions } from "../../helpers/eventually.js";
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

const MASTER_NAME = "unstuck-master";
const DB = 2;
/** The name of the test's own connections, so they are told apart from the bot's in CLIENT LIST. */
const PROBE = "sentinel-test-probe";
const FINAL = ["DONE", "FAILED", "STALE", "TAMPERED"];

// ---------------------------------------------------------------------------------------------
// Bounded waits

/** `promise`, or an error naming `what` after `ms`. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`timed out after ${String(ms)} ms: ${what}`));
    }, ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * How every wait here polls: each check bounded by what is left, a check that throws retried (the last
 * error and what was last seen go in the message).
 */
const BOUNDED: EventuallyOptions = { boundEachCheck: true, retryErrors: true, intervalMs: 50 };

// ---------------------------------------------------------------------------------------------
// The servers

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

let dir: string | undefined;
const children: ChildProcess[] = [];
/** The test's own connections (probes, the sentinel client), disconnected in afterAll. */
const probes: Redis[] = [];
let masterPort: number;
let replicaPort: number;
let sentinelPort: number;
let deadSentinelPort: number;
let config: Config;
let connection: RedisConnection | undefined;
let sentinel: Redis;
let onMaster: Redis;
let onReplica: Redis;
/** What the bot's connection logged (warn and above). */
const botLog: string[] = [];

// Should the test process die without afterAll, its servers go with it.
const killAll = (): void => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
};
process.once("exit", killAll);

/** A connection of the test's own: named, one retry per command, its errors kept (not printed). */
function probe(port: number, db = 0): Redis {
  const r = new Redis({
    host: "127.0.0.1",
    port,
    db,
    connectionName: PROBE,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: () => 100,
  });
  r.on("error", () => undefined);
  probes.push(r);
  return r;
}

async function logTail(name: string): Promise<string> {
  if (dir === undefined) return "";
  const text = await readFile(join(dir, name), "utf8").catch(() => "");
  return text.trim().split("\n").slice(-12).join("\n");
}

/**
 * Start `command` on a free port and wait until that very process answers there (its INFO names its
 * pid): a port taken between `freePort` and the server's bind is tried again with another one.
 */
async function launch(
  label: string,
  command: string,
  argsFor: (port: number) => Promise<string[]>,
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(command, await argsFor(port), { stdio: "ignore" });
    children.push(child);
    const client = new Redis({
      host: "127.0.0.1",
      port,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectTimeout: 1_000,
    });
    client.on("error", () => undefined);
    try {
      const up = await eventually(
        async () => {
          if (child.exitCode !== null) return "exited" as const;
          if (client.status === "end" || client.status === "wait") await client.connect();
          const info = await client.info("server");
          return info.includes(`process_id:${String(child.pid)}\r`) ? ("ok" as const) : ("other" as const);
        },
        10_000,
        `${label} (${command}, pid ${String(child.pid)}) to answer on port ${String(port)}`,
        BOUNDED,
      );
      if (up === "ok") return port;
      // Exited (its port was taken) or another process answers there: try another port.
      child.kill("SIGKILL");
      if (attempt >= 3) {
        throw new Error(
          `${label} did not start on a free port after 3 attempts (last log:\n${await logTail(`${label}.log`)})`,
        );
      }
    } finally {
      client.disconnect();
    }
  }
}

function serverArgs(port: number, name: string): string[] {
  if (dir === undefined) throw new Error("no temporary directory");
  return [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    // Its own files: master and replica never share a dump.rdb.
    "--dir",
    dir,
    "--dbfilename",
    `${name}.rdb`,
    "--logfile",
    join(dir, `${name}.log`),
    // A replica's first sync starts at once instead of after five seconds.
    "--repl-diskless-sync-delay",
    "0",
  ];
}

/** One field of `INFO replication`. */
async function replication(r: Redis, field: string): Promise<string | undefined> {
  const info = await r.info("replication");
  return new RegExp(`^${field}:(.*)$`, "m").exec(info)?.[1]?.trim();
}

/** The bot's connections on a server: every normal client but the sentinel's and the test's. */
async function botClients(r: Redis): Promise<string[]> {
  const list = (await r.call("CLIENT", "LIST", "TYPE", "normal")) as string;
  return list
    .split("\n")
    .filter((line) => line.trim() !== "")
    .filter((line) => {
      const name = /\bname=(\S*)/.exec(line)?.[1] ?? "";
      return !name.startsWith("sentinel-") && name !== PROBE;
    });
}

beforeAll(async () => {
  for (const tool of ["redis-server", "redis-sentinel"]) {
    if (!which(tool)) {
      throw new Error(
        `${tool} is missing: the Redis Sentinel test starts a local master, replica and sentinel; install it (apt-get install -y ${tool}; .ci/run installs it)`,
      );
    }
  }
  dir = await mkdtemp(join(tmpdir(), "unstuck-sentinel-"));
  masterPort = await launch("master", "redis-server", (port) => Promise.resolve(serverArgs(port, "master")));
  replicaPort = await launch("replica", "redis-server", (port) =>
    Promise.resolve([...serverArgs(port, "replica"), "--replicaof", "127.0.0.1", String(masterPort)]),
  );
  onMaster = probe(masterPort, DB);
  onReplica = probe(replicaPort, DB);
  // The replica is linked before the sentinel starts, so the sentinel's first INFO of the master names it.
  await eventually(
    async () => ((await replication(onReplica, "master_link_status")) === "up" ? true : undefined),
    15_000,
    "the replica's link to the master (INFO replication master_link_status:up)",
    BOUNDED,
  );
  sentinelPort = await launch("sentinel", "redis-sentinel", async (port) => {
    const conf = join(dir ?? "", "sentinel.conf");
    await writeFile(
      conf,
      [
        `port ${String(port)}`,
        "bind 127.0.0.1",
        "daemonize no",
        `dir ${dir ?? ""}`,
        `logfile ${join(dir ?? "", "sentinel.log")}`,
        `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${String(masterPort)} 1`,
        `sentinel down-after-milliseconds ${MASTER_NAME} 2000`,
        `sentinel failover-timeout ${MASTER_NAME} 10000`,
        "",
      ].join("\n"),
    );
    return [conf];
  });
  // Nothing listens there: the bot's first sentinel, which it must skip.
  deadSentinelPort = await freePort();
  sentinel = probe(sentinelPort);
  await eventually(
    async () => {
      const replicas = (await sentinel.call("SENTINEL", "REPLICAS", MASTER_NAME)) as string[][];
      return replicas.some((r) => r.join(" ").includes(String(replicaPort))) ? true : undefined;
    },
    20_000,
    `the sentinel to know the replica 127.0.0.1:${String(replicaPort)} (SENTINEL REPLICAS)`,
    BOUNDED,
  );
  config = loadConfig({
    REDIS_URL: `redis+sentinel://127.0.0.1:${String(deadSentinelPort)},127.0.0.1:${String(sentinelPort)}/${MASTER_NAME}?db=${String(DB)}`,
  });
  connection = await within(
    10_000,
    "the bot's connection through the sentinels",
    connectRedis(config, pino({ level: "warn" }, { write: (line: string) => void botLog.push(line) })),
  );
}, 60_000);

afterAll(async () => {
  if (connection !== undefined) {
    const c = connection;
    await within(5_000, "the bot's connection to quit", c.quit()).catch(() => c.disconnect());
  }
  for (const p of probes) p.disconnect();
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGTERM");
  await Promise.all(
    children.map((c) =>
      within(
        5_000,
        `pid ${String(c.pid)} to exit`,
        new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(null) : c.once("exit", r))),
      ).catch(() => c.kill("SIGKILL")),
    ),
  );
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
}, 30_000);

/** The port of the server the sentinel names as the master now. */
async function masterNow(): Promise<number> {
  const [, port] = (await sentinel.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)) as string[];
  return Number(port);
}

/** Request → approve → the action job; the request once it is DONE, its job run exactly once. */
async function approveAndRun(h: Harness, queues: Queues): Promise<string> {
  seedIngress(h, ["ingress.k8s.aws/resources", "example.com/keep"]);
  const applied = h.fake.applied.length;
  const req = await within(
    10_000,
    "the removal request to be stored",
    requestRemoval(h, alice, { finalizer: "ingress.k8s.aws/resources" }),
  );
  await within(10_000, `bob's approval of ${req.id} to be recorded`, h.workflow.vote(req.id, bob, "approve"));
  let state = "not read yet";
  const done = await eventually(
    async () => {
      const r = await h.store.get(req.id);
      state = `last state ${r?.state ?? "absent"}`;
      return r && FINAL.includes(r.state) ? r : undefined;
    },
    20_000,
    `request ${req.id} to finish`,
    { ...BOUNDED, state: () => state },
  );
  expect(done.state).toBe("DONE");
  expect(h.fake.applied).toHaveLength(applied + 1);
  expect(h.fake.peek(INGRESS, "myapp", "myapp-worker-ingress")?.finalizers).toEqual(["example.com/keep"]);
  // The request turns DONE inside the job, before BullMQ records the job finished: read the job once
  // it is (finishedOn and the attempt count are written together).
  const job = await eventually(
    async () => {
      const j = await queues.actions.getJob(executionJobId(req.id));
      return j?.finishedOn !== undefined ? j : undefined;
    },
    10_000,
    `the action job of ${req.id} to be recorded finished`,
    BOUNDED,
  );
  expect(await job.getState()).toBe("completed");
  expect(job.attemptsMade).toBe(1);
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
    if (connection === undefined) throw new Error("no bot connection (see beforeAll)");
    const bot = connection;
    const prefix = `unstuck-sentinel-${randomBytes(4).toString("hex")}`;
    const queues = createQueues({ connection: bot, prefix: `${prefix}:bull` });
    const enqueue = executionEnqueuer(queues.actions, { attempts: 3, backoffMs: 20 });
    const h = createHarness({ prefix, redis: bot, enqueue });
    const workers: Worker[] = [];
    let failed: { error: unknown } | undefined;
    try {
      for (let i = 0; i < 2; i++) {
        workers.push(
          createActionsWorker(
            { connection: bot, prefix: `${prefix}:bull` },
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
      await Promise.all(
        workers.map((w, i) => within(10_000, `BullMQ worker ${String(i)} to be ready`, w.waitUntilReady())),
      );
      const first = await approveAndRun(h, queues);
      // The keys are on the master the sentinel names, in database 2.
      expect(await within(5_000, "the sentinel to name the master", masterNow())).toBe(masterPort);
      expect((await onMaster.keys(`${prefix}:*`)).length).toBeGreaterThan(3);
      expect((await onMaster.keys(`${prefix}:*`)).some((k) => k.includes(first))).toBe(true);
      const db0 = probe(masterPort, 0);
      expect(await db0.dbsize()).toBe(0);

      // The replica holds everything the master wrote before it is promoted (a replica behind the
      // master would be promoted without the first request).
      const written = Number(await replication(onMaster, "master_repl_offset"));
      let replicaAt = "not read yet";
      await eventually(
        async () => {
          const [link, offset] = [
            await replication(onReplica, "master_link_status"),
            Number(await replication(onReplica, "slave_repl_offset")),
          ];
          replicaAt = `replica link ${link ?? "?"}, offset ${String(offset)}`;
          return link === "up" && offset >= written ? true : undefined;
        },
        10_000,
        `the replica to catch up with the master's replication offset ${String(written)}`,
        { ...BOUNDED, state: () => replicaAt },
      );
      expect((await onReplica.keys(`${prefix}:*`)).some((k) => k.includes(first))).toBe(true);

      // Failover: the sentinel promotes the replica (it answers NOGOODSLAVE while its last INFO of the
      // replica is too old; then again).
      await eventually(
        async () => ((await sentinel.call("SENTINEL", "FAILOVER", MASTER_NAME)) === "OK" ? true : undefined),
        15_000,
        "the sentinel to accept SENTINEL FAILOVER",
        BOUNDED,
      );
      await eventually(
        async () => ((await masterNow()) === replicaPort ? true : undefined),
        20_000,
        `the sentinel to name the promoted replica (port ${String(replicaPort)}) as master`,
        BOUNDED,
      ).catch(async (err: unknown) => {
        throw new Error(`${(err as Error).message}; sentinel log:\n${await logTail("sentinel.log")}`);
      });
      // The sentinels' +switch-master moves every connection at once (ioredis' failover detector);
      // without it they would stay on the old master until the sentinel demotes it, about ten
      // seconds later, and what they wrote meanwhile would be lost.
      let where = "not read yet";
      await eventually(
        async () => {
          const port = (await bot.config("GET", "port"))[1];
          const workersOnNew = (await queues.actions.getWorkers()).length;
          const left = (await botClients(onMaster)).length;
          where = `bot connection on port ${port ?? "?"}, ${String(workersOnNew)} of 2 workers on the new master, ${String(left)} bot connection(s) left on the old master`;
          return port === String(replicaPort) && workersOnNew === 2 && left === 0 ? true : undefined;
        },
        5_000,
        "the bot's connection and both BullMQ workers' blocking connections to leave the old master for the new one",
        { ...BOUNDED, state: () => where },
      );

      const second = await approveAndRun(h, queues);
      expect(((await onReplica.call("ROLE")) as unknown[])[0]).toBe("master");
      const keys = await onReplica.keys(`${prefix}:*`);
      expect(keys.some((k) => k.includes(first))).toBe(true);
      expect(keys.some((k) => k.includes(second))).toBe(true);
      // The first request, written before the failover, is still readable through the bot.
      expect((await within(5_000, `the bot to read ${first}`, h.store.get(first)))?.state).toBe("DONE");
      // The sentinel that answers nothing: logged by the bot (when resolving the master, and by the
      // failover detector's connection to it), never printed as an unhandled error.
      const dead = `127.0.0.1:${String(deadSentinelPort)}`;
      expect(
        botLog.some(
          (l) => l.includes("redis sentinel error") && l.includes(`sentinel ${dead} (failover detector)`),
        ),
      ).toBe(true);
      expect(botLog.some((l) => l.includes(`failed to connect to sentinel ${dead}`))).toBe(true);
    } catch (error) {
      failed = { error };
    }
    // Bounded: BullMQ waits for a blocking connection's `end`, which never comes if it is closed
    // while reconnecting.
    const closing = await Promise.allSettled([
      ...workers.map((w, i) => within(10_000, `BullMQ worker ${String(i)} to close`, w.close())),
      within(10_000, "the queues to close", queues.close()),
    ]);
    // A failure of the test itself is the one to report.
    if (failed !== undefined) throw failed.error;
    const failures = closing.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
    if (failures.length > 0) throw new Error(failures.join("; "));
  }, 120_000);

  describe("the start-up check", () => {
    let sim: KubeSim;
    let kubeconfig: string;
    beforeAll(async () => {
      sim = await startKubeSim({ scenario: "test/fixtures/scenarios/seed-incident.yaml" });
      kubeconfig = join(dir ?? tmpdir(), "kubeconfig");
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
