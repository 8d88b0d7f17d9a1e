/**
 * `ns` against the manual kubectl recipe, on one simulated cluster.
 *
 * The world: ~160 namespaced listable types (140 CRDs plus the built-ins) and 5,000 objects, each
 * held by a finalizer, in a Terminating namespace, 20 ms latency per request (× `UNSTUCK_BENCH_SCALE`:
 * 4 → 300 types × 20,000 objects, 16 → 600 × 80,000). Some types hold more than one 500-object page
 * (ConfigMaps 1,201, one CRD 1,001, one 501, × scale), so a list that stops after its first page shows
 * as a wrong count, and the bench fails.
 *
 * Fair to the baseline:
 * - CRD plurals are unique (`widget000` in group `g000.bench.example.com`), and the recipe calls
 *   kubectl with `plural.version.group` (`widget000.v1.g000.bench.example.com`,
 *   `ingresses.v1.networking.k8s.io`). kubectl reads `a.b.c…` first as resource.version.group; the
 *   `plural.group` form `kubectl api-resources -o name` prints misses that reading, and a miss makes
 *   kubectl drop its discovery cache and rediscover on every call — a cost of the naming, not of
 *   kubectl. The bench asserts the recipe rediscovered nothing.
 * - Both sides are run the same number of times (`UNSTUCK_BENCH_RUNS`, default 3) and reported as
 *   medians. unstuck cold = a fresh compiled CLI process (`node dist/src/cli.js`, what `npm run unstuck`
 *   runs once built and what the image ships; built first if stale), start-up included (`UNSTUCK_BENCH_CLI` times
 *   another build); unstuck warm = a diagnosis in a long-lived process reusing its adapter, as the
 *   bot does, after one untimed warm-up. The recipe is timed with kubectl's discovery cache kept,
 *   its faster case (an empty cache costs it nothing more: `api-resources` rediscovers every run);
 *   both ratios divide that one time. The floor is one round of every type's list at the
 *   diagnosis' concurrency, discovery done.
 * - Request counts come from the simulator's own request log, for both sides. Bytes come from a
 *   counting proxy (one extra diagnosis), as does the comparison with a server without aggregated
 *   discovery or metadata-only lists.
 */
import { createServer, request, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { diagnoseNamespace } from "../src/diagnosis/diagnose.js";
import type { NamespaceDiagnosis } from "../src/diagnosis/types.js";
import { createKubeAdapter } from "../src/kube/client-node-adapter.js";
import { DEFAULT_KUBE_CONCURRENCY } from "../src/kube/limiter.js";
import { startKubeSim, type KubeSim, type RequestRecord } from "../test/sim/kube/index.js";
import { summarize, type DiagnosisSummary } from "./ns-summary.js";
import {
  check,
  ensureBuilt,
  isolatedEnv,
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

export const NS = "bench";
export const LATENCY_MS = 20;
export const PAGE = 500;
const TYPES_AT: Readonly<Record<number, number>> = { 1: 160, 4: 300, 16: 600 };
/** Types that span several pages (× scale): the count a first-page-only list gets wrong. */
const BIG = { configmaps: 1201, first: 1001, second: 501 } as const;
/** Targets (docs/design.md, Performance targets). */
const TARGET = { warmMs: 400, coldMs: 1000, warmRatio: 100, coldRatio: 20 } as const;
/** The diagnosis' list concurrency (its default), for the floor. */
export const LIST_CONCURRENCY = DEFAULT_KUBE_CONCURRENCY;

export interface World {
  /** `plural` for the core group, `plural.group` otherwise (the form the diagnosis reports). */
  readonly expected: ReadonlyMap<string, number>;
  readonly objects: number;
  readonly types: number;
  readonly crds: number;
}

/** Requests of one run, by kind, from the simulator's request log. */
export interface Requests {
  readonly total: number;
  readonly discovery: number;
  /** First pages of type lists. */
  readonly lists: number;
  /** Further pages (`continue=`). */
  readonly pages: number;
  /** Lists about one object (`fieldSelector=`: its Events). */
  readonly perObject: number;
  /** The Namespace, `/version`, … */
  readonly other: number;
}

export function classify(records: readonly RequestRecord[]): Requests {
  let discovery = 0;
  let lists = 0;
  let pages = 0;
  let perObject = 0;
  let other = 0;
  for (const r of records) {
    if (/^\/apis?$|^\/api\/v1$|^\/apis\/[^/]+\/[^/]+$/.test(r.path)) discovery++;
    else if (r.method !== "GET") other++;
    // Both the adapter and kubectl page their lists (`limit=`), then follow `continue=`.
    else if (/[?&]continue=/.test(r.query)) pages++;
    else if (/[?&]fieldSelector=/.test(r.query)) perObject++;
    else if (/[?&]limit=/.test(r.query)) lists++;
    else other++;
  }
  return { total: records.length, discovery, lists, pages, perObject, other };
}

export function describeRequests(r: Requests): string {
  const perObject = r.perObject > 0 ? `, ${r.perObject} per-object event lists` : "";
  return `${r.total} requests (${r.discovery} discovery, ${r.lists} lists + ${r.pages} further pages${perObject}, ${r.other} other)`;
}

/** Build the world in the store: CRDs, the namespace, objects with finalizers; then delete it. */
export async function buildWorld(sim: KubeSim, scale: number): Promise<World> {
  const { store } = sim;
  const probe = createKubeAdapter(sim.kubeconfig());
  const builtins = (await probe.discover()).resources.filter(
    (t) => t.namespaced && t.verbs.includes("list"),
  ).length;
  const types = TYPES_AT[scale] ?? Math.round(160 * Math.sqrt(scale));
  const objects = 5000 * scale;
  const crds = Math.max(3, types - builtins);
  const pad = (i: number): string => String(i).padStart(3, "0");
  for (let i = 0; i < crds; i++) {
    const group = `g${pad(i)}.bench.example.com`;
    const plural = `widget${pad(i)}`;
    store.create({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `${plural}.${group}` },
      spec: {
        group,
        scope: "Namespaced",
        names: { plural, singular: plural, kind: `Widget${pad(i)}`, listKind: `Widget${pad(i)}List` },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
        ],
      },
    });
  }
  store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });

  // The simulator's store runs a full garbage-collection scan after every load and delete, O(objects)
  // each: deleting a namespace of n objects costs O(n²) (~40 s at 5,000, hours at 80,000). No object
  // here has owner references, so those scans would find nothing: suspended while the namespace
  // controller marks the content deleted, then run once.
  const gc = store.collectGarbage.bind(store);
  store.collectGarbage = () => undefined;
  const expected = new Map<string, number>();
  const meta = (name: string) => ({ name, namespace: NS, finalizers: ["bench.example.com/hold"] });
  const widgets = (crd: number, count: number, from: number): void => {
    const group = `g${pad(crd)}.bench.example.com`;
    for (let k = 0; k < count; k++) {
      store.create({
        apiVersion: `${group}/v1`,
        kind: `Widget${pad(crd)}`,
        metadata: meta(`obj-${from + k}`),
        spec: { i: from + k, owner: "bench", size: "x".repeat(64) },
      });
    }
    const key = `widget${pad(crd)}.${group}`;
    expected.set(key, (expected.get(key) ?? 0) + count);
  };
  // ConfigMaps carry a payload, as real ones do: a metadata-only list leaves it on the server.
  const configmaps = BIG.configmaps * scale;
  for (let k = 0; k < configmaps; k++) {
    store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: meta(`cm-${k}`),
      data: { "app.properties": `key${k}=${"v".repeat(512)}` },
    });
  }
  expected.set("configmaps", configmaps);
  let made = configmaps;
  widgets(0, BIG.first * scale, made);
  made += BIG.first * scale;
  widgets(1, BIG.second * scale, made);
  made += BIG.second * scale;
  // The rest spread over the other CRDs, a few dozen each.
  const rest = objects - made;
  const others = crds - 2;
  for (let c = 0; c < others; c++) {
    const count = Math.floor(rest / others) + (c < rest % others ? 1 : 0);
    if (count > 0) widgets(c + 2, count, made);
    made += count;
  }
  try {
    store.delete("v1", "Namespace", undefined, NS);
    await sim.reconcileNow();
  } finally {
    store.collectGarbage = gc;
  }
  gc();
  const listed = (await probe.discover()).resources.filter((t) => t.namespaced && t.verbs.includes("list"));
  return { expected, objects: made, types: listed.length, crds };
}

/** The `has N resource instances` counts of the namespace's NamespaceContentRemaining condition. */
function conditionCounts(d: DiagnosisSummary): Map<string, number> {
  const counts = new Map<string, number>();
  const message = d.conditions.find((c) => c.type === "NamespaceContentRemaining")?.message ?? "";
  // As kube-apiserver writes it: `<resource>.<group> has N resource instances`, so `configmaps.`
  // for the core group.
  for (const m of message.matchAll(/([\w.-]+) has (\d+) resource instances/g)) {
    counts.set((m[1] ?? "").replace(/\.$/, ""), Number(m[2]));
  }
  return counts;
}

/** Correctness of one diagnosis against the world (and the condition the namespace controller wrote). */
export function diagnosisChecks(label: string, d: DiagnosisSummary, world: World): Check[] {
  const remaining = new Map(d.remaining.map((r) => [r.resource, r.count]));
  const wrong = [...world.expected]
    .filter(([r, n]) => remaining.get(r) !== n)
    .map(([r, n]) => `${r}: ${String(remaining.get(r) ?? 0)} ≠ ${String(n)}`);
  const condition = conditionCounts(d);
  // Bounded extras ("Events were read for the first 25 of 5000 blockers") are by design; a read
  // that failed or was cut off by the deadline is not.
  const unread = d.warnings.filter((w) => /could not|no answer|deadline|incomplete|partial/i.test(w));
  const disagree = [...condition]
    .filter(([r, n]) => remaining.get(r) !== n)
    .map(([r, n]) => `${r}: ${String(remaining.get(r) ?? 0)} vs condition ${String(n)}`);
  return [
    check(
      `ns ${label}: blockers = objects with finalizers`,
      d.blockers === world.objects,
      `${d.blockers} of ${world.objects}`,
    ),
    check(
      `ns ${label}: remaining count per type`,
      wrong.length === 0,
      wrong.length === 0
        ? `all ${world.expected.size} types match (largest ${Math.max(...world.expected.values())})`
        : wrong.slice(0, 5).join("; "),
    ),
    check(
      `ns ${label}: counts agree with the namespace condition`,
      condition.size > 0 && disagree.length === 0,
      condition.size === 0
        ? "no NamespaceContentRemaining condition"
        : disagree.slice(0, 5).join("; ") || "agree",
    ),
    check(
      `ns ${label}: complete (nothing unread, no deadline)`,
      unread.length === 0 && d.discoveryFailures === 0,
      unread.length === 0 ? "complete" : unread.slice(0, 2).join("; "),
    ),
  ];
}

/** Bytes received by one diagnosis, through a counting proxy; `accept` replaces every Accept header. */
export async function proxiedDiagnosis(
  sim: KubeSim,
  accept?: string,
): Promise<{ bytes: number; requests: Requests; ms: number }> {
  let bytes = 0;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", sim.url);
    const headers: IncomingHttpHeaders = { ...req.headers, ...(accept !== undefined ? { accept } : {}) };
    const up = request(url, { method: req.method, headers }, (r) => {
      r.on("data", (c: Buffer) => (bytes += c.length));
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  try {
    sim.resetRequests();
    const t0 = performance.now();
    await diagnoseNamespace(createKubeAdapter(sim.kubeconfig().replace(sim.url, url)), NS, {
      now: () => new Date(),
    });
    return { bytes, requests: classify(sim.requests()), ms: performance.now() - t0 };
  } finally {
    server.close();
  }
}

/**
 * The manual recipe, with names kubectl resolves on its first try: `plural` for the core group,
 * `plural.version.group` otherwise, built from `kubectl api-resources`' APIVERSION column.
 */
export function recipe(cache: string): string {
  const k = `kubectl --cache-dir ${cache}`;
  return [
    `${k} api-resources --verbs=list --namespaced --no-headers`,
    `awk '{ n = split($(NF-2), gv, "/"); print (n == 2 ? $1 "." gv[2] "." gv[1] : $1) }'`,
    `xargs -n1 ${k} get -n ${NS} --ignore-not-found -o name`,
  ].join(" | ");
}

/**
 * The CLI as `npm run unstuck` runs it once built (and as the image ships it), or `UNSTUCK_BENCH_CLI`
 * (e.g. `node --import tsx src/cli.ts` for the uncompiled fallback). Call {@link prepareCli} first.
 */
export function cliCommand(): string[] {
  const custom = process.env.UNSTUCK_BENCH_CLI?.trim();
  if (custom) return custom.split(/\s+/);
  return [process.execPath, "dist/src/cli.js"];
}

/** Build `dist/` when the default CLI is timed and a source is newer than the build. */
export async function prepareCli(): Promise<string> {
  return process.env.UNSTUCK_BENCH_CLI?.trim() ? "UNSTUCK_BENCH_CLI set: not built" : ensureBuilt();
}

export async function benchNs(options: BenchOptions): Promise<BenchResult> {
  const { runs, scale } = options;
  const built = await prepareCli();
  const sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
  const dir = await mkdtemp(join(tmpdir(), "unstuck-bench-ns-"));
  const checks: Check[] = [];
  const figures: Figure[] = [];
  try {
    const buildStart = performance.now();
    const world = await buildWorld(sim, scale);
    const buildMs = performance.now() - buildStart;
    const kubeconfig = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kubeconfig);
    sim.setFaults({ latencyMs: LATENCY_MS });
    const largest = [...world.expected].sort((a, b) => b[1] - a[1]).slice(0, 3);
    // The fewest requests that answer: the Namespace, aggregated discovery (/api, /apis), one list per
    // type and one more request per further page.
    const extraPages = [...world.expected.values()].reduce(
      (n, c) => n + Math.max(0, Math.ceil(c / PAGE) - 1),
      0,
    );
    const floor = 1 + 2 + world.types + extraPages;

    // unstuck cold: a fresh CLI process per run, start-up included.
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
      });
      cold.push(r.elapsedMs);
      coldRequests.push(classify(sim.requests()));
      const rss = /UNSTUCK_BENCH_MAXRSS_KB=(\d+)/.exec(r.stderr)?.[1];
      if (rss !== undefined) coldRss.push(Number(rss) / 1024);
      let d: DiagnosisSummary | undefined;
      try {
        d = summarize(JSON.parse(r.stdout) as NamespaceDiagnosis);
      } catch {
        d = undefined;
      }
      if (r.code !== 0 || d === undefined) {
        checks.push(
          check(
            `ns cold run ${i + 1}: CLI answered`,
            false,
            `exit ${String(r.code)}: ${r.stderr.slice(0, 300)}`,
          ),
        );
      } else if (i === 0) checks.push(...diagnosisChecks("cold (CLI --json)", d, world));
      else if (d.blockers !== world.objects)
        checks.push(check(`ns cold run ${i + 1}: blockers`, false, `${d.blockers} of ${world.objects}`));
    }

    // unstuck warm: a long-lived process holding the bot's services (bench/ns-warm.ts), one
    // untimed warm-up; then the floor in the same process.
    const warmProcess = new LineProcess(
      process.execPath,
      ["--import", "tsx", "bench/ns-warm.ts", NS, String(LIST_CONCURRENCY)],
      isolatedEnv({ KUBECONFIG: kubeconfig }),
    );
    const warm: number[] = [];
    const warmRequests: Requests[] = [];
    const floorTimes: number[] = [];
    const rawFloorTimes: number[] = [];
    let listable = 0;
    try {
      await warmProcess.request();
      const ask = async (
        command: string,
      ): Promise<{ ms: number; summary?: DiagnosisSummary; types?: number }> => {
        const answer = JSON.parse(await warmProcess.request(command)) as {
          ms: number;
          summary?: DiagnosisSummary;
          types?: number;
          error?: string;
        };
        if (answer.error !== undefined) throw new Error(`bench/ns-warm.ts: ${answer.error}`);
        return answer;
      };
      await ask("diagnose");
      for (let i = 0; i < runs; i++) {
        sim.resetRequests();
        const { ms: took, summary } = await ask("diagnose");
        warm.push(took);
        warmRequests.push(classify(sim.requests()));
        if (summary === undefined) continue;
        if (i === 0) checks.push(...diagnosisChecks("warm", summary, world));
        else if (summary.blockers !== world.objects)
          checks.push(
            check(`ns warm run ${i + 1}: blockers`, false, `${summary.blockers} of ${world.objects}`),
          );
      }
      for (let i = 0; i < runs; i++) {
        const { ms: took, types } = await ask("floor");
        floorTimes.push(took);
        listable = types ?? 0;
        rawFloorTimes.push((await ask("rawfloor")).ms);
      }
    } finally {
      await warmProcess.close();
    }

    // Where the bytes go: as the bot asks, and as a server without aggregated discovery or
    // metadata-only lists answers (plain JSON).
    const lean = await proxiedDiagnosis(sim);
    const plain = await proxiedDiagnosis(sim, "application/json");

    // The kubectl recipe, at 1× and 4× (beyond that one run takes many minutes). Its discovery cache
    // does not change its cost: `kubectl api-resources` re-reads discovery on every run (2 requests
    // with aggregated discovery, asserted below) and every `kubectl get` is a fresh process either
    // way. So it is timed with the cache kept — its faster case — and both ratios divide that time.
    const kubectlRuns = scale <= 4;
    const recipeTimes: number[] = [];
    const recipeRequests: Requests[] = [];
    if (kubectlRuns) {
      const env = isolatedEnv({ KUBECONFIG: kubeconfig, KUBECTL_KUBERC: "false" });
      const cache = join(dir, "kube-cache");
      await runProcess("kubectl", ["--cache-dir", cache, "api-resources"], { env });
      const wrong: string[] = [];
      let last: RequestRecord[] = [];
      for (let i = 0; i < runs; i++) {
        sim.resetRequests();
        const r = await runProcess("bash", ["-o", "pipefail", "-c", recipe(cache)], {
          env,
          timeoutMs: 900_000,
        });
        recipeTimes.push(r.elapsedMs);
        last = sim.requests();
        recipeRequests.push(classify(last));
        const listed = r.stdout.split("\n").filter((l) => l.trim() !== "").length;
        if (r.code !== 0 || listed !== world.objects) {
          wrong.push(`run ${i + 1}: exit ${String(r.code)}, ${listed} names; ${r.stderr.slice(0, 200)}`);
        }
      }
      checks.push(
        check(
          "kubectl recipe: lists every object",
          wrong.length === 0,
          wrong.length === 0 ? `${world.objects} names in each of ${runs} runs` : wrong.join(" | "),
        ),
      );
      // Anything beyond api-resources' own 2 discovery requests is kubectl rediscovering because a
      // name missed, which would inflate the baseline.
      const used = classify(last);
      checks.push(
        check(
          "kubectl recipe: every name resolved on the first try",
          used.discovery === 2,
          `${used.discovery} discovery requests in a run (2 = api-resources' own)`,
        ),
        check(
          "kubectl recipe: lists every type once",
          used.lists === world.types,
          `${used.lists} first-page lists for ${world.types} types`,
        ),
      );
    }

    const pick = (rs: readonly Requests[]): Requests =>
      rs.find((r) => r.total === median(rs.map((x) => x.total))) ?? classify([]);
    const botCold = median(cold);
    const botWarm = median(warm);
    const warmReq = pick(warmRequests);
    figures.push(
      {
        what: "unstuck ns cold (fresh CLI process)",
        value: `${spread(cold)}; ${describeRequests(pick(coldRequests))}${coldRss.length > 0 ? `; max RSS ${median(coldRss).toFixed(0)} MiB` : ""}`,
        target: `≤ ${ms(TARGET.coldMs)}`,
        met: botCold <= TARGET.coldMs,
      },
      {
        what: "unstuck ns warm (long-lived process)",
        value: `${spread(warm)}; ${describeRequests(warmReq)}`,
        target: `≤ ${ms(TARGET.warmMs)}`,
        met: botWarm <= TARGET.warmMs,
      },
      {
        what: `floor: one round of ${listable} lists at concurrency ${LIST_CONCURRENCY} through the adapter, no discovery`,
        value: spread(floorTimes),
      },
      {
        what: "floor with bare fetch (the simulator's and the network's share)",
        value: spread(rawFloorTimes),
      },
      {
        what: "unstuck ns warm: requests",
        value: `${warmReq.total}; floor ${floor} = namespace 1 + discovery 2 + ${world.types} types + ${extraPages} further pages`,
        target: `≤ ${Math.round(floor * 1.1)} (floor + 10 %)`,
        met: warmReq.total <= floor * 1.1,
      },
      {
        what: "bytes received (aggregated discovery, metadata-only lists)",
        value: `${(lean.bytes / 1024).toFixed(0)} KiB; ${describeRequests(lean.requests)}`,
      },
      {
        what: "bytes received (server without them: per-group discovery, full objects)",
        value: `${(plain.bytes / 1024).toFixed(0)} KiB; ${describeRequests(plain.requests)}`,
      },
    );
    if (kubectlRuns) {
      const k = median(recipeTimes);
      figures.push(
        {
          what: "kubectl recipe (discovery cache kept)",
          value: `${spread(recipeTimes)}; ${describeRequests(pick(recipeRequests))}`,
        },
        {
          what: "speed-up cold (kubectl recipe / unstuck cold)",
          value: `${(k / botCold).toFixed(1)}×`,
          target: `≥ ${TARGET.coldRatio}×`,
          met: k / botCold >= TARGET.coldRatio,
        },
        {
          what: "speed-up warm (kubectl recipe / unstuck warm)",
          value: `${(k / botWarm).toFixed(1)}×`,
          target: `≥ ${TARGET.warmRatio}×`,
          met: k / botWarm >= TARGET.warmRatio,
        },
      );
    } else {
      figures.push({ what: "kubectl recipe", value: `not run at scale ${scale} (only at 1× and 4×)` });
    }
    return {
      name: "ns",
      context: [
        `world: ${world.types} namespaced listable types (${world.crds} CRDs), ${world.objects} objects with finalizers in Terminating namespace ${NS}; largest: ${largest.map(([r, n]) => `${r} ${n}`).join(", ")}; ${LATENCY_MS} ms per request; built in ${ms(buildMs)}`,
        `unstuck cold: ${cli.join(" ")} ns ${NS} --json (${built}; set UNSTUCK_BENCH_CLI to time another build)`,
        `kubectl recipe: ${recipe("<cache>")}`,
      ],
      figures,
      checks,
    };
  } finally {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
