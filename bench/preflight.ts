/**
 * `preflight delete ns shop` in the orphan benchmark's busy account (bench/edge-world.ts:
 * 2,000 load balancers × scale, 30 ms per AWS call with ELB's token bucket on, 20 ms per
 * Kubernetes request, simulators in a process of their own). The namespace holds 40 Ingresses in
 * 10 IngressGroups behind 10 hostnames, 3 of them through CloudFront; the last group also serves an
 * Ingress of namespace `partner`. Median of `UNSTUCK_BENCH_RUNS` runs, target ≤ 2 s (reported).
 *
 * Checked in every run: exactly the 9 load balancers of `shop`'s own groups go with it (the shared
 * one stays: live vs dying), exactly the 9 hostnames on them break (3 answering 502 through
 * CloudFront) and the shared group's hostname does not, the verdict is `risky`, nothing unread.
 * The AWS calls are counted by action against the fewest that answer (below).
 */
import { performance } from "node:perf_hooks";
import { createAwsClients, destroyAwsClients } from "../src/aws/clients.js";
import { createAwsAdapter } from "../src/aws/sdk-adapter.js";
import { createKubeAdapter } from "../src/kube/client-node-adapter.js";
import { collectPreflight } from "../src/preflight/collect.js";
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
} from "./common.js";
import { AWS_LATENCY_MS, KUBE_LATENCY_MS, startEdgeSim } from "./edge-sim.js";
import { CLUSTER } from "./edge-world.js";

const BASE_LOAD_BALANCERS = 2000;
const TARGET_MS = 2000;

/**
 * The fewest AWS calls: the namespace's 10 stacks by tag (1 GetResources: cluster AND stack in the
 * 10 values, load balancers + target groups + groups, 1 page); the cluster's backend group
 * (1 DescribeSecurityGroups); the stacks' load balancers by name (1 DescribeLoadBalancers + 1
 * DescribeTags, 20 a call), target groups by ARN (30: 2 DescribeTargetGroups, 20 a call), groups by
 * id (1 DescribeSecurityGroups); Route 53 (1 ListHostedZones + 1 page of 512 records… at most 300 a
 * page: 2 ListResourceRecordSets); CloudFront (1 ListDistributions). No listing of the account's
 * 2,000 load balancers or 6,000 target groups.
 */
const MINIMUM_CALLS = 1 + 1 + 2 + 2 + 1 + 1 + 2 + 1;

export async function benchPreflight(options: BenchOptions): Promise<BenchResult> {
  const { runs, scale } = options;
  const { sim, ready } = await startEdgeSim(BASE_LOAD_BALANCERS * scale, 20);
  const target = ready.preflight;
  const clients = createAwsClients({
    region: ready.region,
    endpoint: ready.awsUrl,
    credentials: { accessKeyId: "AKIAUNSTUCKBENCH0001", secretAccessKey: "x" },
  });
  try {
    const aws = createAwsAdapter(clients);
    const kube = createKubeAdapter(ready.kubeconfig);
    const times: number[] = [];
    const counts: number[] = [];
    const breakdowns: string[] = [];
    const problems: string[] = [];
    // One untimed run warms the clients (their first request loads middleware, opens sockets).
    await collectPreflight(kube, { port: aws, cluster: CLUSTER }, target.namespace);
    for (let r = 0; r < runs; r++) {
      await new Promise((res) => setTimeout(res, 4000));
      await sim.request("reset");
      const start = performance.now();
      const report = await collectPreflight(kube, { port: aws, cluster: CLUSTER }, target.namespace);
      times.push(performance.now() - start);
      const calls = JSON.parse(await sim.request("calls")) as { action: string }[];
      counts.push(calls.length);
      breakdowns.push(callBreakdown(calls));

      const deleted = new Set(report.awsDeleted.filter((d) => d.type === "LoadBalancer").map((d) => d.id));
      const wantDeleted = new Set(target.deletedLoadBalancers);
      const hosts = new Map(report.hostnames.map((h) => [h.hostname.replace(/\.$/, ""), h.effect]));
      const through502 = [...hosts.values()].filter((e) => e.includes("502")).length;
      const wrong: string[] = [];
      if (deleted.size !== wantDeleted.size || [...wantDeleted].some((a) => !deleted.has(a)))
        wrong.push(
          `load balancers deleted: ${String(deleted.size)} (want the ${String(wantDeleted.size)} of shop)`,
        );
      if (deleted.has(target.sharedLoadBalancer))
        wrong.push("the shared group's load balancer called deleted");
      const missedHosts = target.breaking.filter((h) => !hosts.has(h));
      if (missedHosts.length > 0) wrong.push(`breaking hostnames not named: ${missedHosts.join(", ")}`);
      if (hosts.has(target.unaffected))
        wrong.push(`${target.unaffected} (on the shared group) said to break`);
      if (through502 !== target.distributions)
        wrong.push(
          `${String(through502)} hostnames through CloudFront (want ${String(target.distributions)})`,
        );
      if (report.verdict !== "risky") wrong.push(`verdict ${report.verdict}: ${report.reasons.join(" | ")}`);
      if (report.warnings.length > 0) wrong.push(`warnings: ${report.warnings.join("; ")}`);
      if (wrong.length > 0) problems.push(`run ${String(r + 1)}: ${wrong.join("; ")}`);
    }
    const middle = median(times);
    const offRuns = runsOff(counts, MINIMUM_CALLS, breakdowns);
    const checks: Check[] = [
      check(
        "preflight: exactly shop's own load balancers and hostnames, the shared group spared",
        problems.length === 0,
        problems.length === 0
          ? `${String(target.deletedLoadBalancers.length)} load balancers and ${String(target.breaking.length)} hostnames (${String(target.distributions)} via CloudFront → 502), ${target.unaffected} unaffected, verdict risky, in each of ${String(runs)} runs`
          : problems.join("; "),
      ),
      check(
        `preflight: exactly ${String(MINIMUM_CALLS)} AWS calls in every run`,
        offRuns.length === 0,
        offRuns.length === 0 ? `${counts.join(", ")}: ${breakdowns[0] ?? ""}` : offRuns.join("; "),
      ),
    ];
    return {
      name: "preflight",
      context: [
        `namespace ${target.namespace}: ${String(target.ingresses)} Ingresses in 10 IngressGroups, 10 hostnames, ${String(target.distributions)} distributions; account: ${ready.summary}; ${String(AWS_LATENCY_MS)} ms per AWS call, ELB token bucket on, ${String(KUBE_LATENCY_MS)} ms per Kubernetes request`,
        `AWS calls, first run: ${breakdowns[0] ?? ""}`,
      ],
      figures: [
        {
          what: `preflight delete ns ${target.namespace}`,
          value: spread(times),
          target: `≤ ${ms(TARGET_MS)}`,
          met: middle <= TARGET_MS,
        },
        {
          what: "AWS calls per preflight",
          value: counts.join(", "),
          target: `= ${String(MINIMUM_CALLS)}`,
          met: offRuns.length === 0,
        },
      ],
      checks,
    };
  } finally {
    destroyAwsClients(clients);
    await sim.close();
  }
}
