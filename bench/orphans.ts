/**
 * The orphan scan of a whole cluster in accounts of 2,210 and of 6,610 load balancers (× scale),
 * side by side: 30 ms per AWS call and ELB's real token bucket on (40 burst, 10 a second), 20 ms
 * per Kubernetes request, the cluster's Ingresses and Services in the Kubernetes simulator; both
 * simulators run in a process of their own (bench/edge-sim.ts), so the CPU this process spends is
 * the product's (the scan and its AWS and Kubernetes clients). The simulators' CPU is printed
 * beside it: they build every page from the whole account, so at the larger size their work, not
 * the scan's, sets the wall time. Runs the product's
 * `collectOrphans(aws, kube, { cluster })` — median of `UNSTUCK_BENCH_RUNS` runs, target ≤ 5 s at
 * the smaller size (reported) — and counts the AWS calls by action against the minimum that
 * answers. Linear in what it touches: its CPU per load balancer at the larger size within 1.3× of
 * the smaller's (a scan that compares every group with every load balancer grows with the square).
 *
 * Checked: every planted orphan is found, and nothing else is (no live resource, nothing of the
 * other cluster), in every run; the number of AWS calls equals the minimum (below).
 */
import { performance } from "node:perf_hooks";
import { createAwsClients, destroyAwsClients } from "../src/aws/clients.js";
import { createAwsAdapter } from "../src/aws/sdk-adapter.js";
import { createKubeAdapter } from "../src/kube/client-node-adapter.js";
import { collectOrphans } from "../src/orphans/collect.js";
import {
  callBreakdown,
  check,
  median,
  ms,
  runsOff,
  spread,
  type BenchOptions,
  type BenchResult,
  type Check,
  type Figure,
} from "./common.js";
import { AWS_LATENCY_MS, KUBE_LATENCY_MS, startEdgeSim } from "./edge-sim.js";
import { CLUSTER } from "./edge-world.js";

const SIZES = [2000, 6000];
const ORPHAN_LOAD_BALANCERS = 20;
const TARGET_MS = 5000;
/** CPU per load balancer at the larger size ÷ at the smaller: 1 is linear. */
const GROWTH_TARGET = 1.3;

const pages = (n: number, size: number): number => Math.max(1, Math.ceil(n / size));

/**
 * The fewest AWS calls that answer "what did the controller leave behind in this account":
 *   ELBv2  DescribeLoadBalancers and DescribeTargetGroups (400 a page): every load balancer and
 *          target group, to see what forwards to what — no tags from ELB for these.
 *   Tagging GetResources(cluster tag, load balancers), 100 a page: the tags of only this cluster's
 *          load balancers (DescribeTags takes 20 ARNs a call under ELB's 10-a-second bucket).
 *   ELBv2  DescribeTags only for the target groups no live load balancer forwards to (20 a call):
 *          the rest are in use whatever their tags say.
 *   EC2    DescribeSecurityGroups(tag:cluster, 1,000 a page); DescribeNetworkInterfaces of ELB
 *          (requester-id amazon-elb, 1,000 a page); DescribeNetworkInterfaces(group-id in a batch
 *          of up to 200 groups) per 200 of the cluster's groups that no live or dying owner
 *          accounts for (only those can be orphans; the shared backend group alone is on every
 *          node's interfaces, thousands of them).
 */
function minimumCalls(
  a: {
    loadBalancers: number;
    targetGroups: number;
    ourLoadBalancers: number;
    ourGroups: number;
    elbInterfaces: number;
  },
  loose: { targetGroups: number; groups: number },
): number {
  return (
    pages(a.loadBalancers, 400) +
    pages(a.targetGroups, 400) +
    pages(a.ourLoadBalancers, 100) +
    Math.ceil(loose.targetGroups / 20) +
    pages(a.ourGroups, 1000) +
    pages(a.elbInterfaces, 1000) +
    Math.ceil(loose.groups / 200)
  );
}

interface SizeResult {
  readonly loadBalancers: number;
  readonly times: readonly number[];
  /** CPU of this process during each scan, ms. */
  readonly cpu: readonly number[];
  /** CPU of the simulators' process during each scan, ms. */
  readonly simCpu: readonly number[];
  readonly counts: readonly number[];
  readonly minimum: number;
  readonly offRuns: readonly string[];
  readonly breakdown: string;
  readonly checks: readonly Check[];
  readonly context: string;
}

async function oneSize(requested: number, runs: number): Promise<SizeResult> {
  const { sim, ready } = await startEdgeSim(requested, ORPHAN_LOAD_BALANCERS);
  const { planted } = ready;
  // Target groups no live load balancer forwards to: the planted ones (attached to nothing, or to
  // an orphaned load balancer). Groups nothing live or dying owns: the planted ones.
  const minimum = minimumCalls(ready.counts, {
    targetGroups: planted.targetGroups.length,
    groups: planted.freeGroups.length + planted.orphanLbGroups.length,
  });
  const clients = createAwsClients({
    region: ready.region,
    endpoint: ready.awsUrl,
    credentials: { accessKeyId: "AKIAUNSTUCKBENCH0001", secretAccessKey: "x" },
  });
  try {
    const aws = createAwsAdapter(clients);
    const kube = createKubeAdapter(ready.kubeconfig);
    const times: number[] = [];
    const cpu: number[] = [];
    const simCpu: number[] = [];
    const counts: number[] = [];
    const breakdowns: string[] = [];
    const problems: string[] = [];
    const expected = new Set<string>([
      ...planted.loadBalancers,
      ...planted.targetGroups,
      ...planted.freeGroups,
      ...planted.strayInterfaces,
      ...planted.orphanLbInterfaces,
      ...planted.orphanLbGroups,
    ]);
    const must = [
      ...planted.loadBalancers,
      ...planted.targetGroups,
      ...planted.freeGroups,
      ...planted.strayInterfaces,
    ];
    for (let r = 0; r < runs; r++) {
      // ELB's bucket refills between runs, as between two operators' scans.
      await new Promise((res) => setTimeout(res, 4000));
      await sim.request("reset");
      const simCpuStart = Number(await sim.request("cpu"));
      const start = performance.now();
      const cpuStart = process.cpuUsage();
      const report = await collectOrphans(aws, kube, { cluster: CLUSTER });
      const used = process.cpuUsage(cpuStart);
      times.push(performance.now() - start);
      cpu.push((used.user + used.system) / 1000);
      simCpu.push(Number(await sim.request("cpu")) - simCpuStart);
      const calls = JSON.parse(await sim.request("calls")) as { action: string; status: number }[];
      counts.push(calls.length);
      breakdowns.push(callBreakdown(calls));

      const found = new Set(report.orphans.map((o) => o.id));
      const wrong = [...found].filter((id) => !expected.has(id));
      const missed = must.filter((id) => !found.has(id));
      if (wrong.length > 0 || missed.length > 0 || report.warnings.length > 0) {
        problems.push(
          `run ${String(r + 1)}: ${String(wrong.length)} reported that are not orphans (${wrong.slice(0, 3).join(", ")}), ${String(missed.length)} planted not found (${missed.slice(0, 3).join(", ")}); warnings: ${report.warnings.join("; ") || "none"}`,
        );
      }
    }
    const lbs = ready.counts.loadBalancers;
    const offRuns = runsOff(counts, minimum, breakdowns);
    return {
      loadBalancers: lbs,
      times,
      cpu,
      simCpu,
      counts,
      minimum,
      offRuns,
      breakdown: breakdowns[0] ?? "",
      context: `${String(lbs)} LBs: ${ready.summary}; built in ${ms(ready.buildMs)}`,
      checks: [
        check(
          `orphans: every planted orphan found, nothing live or foreign reported (${String(lbs)} LBs)`,
          problems.length === 0,
          problems.length === 0
            ? `${String(planted.loadBalancers.length)} load balancers, ${String(planted.targetGroups.length)} target groups, ${String(planted.freeGroups.length)} free groups, ${String(planted.strayInterfaces.length)} stray interfaces found in each of ${String(runs)} runs; ${String(ready.liveLoadBalancers)} live stacks untouched`
            : problems.join("; "),
        ),
        check(
          `orphans: exactly ${String(minimum)} AWS calls (the minimum) in every run (${String(lbs)} LBs)`,
          offRuns.length === 0,
          offRuns.length === 0 ? `${counts.join(", ")}: ${breakdowns[0] ?? ""}` : offRuns.join("; "),
        ),
      ],
    };
  } finally {
    destroyAwsClients(clients);
    await sim.close();
  }
}

const perLb = (r: SizeResult): number => median(r.cpu) / r.loadBalancers;

export async function benchOrphans(options: BenchOptions): Promise<BenchResult> {
  const sizes: SizeResult[] = [];
  for (const size of SIZES) sizes.push(await oneSize(size * options.scale, options.runs));
  const figures: Figure[] = sizes.flatMap((r, i) => [
    {
      what: `orphans --cluster (${String(r.loadBalancers)} LBs)`,
      value: `${spread(r.times)}; CPU ${spread(r.cpu)}; the simulators' CPU meanwhile ${spread(r.simCpu)}`,
      ...(i === 0 ? { target: `≤ ${ms(TARGET_MS)}`, met: median(r.times) <= TARGET_MS } : {}),
    },
    {
      what: `AWS calls per orphan scan (${String(r.loadBalancers)} LBs)`,
      value: r.counts.join(", "),
      target: `= ${String(r.minimum)}`,
      met: r.offRuns.length === 0,
    },
  ]);
  const [small, large] = sizes;
  if (small !== undefined && large !== undefined) {
    const growth = perLb(large) / perLb(small);
    figures.push({
      what: `orphans CPU per load balancer, ${String(large.loadBalancers)} ÷ ${String(small.loadBalancers)} LBs (1 is linear)`,
      value: `${growth.toFixed(2)}× (${(perLb(large) * 1000).toFixed(0)} µs ÷ ${(perLb(small) * 1000).toFixed(0)} µs)`,
      target: `≤ ${String(GROWTH_TARGET)}×`,
      met: growth <= GROWTH_TARGET,
    });
  }
  return {
    name: "orphans",
    context: [
      `${String(AWS_LATENCY_MS)} ms per AWS call, ELB token bucket on, ${String(KUBE_LATENCY_MS)} ms per Kubernetes request; simulators in their own process; CPU is this process's during the scan`,
      ...sizes.flatMap((r) => [
        r.context,
        `${String(r.loadBalancers)} LBs: AWS calls, first run: ${r.breakdown}`,
      ]),
    ],
    figures,
    checks: sizes.flatMap((r) => r.checks),
  };
}
