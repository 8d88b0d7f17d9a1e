/**
 * Aggregated discovery (docs/wire-facts.md): the simulator serves `apidiscovery.k8s.io/v2`
 * `APIGroupDiscoveryList` on `/api` and `/apis` as kube-apiserver ≥ 1.26 does — CRDs included, an
 * unavailable APIService as a `Stale` group-version without resources — and the real kubectl and
 * the bot's adapter both use it: two discovery requests instead of one per group. The adapter
 * falls back to per-group discovery against a server that answers the plain lists, with the same
 * result. Metadata-only lists are checked over the wire here too (kubectl 1.32 does not ask for them).
 */
import { createServer, request, type Server } from "node:http";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { ResourceType } from "../../../src/kube/types.js";
import { startKubeSim, type KubeSim, type RequestRecord } from "../../sim/kube/index.js";
import { kubectl } from "../../sim/kube/testing.js";

const GROUP = "fleet.example.com";
const NS = "fleet";
const STALE_GV = "custom.metrics.k8s.io/v1beta2";
const AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
const METADATA_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

interface DiscoveryDoc {
  kind: string;
  apiVersion: string;
  items: {
    metadata: { name: string };
    versions: {
      version: string;
      freshness?: string;
      resources?: {
        resource: string;
        responseKind: { group: string; version: string; kind: string };
        scope: string;
        singularResource: string;
        verbs: string[];
        shortNames?: string[];
        subresources?: { subresource: string }[];
      }[];
    }[];
  }[];
}

/** A proxy that forces `Accept: application/json`: a server without aggregated discovery. */
async function plainOnlyProxy(target: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const up = request(
      new URL(req.url ?? "/", target),
      { method: req.method, headers: { ...req.headers, accept: "application/json" } },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const isDiscovery = (r: RequestRecord) =>
  r.method === "GET" &&
  (/^\/apis?$/.test(r.path) || /^\/api\/v1$/.test(r.path) || /^\/apis\/[^/]+\/[^/]+$/.test(r.path));

const key = (t: ResourceType) =>
  `${t.apiVersion} ${t.resource} ${t.kind} ${t.namespaced} ${t.verbs.join(",")}`;

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else out.push(p);
  }
  return out;
}

describe("aggregated discovery", () => {
  let sim: KubeSim;
  let dir: string;
  let kcPath: string;
  let token: string;
  const servers: Server[] = [];

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
    const { store } = sim;
    store.create({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `rollouts.${GROUP}` },
      spec: {
        group: GROUP,
        scope: "Namespaced",
        names: {
          plural: "rollouts",
          singular: "rollout",
          kind: "Rollout",
          listKind: "RolloutList",
          shortNames: ["ro"],
        },
        versions: [
          // v1 is the storage (preferred) version; v1beta1 is still served.
          {
            name: "v1beta1",
            served: true,
            storage: false,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
          {
            name: "v1",
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
        ],
      },
    });
    store.create({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `fleets.${GROUP}` },
      spec: {
        group: GROUP,
        scope: "Cluster",
        names: { plural: "fleets", singular: "fleet", kind: "Fleet", listKind: "FleetList" },
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
    // An aggregated API whose Service does not exist: kube-aggregator marks it unavailable.
    const [group, version] = STALE_GV.split("/") as [string, string];
    store.create({
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: `${version}.${group}` },
      spec: {
        group,
        version,
        groupPriorityMinimum: 100,
        versionPriority: 100,
        insecureSkipTLSVerify: true,
        service: { name: "custom-metrics-apiserver", namespace: "monitoring", port: 443 },
      },
    });
    store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    store.create({
      apiVersion: `${GROUP}/v1`,
      kind: "Rollout",
      metadata: { name: "canary", namespace: NS },
      spec: { steps: 3 },
    });
    for (let i = 0; i < 3; i++)
      store.create({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: `s-${i}`, namespace: NS },
        data: { token: Buffer.from(`secret-${i}`).toString("base64") },
      });
    await sim.reconcileNow();
    dir = await mkdtemp(join(tmpdir(), "unstuck-aggdisc-"));
    kcPath = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kcPath);
    token = /token: (\S+)/.exec(sim.kubeconfig())?.[1] ?? "";
  }, 60_000);

  afterAll(async () => {
    for (const s of servers) s.close();
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const get = (path: string, accept: string) =>
    fetch(`${sim.url}${path}`, { headers: { accept, authorization: `Bearer ${token}` } });

  it("serves APIGroupDiscoveryList v2 with its Content-Type, CRDs included, an unavailable APIService Stale", async () => {
    const apis = await get("/apis", `${AGGREGATED},application/json`);
    expect(apis.headers.get("content-type")).toBe(AGGREGATED);
    const doc = (await apis.json()) as DiscoveryDoc;
    expect([doc.kind, doc.apiVersion]).toEqual(["APIGroupDiscoveryList", "apidiscovery.k8s.io/v2"]);
    const fleet = doc.items.find((g) => g.metadata.name === GROUP);
    expect(fleet?.versions.map((v) => [v.version, v.freshness])).toEqual([
      ["v1", "Current"],
      ["v1beta1", "Current"],
    ]);
    const rollouts = fleet?.versions[0]?.resources?.find((r) => r.resource === "rollouts");
    expect(rollouts).toMatchObject({
      responseKind: { group: GROUP, version: "v1", kind: "Rollout" },
      scope: "Namespaced",
      singularResource: "rollout",
      shortNames: ["ro"],
      subresources: [{ subresource: "status" }],
    });
    expect(fleet?.versions[0]?.resources?.find((r) => r.resource === "fleets")?.scope).toBe("Cluster");
    const stale = doc.items.find((g) => g.metadata.name === STALE_GV.split("/")[0]);
    expect(stale?.versions).toEqual([{ version: STALE_GV.split("/")[1], freshness: "Stale" }]);

    const core = (await (await get("/api", AGGREGATED)).json()) as DiscoveryDoc;
    expect(core.items.map((g) => g.metadata.name)).toEqual([""]);
    expect(core.items[0]?.versions[0]?.resources?.map((r) => r.resource)).toContain("secrets");

    // The plain forms remain for clients that do not ask, and an unservable `as=` is refused.
    expect(((await (await get("/apis", "application/json")).json()) as { kind: string }).kind).toBe(
      "APIGroupList",
    );
    const refused = await get(
      "/apis",
      "application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList",
    );
    expect(refused.status).toBe(406);
    expect(((await refused.json()) as { reason: string }).reason).toBe("NotAcceptable");
  });

  it("real kubectl uses it: two discovery requests, the CRD's kind resolves, its cache holds the v2 answer", async () => {
    sim.resetRequests();
    const cache = join(dir, "cache-kubectl");
    const resources = await kubectl(kcPath, cache, ["api-resources"]);
    expect(resources.stdout).toMatch(/rollouts\s+ro\s+fleet\.example\.com\/v1\s+true\s+Rollout/);
    expect(resources.stdout).toMatch(/fleets\s+fleet\.example\.com\/v1\s+false\s+Fleet/);
    expect(resources.stdout).not.toContain("custom.metrics.k8s.io");
    const discovery = sim.requests().filter(isDiscovery);
    expect(discovery.map((r) => r.path).sort()).toEqual(["/api", "/apis"]);
    for (const r of discovery) {
      expect(r.accept.startsWith(AGGREGATED)).toBe(true);
      expect(r.contentType).toBe(AGGREGATED);
    }

    const got = await kubectl(kcPath, cache, ["get", "rollout", "-n", NS, "-o", "name"]);
    expect(got.stdout.trim()).toBe(`rollout.${GROUP}/canary`);
    const byShort = await kubectl(kcPath, cache, ["get", "ro", "-n", NS]);
    expect(byShort.stdout).toMatch(/^NAME\s+AGE\ncanary\s/);

    // kubectl wrote the per-group-version cache files from the one aggregated document (no
    // request ever went to /apis/fleet.example.com/v1), and its HTTP cache holds the v2 answer.
    const files = await filesUnder(cache);
    const crdFile = files.find((f) => f.endsWith(join(GROUP, "v1", "serverresources.json")));
    expect(crdFile).toBeDefined();
    expect((await readFile(crdFile!, "utf8")).includes('"Rollout"')).toBe(true);
    expect(files.some((f) => f.endsWith("servergroups.json"))).toBe(true);
    const httpCache = await Promise.all(
      files.filter((f) => f.includes(join(cache, "http"))).map((f) => readFile(f, "utf8")),
    );
    expect(httpCache.some((t) => t.includes(`Content-Type: ${AGGREGATED}`) && t.includes(GROUP))).toBe(true);
    expect(sim.requests().filter((r) => r.path === `/apis/${GROUP}/v1`)).toEqual([]);
  });

  it("the adapter discovers with two requests, reports the Stale group-version, and matches per-group discovery", async () => {
    sim.resetRequests();
    const aggregated = await createKubeAdapter(sim.kubeconfig()).discover();
    const requests = sim.requests().filter(isDiscovery);
    expect(requests.map((r) => r.path).sort()).toEqual(["/api", "/apis"]);
    for (const r of requests) expect(r.contentType).toBe(AGGREGATED);
    expect(aggregated.failures.map((f) => f.groupVersion)).toEqual([STALE_GV]);
    expect(aggregated.failures[0]?.message).toMatch(/stale/i);
    const rollout = aggregated.resources.find((t) => t.resource === "rollouts");
    expect(rollout).toEqual({
      group: GROUP,
      version: "v1",
      apiVersion: `${GROUP}/v1`,
      kind: "Rollout",
      resource: "rollouts",
      namespaced: true,
      verbs: expect.arrayContaining(["list", "get", "patch"]),
    });

    // The same cluster through a server that only speaks the plain lists: one request per group,
    // the same types and the same failing group-version.
    const proxy = await plainOnlyProxy(sim.url);
    servers.push(proxy.server);
    sim.resetRequests();
    const legacy = await createKubeAdapter(sim.kubeconfig().replace(sim.url, proxy.url), {
      maxAttempts: 1,
    }).discover();
    const legacyRequests = sim.requests().filter(isDiscovery);
    expect(legacyRequests.length).toBeGreaterThan(requests.length + 5);
    expect(legacyRequests.every((r) => !r.contentType.includes("apidiscovery"))).toBe(true);
    expect(aggregated.resources.map(key).sort()).toEqual(legacy.resources.map(key).sort());
    expect(legacy.failures.map((f) => f.groupVersion)).toEqual([STALE_GV]);
  });

  it("metadata-only lists over the wire: PartialObjectMetadataList with paging, 406 for an unknown as=", async () => {
    const page1 = await get(`/api/v1/namespaces/${NS}/secrets?limit=2`, METADATA_ACCEPT);
    // The real server says what it is in the body only: the header is plain JSON.
    expect(page1.headers.get("content-type")).toBe("application/json");
    const body1 = (await page1.json()) as {
      kind: string;
      apiVersion: string;
      metadata: { continue?: string };
      items: Record<string, unknown>[];
    };
    expect([body1.kind, body1.apiVersion]).toEqual(["PartialObjectMetadataList", "meta.k8s.io/v1"]);
    expect(body1.items).toHaveLength(2);
    for (const item of body1.items) {
      expect([item.kind, item.apiVersion]).toEqual(["PartialObjectMetadata", "meta.k8s.io/v1"]);
      expect(item.data).toBeUndefined();
    }
    const page2 = (await (
      await get(
        `/api/v1/namespaces/${NS}/secrets?limit=2&continue=${encodeURIComponent(body1.metadata.continue ?? "")}`,
        METADATA_ACCEPT,
      )
    ).json()) as { metadata: { continue?: string }; items: { metadata: { name: string } }[] };
    expect(page2.items.map((i) => i.metadata.name)).toEqual(["s-2"]);
    expect(page2.metadata.continue).toBeUndefined();

    const unknown = await get(
      `/api/v1/namespaces/${NS}/secrets`,
      "application/json;as=Inventory;g=meta.k8s.io;v=v1",
    );
    expect(unknown.status).toBe(406);
    expect(((await unknown.json()) as { reason: string }).reason).toBe("NotAcceptable");
    // An unknown transform with a plain fallback is answered in full, as the real server does.
    const fallback = await get(
      `/api/v1/namespaces/${NS}/secrets`,
      "application/json;as=Inventory;g=meta.k8s.io;v=v1,application/json",
    );
    expect(((await fallback.json()) as { kind: string }).kind).toBe("SecretList");

    // kubectl 1.32 `get -o name` still asks for plain JSON (observed), and is answered in full;
    // its table form still works alongside.
    sim.resetRequests();
    const names = await kubectl(kcPath, join(dir, "cache-lists"), ["get", "secrets", "-n", NS, "-o", "name"]);
    expect(names.stdout.trim().split("\n")).toEqual(["secret/s-0", "secret/s-1", "secret/s-2"]);
    const list = sim.requests().find((r) => r.path === `/api/v1/namespaces/${NS}/secrets`);
    expect(list?.status).toBe(200);
    const table = await kubectl(kcPath, join(dir, "cache-lists"), ["get", "secrets", "-n", NS]);
    expect(table.stdout).toMatch(/^NAME\s.*\ns-0\s/);
  });
});
