/**
 * Lists used to stop after their first page (500 objects per type). The bot must read every
 * page of every list (`limit` + `continue`), so that the diagnosis of a namespace with thousands of
 * objects counts what the namespace controller counts, and must restart a list whose continue
 * token expired (410) without looping.
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../src/cli.js";
import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../../src/kube/port.js";
import type { ResourceType } from "../../../src/kube/types.js";
import { startKubeSim, type KubeSim, type RequestRecord } from "../../sim/kube/index.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { linesIo } from "../../helpers/cli-io.js";

const NS = "paged";
const OTHER = "paged-other";
const APPS = "paged-apps";
const GROUP = "paging.example.com";
/** Objects per type in the Terminating namespace: several pages, exactly one page, one more, none. */
const COUNTS = { configmaps: 1200, secrets: 500, widgets: 501 } as const;
const OTHER_CONFIGMAPS = 300;
const WORKLOAD = 600;
const PAGE = 500;

/** `"configmaps. has 1200 resource instances, …"` → { "configmaps": 1200, … } (core types end in "."). */
function conditionCounts(message: string | undefined, pattern: RegExp): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of (message ?? "").matchAll(pattern)) out.set((m[1] ?? "").replace(/\.$/, ""), Number(m[2]));
  return out;
}

function isList(r: RequestRecord, resource: string): boolean {
  return r.method === "GET" && new RegExp(`/${resource}$`).test(r.path);
}

/** A pass-through HTTP proxy in front of the simulator, with a hook before each forwarded request. */
async function startProxy(
  target: string,
  before: (url: URL) => { status: number; body: string } | undefined,
): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", target);
    const answer = before(url);
    if (answer !== undefined) {
      res.writeHead(answer.status, { "Content-Type": "application/json" });
      res.end(answer.body);
      return;
    }
    const up = request(url, { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe("paged lists against the Kubernetes simulator", () => {
  let sim: KubeSim;
  let kube: KubePort;
  let types: readonly ResourceType[];
  let dir: string;
  let kubeconfigPath: string;
  const proxies: Server[] = [];

  const type = (resource: string) => {
    const t = types.find((x) => x.resource === resource);
    if (t === undefined) throw new Error(`no type ${resource}`);
    return t;
  };
  /** An adapter that talks to the simulator through a proxy. */
  const viaProxy = async (before: Parameters<typeof startProxy>[1]) => {
    const p = await startProxy(sim.url, before);
    proxies.push(p.server);
    return createKubeAdapter(sim.kubeconfig().replace(sim.url, p.url), { maxAttempts: 1 });
  };

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
    const { store } = sim;
    store.create({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `widgets.${GROUP}` },
      spec: {
        group: GROUP,
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
    for (const ns of [NS, OTHER, APPS])
      store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    const meta = (name: string, namespace: string, finalizer: string) => ({
      name,
      namespace,
      finalizers: [finalizer],
    });
    for (let i = 0; i < COUNTS.configmaps; i++)
      store.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: meta(`cm-${i}`, NS, "example.com/hold"),
      });
    for (let i = 0; i < COUNTS.secrets; i++)
      store.create({ apiVersion: "v1", kind: "Secret", metadata: meta(`s-${i}`, NS, "example.com/hold") });
    for (let i = 0; i < COUNTS.widgets; i++)
      store.create({
        apiVersion: `${GROUP}/v1`,
        kind: "Widget",
        metadata: meta(`w-${i}`, NS, `${GROUP}/cleanup`),
      });
    for (let i = 0; i < OTHER_CONFIGMAPS; i++)
      store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i}`, namespace: OTHER } });
    const labels = { app: "paged" };
    for (let i = 0; i < WORKLOAD; i++) {
      store.create({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: `d-${i}`, namespace: APPS, labels },
        spec: {
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: "c", image: "busybox" }] } },
        },
      });
      store.create({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: `p-${i}`, namespace: APPS, labels },
        spec: { containers: [{ name: "c", image: "busybox" }] },
      });
      store.create({
        apiVersion: "v1",
        kind: "Event",
        metadata: { name: `e-${i}`, namespace: APPS },
        involvedObject: { kind: "Pod", name: "p-0", namespace: APPS },
        reason: "Tested",
        message: `event ${i}`,
        type: "Normal",
      });
    }
    store.delete("v1", "Namespace", undefined, NS);
    await sim.reconcileNow();

    kube = createKubeAdapter(sim.kubeconfig(), { maxAttempts: 1 });
    types = (await kube.discover()).resources;
    dir = await mkdtemp(join(tmpdir(), "unstuck-paging-"));
    kubeconfigPath = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kubeconfigPath);
  }, 60_000);

  afterAll(async () => {
    for (const p of proxies) p.close();
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("lists every object of a type however many pages it takes, each request with limit", async () => {
    for (const [resource, expected] of Object.entries(COUNTS)) {
      sim.resetRequests();
      const objects = await kube.listObjects(type(resource), NS);
      expect(objects).toHaveLength(expected);
      expect(new Set(objects.map((o) => o.name)).size).toBe(expected);
      const lists = sim.requests().filter((r) => isList(r, resource));
      expect(lists).toHaveLength(Math.max(1, Math.ceil(expected / PAGE)));
      for (const r of lists) expect(new URLSearchParams(r.query).get("limit")).toBe(String(PAGE));
      // Every page after the first continues the one before; none is an error.
      expect(lists.slice(1).every((r) => new URLSearchParams(r.query).has("continue"))).toBe(true);
      expect(lists.every((r) => r.status === 200)).toBe(true);
    }
  });

  it("lists a type with no objects in one request, and all namespaces when none is given", async () => {
    sim.resetRequests();
    expect(await kube.listObjects(type("services"), NS)).toEqual([]);
    expect(sim.requests().filter((r) => isList(r, "services"))).toHaveLength(1);

    const all = await kube.listObjects(type("configmaps"), undefined);
    // The test's own, without the CA bundle every Active namespace holds (`kube-root-ca.crt`).
    const inTest = all.filter(
      (o) => (o.namespace === NS || o.namespace === OTHER) && o.name !== "kube-root-ca.crt",
    );
    expect(inTest).toHaveLength(COUNTS.configmaps + OTHER_CONFIGMAPS);
    expect(new Set(all.map((o) => `${o.namespace ?? ""}/${o.name}`)).size).toBe(all.length);
  });

  it("reads every page of deployments, pods and events too", async () => {
    sim.resetRequests();
    const everywhere = await kube.listDeployments({ labelSelector: "app=paged" });
    expect(everywhere.filter((d) => d.namespace === APPS)).toHaveLength(WORKLOAD);
    expect(await kube.listPods(APPS, "app=paged")).toHaveLength(WORKLOAD);
    expect(await kube.listEvents(APPS)).toHaveLength(WORKLOAD);
    expect(await kube.listEvents(APPS, { kind: "Pod", name: "p-0" })).toHaveLength(WORKLOAD);
    const lists = sim.requests().filter((r) => ["deployments", "pods", "events"].some((x) => isList(r, x)));
    expect(lists.length).toBeGreaterThanOrEqual(4 * Math.ceil(WORKLOAD / PAGE));
    for (const r of lists) expect(new URLSearchParams(r.query).get("limit")).toBe(String(PAGE));
  });

  it("reads every Deployment in pages ten times as big, still to the last page", async () => {
    // Held whole in the end anyway, so fewer sequential round trips: 600 Deployments are one page
    // of 5,000 instead of two of 500…
    sim.resetRequests();
    expect(await kube.listDeployments({ namespace: APPS })).toHaveLength(WORKLOAD);
    const one = sim.requests().filter((r) => isList(r, "deployments"));
    expect(one.map((r) => new URLSearchParams(r.query).get("limit"))).toEqual([String(10 * PAGE)]);

    // …and a page size of 50 reads them in pages of 500, every page followed.
    const small = createKubeAdapter(sim.kubeconfig(), { maxAttempts: 1, pageSize: 50 });
    sim.resetRequests();
    const all = await small.listDeployments({ namespace: APPS });
    expect(new Set(all.map((d) => d.name)).size).toBe(WORKLOAD);
    const pages = sim.requests().filter((r) => isList(r, "deployments"));
    expect(pages.map((r) => new URLSearchParams(r.query).get("limit"))).toEqual(["500", "500"]);
    expect(new URLSearchParams(pages[1]?.query).has("continue")).toBe(true);
  });

  it("counts what the namespace controller counts: remaining resources and finalizers", async () => {
    const d = await diagnoseNamespace(kube, NS, { now: () => new Date() });
    const content = d.conditions.find((c) => c.type === "NamespaceContentRemaining");
    const finals = d.conditions.find((c) => c.type === "NamespaceFinalizersRemaining");
    const byType = conditionCounts(content?.message, /([a-z0-9.-]+) has (\d+) resource instances/g);
    const byFinalizer = conditionCounts(finals?.message, /([a-z0-9./-]+) in (\d+) resource instances/g);
    // The controller's own words, read back: every seeded type and finalizer is there.
    expect(byType.size).toBe(Object.keys(COUNTS).length);
    expect(byFinalizer.size).toBe(2);

    const reported = new Map(d.remaining.map((r) => [r.resource.replace(/\.$/, ""), r.count]));
    expect(reported).toEqual(byType);
    const finalizerCounts = new Map<string, number>();
    for (const b of d.blockers)
      for (const f of b.finalizers) finalizerCounts.set(f, (finalizerCounts.get(f) ?? 0) + 1);
    expect(finalizerCounts).toEqual(byFinalizer);
    expect(d.blockers).toHaveLength([...byType.values()].reduce((a, b) => a + b, 0));
  }, 60_000);

  /** `ns <NS> --json` through the terminal form: everything it printed, once it exited 0. */
  async function terminalJson(): Promise<string> {
    const out: string[] = [];
    const code = await runCli(["ns", NS, "--json", "--kubeconfig", kubeconfigPath], {}, linesIo(out));
    expect(code).toBe(0);
    return out.join("\n");
  }

  it("prints complete --json from the terminal form", async () => {
    const json = JSON.parse(await terminalJson()) as {
      remaining: { resource: string; count: number }[];
      blockers: { name: string; namespace: string }[];
      conditions: { type: string; message?: string }[];
    };
    const content = json.conditions.find((c) => c.type === "NamespaceContentRemaining");
    const byType = conditionCounts(content?.message, /([a-z0-9.-]+) has (\d+) resource instances/g);
    expect(new Map(json.remaining.map((r) => [r.resource.replace(/\.$/, ""), r.count]))).toEqual(byType);
    const total = [...byType.values()].reduce((a, b) => a + b, 0);
    expect(json.blockers).toHaveLength(total);
    expect(new Set(json.blockers.map((b) => b.name)).size).toBe(total);
  }, 60_000);

  it("the terminal form guesses an unknown finalizer's controller from every Deployment, in one page", async () => {
    // example.com/hold is in no table: its controller is guessed from every Deployment of the
    // cluster (600 here), read in pages of ten times 500.
    sim.resetRequests();
    await terminalJson();
    const everyDeployment = sim
      .requests()
      .filter((r) => r.method === "GET" && r.path === "/apis/apps/v1/deployments");
    expect(everyDeployment.map((r) => new URLSearchParams(r.query).get("limit"))).toEqual([
      String(10 * PAGE),
    ]);
    expect(everyDeployment.some((r) => new URLSearchParams(r.query).has("labelSelector"))).toBe(false);
  }, 60_000);

  it("restarts a list whose continue token expired (410) and returns each object once", async () => {
    let compactions = 0;
    const proxied = await viaProxy((url) => {
      // etcd compacts the list's revision once, between the first and second page.
      if (url.searchParams.has("continue") && compactions === 0) {
        compactions++;
        sim.store.compact();
      }
      return undefined;
    });
    sim.resetRequests();
    const objects = await proxied.listObjects(type("configmaps"), NS);
    expect(objects).toHaveLength(COUNTS.configmaps);
    expect(new Set(objects.map((o) => o.name)).size).toBe(COUNTS.configmaps);
    const lists = sim.requests().filter((r) => isList(r, "configmaps"));
    expect(lists.map((r) => r.status)).toEqual([200, 410, 200, 200, 200]);
    // The restart begins again without a token, still paged.
    const restart = new URLSearchParams(lists[2]?.query ?? "");
    expect(restart.has("continue")).toBe(false);
    expect(restart.get("limit")).toBe(String(PAGE));
  });

  it("falls back to one unpaged list when tokens keep expiring, instead of looping", async () => {
    const proxied = await viaProxy((url) => {
      if (url.searchParams.has("continue")) sim.store.compact();
      return undefined;
    });
    sim.resetRequests();
    const objects = await proxied.listObjects(type("configmaps"), NS);
    expect(objects).toHaveLength(COUNTS.configmaps);
    const lists = sim.requests().filter((r) => isList(r, "configmaps"));
    expect(lists.map((r) => r.status)).toEqual([200, 410, 200, 410, 200]);
    expect(new URLSearchParams(lists[4]?.query ?? "").has("limit")).toBe(false);
  });

  it("stops with an error when the server hands back the same continue token again", async () => {
    let first: string | undefined;
    const proxied = await viaProxy((url) => {
      if (!url.searchParams.has("continue")) return undefined;
      // A broken server (or proxy) that answers every continuation with the first page again.
      first ??= JSON.stringify({
        kind: "ConfigMapList",
        apiVersion: "v1",
        metadata: { resourceVersion: "1", continue: url.searchParams.get("continue") },
        items: [],
      });
      return { status: 200, body: first };
    });
    const err = await proxied.listObjects(type("configmaps"), NS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnstuckError);
    expect((err as UnstuckError).code).toBe(ErrorCode.Upstream);
    expect((err as UnstuckError).message).toMatch(/repeated a continue token/);
  });

  it("reports an expired token on a first page as the error it is (no restart)", async () => {
    const proxied = await viaProxy(() => ({
      status: 410,
      body: JSON.stringify({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "The resourceVersion for the provided list is too old.",
        reason: "Expired",
        code: 410,
      }),
    }));
    const err = await proxied.listObjects(type("configmaps"), NS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnstuckError);
    expect((err as UnstuckError).details.status).toBe(410);
    expect((err as UnstuckError).message).toContain("The resourceVersion for the provided list is too old.");
  });
});
