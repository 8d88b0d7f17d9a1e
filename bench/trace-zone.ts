/**
 * Benchmark for `trace`: one hostname, `test.example.com`, traced through a Route 53
 * zone of 10,000 records in an account with 300 CloudFront distributions, every AWS call answered
 * by the AWS simulator after 30 ms (its `latencyMs` fault). The world is the seed incident (the
 * name is an alias to a distribution whose origin names the worker's deleted ALB; the controller's
 * re-created ALB of the same stack is the replacement) plus bulk added through `AwsWorld` methods:
 * records that sort around the traced name, and distributions with aliases and ALB origins.
 *
 * The simulator runs in a process of its own (this file with `--sim`), so its own work — sorting the
 * 10,000 records on every ListResourceRecordSets, writing distributions as XML — is not counted as
 * the product's; it reports each call's time on its side, and the same trace is also timed with the
 * simulator in this process for comparison.
 *
 * Runs the product's `traceHostnames(createAwsAdapter(clients), undefined, [host], now)` — median of
 * `UNSTUCK_BENCH_RUNS` runs (at least 5 here), target ≤ 1 s (reported, not failed on) — and counts
 * the API calls of each run by action against the minimum that answers the question, and times each
 * read alone to show which one the critical path waits for. Checked: the
 * traced verdict, the origin's stale load balancer and its replacement equal what the world says,
 * and no read failed. `UNSTUCK_BENCH_SCALE` multiplies the records and the distributions.
 *
 * `npx tsx bench/trace-zone.ts` runs it alone and prints its lines.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createAwsClients, destroyAwsClients } from "../src/aws/clients.js";
import { createAwsAdapter } from "../src/aws/sdk-adapter.js";
import { normalizeDns } from "../src/edge/path.js";
import type { TraceResult } from "../src/edge/trace-result.js";
import { traceHostnames } from "../src/traffic/trace.js";
import {
  fqdn,
  loadAwsScenario,
  startAwsSim,
  type AwsWorld,
  type ResourceRecordSet,
} from "../test/sim/aws/index.js";
import { AwsEndpoint } from "../test/sim/aws/server.js";
import { loadScenario } from "../test/sim/scenario.js";
import {
  benchOptions,
  check,
  isolatedEnv,
  LineProcess,
  median,
  ms,
  spread,
  type BenchOptions,
  type BenchResult,
  type Check,
  type Figure,
} from "./common.js";

const SEED = fileURLToPath(new URL("../test/fixtures/scenarios/seed-incident.yaml", import.meta.url));
const HOST = "test.example.com";
const ZONE = "example.com.";
const BASE_RECORDS = 10_000;
const BASE_DISTRIBUTIONS = 300;
const LATENCY_MS = 30;
const TARGET_MS = 1000;
const MIN_RUNS = 5;

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

/** A deterministic 10-hex-digit hash for a generated ALB name. */
function hex10(i: number): string {
  return ((i * 2654435761) >>> 0).toString(16).padStart(8, "0") + pad(i % 100, 2);
}

function albDns(i: number): string {
  return `k8s-team${pad(i % 400, 3)}-svc${pad(i, 5)}-${hex10(i)}-${1_000_000_000 + i}.ap-northeast-2.elb.amazonaws.com`;
}

/** The seed world plus `records` records in example.com and `distributions` distributions in all. */
function buildWorld(records: number, distributions: number): AwsWorld {
  const world = loadAwsScenario(loadScenario(SEED).aws);
  const zone = [...world.hostedZones.values()].find((z) => z.name === ZONE && !z.privateZone);
  if (!zone) throw new Error(`the seed has no public zone ${ZONE}`);

  // Distributions up to the total, each serving one name of the zone from one ALB origin.
  const distDomains: string[] = [];
  for (let i = world.distributions.size; i < distributions; i++) {
    const alias = `cdn${pad(i, 5)}.example.com`;
    const d = world.createDistribution({
      id: `E9BENCH${pad(i, 7)}`,
      domainName: `d${pad(i, 5)}bench${pad(i % 97, 2)}x.cloudfront.net`,
      config: world.buildDistributionConfig({
        aliases: [alias],
        origins: [{ id: `origin-${pad(i, 5)}`, domainName: albDns(i) }],
        comment: `bench ${pad(i, 5)}`,
      }),
    });
    distDomains.push(d.domainName);
  }

  // Records up to the total (the apex NS/SOA and the seed's own count): aliases to the
  // distributions, aliases to ALBs, CNAMEs and TXT ownership records, including names that sort
  // right around the traced one (`test-00001.example.com`, `x.test.example.com`).
  const wanted = records - zone.records.length;
  for (let i = 0; i < wanted; i++) {
    const kind = i % 5;
    const name = fqdn(
      i % 50 === 0
        ? `n${pad(i, 5)}.test.example.com`
        : i % 50 === 1
          ? `test-${pad(i, 5)}.example.com`
          : `svc${pad(i, 5)}.example.com`,
    );
    const cdn = distDomains[i % Math.max(1, distDomains.length)];
    const record: ResourceRecordSet =
      kind === 0 && cdn !== undefined
        ? {
            name,
            type: "A",
            aliasTarget: { hostedZoneId: "Z2FDTNDATAQYW2", dnsName: `${cdn}.`, evaluateTargetHealth: false },
          }
        : kind <= 1
          ? {
              name,
              type: "A",
              aliasTarget: {
                hostedZoneId: "ZWKZPGTI48KDX",
                dnsName: `dualstack.${albDns(i)}.`,
                evaluateTargetHealth: true,
              },
            }
          : kind === 2
            ? { name, type: "CNAME", ttl: 300, values: [albDns(i)] }
            : kind === 3
              ? { name, type: "TXT", ttl: 300, values: ['"heritage=external-dns,external-dns/owner=bench"'] }
              : { name, type: "A", ttl: 60, values: [`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`] };
    // Names are unique by construction, so they are added directly (the simulator sorts on every
    // listing): change batches would re-check each of 10,000 against all the others, for seconds.
    zone.records.push(record);
  }
  return world;
}

/** What the world says about the traced name, read from the world directly (not through the API). */
interface Expected {
  readonly verdict: "ok" | "stale";
  readonly distributionId: string;
  readonly origin: string;
  /** The ALB of the origin's controller stack that exists now (exactly one), if the origin is stale. */
  readonly replacement?: string;
}

function expectedOf(world: AwsWorld): Expected {
  const zone = [...world.hostedZones.values()].find((z) => z.name === ZONE && !z.privateZone);
  const record = zone?.records.find((r) => r.name === `${HOST}.` && r.type === "A");
  const target = normalizeDns(record?.aliasTarget?.dnsName ?? "");
  const dist = [...world.distributions.values()].find((d) => normalizeDns(d.domainName) === target);
  if (!dist) throw new Error(`the world has no distribution behind ${HOST}`);
  const origin = normalizeDns(world.distributionOrigins(dist)[0]?.domainName ?? "");
  const lbs = [...world.loadBalancers.values()];
  const exists = lbs.some((lb) => normalizeDns(lb.dnsName) === origin);
  const originName = /^(k8s-.+-)[0-9a-f]{10}-\d+\./.exec(origin)?.[1] ?? "";
  const sameStack = lbs.filter(
    (lb) => originName !== "" && new RegExp(`^${originName}[0-9a-f]{10}$`).test(lb.name),
  );
  return {
    verdict: exists ? "ok" : "stale",
    distributionId: dist.id,
    origin,
    ...(!exists && sameStack.length === 1 ? { replacement: sameStack[0]?.name ?? "" } : {}),
  };
}

/** The verdicts the trace found for the name: the path's, the origin hop's and its replacement. */
function tracedOf(trace: TraceResult): { verdict: string; origin: string; replacement: string } {
  const path = trace.paths.find((p) => p.hostname === HOST);
  const origin = path?.hops.find((h) => h.kind === "origin" || h.kind === "load-balancer");
  return {
    verdict: path?.verdict ?? "(no path)",
    origin: origin ? `${origin.kind} ${origin.label}: ${origin.verdict}` : "(no origin hop)",
    replacement: origin?.replacement?.loadBalancer ?? "",
  };
}

/**
 * The fewest calls that answer "where does test.example.com go, and what is broken on the way"
 * in this world, by action. `why` says what makes it the minimum.
 */
function minimumCalls(world: AwsWorld): { action: string; min: number; why: string }[] {
  const zones = world.hostedZones.size;
  const dists = world.distributions.size;
  const lbs = world.loadBalancers.size;
  return [
    { action: "ListHostedZones", min: Math.ceil(zones / 100), why: `${zones} zones, 100 a page` },
    {
      action: "ListResourceRecordSets",
      min: 1,
      why: "1 name of the chain lies in our zones (StartRecordName=test.example.com, MaxItems 100: 1 page of 10,000 records)",
    },
    {
      action: "ListDistributions",
      min: Math.ceil(dists / 100),
      why: `${dists} distributions, 100 a page (CloudFront cannot look a distribution up by its domain name)`,
    },
    {
      action: "DescribeLoadBalancers",
      min: Math.ceil(lbs / 400),
      why: `${lbs} load balancers, 400 a page (the replacement is found by name prefix, which ELB cannot filter)`,
    },
    {
      action: "DescribeTags",
      min: 1,
      why: "the tags of the load balancers on the path and of the replacement (≤ 20 ARNs, 1 call)",
    },
  ];
}

/** One call as the simulator's process saw it: its time there, the injected latency excluded. */
interface TimedCall {
  readonly action: string;
  readonly status: number;
  readonly serverMs: number;
}

/** The simulator process's ready line. */
interface SimReady {
  readonly url: string;
  readonly region: string;
  readonly world: string;
  readonly buildMs: number;
  readonly expected: Expected;
  readonly minimum: ReturnType<typeof minimumCalls>;
}

function zoneSummary(world: AwsWorld): string {
  const zone = [...world.hostedZones.values()].find((z) => z.name === ZONE && !z.privateZone);
  return `zone ${ZONE} ${(zone?.records.length ?? 0).toLocaleString("en-US")} records, ${world.distributions.size} distributions, ${world.loadBalancers.size} load balancer(s), ${world.hostedZones.size} hosted zone(s)`;
}

/**
 * `--sim <records> <distributions>`: the AWS simulator in a process of its own, so its own work
 * (sorting 10,000 records on every ListResourceRecordSets, writing 100 distributions of XML a
 * page) is not counted as the product's — on AWS it happens on AWS's side. Prints a ready line;
 * then `reset` → `ok`, `calls` → the calls since the last reset as JSON. Ends when stdin closes.
 */
async function simProcess(records: number, distributions: number): Promise<void> {
  const t0 = performance.now();
  const world = buildWorld(records, distributions);
  const buildMs = performance.now() - t0;
  const endpoint = new AwsEndpoint(world);
  endpoint.setFaults({ latencyMs: LATENCY_MS });
  const served: { index: number; ms: number }[] = [];
  endpoint.server.prependListener("request", (_req: IncomingMessage, res: ServerResponse) => {
    const start = performance.now();
    const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
    // The endpoint logs a call synchronously right after `res.end`, so the log's length at this
    // moment is the index of this request's entry.
    res.end = ((...args: unknown[]) => {
      served.push({ index: endpoint.callLog.length, ms: performance.now() - start - LATENCY_MS });
      return end(...args);
    }) as ServerResponse["end"];
  });
  await new Promise<void>((resolve) => endpoint.server.listen(0, "127.0.0.1", resolve));
  const { port } = endpoint.server.address() as AddressInfo;
  const ready: SimReady = {
    url: `http://127.0.0.1:${port}`,
    region: world.region,
    world: zoneSummary(world),
    buildMs,
    expected: expectedOf(world),
    minimum: minimumCalls(world),
  };
  const out = (o: unknown): boolean => process.stdout.write(`${JSON.stringify(o)}\n`);
  out(ready);
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === "reset") {
      endpoint.callLog.length = 0;
      served.length = 0;
      out("ok");
    } else if (line === "calls") {
      const ms = new Map(served.map((s) => [s.index, s.ms]));
      const calls: TimedCall[] = endpoint.callLog.map((c, i) => ({
        action: c.action,
        status: c.status,
        serverMs: Math.max(0, ms.get(i) ?? 0),
      }));
      out(calls);
    }
  }
  endpoint.server.closeAllConnections();
  await new Promise<void>((resolve) => endpoint.server.close(() => resolve()));
}

function countByAction(calls: readonly { action: string }[]): Map<string, number> {
  const byAction = new Map<string, number>();
  for (const c of calls) byAction.set(c.action, (byAction.get(c.action) ?? 0) + 1);
  return byAction;
}

function timeOf<T>(op: () => Promise<T>): Promise<number> {
  const start = performance.now();
  return op().then(() => performance.now() - start);
}

export async function benchTraceZone(options: BenchOptions): Promise<BenchResult> {
  const runs = Math.max(MIN_RUNS, options.runs);
  const records = BASE_RECORDS * options.scale;
  const distributions = BASE_DISTRIBUTIONS * options.scale;
  const now = (): Date => new Date();

  // 1. The simulator in its own process: what the product costs against a remote AWS.
  const sim = new LineProcess(
    process.execPath,
    ["--import", "tsx", fileURLToPath(import.meta.url), "--sim", String(records), String(distributions)],
    isolatedEnv(),
  );
  const times: number[] = [];
  const perRun: Map<string, number>[] = [];
  const serverMs = new Map<string, number[]>();
  const traced: ReturnType<typeof tracedOf>[] = [];
  const warnings: string[] = [];
  const alone: string[] = [];
  let ready: SimReady;
  try {
    ready = JSON.parse(await sim.request(undefined, 120_000)) as SimReady;
    const clients = createAwsClients({
      region: ready.region,
      endpoint: ready.url,
      credentials: { accessKeyId: "AKIAUNSTUCKBENCH0001", secretAccessKey: "x" },
    });
    try {
      const aws = createAwsAdapter(clients);
      // One untimed run warms the SDK clients (their first request loads middleware, opens sockets).
      await traceHostnames(aws, undefined, [HOST], now);
      for (let r = 0; r < runs; r++) {
        await sim.request("reset");
        const start = performance.now();
        const trace = await traceHostnames(aws, undefined, [HOST], now);
        times.push(performance.now() - start);
        const calls = JSON.parse(await sim.request("calls")) as TimedCall[];
        perRun.push(countByAction(calls));
        for (const c of calls) serverMs.set(c.action, [...(serverMs.get(c.action) ?? []), c.serverMs]);
        traced.push(tracedOf(trace));
        warnings.push(...trace.warnings.filter((w) => !w.startsWith("No cluster connection")));
      }
      // Each read of the trace alone (median of 3), to say which one the critical path waits for.
      const zones = await aws.hostedZones();
      const zoneId = zones.find((z) => `${z.name}.` === ZONE || z.name === ZONE)?.id ?? "";
      const reads: [string, () => Promise<unknown>][] = [
        ["hostedZones (ListHostedZones)", () => aws.hostedZones()],
        ["distributions (ListDistributions)", () => aws.distributions()],
        ["allLoadBalancers (DescribeLoadBalancers)", () => aws.allLoadBalancers({ withoutTags: true })],
        [`recordSets(${HOST}) (ListResourceRecordSets)`, () => aws.recordSets(zoneId, HOST)],
      ];
      for (const [what, op] of reads) {
        const t: number[] = [];
        for (let i = 0; i < 3; i++) t.push(await timeOf(op));
        alone.push(`${what} ${ms(median(t))}`);
      }
    } finally {
      destroyAwsClients(clients);
    }
  } finally {
    await sim.close();
  }

  // 2. The same trace with the simulator in this process (as the other AWS benchmark runs it): its
  //    work then shares this event loop, and the difference is the simulator's, not the product's.
  const inProcess: number[] = [];
  {
    const world = buildWorld(records, distributions);
    const local = await startAwsSim({ world, faults: { latencyMs: LATENCY_MS } });
    const clients = createAwsClients({
      region: world.region,
      endpoint: local.url,
      credentials: { accessKeyId: "AKIAUNSTUCKBENCH0001", secretAccessKey: "x" },
    });
    try {
      const aws = createAwsAdapter(clients);
      await traceHostnames(aws, undefined, [HOST], now);
      for (let r = 0; r < runs; r++)
        inProcess.push(await timeOf(() => traceHostnames(aws, undefined, [HOST], now)));
    } finally {
      destroyAwsClients(clients);
      await local.stop();
    }
  }

  const expected = ready.expected;
  const mid = median(times);
  const first = perRun[0] ?? new Map<string, number>();
  const actions = [
    ...new Set([...ready.minimum.map((m) => m.action), ...perRun.flatMap((m) => [...m.keys()])]),
  ];
  const callLines = actions.map((a) => {
    const seen = [...new Set(perRun.map((m) => m.get(a) ?? 0))].join("/");
    const m = ready.minimum.find((x) => x.action === a);
    const min = m?.min ?? 0;
    const over = (first.get(a) ?? 0) - min;
    const server = serverMs.get(a) ?? [];
    const perCall =
      server.length > 0 ? `, simulator ${median(server).toFixed(0)} ms/call + ${LATENCY_MS}` : "";
    return `  ${a.padEnd(24)} ${seen.padStart(3)} call(s), minimum ${String(min).padStart(2)}${over > 0 ? ` (+${over})` : over < 0 ? ` (${over})` : ""}${perCall} — ${m?.why ?? "not needed to answer the question"}`;
  });
  const total = [...first.values()].reduce((a, b) => a + b, 0);
  const minTotal = ready.minimum.reduce((a, b) => a + b.min, 0);
  const sameCounts = perRun.every((m) => actions.every((a) => (m.get(a) ?? 0) === (first.get(a) ?? 0)));
  // The critical path: the three listings run at once, then one record read per level of the chain.
  const sequential =
    Math.max(
      first.get("ListDistributions") ?? 0,
      (first.get("DescribeLoadBalancers") ?? 0) + (first.get("DescribeTags") ?? 0),
      first.get("ListHostedZones") ?? 0,
    ) + (first.get("ListResourceRecordSets") ?? 0);

  const wrong = traced
    .map((t, i) => ({ t, i }))
    .filter(
      ({ t }) =>
        t.verdict !== expected.verdict ||
        !t.origin.includes(expected.origin) ||
        t.replacement !== (expected.replacement ?? ""),
    );
  const checks: Check[] = [
    check(
      `trace-zone: ${HOST} traced as the world says`,
      wrong.length === 0 && traced.length === runs,
      wrong.length === 0
        ? `${expected.verdict}: ${traced[0]?.origin ?? ""}; replacement ${expected.replacement ?? "none (no ALB of that stack exists)"}; distribution ${expected.distributionId}; in all ${runs} runs`
        : wrong
            .map(
              ({ t, i }) =>
                `run ${i + 1}: ${t.verdict} / ${t.origin} / replacement ${t.replacement || "none"}; expected ${expected.verdict} / ${expected.origin} / ${expected.replacement ?? "none"}`,
            )
            .join("; "),
    ),
    check(
      "trace-zone: no read failed",
      warnings.length === 0,
      warnings.length === 0 ? "no warnings besides the absent cluster" : [...new Set(warnings)].join("; "),
    ),
    check(
      "trace-zone: the same calls in every run",
      sameCounts,
      sameCounts
        ? `${runs} runs × ${total} calls`
        : perRun.map((m) => [...m].map(([a, n]) => `${a}×${n}`).join(", ")).join(" | "),
    ),
  ];
  const figures: Figure[] = [
    {
      what: `trace ${HOST} (${records.toLocaleString("en-US")} records, ${distributions} distributions, ${LATENCY_MS} ms/call)`,
      value: spread(times),
      target: `≤ ${ms(TARGET_MS)}`,
      met: mid <= TARGET_MS,
    },
    {
      what: "the same, simulator in this process (its sorting and XML on this event loop)",
      value: spread(inProcess),
    },
    {
      what: "AWS API calls per trace",
      value: `${total} (${[...first].map(([a, n]) => `${a}×${n}`).join(", ")}); ${sequential} in sequence ≈ ${sequential * LATENCY_MS} ms of latency`,
      target: `= ${minTotal} (minimum)`,
      met: total <= minTotal,
    },
  ];
  return {
    name: "trace-zone",
    context: [
      `world: the seed incident + bulk: ${ready.world}; AWS simulator in its own process, ${LATENCY_MS} ms added to every call; built in ${ms(ready.buildMs)}`,
      `method: traceHostnames(createAwsAdapter(clients), no cluster, ["${HOST}"]) after 1 warm-up run, median of ${runs}; calls counted by action from the simulator's call log`,
      "API calls per trace against the minimum:",
      ...callLines,
      `each read alone (median of 3): ${alone.join("; ")}`,
      "note: tags are read for the cluster's load balancers (Tagging API, 100 a page) and, with DescribeTags, only for the load balancers the traced path reaches; never ceil(N/20) calls for an account of N",
    ],
    figures,
    checks,
  };
}

/** Lines a person reads: context, figures against targets, checks. */
export function resultLines(r: BenchResult): string[] {
  return [
    ...r.context,
    ...r.figures.map(
      (f) =>
        `${f.what}: ${f.value}${f.target !== undefined ? ` — target ${f.target}: ${f.met === true ? "met" : "MISSED"}` : ""}`,
    ),
    ...r.checks.map((c) => `${c.ok ? "ok  " : "FAIL"} ${c.what}: ${c.detail}`),
  ];
}

/** The standalone shape: lines to print, `ok` false only when a correctness check failed. */
export async function run(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const r = await benchTraceZone(benchOptions());
  return { name: r.name, lines: resultLines(r), ok: r.checks.every((c) => c.ok) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (process.argv[2] === "--sim") {
    await simProcess(Number(process.argv[3]), Number(process.argv[4]));
  } else {
    const r = await run();
    for (const line of r.lines) process.stdout.write(`${line}\n`);
    process.exitCode = r.ok ? 0 : 1;
  }
}
