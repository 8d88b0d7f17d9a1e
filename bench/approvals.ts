/**
 * Acks and approvals against the bot as its own process: the bundle is spawned
 * as the image runs it (the Dockerfile's CMD and ENV; `dist/` rebuilt first when stale) with the
 * environment `npm start` reads — against a fake Slack Web API and the Kubernetes simulator (seed incident) that
 * live in this process, and the Redis at `REDIS_URL`. The clients send their signed requests from
 * a worker thread, so reading an ack waits neither for the bot's event loop
 * (another process) nor for the simulators' (this thread) — only for the machine's cores.
 *
 * - the first burst after start-up: 50 `ns myapp` at once, before anything else reached the bot;
 * - bursts of 50 concurrent signed slash commands (each from its own channel, so every answer is
 *   matched to its command): `help` (the ack path alone) and `ns myapp` (each ack followed by a
 *   diagnosis): ack p50/p99 (target p99 < 300 ms) and time to the posted answer;
 * - bursts of 50 approvers clicking Approve on one request at once: ack p50/p99 (target p99 <
 *   300 ms), and each request executed exactly once (one PATCH), DONE;
 * - Redis memory per request, of real requests made through the bot (`/unstuck finalize`: the
 *   request, its message reference, its audit entries): every key under the run's prefix, summed
 *   with MEMORY USAGE before and after, so other clients of a shared Redis do not count;
 * - `/unstuck approvals` with 10,000 pending (× scale), signed command to posted answer;
 * - the bot's start-up time (spawn to /healthz) and RSS after the load (target ≤ 200 MiB).
 *
 * Bursts repeat `UNSTUCK_BENCH_RUNS` times; percentiles are over all of them, with each burst's p99
 * shown. Every key lives under a random prefix, deleted at the end; the bench checks none is left.
 *
 * `UNSTUCK_BENCH_CPU_PROF=<dir>` profiles the bot: it runs with `--cpu-prof --cpu-prof-dir=<dir>`
 * (the profile is written when it stops), and `<dir>/bursts.json` records when each burst was sent
 * and answered, in the monotonic clock the profile's timestamps use (µs), so
 * `bench/profile-bursts.ts <dir>` can show what the bot ran during the approve clicks alone.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFile, mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import { Redis } from "ioredis";
import { ApprovalStore } from "../src/approvals/store.js";
import { newRequestId, type ApprovalRequest } from "../src/requests/model.js";
import { startKubeSim } from "../test/sim/kube/index.js";
import { eventually } from "../test/helpers/eventually.js";
import { deleteKeysWithPrefix, REDIS_URL } from "../test/helpers/redis.js";
import { keyEnv, testSigner } from "../test/helpers/keys.js";
import {
  blockActionsBody,
  postSigned,
  signRequest,
  slashCommandBody,
  startFakeSlack,
} from "../test/sim/slack/index.js";
import {
  check,
  ensureBuilt,
  ms,
  percentile,
  spread,
  type BenchOptions,
  type BenchResult,
  type Check,
} from "./common.js";
import { CHART_NODE_OPTIONS, imageRuntime } from "./ship.js";

const CONCURRENT = 50;
const PENDING = 10_000;
/** Real requests made through the bot to measure Redis memory per request. */
const REAL_REQUESTS = 50;
const ACK_TARGET_MS = 300;
const RSS_TARGET_MIB = 200;
const TEAM = "T00000001";
const REQUESTER = "U0REQUESTER";
const INGRESS_PATH = "/apis/networking.k8s.io/v1/namespaces/myapp/ingresses/myapp-worker-ingress";
const MEM_NS = "bench-mem";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** The value of the button `actionId` anywhere in Block Kit. */
function buttonValue(blocks: unknown, actionId: string): string | undefined {
  if (Array.isArray(blocks)) {
    for (const b of blocks) {
      const v = buttonValue(b, actionId);
      if (v !== undefined) return v;
    }
  } else if (blocks && typeof blocks === "object") {
    const o = blocks as Record<string, unknown>;
    if (o.action_id === actionId && typeof o.value === "string") return o.value;
    for (const v of Object.values(o)) {
      const found = buttonValue(v, actionId);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** Bytes held by every key under `prefix:` (MEMORY USAGE, all samples). */
async function prefixMemory(redis: Redis, prefix: string): Promise<{ bytes: number; keys: number }> {
  let cursor = "0";
  let bytes = 0;
  let keys = 0;
  do {
    const [next, batch] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = next;
    const sizes = await Promise.all(
      batch.map((k) => redis.call("MEMORY", "USAGE", k, "SAMPLES", "0") as Promise<number | null>),
    );
    for (const s of sizes) bytes += s ?? 0;
    keys += batch.length;
  } while (cursor !== "0");
  return { bytes, keys };
}

async function countKeys(redis: Redis, prefix: string): Promise<number> {
  return (await prefixMemory(redis, prefix)).keys;
}

/** Peak and current RSS of a live process, from /proc (Linux), in MiB. */
async function rssOf(pid: number | undefined): Promise<{ peak: number; now: number } | undefined> {
  if (pid === undefined) return undefined;
  try {
    const status = await readFile(`/proc/${String(pid)}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
    return { peak: kb("VmHWM") / 1024, now: kb("VmRSS") / 1024 };
  } catch {
    return undefined;
  }
}

function stopChild(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const hard = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.once("exit", (code) => {
      clearTimeout(hard);
      resolve(code);
    });
    child.kill("SIGTERM");
  });
}

/** One signed request as the client thread sent it. */
interface Sent {
  readonly status: number;
  /** Until the HTTP answer (the ack) was read, in ms. */
  readonly ackMs: number;
  /** Epoch ms when it was sent, to match against the fake Slack's `at` of the answer. */
  readonly sentAt: number;
  readonly error?: string;
}

/**
 * The clients, on their own thread: the simulators on this thread answer the bot's Kubernetes and
 * Slack calls during a burst, and must not delay the reading of its acks. The requests are signed
 * here and sent there all at once.
 */
const CLIENT_THREAD = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", async (job) => {
  const sent = await Promise.all(job.map(async (r) => {
    const sentAt = Date.now();
    const t0 = performance.now();
    try {
      const res = await fetch(r.url, { method: r.method, headers: r.headers, body: r.body });
      await res.text();
      return { status: res.status, ackMs: performance.now() - t0, sentAt };
    } catch (e) {
      return { status: 0, ackMs: performance.now() - t0, sentAt, error: String(e) };
    }
  }));
  parentPort.postMessage(sent);
});
`;

export class ClientThread {
  private readonly worker = new Worker(CLIENT_THREAD, { eval: true });
  private queue = Promise.resolve();

  /** Send every request at once from the client thread; resolves when all are answered. */
  public send(
    requests: readonly { url: string; method: string; headers?: Record<string, string>; body?: string }[],
  ): Promise<Sent[]> {
    const run = this.queue.then(
      () =>
        new Promise<Sent[]>((resolve, reject) => {
          const onError = (err: Error): void => {
            this.worker.off("message", onMessage);
            reject(err);
          };
          const onMessage = (sent: Sent[]): void => {
            this.worker.off("error", onError);
            resolve(sent);
          };
          this.worker.once("message", onMessage);
          this.worker.once("error", onError);
          this.worker.postMessage(requests);
        }),
    );
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Signed POSTs to the bot's events URL. */
  public signed(url: string, secret: string, bodies: readonly string[]): Promise<Sent[]> {
    return this.send(
      bodies.map((body) => ({ url, method: "POST", headers: { ...signRequest(secret, body) }, body })),
    );
  }

  public close(): Promise<number> {
    return this.worker.terminate();
  }
}

/**
 * A pending copy of a real request with its own id, object and expiry (one pending request per
 * object), so about the same size in Redis.
 */
function pendingCopy(
  r: ApprovalRequest,
  id: string,
  expiresAtMs: number,
): Parameters<ApprovalStore["create"]>[0] {
  const a = r.action;
  if (a.type !== "remove-finalizer") throw new Error(`cannot copy a ${a.type} request`);
  return {
    id,
    action: { ...a, target: { ...a.target, name: `${a.target.name}-${id.slice(0, 8)}` } },
    requester: r.requester,
    channelId: r.channelId,
    reason: r.reason,
    evidence: r.evidence,
    cleanupPlan: r.cleanupPlan,
    createdAt: new Date().toISOString(),
    expiresAt: new Date(expiresAtMs + 3_600_000).toISOString(),
    approvalsRequired: r.approvalsRequired,
  };
}

export async function benchApprovals(options: BenchOptions): Promise<BenchResult> {
  const { runs, scale } = options;
  const redisUrl = REDIS_URL;
  const prefix = `unstuck-bench-${randomBytes(4).toString("hex")}`;
  const secret = randomBytes(16).toString("hex");
  const token = `xoxb-bench-${randomBytes(8).toString("hex")}`;
  const signer = testSigner;
  const approvers = Array.from({ length: CONCURRENT }, (_, i) => `U0APPR${String(i).padStart(4, "0")}`);
  const realRequests = REAL_REQUESTS * scale;
  const pending = PENDING * scale;
  const checks: Check[] = [];

  const sim = await startKubeSim({
    scenario: "test/fixtures/scenarios/seed-incident.yaml",
    controllerIntervalMs: 1000,
  });
  // Objects to ask finalizer removals for, one request each: a Terminating namespace of held ConfigMaps.
  sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: MEM_NS } });
  for (let i = 0; i < realRequests; i++) {
    sim.store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `held-${String(i)}`, namespace: MEM_NS, finalizers: ["bench.example.com/hold"] },
      data: { i: String(i) },
    });
  }
  for (let b = 1; b < runs; b++) {
    sim.store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `click-${String(b)}`, namespace: MEM_NS, finalizers: ["bench.example.com/hold"] },
    });
  }
  sim.store.delete("v1", "Namespace", undefined, MEM_NS);
  await sim.reconcileNow();
  const fake = await startFakeSlack({ token });
  const dir = await mkdtemp(join(tmpdir(), "unstuck-bench-approvals-"));
  const kubeconfig = join(dir, "kubeconfig");
  await sim.writeKubeconfig(kubeconfig);
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
  const port = await freePort();
  const base = `http://127.0.0.1:${String(port)}`;
  const events = `${base}/slack/events`;

  const profileDir = process.env.UNSTUCK_BENCH_CPU_PROF
    ? resolve(process.env.UNSTUCK_BENCH_CPU_PROF)
    : undefined;
  if (profileDir !== undefined) await mkdir(profileDir, { recursive: true });
  /** Each burst's span in CLOCK_MONOTONIC µs, the clock of V8's profile timestamps (Linux). */
  const bursts: { label: string; startUs: number; endUs: number }[] = [];
  const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);
  const timed = async <T>(label: string, run: () => Promise<T>): Promise<T> => {
    const startUs = monotonicUs();
    try {
      return await run();
    } finally {
      bursts.push({ label, startUs, endUs: monotonicUs() });
    }
  };

  const built = await ensureBuilt();
  const image = await imageRuntime();
  let output = "";
  const started = performance.now();
  const bot = spawn(process.execPath, image.args, {
    env: {
      ...image.env,
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? tmpdir(),
      SLACK_BOT_TOKEN: token,
      SLACK_SIGNING_SECRET: secret,
      SLACK_API_URL: fake.url,
      PORT: String(port),
      KUBECONFIG: kubeconfig,
      REDIS_URL: redisUrl,
      UNSTUCK_REDIS_PREFIX: prefix,
      UNSTUCK_APPROVERS: approvers.join(","),
      ...keyEnv("all"),
      // A bench or developer Redis usually persists nothing; the bot refuses that unless told.
      UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
      UNSTUCK_LOG_LEVEL: "warn",
      // The chart's V8 settings, as the memory bench runs the bot.
      NODE_OPTIONS: `${CHART_NODE_OPTIONS}${profileDir !== undefined ? ` --cpu-prof --cpu-prof-dir=${profileDir}` : ""}`,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  bot.stdout.on("data", (c: Buffer) => (output = (output + c.toString("utf8")).slice(-20_000)));
  bot.stderr.on("data", (c: Buffer) => (output = (output + c.toString("utf8")).slice(-20_000)));
  const died = new Promise<never>((_, reject) =>
    bot.once("exit", (code) => reject(new Error(`the bot exited (${String(code)}): ${output.slice(-2000)}`))),
  );
  died.catch(() => undefined);

  const clients = new ClientThread();
  try {
    await Promise.race([
      died,
      eventually(
        async () => {
          try {
            return (await fetch(`${base}/healthz`)).ok ? true : undefined;
          } catch {
            return undefined;
          }
        },
        60_000,
        "the bot answering /healthz",
      ),
    ]);
    const startupMs = performance.now() - started;
    const store = new ApprovalStore(redis, { prefix: `${prefix}:approvals`, signer });

    /** The blocks of each request's posted message: Slack sends them back with every click on it. */
    const postedBlocks = new Map<string, unknown[]>();
    /** A signed `/unstuck finalize …` and the request id from the posted message's Approve button. */
    const requestRemoval = async (target: string, namespace: string, channel: string): Promise<string> => {
      await postSigned(
        events,
        secret,
        slashCommandBody({
          text: `finalize ${target} -n ${namespace} --reason "benchmark: cause confirmed, recovery first"`,
          userId: REQUESTER,
          channelId: channel,
          responseUrl: fake.responseUrl(`finalize-${channel}`),
        }),
      );
      const call = await fake.waitFor(
        "chat.postMessage",
        (c) => c.body.channel === channel && buttonValue(c.body.blocks, "approval:approve") !== undefined,
        30_000,
      );
      const id = buttonValue(call.body.blocks, "approval:approve") ?? "";
      if (Array.isArray(call.body.blocks)) postedBlocks.set(id, call.body.blocks as unknown[]);
      // The bot attaches the message after posting it; clicks before that would race the attach.
      await eventually(
        async () => ((await store.get(id))?.message ? true : undefined),
        10_000,
        "request attached",
      );
      return id;
    };

    // Warm the client thread's HTTP stack; the bot's first answer is measured separately below.
    await clients.send([{ url: `${base}/healthz`, method: "GET" }]);

    /** Slash commands at once from the client thread, each in its own channel. */
    const slashBurst = async (label: string, text: string, count = CONCURRENT) => {
      const channels = Array.from({ length: count }, (_, i) => `C0${label}X${String(i).padStart(4, "0")}`);
      const sent = await timed(`slash ${label}`, () =>
        clients.signed(
          events,
          secret,
          channels.map((channel, i) =>
            slashCommandBody({
              text,
              userId: `U0ONCALL${String(i).padStart(4, "0")}`,
              channelId: channel,
              responseUrl: fake.responseUrl(channel),
            }),
          ),
        ),
      );
      // When the answer reached the fake Slack: in the channel, or (help, errors) to the response_url.
      const answers = await Promise.all(
        channels.map(async (channel, i) => {
          const at = await Promise.race([
            fake.waitFor("chat.postMessage", (c) => c.body.channel === channel, 60_000).then((c) => c.at),
            fake.waitForResponse((r) => r.id === channel, 60_000).then(() => Date.now()),
          ]).catch(() => Number.NaN);
          return at - (sent[i]?.sentAt ?? Number.NaN);
        }),
      );
      return { sent, answers };
    };

    // 0. The first burst after start-up, before anything else reached the bot: whatever it left for
    //    its first command (code not yet compiled, discovery not yet read) lands on these acks.
    //    Reported on its own and counted with the other `ns myapp` bursts.
    const firstBurst = await slashBurst("FIRST", "ns myapp");
    const firstAcks = firstBurst.sent.map((x) => x.ackMs);

    // 1. Bursts of fifty slash commands: `help` (the ack path alone: it answers at once, privately)
    //    and `ns myapp` (each ack followed by a diagnosis, so later acks compete with earlier work).
    const helpAcks: number[] = [];
    const helpBurstP99: number[] = [];
    const slashAcks: number[] = [...firstAcks];
    const slashAnswers: number[] = firstBurst.answers.filter((x) => !Number.isNaN(x));
    const slashBurstP99: number[] = [percentile(firstAcks, 99)];
    let slashOk = firstBurst.sent.filter(
      (x, i) => x.status === 200 && !Number.isNaN(firstBurst.answers[i]),
    ).length;
    for (let b = 0; b < runs; b++) {
      const help = await slashBurst(`H${String(b)}`, "help");
      helpAcks.push(...help.sent.map((x) => x.ackMs));
      helpBurstP99.push(
        percentile(
          help.sent.map((x) => x.ackMs),
          99,
        ),
      );
      slashOk += help.sent.filter((x, i) => x.status === 200 && !Number.isNaN(help.answers[i])).length;
      const ns = await slashBurst(`S${String(b)}`, "ns myapp");
      slashAcks.push(...ns.sent.map((x) => x.ackMs));
      slashAnswers.push(...ns.answers.filter((x) => !Number.isNaN(x)));
      slashBurstP99.push(
        percentile(
          ns.sent.map((x) => x.ackMs),
          99,
        ),
      );
      slashOk += ns.sent.filter((x, i) => x.status === 200 && !Number.isNaN(ns.answers[i])).length;
    }
    checks.push(
      check(
        `approvals: (1 + ${runs}×2)×${CONCURRENT} concurrent slash commands (first ns burst, help, ns) acked and answered`,
        slashOk === (1 + runs * 2) * CONCURRENT,
        `${slashOk} of ${(1 + runs * 2) * CONCURRENT}`,
      ),
    );

    // 2. Bursts of fifty approvers clicking Approve on one request at once: the seed's stuck
    //    Ingress, then held ConfigMaps. Each request must execute once.
    const clickAcks: number[] = [];
    const clickBurstP99: number[] = [];
    const executions: string[] = [];
    let clicksOk = 0;
    for (let b = 0; b < runs; b++) {
      const name = `click-${String(b)}`;
      const [target, namespace, path] =
        b === 0
          ? ["ingress/myapp-worker-ingress", "myapp", INGRESS_PATH]
          : [`configmap/${name}`, MEM_NS, `/api/v1/namespaces/${MEM_NS}/configmaps/${name}`];
      const channel = `C0APPROVE${String(b)}`;
      const requestId = await requestRemoval(target, namespace, channel);
      const ts = await eventually(
        async () => (await store.get(requestId))?.message?.ts,
        10_000,
        "message ts",
      );
      sim.resetRequests();
      const clicks = await timed(`approve ${String(b)}`, () =>
        clients.signed(
          events,
          secret,
          approvers.map((userId) =>
            blockActionsBody({
              actionId: "approval:approve",
              blockId: `approval-actions:${requestId}`,
              value: requestId,
              userId,
              teamId: TEAM,
              channelId: channel,
              messageTs: ts,
              // As Slack sends a click: with the whole message it was made on (a few KiB to parse).
              blocks: postedBlocks.get(requestId) ?? [],
              responseUrl: fake.responseUrl(`${name}-${userId}`),
            }),
          ),
        ),
      );
      clickAcks.push(...clicks.map((c) => c.ackMs));
      clickBurstP99.push(
        percentile(
          clicks.map((c) => c.ackMs),
          99,
        ),
      );
      clicksOk += clicks.filter((c) => c.status === 200).length;
      const done = await eventually(
        async () => {
          const r = await store.get(requestId);
          return r && ["DONE", "FAILED", "STALE", "EXPIRED", "CANCELLED"].includes(r.state) ? r : undefined;
        },
        30_000,
        "the approved request finishing",
      ).catch(() => undefined);
      const patches = sim.requests().filter((r) => r.method === "PATCH" && r.path === path).length;
      if (patches !== 1 || done?.state !== "DONE")
        executions.push(`${target}: ${patches} PATCH, request ${done?.state ?? "not finished"}`);
    }
    checks.push(
      check(
        `approvals: ${runs}×${CONCURRENT} concurrent approve clicks acked`,
        clicksOk === runs * CONCURRENT,
        `${clicksOk} of ${runs * CONCURRENT} acked 200`,
      ),
      check(
        `approvals: ${CONCURRENT} approvals of one request execute it once (${runs} requests)`,
        executions.length === 0,
        executions.length === 0 ? `1 PATCH and DONE for each of ${runs}` : executions.join("; "),
      ),
    );

    // 3. Redis memory per real request, made through the bot.
    const before = await prefixMemory(redis, prefix);
    const made: string[] = [];
    const batch = 10;
    for (let i = 0; i < realRequests; i += batch) {
      await Promise.all(
        Array.from({ length: Math.min(batch, realRequests - i) }, async (_, j) => {
          const n = i + j;
          made.push(
            await requestRemoval(`configmap/held-${String(n)}`, MEM_NS, `C0MEM${String(n).padStart(5, "0")}`),
          );
        }),
      );
    }
    const after = await prefixMemory(redis, prefix);
    const perRequest = (after.bytes - before.bytes) / Math.max(1, made.length);
    checks.push(
      check(
        `approvals: ${realRequests} finalize requests through the bot, each posted with buttons`,
        made.length === realRequests,
        `${made.length} of ${realRequests}`,
      ),
    );

    // 4. `/unstuck approvals` with many pending: copies of a real request, signed like the bot's.
    const template = made[0] !== undefined ? await store.get(made[0]) : null;
    if (template === null) throw new Error("no real request to copy");
    const now = Date.now();
    for (let i = 0; i < pending; i += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, pending - i) }, (_, j) =>
          store.create(pendingCopy(template, newRequestId(), now + (i + j) * 1000)),
        ),
      );
    }
    const listTimes: number[] = [];
    for (let r = 0; r < runs; r++) {
      const channel = `C0LIST${String(r)}`;
      const t0 = performance.now();
      const res = await postSigned(
        events,
        secret,
        slashCommandBody({
          text: "approvals",
          channelId: channel,
          responseUrl: fake.responseUrl(`list-${String(r)}`),
        }),
      );
      if (res.status !== 200) throw new Error(`/unstuck approvals answered ${String(res.status)}`);
      // The list is the asker's: answered privately, to the response_url.
      await fake.waitForResponse((res) => res.id === `list-${String(r)}`, 30_000);
      listTimes.push(performance.now() - t0);
    }
    const reads: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      const page = await store.listPending(new Date(), { limit: 50 });
      reads.push(performance.now() - t0);
      if (page.length !== 50)
        throw new Error(`expected a page of 50 pending requests, got ${String(page.length)}`);
    }
    const rss = await rssOf(bot.pid);

    const slashP99 = percentile(slashAcks, 99);
    const clickP99 = percentile(clickAcks, 99);
    return {
      name: "approvals",
      context: [
        `the bot as its own process, as the image runs it (node ${image.args.join(" ")}; ${built}; NODE_OPTIONS="${CHART_NODE_OPTIONS}"; UNSTUCK_ROLE=all: the workers in the same process, the chart's combined mode; HTTP mode, log level warn) on ${redisUrl.replace(/\/\/[^@/]*@/, "//…@")}, prefix ${prefix}; fake Slack, Kubernetes simulator (seed incident) and clients in the bench process`,
      ],
      figures: [
        { what: "bot start-up (spawn → /healthz 200)", value: ms(startupMs) },
        {
          what: `first burst after start-up: ${CONCURRENT} concurrent ns myapp, ack`,
          value: `p50 ${ms(percentile(firstAcks, 50))}, p99 ${ms(percentile(firstAcks, 99))}, max ${ms(Math.max(...firstAcks))}`,
          target: `p99 < ${ACK_TARGET_MS} ms`,
          met: percentile(firstAcks, 99) < ACK_TARGET_MS,
        },
        {
          what: `slash command ack, ${CONCURRENT} concurrent (help: the ack path alone) × ${runs} bursts`,
          value: `p50 ${ms(percentile(helpAcks, 50))}, p99 ${ms(percentile(helpAcks, 99))}, max ${ms(Math.max(...helpAcks))}; p99 per burst ${helpBurstP99.map((v) => v.toFixed(0)).join(", ")} ms`,
          target: `p99 < ${ACK_TARGET_MS} ms`,
          met: percentile(helpAcks, 99) < ACK_TARGET_MS,
        },
        {
          what: `slash command ack, ${CONCURRENT} concurrent (ns myapp) × ${runs + 1} bursts, the first after start-up included`,
          value: `p50 ${ms(percentile(slashAcks, 50))}, p99 ${ms(slashP99)}, max ${ms(Math.max(...slashAcks))}; p99 per burst ${slashBurstP99.map((v) => v.toFixed(0)).join(", ")} ms`,
          target: `p99 < ${ACK_TARGET_MS} ms`,
          met: slashP99 < ACK_TARGET_MS,
        },
        {
          what: `slash command → answer posted, ${CONCURRENT} concurrent`,
          value: `p50 ${ms(percentile(slashAnswers, 50))}, p99 ${ms(percentile(slashAnswers, 99))}`,
        },
        {
          what: `approve click ack, ${CONCURRENT} concurrent × ${runs} requests`,
          value: `p50 ${ms(percentile(clickAcks, 50))}, p99 ${ms(clickP99)}, max ${ms(Math.max(...clickAcks))}; p99 per burst ${clickBurstP99.map((v) => v.toFixed(0)).join(", ")} ms`,
          target: `p99 < ${ACK_TARGET_MS} ms`,
          met: clickP99 < ACK_TARGET_MS,
        },
        {
          what: "Redis memory per real request",
          value: `${(perRequest / 1024).toFixed(2)} KiB (${made.length} requests through the bot, MEMORY USAGE of the prefix's keys)`,
        },
        { what: `/unstuck approvals with ${pending} pending (signed → posted)`, value: spread(listTimes) },
        {
          what: `store.listPending page of 50 among ${pending}`,
          value: `p50 ${percentile(reads, 50).toFixed(1)} ms, max ${Math.max(...reads).toFixed(1)} ms (median of 20)`,
        },
        {
          what: "bot process RSS after the load",
          value: rss
            ? `peak ${rss.peak.toFixed(0)} MiB, now ${rss.now.toFixed(0)} MiB`
            : "not available (no /proc)",
          ...(rss ? { target: `≤ ${RSS_TARGET_MIB} MiB`, met: rss.peak <= RSS_TARGET_MIB } : {}),
        },
      ],
      checks,
    };
  } finally {
    await clients.close();
    // Appended to the array the result holds: the stop and the clean-up are checked too.
    const code = await stopChild(bot);
    if (profileDir !== undefined)
      await writeFile(join(profileDir, "bursts.json"), JSON.stringify(bursts, null, 2));
    checks.push(check("approvals: the bot stops cleanly on SIGTERM", code === 0, `exit ${String(code)}`));
    await deleteKeysWithPrefix(redis, prefix);
    const left = await countKeys(redis, prefix);
    checks.push(check(`approvals: Redis keys under ${prefix}: deleted`, left === 0, `${left} left`));
    await redis.quit();
    await fake.stop();
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
