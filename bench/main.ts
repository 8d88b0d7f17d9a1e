/**
 * `npm run bench [-- name…]`: runs the benchmarks one after another (never at once: they would
 * time each other) and prints one table of figures against their targets, then every correctness
 * check. Exit code 1 if a check fails (a wrong count, an unexpected number of API calls, a second
 * execution, keys left in Redis) or a benchmark crashes; a missed timing target is reported, not
 * failed on. Benchmarks are never timed assertions in tests.
 *
 * `UNSTUCK_BENCH_RUNS` (default 3): repetitions of every timed measurement, the same for unstuck and
 * its baseline. `UNSTUCK_BENCH_SCALE` (default 1; 4 and 16 are the growth curve's): world size;
 * `growth` runs the curve's 1×, 4× and 16× side by side whatever it is.
 * `REDIS_URL` (default redis://127.0.0.1:6379): the Redis the approvals benchmark's bot uses.
 */
import { benchApprovals } from "./approvals.js";
import { benchAws } from "./aws.js";
import { benchOptions, check, type BenchOptions, type BenchResult } from "./common.js";
import { benchGrowth } from "./growth.js";
import { benchNs } from "./ns.js";
import { benchColdStart, benchImageSize, benchMemory } from "./ship.js";
import { benchOrphans } from "./orphans.js";
import { benchPreflight } from "./preflight.js";
import { benchReplicas } from "./replicas.js";
import { benchSlackNs } from "./slack-ns.js";
import { benchRepointPlan } from "./repoint-plan.js";
import { benchTraceAccount } from "./trace-account.js";
import { benchTraceZone } from "./trace-zone.js";
import { benchWaits } from "./waits.js";
import { benchWatcher } from "./watcher.js";

interface Bench {
  readonly name: string;
  readonly run: (options: BenchOptions) => Promise<BenchResult>;
}

const BENCHES: readonly Bench[] = [
  { name: "ns", run: benchNs },
  { name: "slack-ns", run: benchSlackNs },
  { name: "growth", run: benchGrowth },
  { name: "aws", run: benchAws },
  { name: "approvals", run: benchApprovals },
  { name: "replicas", run: benchReplicas },
  { name: "waits", run: benchWaits },
  { name: "trace-zone", run: benchTraceZone },
  { name: "trace-account", run: benchTraceAccount },
  { name: "repoint-plan", run: benchRepointPlan },
  { name: "watcher", run: benchWatcher },
  { name: "orphans", run: benchOrphans },
  { name: "preflight", run: benchPreflight },
  { name: "memory", run: benchMemory },
  { name: "image-size", run: benchImageSize },
  { name: "cold-start", run: benchColdStart },
];

function cell(s: string): string {
  return s.replace(/\|/g, "\\|");
}

function table(results: readonly BenchResult[]): string {
  const rows = ["| bench | measure | figure | target | |", "|---|---|---|---|---|"];
  for (const r of results) {
    for (const f of r.figures) {
      const met = f.met === undefined ? "" : f.met ? "met" : "MISSED";
      rows.push(`| ${r.name} | ${cell(f.what)} | ${cell(f.value)} | ${cell(f.target ?? "")} | ${met} |`);
    }
  }
  return rows.join("\n");
}

async function main(): Promise<number> {
  const wanted = process.argv.slice(2);
  const selected = wanted.length > 0 ? BENCHES.filter((b) => wanted.includes(b.name)) : BENCHES;
  const unknown = wanted.filter((w) => !BENCHES.some((b) => b.name === w));
  if (unknown.length > 0 || selected.length === 0) {
    process.stderr.write(
      `unknown benchmark(s): ${unknown.join(", ")}; known: ${BENCHES.map((b) => b.name).join(", ")}\n`,
    );
    return 2;
  }
  const options = benchOptions();
  const out = (s: string): boolean => process.stdout.write(`${s}\n`);
  out(
    `unstuck benchmarks: ${selected.map((b) => b.name).join(", ")}; ${options.runs} runs each side, scale ${options.scale}×`,
  );
  out(
    "Timing is noisy: simulators, clients and the process under test share this machine's cores with whatever else runs. Compare medians within one run; correctness checks are exact.",
  );
  const results: BenchResult[] = [];
  for (const b of selected) {
    const started = Date.now();
    out(`\n… ${b.name}`);
    try {
      results.push(await b.run(options));
    } catch (err) {
      const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
      results.push({
        name: b.name,
        context: [],
        figures: [],
        checks: [check(`${b.name}: ran to the end`, false, message)],
      });
    }
    out(`  done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  out("");
  for (const r of results) for (const line of r.context) out(`${r.name}: ${line}`);
  out(`\n${table(results)}\n`);
  const checks = results.flatMap((r) => r.checks);
  for (const c of checks) out(`${c.ok ? "ok  " : "FAIL"} ${c.what}: ${c.detail}`);
  const failed = checks.filter((c) => !c.ok).length;
  const missed = results.flatMap((r) => r.figures).filter((f) => f.met === false).length;
  out(
    `\n${failed === 0 ? "all" : `${failed} of`} ${checks.length} correctness checks ${failed === 0 ? "passed" : "FAILED"}; ${missed} timing/size target(s) missed (reported, not failed on)`,
  );
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main();
