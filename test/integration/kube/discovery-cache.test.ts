/**
 * The long-running bot's discovery cache and shared request bound, against the
 * simulator: a warm diagnosis makes no discovery request; a CRD or APIService added, changed or
 * deleted is seen within a second through the watch; a 410 Gone re-lists; a forbidden watch falls
 * back to a TTL without breaking discovery. 20 concurrent diagnoses' worth of requests never exceed
 * the adapter's bound, and a 429's Retry-After holds every new request back. The simulator's
 * watch itself is checked with the real kubectl.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../../src/kube/port.js";
import { mapLimit } from "../../../src/util/concurrency.js";
import { startKubeSim, type KubeObject, type KubeSim, type RequestRecord } from "../../sim/kube/index.js";
import { namespacedCrd } from "../../sim/kube/stuck-worlds.js";
import { kubectl } from "../../sim/kube/testing.js";
import { eventually, pause } from "../../helpers/eventually.js";

const NS = "shop";
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices";
const METRICS_GV = "metrics.k8s.io/v1beta1";

const isDiscovery = (r: RequestRecord) =>
  r.method === "GET" &&
  (/^\/apis?$/.test(r.path) || /^\/api\/v1$/.test(r.path) || /^\/apis\/[^/]+\/[^/]+$/.test(r.path));
const isWatch = (r: RequestRecord) => /[?&]watch=(1|true)\b/.test(r.query);

function crd(plural: string, group: string): KubeObject {
  const singular = plural.replace(/s$/, "");
  return namespacedCrd(group, "v1", singular.charAt(0).toUpperCase() + singular.slice(1), plural);
}

/** An APIService whose Service does not exist: kube-aggregator marks it unavailable (stale in discovery). */
function brokenApiService(): KubeObject {
  return {
    apiVersion: "apiregistration.k8s.io/v1",
    kind: "APIService",
    metadata: { name: "v1beta1.metrics.k8s.io" },
    spec: {
      group: "metrics.k8s.io",
      version: "v1beta1",
      groupPriorityMinimum: 100,
      versionPriority: 100,
      insecureSkipTLSVerify: true,
      service: { name: "metrics-server", namespace: "kube-system", port: 443 },
    },
  };
}

function seed(sim: KubeSim): void {
  sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  for (let i = 0; i < 6; i++) sim.store.create(crd(`gadget${i}s`, `g${i}.example.com`));
  for (let i = 0; i < 5; i++) {
    sim.store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `cm-${i}`, namespace: NS, finalizers: ["example.com/hold"] },
    });
  }
  // Terminating, held by the ConfigMaps' finalizers: what a diagnosis explains.
  sim.store.delete("v1", "Namespace", undefined, NS);
}

/** The cache's watches list first (to learn a resourceVersion): once both lists are answered, no change is missed. */
async function listedForWatch(sim: KubeSim, times = 1): Promise<void> {
  await eventually(
    () => {
      const lists = sim
        .requests()
        .filter((r) => r.method === "GET" && !isWatch(r) && /limit=1\b/.test(r.query));
      const crdLists = lists.filter((r) => r.path === CRDS).length;
      const apiLists = lists.filter((r) => r.path === APISERVICES).length;
      return crdLists >= times && apiLists >= times ? true : undefined;
    },
    5_000,
    "the discovery cache's lists",
  );
}

/** Most requests the simulator had open at once (watches left out: they are not requests in flight). */
function peakInFlight(records: readonly RequestRecord[]): number {
  const edges = records
    .filter((r) => !isWatch(r))
    .flatMap((r) => [
      { t: r.startedAt, d: 1 },
      { t: r.finishedAt, d: -1 },
    ])
    .sort((a, b) => a.t - b.t || a.d - b.d);
  let now = 0;
  let peak = 0;
  for (const e of edges) {
    now += e.d;
    peak = Math.max(peak, now);
  }
  return peak;
}

const diagnose = (kube: KubePort) => diagnoseNamespace(kube, NS, { now: () => new Date() });

describe("discovery cache (watch on CRDs and APIServices)", () => {
  let sim: KubeSim;
  const adapters: KubePort[] = [];
  const adapter = (...args: Parameters<typeof createKubeAdapter>): KubePort => {
    const a = createKubeAdapter(...args);
    adapters.push(a);
    return a;
  };

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000, bookmarkIntervalMs: 200 });
    seed(sim);
  });
  afterEach(async () => {
    await Promise.all(adapters.splice(0).map((a) => a.close?.() ?? Promise.resolve()));
    sim.setFaults({});
  });
  afterAll(async () => {
    await sim.stop();
  });

  it("a warm diagnosis makes no discovery request; a new CRD and a deleted APIService are seen within 1 s", async () => {
    // The CLI's adapter: no cache, every diagnosis discovers.
    const plain = adapter(sim.kubeconfig());
    await diagnose(plain);
    sim.resetRequests();
    await diagnose(plain);
    const uncachedWarm = sim.requests();

    const kube = adapter(sim.kubeconfig(), {
      discoveryCache: { watch: true, failureTtlMs: 60_000, watchTimeoutSeconds: 1 },
    });
    sim.resetRequests();
    const first = await diagnose(kube);
    expect(sim.requests().filter(isDiscovery)).toHaveLength(2); // aggregated: /api and /apis
    await listedForWatch(sim);

    sim.resetRequests();
    const second = await diagnose(kube);
    const cachedWarm = sim.requests().filter((r) => !isWatch(r));
    expect(cachedWarm.filter(isDiscovery)).toEqual([]);
    expect(second.blockers.length).toBe(first.blockers.length);
    expect(cachedWarm.length).toBe(uncachedWarm.length - 2);
    console.log(
      `requests per warm diagnosis: ${uncachedWarm.length} uncached, ${cachedWarm.length} with the discovery cache`,
    );

    // A CRD is created: the watch drops the entry, the next discover sees the new type.
    const created = Date.now();
    sim.store.create(crd("sprockets", "late.example.com"));
    await eventually(
      async () =>
        (await kube.discover()).resources.some(
          (r) => r.group === "late.example.com" && r.resource === "sprockets",
        )
          ? true
          : undefined,
      1_000,
      "the new CRD in discovery",
    );
    expect(Date.now() - created).toBeLessThan(1_000);

    // An APIService whose backend is missing appears as a failing group-version…
    sim.store.create(brokenApiService());
    await eventually(
      async () =>
        (await kube.discover()).failures.some((f) => f.groupVersion === METRICS_GV) ? true : undefined,
      1_000,
      "the broken APIService in discovery",
    );
    // …(the aggregator's status write is one more change; let it settle), and stays cached.
    await new Promise((r) => setTimeout(r, 300));
    await kube.discover();
    sim.resetRequests();
    expect((await kube.discover()).failures.map((f) => f.groupVersion)).toContain(METRICS_GV);
    expect(sim.requests().filter(isDiscovery)).toEqual([]);

    // Deleting it clears the failure within a second.
    const deleted = Date.now();
    sim.store.delete("apiregistration.k8s.io/v1", "APIService", undefined, "v1beta1.metrics.k8s.io");
    await eventually(
      async () =>
        (await kube.discover()).failures.some((f) => f.groupVersion === METRICS_GV) ? undefined : true,
      1_000,
      "the deleted APIService gone from discovery",
    );
    expect(Date.now() - deleted).toBeLessThan(1_000);

    // Each watch request ends after 1 s and resumes from its last revision (bookmarks keep it
    // current): nothing is missed, so the entry stays. They ask for what they need only.
    await eventually(
      () => (sim.requests().filter(isWatch).length >= 2 ? true : undefined),
      3_000,
      "resumed watches",
    );
    sim.resetRequests();
    await kube.discover();
    expect(sim.requests().filter(isDiscovery)).toEqual([]);
    await eventually(
      () => (sim.requests().filter(isWatch).length >= 2 ? true : undefined),
      3_000,
      "resumed watches",
    );
    for (const w of sim.requests().filter(isWatch)) {
      expect([CRDS, APISERVICES]).toContain(w.path);
      expect(w.query).toMatch(/allowWatchBookmarks=true/);
      expect(w.query).toMatch(/resourceVersion=\d+/);
      expect(w.accept).toMatch(/^application\/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1/);
      expect(w.served).toBe("PartialObjectMetadata");
    }
    expect(sim.requests().filter((r) => !isWatch(r))).toEqual([]); // resumed, not re-listed
    await kube.close?.();
    // Closed: still answers, uncached.
    sim.resetRequests();
    await kube.discover();
    expect(sim.requests().filter(isDiscovery)).toHaveLength(2);
  });

  it("a diagnosis reads the namespace first, then lists only the types its controller's report names", async () => {
    const kube = adapter(sim.kubeconfig(), { discoveryCache: { watch: true } });
    await diagnose(kube); // fills the discovery cache
    sim.setFaults({ latencyMs: 150 });
    sim.resetRequests();
    const d = await diagnose(kube);
    sim.setFaults({});
    expect(d.blockers.length).toBe(5);
    const records = sim.requests().filter((r) => !isWatch(r));
    const nsRead = records.find((r) => r.path === `/api/v1/namespaces/${NS}`);
    const isEventsRead = (r: RequestRecord) =>
      r.path.endsWith("/events") && !r.accept.includes("as=PartialObjectMetadataList");
    const lists = records.filter((r) => r.path.includes(`/namespaces/${NS}/`) && !isEventsRead(r));
    expect(records.filter(isEventsRead)).toHaveLength(1);
    expect(nsRead).toBeDefined();
    // What the namespace controller says is left, read from the object the simulator holds.
    const status = sim.store.get("v1", "Namespace", undefined, NS)?.status as
      { conditions?: { type: string; message?: string }[] } | undefined;
    const remaining = status?.conditions?.find((c) => c.type === "NamespaceContentRemaining");
    const named =
      /^Some resources are remaining: (.*)$/.exec(String(remaining?.message))?.[1]?.split(", ") ?? [];
    expect(named.length).toBeGreaterThan(0);
    expect(d.scan).toEqual({ path: "report", listedTypes: named.length });
    expect(lists).toHaveLength(named.length);
    // Every list waited for the namespace's answer.
    expect(lists.filter((r) => r.startedAt < (nsRead?.finishedAt ?? Infinity))).toEqual([]);
  });

  it("a namespace that is not being deleted costs its own read and discovery beside it, and no list", async () => {
    const live = "live";
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: live } });
    try {
      const kube = adapter(sim.kubeconfig());
      const discovery = await kube.discover();
      expect(
        discovery.resources.filter((t) => t.namespaced && t.verbs.includes("list")).length,
      ).toBeGreaterThan(20);
      sim.resetRequests();
      const d = await diagnoseNamespace(kube, live, { now: () => new Date() });
      expect(d.verdict).toBe("active");
      // Discovery is asked for with the namespace (a Terminating one needs it next): uncached
      // here, it is read; nothing else is.
      const seen = await eventually(
        () => {
          const paths = sim
            .requests()
            .filter((r) => !isWatch(r))
            .map((r) => `${r.method} ${r.path}`);
          return paths.filter((p) => p === "GET /api" || p === "GET /apis").length === 2 ? paths : undefined;
        },
        5_000,
        "discovery's answers",
      );
      expect(seen.sort()).toEqual(["GET /api", `GET /api/v1/namespaces/${live}`, "GET /apis"]);
    } finally {
      sim.store.delete("v1", "Namespace", undefined, live);
    }
  });

  it("re-lists after 410 Gone (the watch resumed from a compacted revision) and drops the entry", async () => {
    // No bookmark in time on this server: the watch resumes from the list's revision.
    const quiet = await startKubeSim({ controllerIntervalMs: 3_600_000, bookmarkIntervalMs: 600_000 });
    try {
      seed(quiet);
      const kube = adapter(quiet.kubeconfig(), { discoveryCache: { watch: true, watchTimeoutSeconds: 1 } });
      await kube.discover();
      await listedForWatch(quiet);
      quiet.store.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "bump", namespace: "default" },
      });
      quiet.store.compact();
      quiet.store.delete("v1", "ConfigMap", "default", "bump");
      // The watch ends after 1 s, resumes from its old revision, gets 410 and lists again.
      await listedForWatch(quiet, 2);
      expect(
        quiet.requests().some((r) => isWatch(r) && r.path === CRDS && r.finishedAt - r.startedAt < 500),
      ).toBe(true);
      // The entry is dropped by each watch's re-list once the client has read that list's answer
      // (the server logs it a moment earlier, and the two watches' answers land apart under load):
      // a discover reloads, and once both re-lists are in, the next one answers from the cache.
      let reloaded = false;
      await eventually(
        async () => {
          quiet.resetRequests();
          await kube.discover();
          if (quiet.requests().filter(isDiscovery).length === 2) reloaded = true;
          if (!reloaded) return undefined;
          quiet.resetRequests();
          await kube.discover();
          return quiet.requests().filter(isDiscovery).length === 0 ? true : undefined;
        },
        5_000,
        "a reload after the re-lists, then answers from the cache",
      );
      expect(reloaded).toBe(true);
    } finally {
      await Promise.all(adapters.splice(0).map((a) => a.close?.() ?? Promise.resolve()));
      await quiet.stop();
    }
  });

  it("a forbidden watch falls back to the TTL; discovery keeps working", async () => {
    sim.setFaults({
      forbid: [{ verb: "watch", resource: "customresourcedefinitions", group: "apiextensions.k8s.io" }],
    });
    const kube = adapter(sim.kubeconfig(), { discoveryCache: { watch: true, ttlMs: 1_500 } });
    sim.resetRequests();
    const before = await kube.discover();
    expect(before.failures).toEqual([]);
    await eventually(
      () =>
        sim.requests().some((r) => isWatch(r) && r.path === CRDS && r.status === 403) ? true : undefined,
      3_000,
      "the forbidden watch",
    );
    sim.resetRequests();
    await kube.discover();
    expect(sim.requests().filter(isDiscovery)).toEqual([]);

    // Without the watch a new CRD waits for the TTL, then appears.
    const created = Date.now();
    sim.store.create(crd("cogs", "ttl.example.com"));
    await pause(300);
    expect((await kube.discover()).resources.some((r) => r.group === "ttl.example.com")).toBe(false);
    await eventually(
      async () =>
        (await kube.discover()).resources.some((r) => r.group === "ttl.example.com") ? true : undefined,
      3_000,
      "the new CRD after the TTL",
    );
    expect(Date.now() - created).toBeGreaterThanOrEqual(1_000);
  });
});

describe("one bound on requests in flight across diagnoses", () => {
  let sim: KubeSim;

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
    seed(sim);
  });
  afterAll(async () => {
    await sim.stop();
  });

  it("20 concurrent discover()+listObjects rounds never exceed the bound", async () => {
    sim.setFaults({ latencyMs: 5 });
    const kube = createKubeAdapter(sim.kubeconfig(), { maxInFlight: 8 });
    sim.resetRequests();
    const rounds = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const { resources } = await kube.discover();
        const types = resources.filter((t) => t.namespaced && t.verbs.includes("list"));
        const lists = await mapLimit(types, 32, (t) => kube.listObjects(t, NS));
        return lists.filter((r) => r.ok).length;
      }),
    );
    expect(rounds.every((n) => n > 20)).toBe(true);
    const records = sim.requests();
    expect(records.length).toBeGreaterThan(20 * 20);
    const peak = peakInFlight(records);
    expect(peak).toBeLessThanOrEqual(8);
    expect(peak).toBeGreaterThanOrEqual(6); // the bound was actually reached
    sim.setFaults({});
  });

  it("a 429's Retry-After holds back every new request for that long", async () => {
    sim.setFaults({ latencyMs: 10, throttle: { count: 1, retryAfterSeconds: 1 } });
    const kube = createKubeAdapter(sim.kubeconfig(), { maxInFlight: 4 });
    const { resources } = await createKubeAdapter(sim.kubeconfig()).discover();
    const types = resources.filter((t) => t.namespaced && t.verbs.includes("list")).slice(0, 12);
    sim.resetRequests();
    const t0 = Date.now();
    const lists = await mapLimit(types, 12, (t) => kube.listObjects(t, NS));
    expect(lists.every((r) => r.ok)).toBe(true);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_000);
    const records = sim.requests();
    const throttled = records.filter((r) => r.status === 429);
    expect(throttled).toHaveLength(1);
    const at = throttled[0]?.finishedAt ?? 0;
    // Requests already sent finish; none starts in the second after the 429 (50 ms for it to reach the client).
    const early = records.filter((r) => r.startedAt > at + 50 && r.startedAt < at + 950);
    expect(early).toEqual([]);
    expect(records.filter((r) => r.startedAt >= at + 950).length).toBeGreaterThan(0);
    sim.setFaults({});
  });
});

describe("the simulator's watch, read by the real kubectl", () => {
  let sim: KubeSim;
  let dir: string;
  let kc: string;

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000, bookmarkIntervalMs: 200 });
    dir = await mkdtemp(join(tmpdir(), "unstuck-watch-"));
    kc = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kc);
  });
  afterAll(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("`kubectl get crd --watch` sees a CRD created while it watches", async () => {
    const child = spawn(
      "kubectl",
      ["--kubeconfig", kc, "--cache-dir", join(dir, "cache-live"), "get", "crd", "--watch", "-o", "name"],
      { env: { ...process.env, KUBECTL_KUBERC: "false" } },
    );
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (out += b.toString()));
    try {
      // kubectl lists, then watches from the list's revision: wait for the watch to be open.
      await eventually(
        () => (sim.requests().some((r) => r.path === CRDS && !isWatch(r)) ? true : undefined),
        10_000,
        "kubectl's list",
      );
      await new Promise((r) => setTimeout(r, 300));
      sim.store.create(crd("widgets", "live.example.com"));
      await eventually(
        () =>
          out.includes("customresourcedefinition.apiextensions.k8s.io/widgets.live.example.com")
            ? true
            : undefined,
        10_000,
        `the watched CRD (kubectl printed: ${out})`,
      );
    } finally {
      child.kill();
    }
  });

  it("streams ADDED/MODIFIED/DELETED and BOOKMARK from a resourceVersion, and 410 for a compacted one", async () => {
    const rv = sim.store.resourceVersion;
    sim.store.create(crd("gears", "raw.example.com"));
    sim.store.create(brokenApiService());
    sim.store.delete("apiregistration.k8s.io/v1", "APIService", undefined, "v1beta1.metrics.k8s.io");
    const cache = join(dir, "cache-raw");
    const events = async (path: string, query: string) => {
      const r = await kubectl(kc, cache, ["get", "--raw", `${path}?watch=1&${query}`]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      return r.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { type: string; object: Record<string, unknown> });
    };
    const crdEvents = await events(CRDS, `resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=1`);
    const named = crdEvents.filter((e) => e.type !== "BOOKMARK");
    expect(named[0]?.type).toBe("ADDED");
    expect((named[0]?.object.metadata as { name: string }).name).toBe("gears.raw.example.com");
    const bookmarks = crdEvents.filter((e) => e.type === "BOOKMARK");
    expect(bookmarks.length).toBeGreaterThan(0);
    expect(
      Number((bookmarks.at(-1)?.object.metadata as { resourceVersion: string }).resourceVersion),
    ).toBeGreaterThan(Number(rv));

    const apiEvents = await events(APISERVICES, `resourceVersion=${rv}&timeoutSeconds=1`);
    expect(apiEvents.map((e) => e.type)).toEqual(expect.arrayContaining(["ADDED", "DELETED"]));
    expect(apiEvents.at(-1)?.type).toBe("DELETED");

    sim.store.compact();
    const gone = await events(CRDS, `resourceVersion=${rv}`);
    expect(gone).toHaveLength(1);
    expect(gone[0]?.type).toBe("ERROR");
    expect(gone[0]?.object).toMatchObject({ kind: "Status", code: 410, reason: "Expired" });
  });
});
