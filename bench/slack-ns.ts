/**
 * The Slack path of a diagnosis, as an on-call engineer meets it: the time from a signed
 * `/unstuck ns <namespace>` to the first answer card showing that namespace, through the bot as its
 * own process (as the image runs it, the chart's NODE_OPTIONS, `UNSTUCK_ROLE=bot`), one ask after
 * another, p50 and p99 over `ASKS` asks after a few to warm it up. An ask is timed to the moment
 * its card reaches the fake Slack (an event, not a poll). Two worlds:
 *
 * - the seed incident (kube and AWS simulators; the diagnosis also reads AWS);
 * - 160 namespaced types with 5,000 objects held in one Terminating namespace, 20 ms per request
 *   (the `ns` bench's world; no AWS).
 *
 * Beside each, two warm floors in the same world, each a long-lived process with the bot's own
 * services (bench/ns-warm.ts) followed by one `chat.postMessage` of the answer's own card to the
 * same fake Slack, measured side by side with the asks (ask, fresh, reads, ask, …) so that all
 * three meet the same machine:
 * - `fresh`, the least any fresh diagnosis reads: the Namespace, then only the types its
 *   NamespaceContentRemaining condition names, every page. Shown, not judged: the seed incident's
 *   answer also reads the controller's logs, Argo CD's Applications and AWS, which it leaves out.
 * - `reads`, the answer's own reads: every port call one diagnosis of that namespace makes, replayed
 *   with the same arguments through the same adapters — the Namespace, then all the rest at once,
 *   nothing analysed or rendered. Stricter than the answer's real order (the logs wait for the
 *   controller found in the lists, the AWS reads for the Ingress). Target: p50 ≤ 1.5× this floor.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Redis } from "ioredis";
import { deleteKeysWithPrefix, REDIS_URL } from "../test/helpers/redis.js";
import { startKubeSim, type KubeSim } from "../test/sim/kube/index.js";
import { postSigned, slashCommandBody, startFakeSlack, type SlackArrival } from "../test/sim/slack/index.js";
import {
  check,
  isolatedEnv,
  LineProcess,
  median,
  ms,
  percentile,
  type BenchResult,
  type Check,
  type Figure,
} from "./common.js";
import { buildWorld, LATENCY_MS, LIST_CONCURRENCY, NS } from "./ns.js";
import { CHART_NODE_OPTIONS, ensureBuilt, startBot, startWorld, type World } from "./ship.js";

const ASKS = 50;
const WARM_UP = 5;
const CHANNEL = "C0INCIDENT";
const TARGET = 1.5;

/** Whether this arrival at Slack is an answer card about `namespace` (posted, updated or sent back). */
function isAnswer(arrived: SlackArrival, namespace: string): boolean {
  const header = `Namespace ${namespace}:`;
  if (arrived.kind === "response") return JSON.stringify(arrived.post.body).includes(header);
  const { method, body } = arrived.call;
  return (method === "chat.postMessage" || method === "chat.update") && JSON.stringify(body).includes(header);
}

/**
 * One signed `ns <namespace>` to the bot, timed to the moment its first answer card reaches Slack
 * (`timeoutMs`, default 60 s).
 */
export async function ask(
  world: World,
  events: string,
  namespace: string,
  i: number,
  timeoutMs = 60_000,
): Promise<number> {
  let arrived!: (at: number) => void;
  const answered = new Promise<number>((resolve) => (arrived = resolve));
  const stop = world.fake.watch((a) => {
    const at = performance.now();
    if (isAnswer(a, namespace)) arrived(at);
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const t0 = performance.now();
    const res = await postSigned(
      events,
      world.secret,
      slashCommandBody({
        text: `ns ${namespace}`,
        userId: "U0ONCALL1",
        channelId: CHANNEL,
        responseUrl: world.fake.responseUrl(`slack-ns-${String(i)}`),
      }),
    );
    if (res.status !== 200) throw new Error(`ask ${String(i)}: HTTP ${String(res.status)}`);
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`ask ${String(i)}: no answer card within ${String(timeoutMs / 1000)} s`)),
        timeoutMs,
      );
    });
    return (await Promise.race([answered, late])) - t0;
  } finally {
    clearTimeout(timer);
    stop();
  }
}

/** The body of the answer card the bot last sent Slack for `namespace`. */
function answerCard(world: World, namespace: string): Record<string, unknown> {
  const call = world.fake
    .calls()
    .reverse()
    .find((c) => isAnswer({ kind: "call", call: c }, namespace));
  const post = world.fake
    .responses()
    .reverse()
    .find((p) => isAnswer({ kind: "response", post: p }, namespace));
  const body = call?.body ?? post?.body;
  if (body === undefined) throw new Error(`no answer card about ${namespace} reached Slack`);
  return body;
}

/** One post of `card` (the answer's own card) to the same Slack as the answer's, timed. */
async function post(world: World, card: Record<string, unknown>): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${world.fake.url}chat.postMessage`, {
    method: "POST",
    headers: { authorization: `Bearer ${world.token}`, "content-type": "application/json" },
    body: JSON.stringify({ ...card, channel: CHANNEL }),
  });
  await res.text();
  return performance.now() - t0;
}

/**
 * The warm floors of one world, read through the bot's own services (bench/ns-warm.ts), each
 * followed by one post of the answer's card to the same Slack: `fresh`, the namespace's content
 * alone; `reads`, every read the answer makes (the namespace, then all the rest at once).
 */
async function startFloors(
  world: World,
  namespace: string,
): Promise<{
  run(kind: "fresh" | "reads", card: Record<string, unknown>): Promise<number>;
  readonly calls: () => number;
  close(): Promise<void>;
}> {
  const warm = new LineProcess(
    process.execPath,
    ["--import", "tsx", "bench/ns-warm.ts", namespace, String(LIST_CONCURRENCY)],
    isolatedEnv({ KUBECONFIG: world.kubeconfig, NODE_OPTIONS: CHART_NODE_OPTIONS, ...world.awsEnv }),
  );
  let calls = 0;
  try {
    await warm.request();
  } catch (err) {
    await warm.close();
    throw err;
  }
  return {
    async run(kind, card) {
      const answer = JSON.parse(await warm.request(kind)) as { ms?: number; calls?: number; error?: string };
      if (answer.ms === undefined) throw new Error(`${kind} floor: ${answer.error ?? "no answer"}`);
      calls = answer.calls ?? calls;
      return answer.ms + (await post(world, card));
    },
    calls: () => calls,
    close: () => warm.close(),
  };
}

/** The 160-type world of the `ns` bench in a simulator of its own, with the fake Slack and Redis, no AWS. */
async function typesWorld(): Promise<World> {
  const sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
  await buildWorld(sim, 1);
  sim.setFaults({ latencyMs: LATENCY_MS });
  const world = await withSlack(sim, "slack-ns");
  return {
    ...world,
    async stop() {
      await world.stop();
      await sim.stop();
    },
  };
}

/**
 * A fake Slack and a Redis prefix of its own beside a Kubernetes simulator already built, no AWS: what
 * `startBot` needs to run the bot as shipped against that world. `stop` leaves the simulator running.
 */
export async function withSlack(sim: KubeSim, name: string): Promise<World> {
  const token = `xoxb-bench-${randomBytes(8).toString("hex")}`;
  const fake = await startFakeSlack({ token });
  const dir = await mkdtemp(join(tmpdir(), `unstuck-bench-${name}-`));
  const kubeconfig = join(dir, "kubeconfig");
  await sim.writeKubeconfig(kubeconfig);
  const prefix = `unstuck-bench-${name}-${randomBytes(4).toString("hex")}`;
  return {
    sim,
    fake,
    kubeconfig,
    redisUrl: REDIS_URL,
    token,
    secret: randomBytes(16).toString("hex"),
    prefix,
    awsEnv: {},
    awsCalls: () => new Map(),
    async stop() {
      const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
      await deleteKeysWithPrefix(redis, prefix).finally(() => redis.quit());
      await fake.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function measure(
  label: string,
  world: World,
  namespace: string,
): Promise<{ figures: Figure[]; checks: Check[] }> {
  const bot = await startBot(world, { role: "bot", entry: "compiled" });
  const times: number[] = [];
  const floor = { fresh: [] as number[], reads: [] as number[], calls: 0 };
  try {
    const floors = await startFloors(world, namespace);
    try {
      for (let i = 0; i < WARM_UP; i++) await ask(world, bot.events, namespace, -1 - i);
      const card = answerCard(world, namespace);
      for (let i = 0; i < WARM_UP; i++)
        for (const kind of ["fresh", "reads"] as const) await floors.run(kind, card);
      // Side by side: each ask, then each floor once, so all three meet the same machine.
      for (let i = 0; i < ASKS; i++) {
        times.push(await ask(world, bot.events, namespace, i));
        for (const kind of ["fresh", "reads"] as const) floor[kind].push(await floors.run(kind, card));
      }
      floor.calls = floors.calls();
    } finally {
      await floors.close();
    }
  } finally {
    await bot.stop();
  }
  const p50 = percentile(times, 50);
  const freshMs = median(floor.fresh);
  const readsMs = median(floor.reads);
  return {
    figures: [
      {
        what: `[${label}] signed /unstuck ns ${namespace} → first answer card, ${String(ASKS)} asks one after another`,
        value: `p50 ${ms(p50)}, p99 ${ms(percentile(times, 99))}, max ${ms(Math.max(...times))}`,
      },
      {
        what: `[${label}] fresh-read floor: the namespace's content read fresh through the bot's services + one chat.postMessage of the answer's card`,
        value: `${ms(freshMs)} (median of ${String(ASKS)}); p50 ÷ it ${(p50 / freshMs).toFixed(2)}×`,
      },
      {
        what: `[${label}] answer's reads floor: every read of the answer (kube and AWS) through the bot's services, the namespace then all the rest at once, + one chat.postMessage of the answer's card`,
        value: `${ms(readsMs)} (median of ${String(ASKS)}; ${String(floor.calls)} port calls replayed)`,
      },
      {
        what: `[${label}] Slack path p50 ÷ answer's reads floor`,
        value: `${(p50 / readsMs).toFixed(2)}×`,
        target: `≤ ${String(TARGET)}×`,
        met: p50 <= TARGET * readsMs,
      },
    ],
    checks: [
      check(`[${label}] every ask answered with its card`, times.length === ASKS, `${times.length} answered`),
      check(
        `[${label}] the reads floor replays more than the namespace and its content`,
        floor.calls > 1,
        `${String(floor.calls)} port calls`,
      ),
    ],
  };
}

export async function benchSlackNs(): Promise<BenchResult> {
  const built = await ensureBuilt();
  const figures: Figure[] = [];
  const checks: Check[] = [];
  for (const [label, start, namespace] of [
    ["seed incident", startWorld, "myapp"],
    ["160 types × 5000", typesWorld, NS],
  ] as const) {
    const world = await start();
    try {
      const m = await measure(label, world, namespace);
      figures.push(...m.figures);
      checks.push(...m.checks);
    } finally {
      await world.stop();
    }
  }
  return {
    name: "slack-ns",
    context: [
      `the bot as its own process, as the image runs it (${built}; NODE_OPTIONS="${CHART_NODE_OPTIONS}"; UNSTUCK_ROLE=bot, HTTP mode); fake Slack, simulators and the asking client in the bench process; ${String(WARM_UP)} asks and floors of each kind to warm them first; asks and floors alternate`,
    ],
    figures,
    checks,
  };
}
