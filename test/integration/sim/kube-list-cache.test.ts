/**
 * The simulator serves lists as kube-apiserver serves them from its watch cache: each stored
 * object's JSON (and its PartialObjectMetadata) kept and reused, an index by namespace, the list
 * assembled from the kept text. The bytes must be exactly those of the whole list serialized at
 * once — built-in items without kind/apiVersion, custom ones labelled with the version asked
 * through — and a write must never leave a stale item, a stale namespace index or a stale order.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { startKubeSim, type KubeObject, type KubeSim } from "../../sim/kube/index.js";

const META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
const GROUP = "lc.example.com";

describe("kube simulator: lists from kept serializations", () => {
  let sim: KubeSim;
  let token: string;
  const get = async (path: string, accept = "application/json"): Promise<string> => {
    const r = await fetch(`${sim.url}${path}`, { headers: { accept, authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
    return r.text();
  };
  /** The list as one JSON.stringify of presented copies writes it (the simulator's earlier way). */
  const expected = (
    listKind: string,
    apiVersion: string,
    items: KubeObject[],
    builtin: boolean,
    form: "full" | "partial",
    meta: Record<string, unknown>,
  ): string =>
    JSON.stringify(
      form === "partial"
        ? {
            kind: "PartialObjectMetadataList",
            apiVersion: "meta.k8s.io/v1",
            metadata: meta,
            items: items.map((o) => ({
              kind: "PartialObjectMetadata",
              apiVersion: "meta.k8s.io/v1",
              metadata: o.metadata,
            })),
          }
        : {
            kind: listKind,
            apiVersion,
            metadata: meta,
            items: items.map((o) => {
              if (!builtin) return o;
              const c = { ...o };
              delete c.apiVersion;
              delete c.kind;
              return c;
            }),
          },
    );

  beforeAll(async () => {
    // Counts and lists are exact per namespace: no CA bundle or default ServiceAccount published.
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000, namespacePublishers: false });
    token = /token: (\S+)/.exec(sim.kubeconfig())?.[1] ?? "";
    sim.store.create({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `gizmos.${GROUP}` },
      spec: {
        group: GROUP,
        scope: "Namespaced",
        names: { plural: "gizmos", singular: "gizmo", kind: "Gizmo", listKind: "GizmoList" },
        versions: [
          { name: "v1", served: true, storage: true },
          { name: "v1beta1", served: true, storage: false },
        ],
      },
    });
    for (const ns of ["lc-a", "lc-b"]) {
      sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
      for (const name of ["z", "b", "a10", "a9"]) {
        sim.store.create({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name, namespace: ns, labels: { n: name }, finalizers: ["x.example.com/hold"] },
          data: { k: `${ns}/${name}` },
        });
        sim.store.create({
          apiVersion: `${GROUP}/v1`,
          kind: "Gizmo",
          metadata: { name, namespace: ns },
          spec: { size: name.length, nested: { list: [1, "two", null] } },
        });
      }
    }
  }, 30_000);

  afterAll(async () => {
    await sim.stop();
  });

  it("writes the bytes of the whole list serialized at once, for built-in and custom types, full and metadata-only, in one namespace and across them", async () => {
    for (const [ns, prefix] of [
      ["lc-a", "/namespaces/lc-a"],
      [undefined, ""],
    ] as const) {
      const cms = sim.store.list("v1", "ConfigMap", ns);
      const rv = { resourceVersion: sim.store.resourceVersion };
      expect(await get(`/api/v1${prefix}/configmaps`)).toBe(
        expected("ConfigMapList", "v1", cms, true, "full", rv),
      );
      expect(await get(`/api/v1${prefix}/configmaps`, META_LIST)).toBe(
        expected("ConfigMapList", "v1", cms, true, "partial", rv),
      );
      for (const version of ["v1", "v1beta1"]) {
        const gizmos = sim.store.list(`${GROUP}/${version}`, "Gizmo", ns);
        expect(gizmos.every((g) => g.apiVersion === `${GROUP}/${version}`)).toBe(true);
        expect(await get(`/apis/${GROUP}/${version}${prefix}/gizmos`)).toBe(
          expected("GizmoList", `${GROUP}/${version}`, gizmos, false, "full", rv),
        );
        expect(await get(`/apis/${GROUP}/${version}${prefix}/gizmos`, META_LIST)).toBe(
          expected("GizmoList", `${GROUP}/${version}`, gizmos, false, "partial", rv),
        );
      }
    }
    // Key order (namespace, then name), as etcd returns it.
    const names = (JSON.parse(await get("/api/v1/configmaps")) as { items: KubeObject[] }).items
      .filter((o) => o.metadata?.namespace?.startsWith("lc-") === true)
      .map((o) => `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`);
    expect(names).toEqual([
      "lc-a/a10",
      "lc-a/a9",
      "lc-a/b",
      "lc-a/z",
      "lc-b/a10",
      "lc-b/a9",
      "lc-b/b",
      "lc-b/z",
    ]);
  });

  it("pages and selects from the same kept text", async () => {
    const first = JSON.parse(await get("/api/v1/namespaces/lc-b/configmaps?limit=3", META_LIST)) as {
      metadata: { continue?: string; remainingItemCount?: number };
      items: KubeObject[];
    };
    expect(first.items.map((o) => o.metadata?.name)).toEqual(["a10", "a9", "b"]);
    expect(first.metadata.remainingItemCount).toBe(1);
    const rest = JSON.parse(
      await get(
        `/api/v1/namespaces/lc-b/configmaps?limit=3&continue=${encodeURIComponent(first.metadata.continue ?? "")}`,
        META_LIST,
      ),
    ) as { items: KubeObject[] };
    expect(rest.items.map((o) => o.metadata?.name)).toEqual(["z"]);
    const selected = JSON.parse(await get("/api/v1/namespaces/lc-b/configmaps?labelSelector=n%3Db")) as {
      items: KubeObject[];
    };
    expect(selected.items.map((o) => o.data)).toEqual([{ k: "lc-b/b" }]);
  });

  it("never serves a stale item, namespace index or order after a write", async () => {
    // Warm every kept form first.
    await get("/api/v1/namespaces/lc-a/configmaps");
    await get("/api/v1/namespaces/lc-a/configmaps", META_LIST);
    await get(`/apis/${GROUP}/v1beta1/gizmos`);

    const cm = sim.store.get("v1", "ConfigMap", "lc-a", "b");
    sim.store.update({ ...cm, data: { k: "changed" }, metadata: { ...cm?.metadata, labels: { n: "new" } } });
    sim.store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a0", namespace: "lc-a" },
    });
    sim.store.delete("v1", "ConfigMap", "lc-a", "z");
    sim.store.delete(`${GROUP}/v1`, "Gizmo", "lc-b", "a9");

    const full = JSON.parse(await get("/api/v1/namespaces/lc-a/configmaps")) as { items: KubeObject[] };
    expect(full.items.map((o) => o.metadata?.name)).toEqual(["a0", "a10", "a9", "b", "z"]);
    expect(full.items.find((o) => o.metadata?.name === "b")?.data).toEqual({ k: "changed" });
    // z holds a finalizer: deleting it marks it, and the kept forms show the mark.
    const z = full.items.find((o) => o.metadata?.name === "z");
    expect(z?.metadata?.deletionTimestamp).toBeDefined();
    const partial = JSON.parse(await get("/api/v1/namespaces/lc-a/configmaps", META_LIST)) as {
      items: KubeObject[];
    };
    expect(partial.items.find((o) => o.metadata?.name === "b")?.metadata?.labels).toEqual({ n: "new" });
    expect(partial.items.find((o) => o.metadata?.name === "z")?.metadata?.deletionTimestamp).toBeDefined();
    const gizmos = JSON.parse(await get(`/apis/${GROUP}/v1beta1/gizmos`)) as { items: KubeObject[] };
    expect(gizmos.items.map((o) => `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`)).toEqual([
      "lc-a/a10",
      "lc-a/a9",
      "lc-a/b",
      "lc-a/z",
      "lc-b/a10",
      "lc-b/b",
      "lc-b/z",
    ]);
    expect(gizmos.items.every((o) => o.apiVersion === `${GROUP}/v1beta1` && o.kind === "Gizmo")).toBe(true);

    // The finalizer released: the object goes, from its namespace's list and from the whole type's.
    const zNow = sim.store.get("v1", "ConfigMap", "lc-a", "z");
    sim.store.update({ ...zNow, metadata: { ...zNow?.metadata, finalizers: [] } });
    const after = JSON.parse(await get("/api/v1/configmaps", META_LIST)) as { items: KubeObject[] };
    expect(after.items.some((o) => o.metadata?.namespace === "lc-a" && o.metadata.name === "z")).toBe(false);
    expect(after.items.some((o) => o.metadata?.namespace === "lc-b" && o.metadata.name === "z")).toBe(true);
  });
});
