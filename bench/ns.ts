/**
 * Benchmark for `ns` (issue: foundation). A simulated cluster with ≥150 namespaced resource types,
 * 5,000 objects in a Terminating namespace and 20 ms latency per request. Measures the bot's
 * diagnosis and the usual manual recipe
 *   kubectl api-resources --verbs=list --namespaced -o name | xargs -n1 kubectl get -n NS --ignore-not-found
 * against the same simulator in the same run, and prints both times and the ratio.
 */
import { execFile } from "node:child_process";
import { createServer, request, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { diagnoseNamespace } from "../src/diagnosis/diagnose.js";
import { createKubeAdapter } from "../src/kube/client-node-adapter.js";
import { startKubeSim } from "../test/sim/kube/index.js";

const run = promisify(execFile);

export interface NsBenchResult {
  readonly name: string;
  readonly lines: string[];
  readonly ok: boolean;
}

/** Requests and response bytes of one diagnosis, counted by a proxy in front of the simulator. */
interface Traffic {
  readonly discovery: number;
  readonly lists: number;
  readonly other: number;
  readonly bytes: number;
  readonly ms: number;
}

/**
 * One diagnosis through a counting proxy. With `accept` set, every request's Accept header is
 * replaced by it: `application/json` plays a server without aggregated discovery or metadata-only
 * lists, which is what the bot asked of every server before issue 13 (per-group discovery, full
 * objects; the fallback costs one request more than that did, the `/api` probe).
 */
async function countedDiagnosis(target: string, kubeconfig: string, accept?: string): Promise<Traffic> {
  const counts = { discovery: 0, lists: 0, other: 0, bytes: 0 };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", target);
    const path = url.pathname;
    if (/^\/apis?$|^\/api\/v1$|^\/apis\/[^/]+\/[^/]+$/.test(path)) counts.discovery++;
    else if (req.method === "GET" && !/\/namespaces\/[^/]+$/.test(path)) counts.lists++;
    else counts.other++;
    const headers: IncomingHttpHeaders = { ...req.headers, ...(accept !== undefined ? { accept } : {}) };
    const up = request(url, { method: req.method, headers }, (r) => {
      r.on("data", (c: Buffer) => (counts.bytes += c.length));
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const t0 = performance.now();
    await diagnoseNamespace(createKubeAdapter(kubeconfig.replace(target, url)), NS, {
      now: () => new Date(),
    });
    return { ...counts, ms: performance.now() - t0 };
  } finally {
    server.close();
  }
}

function describeTraffic(t: Traffic): string {
  const total = t.discovery + t.lists + t.other;
  return `${total} requests (${t.discovery} discovery, ${t.lists} lists, ${t.other} other), ${(t.bytes / 1024).toFixed(0)} KiB received, ${t.ms.toFixed(0)} ms`;
}

const CRDS = 140;
const OBJECTS = 5000;
const LATENCY_MS = 20;
const NS = "bench";

export async function benchNs(): Promise<NsBenchResult> {
  const sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
  const dir = await mkdtemp(join(tmpdir(), "unstuck-bench-"));
  try {
    const { store } = sim;
    for (let i = 0; i < CRDS; i++) {
      const group = `g${String(i).padStart(3, "0")}.bench.example.com`;
      store.create({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: `widgets.${group}` },
        spec: {
          group,
          scope: "Namespaced",
          names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
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
    // 5,000 objects spread over the CRDs and ConfigMaps, each held by a finalizer so that they
    // stay while the namespace is Terminating, as in a badly stuck namespace.
    for (let i = 0; i < OBJECTS; i++) {
      const crd = i % (CRDS + 1);
      const meta = { name: `obj-${i}`, namespace: NS, finalizers: ["bench.example.com/hold"] };
      if (crd === CRDS)
        store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: meta, data: { i: String(i) } });
      else
        store.create({
          apiVersion: `g${String(crd).padStart(3, "0")}.bench.example.com/v1`,
          kind: "Widget",
          metadata: meta,
          spec: { i },
        });
    }
    store.delete("v1", "Namespace", undefined, NS);
    await sim.reconcileNow();

    const kubeconfig = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kubeconfig);
    const kube = createKubeAdapter(sim.kubeconfig());
    const types = (await kube.discover()).resources.filter((t) => t.namespaced && t.verbs.includes("list"));
    sim.setFaults({ latencyMs: LATENCY_MS });

    // The bot: three runs, median.
    const times: number[] = [];
    let blockers = 0;
    let requests = 0;
    for (let i = 0; i < 3; i++) {
      sim.resetRequests();
      const t0 = performance.now();
      const d = await diagnoseNamespace(createKubeAdapter(sim.kubeconfig()), NS, { now: () => new Date() });
      times.push(performance.now() - t0);
      blockers = d.blockers.length;
      requests = sim.requests().length;
    }
    times.sort((a, b) => a - b);
    const bot = times[1] ?? 0;

    // Where the requests and bytes go: as the bot asks now, and as it asked before issue 13.
    const lean = await countedDiagnosis(sim.url, sim.kubeconfig());
    const plain = await countedDiagnosis(sim.url, sim.kubeconfig(), "application/json");

    // The manual recipe, once, with a fresh discovery cache as an operator's first run has.
    const env = { ...process.env, KUBECONFIG: kubeconfig };
    const cache = join(dir, "kube-cache");
    const t0 = performance.now();
    await run(
      "bash",
      [
        "-c",
        `kubectl --cache-dir ${cache} api-resources --verbs=list --namespaced -o name | xargs -n1 kubectl --cache-dir ${cache} get -n ${NS} --ignore-not-found >/dev/null`,
      ],
      { env, maxBuffer: 64 * 1024 * 1024 },
    );
    const manual = performance.now() - t0;
    const ratio = manual / bot;
    const ok = bot <= 1500 && ratio >= 10 && blockers === OBJECTS;
    return {
      name: "ns",
      ok,
      lines: [
        `world: ${types.length} namespaced listable resource types, ${OBJECTS} objects in namespace ${NS}, ${LATENCY_MS} ms latency per request`,
        `unstuck ns ${NS}:      ${bot.toFixed(0)} ms (median of 3: ${times.map((t) => t.toFixed(0)).join(", ")} ms), ${requests} API requests, ${blockers} blockers found   target ≤ 1500 ms`,
        `  aggregated discovery, metadata-only lists: ${describeTraffic(lean)}`,
        `  per-group discovery, full objects (a server without them; the bot before issue 13): ${describeTraffic(plain)}`,
        `manual kubectl recipe: ${manual.toFixed(0)} ms`,
        `speed-up:              ${ratio.toFixed(1)}×   target ≥ 10×`,
      ],
    };
  } finally {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
