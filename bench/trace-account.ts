/**
 * `trace <host>` in an account of 2,210 and of 6,610 load balancers (× scale), side by side: the
 * edge world of `orphans` (30 ms per AWS call, ELB's real token bucket, 20 ms per Kubernetes
 * request, simulators in a process of their own). Traced: one hostname whose ALB is shared by two
 * namespaces. Its floor is the listing a trace cannot do without: the cluster's load balancers
 * with their tags, through the Tagging API (`allLoadBalancers({ clusterTags })`), timed alone in the
 * same run. Target: the trace within 2× of it at both sizes, and its AWS calls growing with the
 * listing's pages, not with the account (no DescribeTags per 20 load balancers).
 *
 * Checked: the traced path goes record → the shared ALB → its owner, with no warning, in every run.
 */
import { performance } from "node:perf_hooks";
import { createAwsClients, destroyAwsClients } from "../src/aws/clients.js";
import { createAwsAdapter } from "../src/aws/sdk-adapter.js";
import { createKubeAdapter } from "../src/kube/client-node-adapter.js";
import { traceHostnames } from "../src/traffic/trace.js";
import {
  callBreakdown,
  check,
  median,
  ms,
  spread,
  type BenchOptions,
  type BenchResult,
  type Check,
  type Figure,
} from "./common.js";
import { AWS_LATENCY_MS, KUBE_LATENCY_MS, startEdgeSim } from "./edge-sim.js";
import { CLUSTER } from "./edge-world.js";

const SIZES = [2000, 6000];
const ORPHANS = 20;
const RATIO_TARGET = 2;
/** ELB's bucket refills between runs, as between two operators' traces. */
const PAUSE_MS = 4000;

async function oneSize(
  requested: number,
  runs: number,
): Promise<{ figures: Figure[]; checks: Check[]; context: string[] }> {
  const { sim, ready } = await startEdgeSim(requested, ORPHANS);
  const clients = createAwsClients({
    region: ready.region,
    endpoint: ready.awsUrl,
    credentials: { accessKeyId: "AKIAUNSTUCKBENCH0001", secretAccessKey: "x" },
  });
  try {
    const host = ready.preflight.unaffected;
    const kube = createKubeAdapter(ready.kubeconfig);
    const traceTimes: number[] = [];
    const listTimes: number[] = [];
    const counts: number[] = [];
    const breakdowns: string[] = [];
    const problems: string[] = [];
    for (let r = 0; r < runs; r++) {
      // A new adapter each run: no distribution list kept from the run before.
      const aws = createAwsAdapter(clients);
      await new Promise((res) => setTimeout(res, PAUSE_MS));
      await sim.request("reset");
      const start = performance.now();
      const t = await traceHostnames(aws, kube, [host], () => new Date(), { cluster: CLUSTER });
      traceTimes.push(performance.now() - start);
      const calls = JSON.parse(await sim.request("calls")) as { action: string; status: number }[];
      counts.push(calls.length);
      breakdowns.push(callBreakdown(calls));
      const kinds = t.paths[0]?.hops.map((h) => h.kind).join(" → ");
      if (t.paths.length !== 1 || kinds !== "record → load-balancer → owner" || t.warnings.length > 0)
        problems.push(
          `run ${String(r + 1)}: ${JSON.stringify({ hops: t.paths[0]?.hops.map((h) => h.kind), warnings: t.warnings })}`,
        );
      await new Promise((res) => setTimeout(res, PAUSE_MS));
      const floorStart = performance.now();
      await aws.allLoadBalancers({ clusterTags: CLUSTER });
      listTimes.push(performance.now() - floorStart);
    }
    const lbs = ready.counts.loadBalancers;
    const ratio = median(traceTimes) / median(listTimes);
    return {
      context: [
        `${String(lbs)} LBs: ${ready.summary}; built in ${ms(ready.buildMs)}`,
        `${String(lbs)} LBs: AWS calls of the first trace: ${breakdowns[0] ?? ""}`,
      ],
      figures: [
        {
          what: `trace ${host} (${String(lbs)} LBs)`,
          value: `${spread(traceTimes)}; floor (the cluster's load balancers by the Tagging API) ${spread(listTimes)}; ${ratio.toFixed(2)}× the floor`,
          target: `≤ ${String(RATIO_TARGET)}× the floor`,
          met: ratio <= RATIO_TARGET,
        },
        { what: `AWS calls per trace (${String(lbs)} LBs)`, value: counts.join(", ") },
      ],
      checks: [
        check(
          `trace-account: the path to the shared ALB is traced whole (${String(lbs)} LBs)`,
          problems.length === 0,
          problems.length === 0 ? `${String(runs)} runs, no warning` : problems.join("; "),
        ),
      ],
    };
  } finally {
    destroyAwsClients(clients);
    await sim.close();
  }
}

export async function benchTraceAccount(options: BenchOptions): Promise<BenchResult> {
  const context: string[] = [
    `method: traceHostnames(createAwsAdapter(clients), kube, [host], { cluster }) after a pause for ELB's bucket, median of ${String(options.runs)}; ${String(AWS_LATENCY_MS)} ms per AWS call, ${String(KUBE_LATENCY_MS)} ms per Kubernetes request`,
  ];
  const figures: Figure[] = [];
  const checks: Check[] = [];
  for (const size of SIZES) {
    const r = await oneSize(size * options.scale, options.runs);
    context.push(...r.context);
    figures.push(...r.figures);
    checks.push(...r.checks);
  }
  return { name: "trace-account", context, figures, checks };
}
