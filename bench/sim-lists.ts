/**
 * Where a warm `ns` spends its time, split between the simulator and the product:
 * `node --import tsx bench/sim-lists.ts [runs]`. Builds the `ns` benchmark's world (bench/ns.ts,
 * 20 ms per request), starts bench/ns-warm.ts as its own process, and prints medians of
 *   - a warm diagnosis (`ns bench` through the command registry),
 *   - the floor through the bot's adapter and with bare `fetch` (one round of every type's list),
 *   - the simulator's own serving time of the lists of one diagnosis (request log: finish − start
 *     − latency, summed over the lists), and its busiest moment (lists in flight).
 * Run with `node --cpu-prof --import tsx bench/sim-lists.ts` to profile the simulator side, or with
 * `UNSTUCK_SIM_LISTS_PROF=<dir>` to have the warm process write a CPU profile of the diagnoses.
 * A diagnostic script, not part of `npm run bench`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startKubeSim, type RequestRecord } from "../test/sim/kube/index.js";
import { isolatedEnv, LineProcess, median } from "./common.js";
import { buildWorld, LATENCY_MS, LIST_CONCURRENCY, NS } from "./ns.js";

const runs = Number(process.argv[2] ?? "5");
const sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
const dir = await mkdtemp(join(tmpdir(), "unstuck-sim-lists-"));
const out = (s: string): boolean => process.stdout.write(`${s}\n`);
try {
  const t0 = performance.now();
  const world = await buildWorld(sim, 1);
  out(
    `world: ${world.types} types, ${world.objects} objects, built in ${Math.round(performance.now() - t0)} ms`,
  );
  const kubeconfig = join(dir, "kubeconfig");
  await sim.writeKubeconfig(kubeconfig);
  sim.setFaults({ latencyMs: LATENCY_MS });
  const prof = process.env.UNSTUCK_SIM_LISTS_PROF;
  const warm = new LineProcess(
    process.execPath,
    [
      ...(prof !== undefined ? ["--cpu-prof", `--cpu-prof-dir=${prof}`] : []),
      "--import",
      "tsx",
      "bench/ns-warm.ts",
      NS,
      String(LIST_CONCURRENCY),
    ],
    isolatedEnv({ KUBECONFIG: kubeconfig }),
  );
  const ask = async (command: string): Promise<{ ms: number; error?: string }> => {
    const a = JSON.parse(await warm.request(command)) as { ms: number; error?: string };
    if (a.error !== undefined) throw new Error(a.error);
    return a;
  };
  const serving = (records: readonly RequestRecord[]) => {
    const lists = records.filter((r) => r.method === "GET" && !/\/(api|apis)$/.test(r.path));
    let busy = 0;
    let most = 0;
    const edges = lists.flatMap((r) => [
      { at: r.startedAt, d: 1 },
      { at: r.finishedAt, d: -1 },
    ]);
    for (const e of edges.sort((a, b) => a.at - b.at || a.d - b.d)) most = Math.max(most, (busy += e.d));
    const span =
      lists.length === 0
        ? 0
        : Math.max(...lists.map((r) => r.finishedAt)) - Math.min(...lists.map((r) => r.startedAt));
    const served = lists.reduce((s, r) => s + Math.max(0, r.finishedAt - r.startedAt - LATENCY_MS), 0);
    return { lists: lists.length, span, served, most };
  };
  try {
    await warm.request();
    await ask("diagnose");
    const diag: number[] = [];
    const span: number[] = [];
    const served: number[] = [];
    let requests = 0;
    for (let i = 0; i < runs; i++) {
      sim.resetRequests();
      diag.push((await ask("diagnose")).ms);
      const s = serving(sim.requests());
      span.push(s.span);
      served.push(s.served);
      requests = s.lists;
    }
    const floor: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < runs; i++) {
      floor.push((await ask("floor")).ms);
      sim.resetRequests();
      raw.push((await ask("rawfloor")).ms);
    }
    const f = (xs: number[]) => `${Math.round(median(xs))} ms [${xs.map((x) => Math.round(x)).join(", ")}]`;
    out(`warm diagnosis:      ${f(diag)}`);
    out(`  its ${requests} GETs span ${f(span)}; simulator time past the latency, summed: ${f(served)}`);
    out(`floor (adapter):     ${f(floor)}`);
    out(`floor (bare fetch):  ${f(raw)}`);
    const rss = JSON.parse(await warm.request("rss")) as { rssMiB?: number };
    if (rss.rssMiB !== undefined) out(`warm process RSS: ${Math.round(rss.rssMiB)} MiB`);
  } finally {
    await warm.close();
  }
} finally {
  await sim.stop();
  await rm(dir, { recursive: true, force: true });
}
