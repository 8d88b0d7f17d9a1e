/**
 * The edge benchmarks' world in a process of its own (`tsx bench/edge-sim.ts <loadBalancers>
 * <orphans>`): the Kubernetes and AWS simulators, so their own work — filtering 10,000 interfaces,
 * writing 400 target groups of XML a page — is not counted as the product's (on AWS and on an API
 * server it happens on their side). Prints one ready line (JSON: endpoints, what was planted);
 * then `reset` → `ok`, `calls` → the AWS calls since the last reset, `kube` → the Kubernetes
 * requests since the last reset, `cpu` → the CPU this process has spent, in ms. Ends when stdin
 * closes.
 */
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startAwsSim } from "../test/sim/aws/index.js";
import { startKubeSim } from "../test/sim/kube/index.js";
import { isolatedEnv, LineProcess } from "./common.js";
import { buildEdgeAccount, CLUSTER, type PreflightTarget } from "./edge-world.js";

export const AWS_LATENCY_MS = 30;
export const KUBE_LATENCY_MS = 20;

export interface EdgeSimReady {
  readonly awsUrl: string;
  readonly region: string;
  readonly kubeconfig: string;
  readonly buildMs: number;
  readonly summary: string;
  readonly counts: {
    readonly loadBalancers: number;
    readonly targetGroups: number;
    readonly ourLoadBalancers: number;
    readonly ourTargetGroups: number;
    readonly ourGroups: number;
    readonly elbInterfaces: number;
    readonly zones: number;
    readonly records: number;
    readonly distributions: number;
  };
  readonly planted: {
    readonly loadBalancers: string[];
    readonly targetGroups: string[];
    readonly freeGroups: string[];
    readonly orphanLbGroups: string[];
    readonly strayInterfaces: string[];
    readonly orphanLbInterfaces: string[];
  };
  readonly liveLoadBalancers: number;
  readonly preflight: PreflightTarget;
}

async function simProcess(loadBalancers: number, orphans: number): Promise<void> {
  const kube = await startKubeSim({ controllerIntervalMs: 3_600_000 });
  const t0 = performance.now();
  const account = buildEdgeAccount(kube, { loadBalancers, orphans });
  const buildMs = performance.now() - t0;
  const { world, planted } = account;
  const aws = await startAwsSim({ world, faults: { latencyMs: AWS_LATENCY_MS, elbThrottleBucket: true } });
  kube.setFaults({ latencyMs: KUBE_LATENCY_MS });
  const tagged = (tags: Readonly<Record<string, string>> | undefined): boolean =>
    tags?.["elbv2.k8s.aws/cluster"] === CLUSTER;
  const counts = {
    loadBalancers: world.loadBalancers.size,
    targetGroups: world.targetGroups.size,
    ourLoadBalancers: [...world.loadBalancers.keys()].filter((a) => tagged(world.tags.get(a))).length,
    ourTargetGroups: [...world.targetGroups.keys()].filter((a) => tagged(world.tags.get(a))).length,
    ourGroups: [...world.securityGroups.values()].filter((g) => tagged(g.tags)).length,
    elbInterfaces: [...world.networkInterfaces.values()].filter((n) => n.requesterId === "amazon-elb").length,
    zones: world.hostedZones.size,
    records: [...world.hostedZones.values()].reduce((n, z) => n + z.records.length, 0),
    distributions: world.distributions.size,
  };
  const ready: EdgeSimReady = {
    awsUrl: aws.url,
    region: world.region,
    kubeconfig: kube.kubeconfig(),
    buildMs,
    summary: `${String(counts.loadBalancers)} load balancers (${String(counts.ourLoadBalancers)} of ${CLUSTER}), ${String(counts.targetGroups)} target groups, ${String(world.securityGroups.size)} security groups, ${String(world.networkInterfaces.size)} ENIs, ${String(counts.records)} records, ${String(counts.distributions)} distributions; ${String(account.ingresses)} Ingresses`,
    counts,
    planted: {
      loadBalancers: [...planted.loadBalancers],
      targetGroups: [...planted.targetGroups],
      freeGroups: [...planted.freeGroups],
      orphanLbGroups: [...planted.orphanLbGroups],
      strayInterfaces: [...planted.strayInterfaces],
      orphanLbInterfaces: [...planted.orphanLbInterfaces],
    },
    liveLoadBalancers: account.liveLoadBalancers,
    preflight: account.preflight,
  };
  const out = (o: unknown): boolean => process.stdout.write(`${JSON.stringify(o)}\n`);
  out(ready);
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === "reset") {
      aws.resetCalls();
      kube.resetRequests();
      out("ok");
    } else if (line === "calls") {
      out(aws.calls().map((c) => ({ action: c.action, status: c.status })));
    } else if (line === "kube") {
      out(kube.requests().length);
    } else if (line === "cpu") {
      const used = process.cpuUsage();
      out((used.user + used.system) / 1000);
    }
  }
  await aws.stop();
  await kube.stop();
}

/** Starts the world process and waits for its ready line. */
export async function startEdgeSim(
  loadBalancers: number,
  orphans: number,
): Promise<{ sim: LineProcess; ready: EdgeSimReady }> {
  const sim = new LineProcess(
    process.execPath,
    ["--import", "tsx", fileURLToPath(import.meta.url), String(loadBalancers), String(orphans)],
    isolatedEnv(),
  );
  const ready = JSON.parse(await sim.request(undefined, 300_000)) as EdgeSimReady;
  return { sim, ready };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  await simProcess(Number(process.argv[2]), Number(process.argv[3]));
}
