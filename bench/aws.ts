/**
 * Benchmark for the AWS side of a diagnosis. A simulated account the size of a busy
 * production one — 2,000 ALBs, 6,000 target groups, 5,000 security groups, 20,000 ENIs, thousands
 * of unrelated CloudTrail events — with 30 ms latency per call and ELB's real token bucket on.
 * Measures the product's `collectAwsForBlocker` for the seed incident's stuck Ingress (its stack's
 * resources plus the dependents of every group it touches): median of `UNSTUCK_BENCH_RUNS` runs,
 * target ≤ 3 s (reported), and the number of API calls, which must equal the minimum that answers
 * the question in every run (checked: more is a listing the question did not need, fewer means a
 * question went unasked). `UNSTUCK_BENCH_SCALE` multiplies the account's bulk; the minimum stays 8.
 */
import { performance } from "node:perf_hooks";
import { createAwsClients, destroyAwsClients } from "../src/aws/clients.js";
import { createAwsAdapter } from "../src/aws/sdk-adapter.js";
import { collectAwsForBlocker } from "../src/diagnosis/aws-collect.js";
import type { ObjectSnapshot } from "../src/kube/types.js";
import { loadAwsScenario, startAwsSim, type AwsWorld } from "../test/sim/aws/index.js";
import { loadScenario } from "../test/sim/scenario.js";
import { SEED_OWNERS, SEED_STUCK_INGRESS } from "../test/fixtures/seed-ingress.js";
import { check, ms, spread, type BenchOptions, type BenchResult, type Check } from "./common.js";

const SEED = "test/fixtures/scenarios/seed-incident.yaml";
const BASE_ALBS = 2000;
const BASE_TARGET_GROUPS = 6000;
const BASE_SECURITY_GROUPS = 5000;
const BASE_ENIS = 20_000;
const BASE_NOISE_EVENTS = 5000;
const LATENCY_MS = 30;
const TARGET_MS = 3000;

/**
 * The fewest calls that answer "what blocks this Ingress's finalizer" for the seed (variant A: the
 * ALB is already gone, one shared backend group is blocked by one ENI):
 *   ELBv2   1 DescribeLoadBalancers(Names=[the hostname's LB name]) — by exact name, not a listing
 *           of 2,000 ALBs (5 pages of 400); it answers "gone", so no DescribeTargetGroups /
 *           DescribeListeners / DescribeTags are needed.
 *   EC2     2 DescribeSecurityGroups with tag filters (the stack's managed group; the cluster's
 *           backend group) — tag filters AND together, so one call cannot ask for both;
 *           per group found (1): 1 DescribeNetworkInterfaces(group-id) + 2 DescribeSecurityGroups
 *           (ip-permission.group-id, egress.ip-permission.group-id: again two AND-ed filter names).
 *   CloudTrail  1 LookupEvents(EventName=DeleteSecurityGroup, window) per 50 events: the seed's
 *           window holds 50 DeleteSecurityGroup events (49 failures, 1 success) → 1 page. The
 *           5,000 unrelated events cost nothing because the lookup attribute filters server-side.
 *   Tagging 1 GetResources(TagFilters=cluster AND stack, types loadbalancer + targetgroup): the
 *           stack's load balancers and target groups, including ones left behind after the ALB is
 *           gone, at 100 a page — the seed's stack has fewer than 100, so 1 page, instead of
 *           listing 6,000 target groups (15 pages of 400) plus DescribeTags for each.
 * Total: 1 + 2 + 3 + 1 + 1 = 8. Anything above that is a listing the question did not need.
 */
const MINIMUM_CALLS = 8;

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

/** The seed world plus bulk, built through `AwsWorld` methods (seconds, not minutes). */
function buildWorld(scale: number): {
  world: AwsWorld;
  ingress: ObjectSnapshot;
  since: Date;
  until: Date;
} {
  const SECURITY_GROUPS = BASE_SECURITY_GROUPS * scale;
  const TARGET_GROUPS = BASE_TARGET_GROUPS * scale;
  const ALBS = BASE_ALBS * scale;
  const ENIS = BASE_ENIS * scale;
  const NOISE_EVENTS = BASE_NOISE_EVENTS * scale;
  const scenario = loadScenario(SEED);
  const world = loadAwsScenario(scenario.aws);
  const vpcId = "vpc-0a1b2c3d4e5f60718";

  const groups: string[] = [];
  for (let i = 0; i < SECURITY_GROUPS; i++) {
    const team = `team${pad(i % 400, 3)}`;
    const sg = world.createSecurityGroup({
      id: `sg-0b${pad(i, 15)}`,
      name: `k8s-${team}-svc${pad(i, 5)}-${pad(i, 10)}`,
      description: "[k8s] Managed SecurityGroup for LoadBalancer",
      vpcId,
      tags: {
        "elbv2.k8s.aws/cluster": i % 2 === 0 ? "prod-eks" : "stage-eks",
        "ingress.k8s.aws/stack": `${team}/svc${pad(i, 5)}`,
        "ingress.k8s.aws/resource": "ManagedLBSecurityGroup",
      },
    });
    groups.push(sg.id);
  }
  // Every tenth group is opened to the next one: referencing rules exist, just not to our group.
  for (let i = 0; i < SECURITY_GROUPS; i += 10) {
    world.authorize(groups[i] ?? "", false, [
      { ipProtocol: "tcp", fromPort: 8080, toPort: 8080, referencedGroupId: groups[i + 1] ?? "" },
    ]);
  }
  const tgs: string[] = [];
  for (let i = 0; i < TARGET_GROUPS; i++) {
    const tg = world.createTargetGroup({
      name: `k8s-t${pad(i % 400, 3)}-svc${pad(i, 5)}-${pad(i, 8)}`,
      port: 8080,
      vpcId,
      tags: {
        "elbv2.k8s.aws/cluster": "prod-eks",
        "ingress.k8s.aws/stack": `team${pad(i % 400, 3)}/svc${pad(Math.floor(i / 3), 5)}`,
      },
    });
    tgs.push(tg.arn);
  }
  for (let i = 0; i < ALBS; i++) {
    const lb = world.createLoadBalancer({
      name: `k8s-team${pad(i % 400, 3)}-svc${pad(i, 5)}-${pad(i, 8)}`,
      securityGroups: [groups[i] ?? ""],
      vpcId,
      tags: {
        "elbv2.k8s.aws/cluster": "prod-eks",
        "ingress.k8s.aws/stack": `team${pad(i % 400, 3)}/svc${pad(i, 5)}`,
        "ingress.k8s.aws/resource": "LoadBalancer",
      },
    });
    for (let k = 0; k < 3; k++) {
      world.createListener({
        loadBalancerArn: lb.arn,
        port: 80 + k,
        defaultTargetGroupArn: tgs[i * 3 + k] ?? "",
      });
    }
    world.createLoadBalancerEnis(lb.arn);
  }
  // The rest of the 20,000: node and pod ENIs on the cluster's node group.
  const existing = world.networkInterfaces.size;
  for (let i = existing; i < ENIS; i++) {
    world.createNetworkInterface({
      description: i % 5 === 0 ? "" : `aws-K8S-i-0${pad(i % 900, 16)}`,
      groups: ["sg-0a3c5e7f9b1d2f406"],
      status: "in-use",
      attached: true,
      instanceId: `i-0${pad(i % 900, 16)}`,
      privateIpAddress: `10.${1 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`,
    });
  }

  const ns = scenario.kube?.objects.find((o) => o.kind === "Namespace" && o.metadata.name === "myapp");
  const deletedAt = new Date(String(ns?.metadata.deletionTimestamp));
  // Unrelated write history around the incident, so the CloudTrail filter has to do its job.
  for (let i = 0; i < NOISE_EVENTS; i++) {
    world.recordApiCall(
      {
        service: i % 3 === 0 ? "elasticloadbalancing" : "ec2",
        action:
          i % 3 === 0 ? "ModifyTargetGroup" : i % 3 === 1 ? "CreateTags" : "AuthorizeSecurityGroupIngress",
        accessKeyId: "ASIAQOTHERCTRL000001",
        userAgent: "aws-sdk-go/1.55.5",
        requestId: world.ids.uuid(),
        region: world.region,
        requestParameters: null,
        responseElements: null,
        resources: [],
      },
      new Date(deletedAt.getTime() - 3_600_000 + i * 1500),
    );
  }

  const ingress: ObjectSnapshot = {
    ...SEED_STUCK_INGRESS,
    deletionTimestamp: new Date(deletedAt.getTime() + 13_000).toISOString(),
  };
  return {
    world,
    ingress,
    since: new Date(deletedAt.getTime() - 15 * 60_000),
    until: new Date(deletedAt.getTime() + 60 * 60_000),
  };
}

export async function benchAws(options: BenchOptions): Promise<BenchResult> {
  const { runs, scale } = options;
  const t0 = performance.now();
  const { world, ingress, since, until } = buildWorld(scale);
  const buildMs = performance.now() - t0;
  const sim = await startAwsSim({ world, faults: { latencyMs: LATENCY_MS, elbThrottleBucket: true } });
  const clients = createAwsClients({
    region: world.region,
    endpoint: sim.url,
    credentials: { accessKeyId: "AKIAUNSTUCKBENCH0001", secretAccessKey: "x" },
  });
  try {
    const aws = createAwsAdapter(clients);
    const times: number[] = [];
    const counts: number[] = [];
    const breakdowns: string[] = [];
    const founds: string[] = [];
    for (let r = 0; r < runs; r++) {
      sim.resetCalls();
      const start = performance.now();
      const f = await collectAwsForBlocker(aws, ingress, {
        cluster: "prod-eks",
        since,
        until,
        owners: Promise.resolve({ owners: SEED_OWNERS, complete: true }),
      });
      times.push(performance.now() - start);
      const calls = sim.calls();
      counts.push(calls.length);
      const byAction = new Map<string, number>();
      for (const c of calls) byAction.set(c.action, (byAction.get(c.action) ?? 0) + 1);
      breakdowns.push([...byAction].map(([a, n]) => `${a}×${n}`).join(", "));
      const backend = f.blockedGroups.find((g) => g.networkInterfaces.length > 0);
      founds.push(
        backend
          ? `${backend.groupId} blocked by ${backend.networkInterfaces.map((n) => n.id).join(", ")}; problems: ${f.problems.length}`
          : `no blocking ENI found; problems: ${f.problems.join("; ") || "none"}`,
      );
    }
    const median = [...times].sort((a, b) => a - b)[Math.floor(runs / 2)] ?? Number.NaN;
    const offRuns = counts
      .map((n, i) => ({ n, i }))
      .filter(({ n }) => n !== MINIMUM_CALLS)
      .map(({ n, i }) => `run ${i + 1}: ${n} calls (${breakdowns[i] ?? ""})`);
    const missing = founds.map((f, i) => ({ f, i })).filter(({ f }) => !f.includes("blocked by"));
    const checks: Check[] = [
      check(
        `aws: exactly ${MINIMUM_CALLS} API calls in every run`,
        offRuns.length === 0,
        offRuns.length === 0 ? `${counts.join(", ")} calls: ${breakdowns[0] ?? ""}` : offRuns.join("; "),
      ),
      check(
        "aws: finds the blocking ENI",
        missing.length === 0,
        missing.length === 0 ? (founds[0] ?? "") : missing.map(({ f, i }) => `run ${i + 1}: ${f}`).join("; "),
      ),
    ];
    return {
      name: "aws",
      context: [
        `account: ${world.loadBalancers.size} ALBs, ${world.targetGroups.size} target groups, ${world.securityGroups.size} security groups, ${world.networkInterfaces.size} ENIs, ${world.trail.length} CloudTrail events; ${LATENCY_MS} ms per call, ELB token bucket on; built in ${ms(buildMs)}`,
      ],
      figures: [
        {
          what: "collectAwsForBlocker(myapp/myapp-worker-ingress)",
          value: spread(times),
          target: `≤ ${ms(TARGET_MS)}`,
          met: median <= TARGET_MS,
        },
        {
          what: "AWS API calls per diagnosis",
          value: counts.join(", "),
          target: `= ${MINIMUM_CALLS}`,
          met: offRuns.length === 0,
        },
      ],
      checks,
    };
  } finally {
    destroyAwsClients(clients);
    await sim.stop();
  }
}
