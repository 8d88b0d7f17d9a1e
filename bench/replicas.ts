/**
 * `replicas`: 4 bot replicas on one Redis prefix, each sent 20 concurrent `/unstuck ns bench-<i>`
 * for 20 distinct Terminating namespaces (80 diagnoses at once: a process shares a diagnosis only
 * between asks for the same namespace, so each process runs 20), against one simulated API server
 * (20 ms per request) of ~160 types, every namespace holding one object of each, beside the seed
 * incident. The figure is the most requests in flight at the API server at once, swept
 * from the simulator's own request log (each request from its arrival to its answer; watches left
 * out: they stay open by design). Run twice: each process with only its own bound, then with a fleet
 * budget (`UNSTUCK_KUBE_REQUEST_BUDGET`, target: never more in flight than it).
 *
 * The bots run as the image runs them (bench/ship.ts `startBot`: the bundle, the chart's
 * NODE_OPTIONS, AWS configured), `UNSTUCK_ROLE=bot`. Checks: every diagnosis answered.
 */
import { performance } from "node:perf_hooks";
import type { RequestRecord } from "../test/sim/kube/index.js";
import { postSigned, slashCommandBody } from "../test/sim/slack/index.js";
import { check, ms, type BenchOptions, type BenchResult, type Check, type Figure } from "./common.js";
import { buildNamespaces, LATENCY_MS } from "./ns.js";
import { answeredCommands, ensureBuilt, startBot, startWorld, type BotProcess, type World } from "./ship.js";

const REPLICAS = 4;
const CONCURRENT = 20;
const BUDGET = 64;
const CHANNEL = "C0INCIDENT";
const NAMESPACES = Array.from({ length: CONCURRENT }, (_, i) => `bench-${String(i)}`);
const sleep = (t: number): Promise<void> => new Promise((r) => setTimeout(r, t));

/** The most requests the server held at once, what they were then (by method and API group), and how many there were. */
export function maxInFlight(records: readonly RequestRecord[]): {
  max: number;
  atMax: string;
  requests: number;
} {
  const events: [number, number, number][] = [];
  let requests = 0;
  records.forEach((r, i) => {
    if (/(^|&)watch=(true|1)(&|$)/.test(r.query)) return;
    requests++;
    events.push([r.startedAt, 1, i], [r.finishedAt, -1, i]);
  });
  // An answer finished at the instant another arrives does not overlap it.
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const open = new Set<number>();
  let max = 0;
  let atMax: number[] = [];
  for (const [, d, i] of events) {
    if (d > 0) open.add(i);
    else open.delete(i);
    if (open.size > max) {
      max = open.size;
      atMax = [...open];
    }
  }
  const kinds = new Map<string, number>();
  for (const i of atMax) {
    const r = records[i];
    if (r === undefined) continue;
    const kind = `${r.method} ${/^\/apis\/([^/]+)/.exec(r.path)?.[1] ?? (r.path.startsWith("/api/") ? "core" : r.path)}`;
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  const top = [...kinds].sort((a, b) => b[1] - a[1]).slice(0, 4);
  return { max, atMax: top.map(([k, n]) => `${k} ×${String(n)}`).join(", "), requests };
}

/** `perBot` signed `ns bench-<i>` to each bot, all at once; resolves when all are answered (ms). */
async function burst(
  world: World,
  bots: readonly BotProcess[],
  perBot: number,
  label: string,
): Promise<number> {
  const before = answeredCommands(world);
  const t0 = performance.now();
  await Promise.all(
    bots.flatMap((bot, b) =>
      Array.from({ length: perBot }, async (_, i) => {
        const res = await postSigned(
          bot.events,
          world.secret,
          slashCommandBody({
            text: `ns ${NAMESPACES[i % NAMESPACES.length] ?? "bench-0"}`,
            userId: "U0ONCALL1",
            channelId: CHANNEL,
            responseUrl: world.fake.responseUrl(`${label}-${String(b)}-${String(i)}`),
          }),
        );
        if (res.status !== 200) throw new Error(`slash command: HTTP ${String(res.status)}`);
      }),
    ),
  );
  const total = bots.length * perBot;
  const until = Date.now() + 300_000;
  while (answeredCommands(world) - before < total) {
    if (Date.now() > until)
      throw new Error(`${String(answeredCommands(world) - before)} of ${String(total)} answered`);
    await sleep(20);
  }
  return performance.now() - t0;
}

export async function benchReplicas(options: BenchOptions): Promise<BenchResult> {
  const built = await ensureBuilt();
  const world = await startWorld();
  const figures: Figure[] = [];
  const checks: Check[] = [];
  try {
    const built0 = performance.now();
    const w = await buildNamespaces(world.sim, NAMESPACES);
    const buildMs = performance.now() - built0;
    world.sim.setFaults({ latencyMs: LATENCY_MS });
    for (const [label, env] of [
      ["each process's own bound", {}],
      [`fleet budget ${String(BUDGET)}`, { UNSTUCK_KUBE_REQUEST_BUDGET: String(BUDGET) }],
    ] as const) {
      const bots: BotProcess[] = [];
      try {
        for (let i = 0; i < REPLICAS; i++)
          bots.push(await startBot(world, { role: "bot", entry: "compiled", env }));
        // One untimed diagnosis per replica: discovery read, code loaded.
        await burst(world, bots, 1, `${label}-warm`);
        const peaks: number[] = [];
        let worst = "";
        const times: number[] = [];
        let requests = 0;
        for (let r = 0; r < options.runs; r++) {
          world.sim.resetRequests();
          times.push(await burst(world, bots, CONCURRENT, `${label}-${String(r)}`));
          const m = maxInFlight(world.sim.requests());
          if (m.max > Math.max(0, ...peaks)) worst = m.atMax;
          peaks.push(m.max);
          requests = m.requests;
        }
        const peak = Math.max(...peaks);
        const budgeted = label.startsWith("fleet");
        figures.push({
          what: `${REPLICAS} replicas × ${CONCURRENT} concurrent ns of distinct namespaces (${label}): most requests in flight at the API server`,
          value: `${String(peak)} (per run: ${peaks.join(", ")}; at the peak: ${worst}); ${String(requests)} requests in the last run; all answered in ${times.map((t) => ms(t)).join(", ")}`,
          ...(budgeted ? { target: `≤ ${String(BUDGET)}`, met: peak <= BUDGET } : {}),
        });
        checks.push(
          check(
            `replicas (${label}): the server saw every run's diagnoses`,
            requests > 0,
            `${String(requests)} requests in the last run`,
          ),
        );
      } finally {
        for (const b of bots) await b.stop().catch(() => undefined);
      }
    }
    return {
      name: "replicas",
      context: [
        `${built}; ${REPLICAS} bot processes (UNSTUCK_ROLE=bot, the bundle, the chart's NODE_OPTIONS, AWS configured) on one Redis prefix; ${String(NAMESPACES.length)} Terminating namespaces of ${String(w.types)} types (${String(w.objects)} held objects, one of each type in each, built in ${ms(buildMs)}) beside the seed incident; ${String(LATENCY_MS)} ms per request`,
        "in flight: swept from the simulator's request log (arrival → answer finished), watches left out",
      ],
      figures,
      checks,
    };
  } finally {
    await world.stop();
  }
}
