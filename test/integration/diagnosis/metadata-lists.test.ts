/**
 * "Ask for less" (docs/design.md): the diagnosis lists every type metadata-only
 * (`PartialObjectMetadataList`), except the few whose spec or status the analysis reads (Ingress,
 * Service, TargetGroupBinding), and still finds every blocker, finalizer and owner — across CRDs
 * and across pages. A Secret's data and a ConfigMap's payload never cross the wire to the bot.
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { startKubeSim, type KubeSim, type RequestRecord } from "../../sim/kube/index.js";

const NS = "meta-only";
const GROUP = "meta.example.com";
const WIDGETS = 620; // more than one page of 500
const SECRET_VALUE = "hunter2-do-not-leak";
const PAYLOAD = "config payload that only the workload needs";
const METADATA_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
/** One clock for every diagnosis here, so two of them can be compared field for field. */
const AT = new Date();
const NOW = () => AT;

interface Exchange {
  readonly path: string;
  readonly accept: string;
  readonly body: string;
}

/**
 * A recording pass-through proxy: what the adapter received, byte for byte. `rewriteAccept`
 * replaces every request's Accept header, to play a server that ignores the representations asked for.
 */
async function startProxy(
  target: string,
  rewriteAccept?: string,
): Promise<{ url: string; server: Server; exchanges: Exchange[] }> {
  const exchanges: Exchange[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", target);
    const headers: IncomingHttpHeaders = { ...req.headers };
    if (rewriteAccept !== undefined) headers.accept = rewriteAccept;
    const up = request(url, { method: req.method, headers }, (r) => {
      const chunks: Buffer[] = [];
      r.on("data", (c: Buffer) => chunks.push(c));
      r.on("end", () => {
        const body = Buffer.concat(chunks);
        exchanges.push({ path: url.pathname, accept: headers.accept ?? "", body: body.toString("utf8") });
        const out = { ...r.headers };
        delete out["transfer-encoding"];
        res.writeHead(r.statusCode ?? 502, { ...out, "content-length": String(body.length) });
        res.end(body);
      });
    });
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, exchanges };
}

function crd(plural: string, kind: string) {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  };
}

const isList = (r: RequestRecord, resource: string) =>
  r.method === "GET" && r.path.startsWith("/api") && r.path.endsWith(`/${resource}`);

describe("metadata-only lists", () => {
  let sim: KubeSim;
  const proxies: Server[] = [];

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
    const { store } = sim;
    store.create(crd("widgets", "Widget"));
    store.create(crd("gadgets", "Gadget"));
    store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    const gadget = store.create({
      apiVersion: `${GROUP}/v1`,
      kind: "Gadget",
      metadata: { name: "g-0", namespace: NS, finalizers: [`${GROUP}/gadget-cleanup`] },
      spec: { size: 3 },
    });
    for (let i = 0; i < WIDGETS; i++) {
      store.create({
        apiVersion: `${GROUP}/v1`,
        kind: "Widget",
        metadata: {
          name: `w-${String(i).padStart(4, "0")}`,
          namespace: NS,
          finalizers: [`${GROUP}/cleanup`],
          ...(i % 10 === 0
            ? {
                ownerReferences: [
                  {
                    apiVersion: `${GROUP}/v1`,
                    kind: "Gadget",
                    name: "g-0",
                    uid: gadget.metadata?.uid ?? "",
                  },
                ],
              }
            : {}),
        },
        spec: { i, secretRef: SECRET_VALUE },
      });
    }
    store.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "db-credentials", namespace: NS, finalizers: ["example.com/vault-sync"] },
      type: "Opaque",
      data: { password: Buffer.from(SECRET_VALUE).toString("base64") },
    });
    store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "app-config", namespace: NS, finalizers: ["example.com/config-sync"] },
      data: { "app.yaml": PAYLOAD },
    });
    store.create({
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: "web", namespace: NS, finalizers: ["ingress.k8s.aws/resources"] },
      spec: { ingressClassName: "alb", rules: [{ host: "web.example.com" }] },
      status: {
        loadBalancer: { ingress: [{ hostname: "k8s-metaonly-web-0123456789.eu-west-1.elb.amazonaws.com" }] },
      },
    });
    store.create({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "edge", namespace: NS, finalizers: ["service.k8s.aws/resources"] },
      spec: {
        type: "LoadBalancer",
        loadBalancerClass: "service.k8s.aws/nlb",
        ports: [{ port: 443, protocol: "TCP" }],
      },
    });
    store.delete("v1", "Namespace", undefined, NS);
    await sim.reconcileNow();
  }, 60_000);

  afterAll(async () => {
    for (const p of proxies) p.close();
    await sim.stop();
  });

  const viaProxy = async (rewriteAccept?: string) => {
    const p = await startProxy(sim.url, rewriteAccept);
    proxies.push(p.server);
    return { kube: createKubeAdapter(sim.kubeconfig().replace(sim.url, p.url)), exchanges: p.exchanges };
  };

  it("finds every blocker, finalizer and owner reference across CRDs and pages, as full objects would", async () => {
    const lean = await viaProxy();
    const diagnosis = await diagnoseNamespace(lean.kube, NS, { now: NOW });

    // Ground truth from the store: every object in the namespace that still has finalizers.
    const expected = sim.store
      .list(`${GROUP}/v1`, "Widget", NS)
      .concat(sim.store.list(`${GROUP}/v1`, "Gadget", NS))
      .concat(sim.store.list("v1", "Secret", NS), sim.store.list("v1", "ConfigMap", NS))
      .concat(sim.store.list("networking.k8s.io/v1", "Ingress", NS), sim.store.list("v1", "Service", NS))
      .filter((o) => (o.metadata?.finalizers ?? []).length > 0)
      .map((o) => `${o.apiVersion}/${o.kind}/${o.metadata?.name}:${(o.metadata?.finalizers ?? []).join(",")}`)
      .sort();
    const found = diagnosis.blockers
      .map((b) => `${b.apiVersion}/${b.kind}/${b.name}:${b.finalizers.join(",")}`)
      .sort();
    expect(found).toEqual(expected);

    // The same question asked for full objects (a server that ignores `as=`, and legacy
    // discovery with it) gives the same diagnosis: metadata was all the lean lists left out.
    const full = await viaProxy("application/json");
    const reference = await diagnoseNamespace(full.kube, NS, { now: NOW });
    expect(JSON.parse(JSON.stringify(diagnosis))).toEqual(JSON.parse(JSON.stringify(reference)));
    expect(full.exchanges.some((e) => e.path.endsWith("/secrets") && e.body.includes('"data"'))).toBe(true);

    // What the analysis reads beyond metadata is still there for the types listed in full.
    const ingress = diagnosis.blockers.find((b) => b.kind === "Ingress");
    expect(ingress?.loadBalancerHostnames?.[0]).toContain("elb.amazonaws.com");
    const widgets = diagnosis.blockers.filter((b) => b.kind === "Widget");
    expect(widgets).toHaveLength(WIDGETS);
    expect(new Set(widgets.map((w) => w.apiVersion))).toEqual(new Set([`${GROUP}/v1`]));
  });

  it("asks for metadata only except where the analysis reads spec or status, and pages those lists", async () => {
    sim.resetRequests();
    const lean = await viaProxy();
    await diagnoseNamespace(lean.kube, NS, { now: NOW });
    const lists = sim.requests().filter((r) => r.method === "GET" && r.path.includes(`/namespaces/${NS}/`));
    expect(lists.length).toBeGreaterThan(0);
    for (const resource of ["secrets", "configmaps", "widgets", "gadgets"]) {
      const mine = lists.filter((r) => isList(r, resource));
      expect(mine.length, resource).toBeGreaterThan(0);
      for (const r of mine) {
        expect(r.accept, resource).toBe(METADATA_ACCEPT);
        expect(r.served, resource).toBe("PartialObjectMetadataList");
      }
    }
    // Two pages of widgets, both metadata-only, the second with the first's continue token.
    const widgetPages = lists.filter((r) => isList(r, "widgets"));
    expect(widgetPages).toHaveLength(Math.ceil(WIDGETS / 500));
    expect(widgetPages[1]?.query).toContain("continue=");
    // Ingresses and Services are read in full (class, load-balancer status, type), in the namespace
    // and across namespaces for the ownership model.
    const fullLists = sim.requests().filter((r) => isList(r, "ingresses") || isList(r, "services"));
    expect(fullLists.length).toBeGreaterThan(0);
    for (const r of fullLists) expect(r.accept).toBe("application/json");
  });

  it("never receives a Secret's data or a ConfigMap's payload", async () => {
    const lean = await viaProxy();
    await diagnoseNamespace(lean.kube, NS, { now: NOW });
    const sensitive = lean.exchanges.filter(
      (e) => e.path.endsWith("/secrets") || e.path.endsWith("/configmaps"),
    );
    expect(sensitive.length).toBeGreaterThan(0);
    for (const e of sensitive) {
      const body = JSON.parse(e.body) as { kind: string; items: Record<string, unknown>[] };
      expect(body.kind).toBe("PartialObjectMetadataList");
      for (const item of body.items) {
        expect(Object.keys(item).sort()).toEqual(["apiVersion", "kind", "metadata"]);
      }
      expect(e.body).not.toContain(Buffer.from(SECRET_VALUE).toString("base64"));
      expect(e.body).not.toContain(PAYLOAD);
    }
    // Nor any spec of a custom resource (the widgets carry the value in spec).
    for (const e of lean.exchanges.filter((x) => x.path.endsWith("/widgets"))) {
      expect(e.body).not.toContain(SECRET_VALUE);
    }
  });

  it("keeps the listed type's kind and apiVersion in the snapshot, not PartialObjectMetadata", async () => {
    const kube = createKubeAdapter(sim.kubeconfig());
    const types = (await kube.discover()).resources;
    const secretType = types.find((t) => t.group === "" && t.resource === "secrets");
    const gadgetType = types.find((t) => t.group === GROUP && t.resource === "gadgets");
    expect(secretType && gadgetType).toBeTruthy();
    const [secrets, gadgets] = await Promise.all([
      kube.listObjects(secretType!, NS),
      kube.listObjects(gadgetType!, NS),
    ]);
    expect(secrets.map((s) => [s.apiVersion, s.kind, s.name])).toEqual([["v1", "Secret", "db-credentials"]]);
    expect(gadgets.map((g) => [g.apiVersion, g.kind, g.name, g.finalizers])).toEqual([
      [`${GROUP}/v1`, "Gadget", "g-0", [`${GROUP}/gadget-cleanup`]],
    ]);
    expect(JSON.stringify(secrets)).not.toContain(Buffer.from(SECRET_VALUE).toString("base64"));
  });
});
