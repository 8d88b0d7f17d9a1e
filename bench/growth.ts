/**
 * The growth curve of `ns` (docs/design.md, Performance targets): the same world as `bench/ns.ts` at
 * 1×, 4× and 16× (types × objects: 160 × 5,000, 300 × 20,000, 600 × 80,000; every object held by a
 * finalizer in one Terminating namespace; 20 ms per request), side by side in one table:
 * - requests (the simulator's own log) and bytes received (a counting proxy) of one diagnosis;
 * - time: warm (a long-lived process holding the bot's services, `bench/ns-warm.ts`) and cold (a
 *   fresh compiled CLI process, start-up included, built first if stale; `UNSTUCK_BENCH_CLI` as for `ns`);
 * - RSS: the bot as the image runs it (the bundle, the chart's NODE_OPTIONS, `UNSTUCK_ROLE=bot`),
 *   its peak after three signed `/unstuck ns` asks through a fake Slack (target ≤ 300 MiB at every
 *   scale); the warm process's peak (TypeScript through tsx) and the cold CLI's maximum, with
 *   `--json` (one document of every blocker) and answering as text, printed;
 * - the floor: one round of every type's list at the adapter's concurrency, discovery done;
 * - the kubectl recipe (names kubectl resolves on its first try) at 1× and 4×, as many runs as unstuck.
 *
 * All three scales run by default: the 16× world builds in ~8 s on a 2-core machine and the whole
 * curve takes ~4–5 minutes, most of it kubectl at 4×. Correctness is checked at every scale: every
 * object counted, per type, agreeing with the namespace condition; kubectl lists every object.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { NamespaceDiagnosis } from "../src/diagnosis/types.js";
import { startKubeSim, type KubeSim } from "../test/sim/kube/index.js";
import {
  check,
  isolatedEnv,
  kubectlBinary,
  LineProcess,
  median,
  ms,
  runProcess,
  spread,
  type BenchOptions,
  type BenchResult,
  type Check,
  type Figure,
} from "./common.js";
import {
  buildWorld,
  classify,
  cliCommand,
  describeRequests,
  diagnosisChecks,
  LATENCY_MS,
  LIST_CONCURRENCY,
  NS,
  PAGE,
  prepareCli,
  proxiedDiagnosis,
  recipe,
  type Requests,
} from "./ns.js";
import { summarize, type DiagnosisSummary } from "./ns-summary.js";
import { CHART_NODE_OPTIONS, ensureBuilt, startBot } from "./ship.js";
import { ask as askBot, withSlack } from "./slack-ns.js";

/** The bot's peak resident set after a diagnosis at any scale (docs/design.md, Performance targets). */
const BOT_PEAK_RSS_MIB = 300;

/** Signed `ns` asks to the shipped bot at each scale, its peak RSS read after the last. */
const SHIPPED_ASKS = 3;

/** The scales of the curve. */
const SCALES = [1, 4, 16] as const;
/** kubectl's recipe beyond 4× takes many minutes a run. */
const KUBECTL_MAX_SCALE = 4;

interface Point {
  readonly scale: number;
  readonly types: number;
  readonly objects: number;
  readonly buildMs: number;
  readonly warm: readonly number[];
  readonly warmRequests: Requests;
  readonly warmMaxRssMiB: number;
  /** The bot as the image runs it (bundle, chart's NODE_OPTIONS): VmHWM after `SHIPPED_ASKS` Slack asks. */
  readonly botPeakRssMiB: number;
  readonly botAsks: readonly number[];
  readonly cold: readonly number[];
  readonly coldRequests?: Requests;
  readonly coldMaxRssMiB?: number;
  /** The cold CLI's maximum RSS answering as a terminal does (no `--json`: no 80,000-blocker document). */
  readonly coldTextMaxRssMiB?: number;
  readonly bytes: number;
  /** The fewest requests that answer: namespace + aggregated discovery + one per page. */
  readonly floorRequests: number;
  readonly floor: readonly number[];
  readonly kubectl?: { readonly times: readonly number[]; readonly requests: Requests };
}

function pick(rs: readonly Requests[]): Requests {
  return rs.find((r) => r.total === median(rs.map((x) => x.total))) ?? classify([]);
}

function kib(bytes: number): string {
  return bytes >= 10 * 1024 * 1024
    ? `${(bytes / 2 ** 20).toFixed(1)} MiB`
    : `${(bytes / 1024).toFixed(0)} KiB`;
}

async function measure(scale: number, runs: number, checks: Check[]): Promise<Point> {
  const sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
  const dir = await mkdtemp(join(tmpdir(), "unstuck-bench-growth-"));
  const label = `${String(scale)}×`;
  try {
    const t0 = performance.now();
    const world = await buildWorld(sim, scale);
    const buildMs = performance.now() - t0;
    const kubeconfig = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kubeconfig);
    sim.setFaults({ latencyMs: LATENCY_MS });
    const extraPages = [...world.expected.values()].reduce(
      (n, c) => n + Math.max(0, Math.ceil(c / PAGE) - 1),
      0,
    );
    const floorRequests = 1 + 2 + world.types + extraPages;

    // Warm: the bot's services in their own process with the chart's NODE_OPTIONS (the heap the
    // shipped bot has), one untimed warm-up, then `runs` diagnoses.
    const warmProcess = new LineProcess(
      process.execPath,
      ["--import", "tsx", "bench/ns-warm.ts", NS, String(LIST_CONCURRENCY)],
      isolatedEnv({ KUBECONFIG: kubeconfig, NODE_OPTIONS: CHART_NODE_OPTIONS }),
    );
    const warm: number[] = [];
    const warmRequests: Requests[] = [];
    const floor: number[] = [];
    let warmMaxRssMiB = 0;
    try {
      await warmProcess.request();
      const ask = async <T>(command: string): Promise<T> => {
        const answer = JSON.parse(await warmProcess.request(command, 900_000)) as T & { error?: string };
        if (answer.error !== undefined) throw new Error(`bench/ns-warm.ts: ${answer.error}`);
        return answer;
      };
      await ask("diagnose");
      for (let i = 0; i < runs; i++) {
        sim.resetRequests();
        const { ms: took, summary } = await ask<{ ms: number; summary: DiagnosisSummary }>("diagnose");
        warm.push(took);
        warmRequests.push(classify(sim.requests()));
        if (i === 0) checks.push(...diagnosisChecks(`growth ${label} warm`, summary, world));
      }
      for (let i = 0; i < runs; i++) floor.push((await ask<{ ms: number }>("floor")).ms);
      warmMaxRssMiB = (await ask<{ maxRssMiB: number }>("rss")).maxRssMiB;
    } finally {
      await warmProcess.close();
    }

    const bot = await shippedBot(sim, NS, checks, label);

    // Cold: a fresh CLI process per run, start-up included, its maximum RSS from /usr/bin/time.
    const cli = cliCommand();
    const timeBin = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;
    const cold: number[] = [];
    const coldRequests: Requests[] = [];
    const coldRss: number[] = [];
    for (let i = 0; i < runs; i++) {
      sim.resetRequests();
      const [cmd, ...args] = timeBin ? [timeBin, "-f", "UNSTUCK_BENCH_MAXRSS_KB=%M", ...cli] : cli;
      const r = await runProcess(cmd ?? "node", [...args, "ns", NS, "--json", "--kubeconfig", kubeconfig], {
        env: isolatedEnv(),
        timeoutMs: 900_000,
      });
      cold.push(r.elapsedMs);
      coldRequests.push(classify(sim.requests()));
      const rss = /UNSTUCK_BENCH_MAXRSS_KB=(\d+)/.exec(r.stderr)?.[1];
      if (rss !== undefined) coldRss.push(Number(rss) / 1024);
      let blockers: number | undefined;
      try {
        blockers = summarize(JSON.parse(r.stdout) as NamespaceDiagnosis).blockers;
      } catch {
        blockers = undefined;
      }
      if (i === 0 || blockers !== world.objects)
        checks.push(
          check(
            `growth ${label} cold run ${String(i + 1)}: every object in --json`,
            r.code === 0 && blockers === world.objects,
            r.code === 0
              ? `${String(blockers ?? "no JSON")} of ${String(world.objects)}`
              : `exit ${String(r.code)}: ${r.stderr.slice(0, 300)}`,
          ),
        );
    }

    // Once more as an operator's terminal asks (no --json): the answer names the blockers by type
    // rather than writing each of them into one document.
    let coldTextMaxRssMiB: number | undefined;
    if (timeBin !== undefined) {
      const r = await runProcess(
        timeBin,
        ["-f", "UNSTUCK_BENCH_MAXRSS_KB=%M", ...cli, "ns", NS, "--kubeconfig", kubeconfig],
        { env: isolatedEnv(), timeoutMs: 900_000 },
      );
      const rss = /UNSTUCK_BENCH_MAXRSS_KB=(\d+)/.exec(r.stderr)?.[1];
      if (r.code === 0 && rss !== undefined) coldTextMaxRssMiB = Number(rss) / 1024;
    }

    // Bytes of one more diagnosis through a counting proxy.
    const lean = await proxiedDiagnosis(sim);

    // The kubectl recipe at 1× and 4×, the same number of runs.
    let kubectl: Point["kubectl"];
    if (scale <= KUBECTL_MAX_SCALE) {
      const env = isolatedEnv({ KUBECONFIG: kubeconfig, KUBECTL_KUBERC: "false" });
      const cache = join(dir, "kube-cache");
      await runProcess(kubectlBinary(), ["--cache-dir", cache, "api-resources"], { env });
      const times: number[] = [];
      const requests: Requests[] = [];
      const wrong: string[] = [];
      for (let i = 0; i < runs; i++) {
        sim.resetRequests();
        const r = await runProcess("bash", ["-o", "pipefail", "-c", recipe(cache)], {
          env,
          timeoutMs: 1_800_000,
        });
        times.push(r.elapsedMs);
        requests.push(classify(sim.requests()));
        const listed = r.stdout.split("\n").filter((l) => l.trim() !== "").length;
        if (r.code !== 0 || listed !== world.objects)
          wrong.push(`run ${String(i + 1)}: exit ${String(r.code)}, ${String(listed)} names`);
      }
      checks.push(
        check(
          `growth ${label} kubectl recipe: lists every object`,
          wrong.length === 0,
          wrong.length === 0
            ? `${String(world.objects)} names in each of ${String(runs)} runs`
            : wrong.join(" | "),
        ),
      );
      kubectl = { times, requests: pick(requests) };
    }
    return {
      scale,
      types: world.types,
      objects: world.objects,
      buildMs,
      warm,
      warmRequests: pick(warmRequests),
      warmMaxRssMiB,
      botPeakRssMiB: bot.peakRssMiB,
      botAsks: bot.asks,
      cold,
      ...(coldRequests.length > 0 ? { coldRequests: pick(coldRequests) } : {}),
      ...(coldRss.length > 0 ? { coldMaxRssMiB: median(coldRss) } : {}),
      ...(coldTextMaxRssMiB !== undefined ? { coldTextMaxRssMiB } : {}),
      bytes: lean.bytes,
      floorRequests,
      floor,
      ...(kubectl !== undefined ? { kubectl } : {}),
    };
  } finally {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The bot as the image runs it (the bundle, the image's malloc settings, the chart's NODE_OPTIONS,
 * `UNSTUCK_ROLE=bot`) asked `ns` through signed slash commands, one after another, each awaited to its
 * answer card; its peak resident set (the kernel's VmHWM) after the last, a second after the card.
 */
async function shippedBot(
  sim: KubeSim,
  namespace: string,
  checks: Check[],
  label: string,
): Promise<{ peakRssMiB: number; asks: number[] }> {
  const world = await withSlack(sim, "growth");
  try {
    const bot = await startBot(world, { role: "bot", entry: "compiled" });
    const asks: number[] = [];
    try {
      for (let i = 0; i < SHIPPED_ASKS; i++)
        asks.push(await askBot(world, bot.events, namespace, i, 900_000));
      await new Promise((r) => setTimeout(r, 1_000));
      const status = await readFile(`/proc/${String(bot.pid)}/status`, "utf8");
      const hwm = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) / 1024;
      checks.push(
        check(
          `growth ${label} shipped bot: every ask answered with its card`,
          asks.length === SHIPPED_ASKS,
          `${String(asks.length)} of ${String(SHIPPED_ASKS)}`,
        ),
      );
      return { peakRssMiB: hwm, asks };
    } finally {
      await bot.stop();
    }
  } finally {
    await world.stop();
  }
}

function pointFigures(p: Point): Figure[] {
  const at = `${String(p.scale)}× (${String(p.types)} types × ${p.objects.toLocaleString("en-US")})`;
  const warm = median(p.warm);
  const cold = median(p.cold);
  const out: Figure[] = [
    {
      what: `${at}: unstuck warm`,
      value: `${spread(p.warm)}; ${describeRequests(p.warmRequests)}; ${kib(p.bytes)} received; peak RSS ${p.warmMaxRssMiB.toFixed(0)} MiB`,
    },
    {
      what: `${at}: the bot as shipped, peak RSS after ${String(SHIPPED_ASKS)} signed \`/unstuck ns\` asks (bundle, chart's NODE_OPTIONS)`,
      value: `${p.botPeakRssMiB.toFixed(0)} MiB; ask → card ${p.botAsks.map((t) => ms(t)).join(", ")}`,
      target: `≤ ${String(BOT_PEAK_RSS_MIB)} MiB`,
      met: p.botPeakRssMiB <= BOT_PEAK_RSS_MIB,
    },
    {
      what: `${at}: peak RSS of the warm process (TypeScript through tsx) and of the cold CLI, not judged`,
      value: `${p.warmMaxRssMiB.toFixed(0)} MiB; the cold CLI's ${p.coldMaxRssMiB !== undefined ? `${p.coldMaxRssMiB.toFixed(0)} MiB with --json, ${p.coldTextMaxRssMiB !== undefined ? `${p.coldTextMaxRssMiB.toFixed(0)} MiB` : "(failed)"} answering as text` : "(no /usr/bin/time)"}`,
    },
    {
      what: `${at}: unstuck warm requests vs the floor`,
      value: `${String(p.warmRequests.total)}; floor ${String(p.floorRequests)} (namespace + 2 discovery + one per page)`,
      target: `≤ ${String(Math.round(p.floorRequests * 1.1))} (floor + 10 %)`,
      met: p.warmRequests.total <= p.floorRequests * 1.1,
    },
    {
      what: `${at}: floor, one round of ${String(p.types)} lists at concurrency ${String(LIST_CONCURRENCY)}`,
      value: spread(p.floor),
    },
    {
      what: `${at}: unstuck cold (fresh CLI process)`,
      value: `${spread(p.cold)}${p.coldRequests ? `; ${String(p.coldRequests.total)} requests` : ""}${p.coldMaxRssMiB !== undefined ? `; max RSS ${p.coldMaxRssMiB.toFixed(0)} MiB` : ""}`,
    },
  ];
  if (p.kubectl) {
    const k = median(p.kubectl.times);
    out.push(
      {
        what: `${at}: kubectl recipe`,
        value: `${spread(p.kubectl.times)}; ${describeRequests(p.kubectl.requests)}`,
      },
      {
        what: `${at}: speed-up (kubectl / unstuck)`,
        value: `${(k / warm).toFixed(0)}× warm, ${(k / cold).toFixed(1)}× cold`,
      },
    );
  }
  return out;
}

/** How each measure grows from 1× against the growth of the world (objects). */
function growthFigures(points: readonly Point[]): Figure[] {
  const base = points[0];
  if (base === undefined) return [];
  return points.slice(1).map((p) => {
    const x = (a: number, b: number): string => `${(a / b).toFixed(1)}×`;
    const k =
      p.kubectl && base.kubectl ? `, kubectl ${x(median(p.kubectl.times), median(base.kubectl.times))}` : "";
    return {
      what: `growth ${String(base.scale)}× → ${String(p.scale)}× (objects ${x(p.objects, base.objects)}, types ${x(p.types, base.types)})`,
      value: `warm time ${x(median(p.warm), median(base.warm))}, requests ${x(p.warmRequests.total, base.warmRequests.total)}, bytes ${x(p.bytes, base.bytes)}, bot peak RSS ${x(p.botPeakRssMiB, base.botPeakRssMiB)}, cold time ${x(median(p.cold), median(base.cold))}${k}`,
    };
  });
}

export async function benchGrowth(options: BenchOptions): Promise<BenchResult> {
  const scales: readonly number[] = SCALES;
  const built = await prepareCli();
  await ensureBuilt();
  const checks: Check[] = [];
  const points: Point[] = [];
  for (const scale of scales) {
    process.stdout.write(`  growth ${String(scale)}×…\n`);
    points.push(await measure(scale, options.runs, checks));
  }
  return {
    name: "growth",
    context: [
      `scales ${scales.map((s) => `${String(s)}×`).join(", ")} (UNSTUCK_BENCH_SCALE does not apply: the curve is all three); ${String(LATENCY_MS)} ms per request; ${String(options.runs)} runs of each timed measure on each side`,
      ...points.map(
        (p) =>
          `${String(p.scale)}×: ${String(p.types)} namespaced listable types, ${p.objects.toLocaleString("en-US")} objects with finalizers; world built in ${ms(p.buildMs)}`,
      ),
      `unstuck cold: ${cliCommand().join(" ")} ns ${NS} --json (${built}; UNSTUCK_BENCH_CLI times another build); kubectl recipe at ≤ ${String(KUBECTL_MAX_SCALE)}×: ${recipe("<cache>")}`,
    ],
    figures: [...points.flatMap(pointFigures), ...growthFigures(points)],
    checks,
  };
}
