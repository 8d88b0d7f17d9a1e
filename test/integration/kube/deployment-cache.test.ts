/**
 * The long-running adapter's Deployment cache against the simulator: once its watch is up, every
 * read — all Deployments, one namespace's, and any label selector of the API server's grammar —
 * answers what the API server answers, with no request; a relabelled Deployment is seen through the
 * watch; a 410 Gone re-lists; a selector the cache cannot read goes to the API server, which
 * rejects it as before.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../../src/kube/port.js";
import type { DeploymentSnapshot } from "../../../src/kube/types.js";
import { eventually } from "../../helpers/eventually.js";
import { startKubeSim, type KubeObject, type KubeSim, type RequestRecord } from "../../sim/kube/index.js";
import { mulberry32 } from "../../security/hostile.js";

const DEPLOYMENTS = "/apis/apps/v1/deployments";
const NAMESPACES = ["alpha", "beta", "gamma", "delta"];
const KEYS = ["app.kubernetes.io/name", "tier", "team"];
const VALUES = ["web", "api", "db", "cache", ""];

const isWatch = (r: RequestRecord): boolean => /[?&]watch=(1|true)\b/.test(r.query);
const isDeploymentRead = (r: RequestRecord): boolean =>
  r.method === "GET" && r.path.endsWith("/deployments") && !isWatch(r);
/** The stored Deployment `name` (names are unique across namespaces here). */
function stored(sim: KubeSim, name: string): KubeObject {
  const found = sim.store.list("apps/v1", "Deployment").find((d) => d.metadata?.name === name);
  if (found === undefined) throw new Error(`no Deployment ${name}`);
  return found;
}

const names = (ds: readonly DeploymentSnapshot[]): string[] => ds.map((d) => `${d.namespace}/${d.name}`);

function pick<T>(rnd: () => number, from: readonly T[]): T {
  return from[Math.floor(rnd() * from.length)] as T;
}

function deployment(namespace: string, name: string, labels: Record<string, string>): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "main", image: `registry.example/${name}:1` }] },
      },
    },
  };
}

function randomLabels(rnd: () => number): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const k of KEYS) if (rnd() < 0.6) labels[k] = pick(rnd, VALUES);
  return labels;
}

/** One requirement of the label selector grammar, drawn at random. */
function randomRequirement(rnd: () => number): string {
  const key = pick(rnd, KEYS);
  const values = VALUES.filter((v) => v !== "" && rnd() < 0.4);
  const set = values.length > 0 ? values : ["web"];
  switch (Math.floor(rnd() * 7)) {
    case 0:
      return `${key}=${pick(rnd, VALUES)}`;
    case 1:
      return `${key}==${pick(rnd, VALUES)}`;
    case 2:
      return `${key}!=${pick(rnd, VALUES)}`;
    case 3:
      return `${key} in (${set.join(",")})`;
    case 4:
      return `${key} notin (${set.join(", ")})`;
    case 5:
      return key;
    default:
      return `!${key}`;
  }
}

describe("the Deployment cache (list, then watch)", () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    while (stops.length > 0) await stops.pop()?.();
  });

  async function world(options: { bookmarkIntervalMs?: number } = {}): Promise<{
    sim: KubeSim;
    cached: KubePort;
    plain: KubePort;
  }> {
    const sim = await startKubeSim({
      controllerIntervalMs: 3_600_000,
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 200,
    });
    stops.push(() => sim.stop());
    for (const name of NAMESPACES)
      sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    const rnd = mulberry32(7);
    for (let i = 0; i < 60; i++)
      sim.store.create(deployment(pick(rnd, NAMESPACES), `d-${i}`, randomLabels(rnd)));
    // A small page: the cache's own list follows `continue` like every other.
    const cached = createKubeAdapter(sim.kubeconfig(), {
      pageSize: 7,
      deploymentCache: { watchTimeoutSeconds: 1 },
    });
    const plain = createKubeAdapter(sim.kubeconfig());
    stops.push(() => cached.close());
    return { sim, cached, plain };
  }

  /** Waits until a read of every Deployment is answered without a request. */
  async function warm(sim: KubeSim, cached: KubePort): Promise<void> {
    await eventually(
      async () => {
        sim.resetRequests();
        await cached.listDeployments();
        return sim.requests().filter(isDeploymentRead).length === 0 ? true : undefined;
      },
      5_000,
      "a read answered from the cache",
    );
  }

  it("answers every read as the API server does, with no request", async () => {
    const { sim, cached, plain } = await world();
    const first = await cached.listDeployments();
    expect(names(first)).toEqual(names(await plain.listDeployments()));
    await warm(sim, cached);

    const rnd = mulberry32(42);
    const sizes: number[] = [];
    for (let i = 0; i < 150; i++) {
      const parts = Array.from({ length: 1 + Math.floor(rnd() * 2) }, () => randomRequirement(rnd));
      const labelSelector = parts.join(",");
      const namespace = rnd() < 0.3 ? pick(rnd, NAMESPACES) : undefined;
      const options = { labelSelector, ...(namespace !== undefined ? { namespace } : {}) };
      const want = names(await plain.listDeployments(options));
      sim.resetRequests();
      const got = names(await cached.listDeployments(options));
      expect(got, `${labelSelector} in ${namespace ?? "every namespace"}`).toEqual(want);
      expect(sim.requests().filter(isDeploymentRead)).toEqual([]);
      sizes.push(want.length);
    }
    // The draws cover empty, partial and whole answers.
    expect(sizes.filter((n) => n === 0).length).toBeGreaterThan(5);
    expect(sizes.filter((n) => n > 0 && n < 60).length).toBeGreaterThan(50);
    // The whole list, twice: the same answer, not rebuilt while nothing changed.
    expect(await cached.listDeployments()).toBe(await cached.listDeployments());
  });

  it("sees a relabelled, a new and a deleted Deployment through the watch", async () => {
    const { sim, cached } = await world();
    await cached.listDeployments();
    await warm(sim, cached);
    const target = stored(sim, "d-0");
    const ns = target.metadata?.namespace ?? "";
    sim.store.update({ ...target, metadata: { ...target.metadata, labels: { tier: "relabelled" } } });
    sim.store.create(deployment("alpha", "fresh", { tier: "relabelled" }));
    sim.store.delete("apps/v1", "Deployment", "alpha", "fresh");
    sim.store.create(deployment("beta", "fresh", { tier: "relabelled" }));
    await eventually(
      async () => {
        const got = names(await cached.listDeployments({ labelSelector: "tier=relabelled" }));
        return got.sort().join() === [`${ns}/d-0`, "beta/fresh"].sort().join() ? true : undefined;
      },
      3_000,
      "the relabelled and the new Deployment",
    );
    sim.resetRequests();
    expect(names(await cached.listDeployments({ labelSelector: "tier=relabelled" })).sort()).toEqual(
      [`${ns}/d-0`, "beta/fresh"].sort(),
    );
    expect(sim.requests().filter(isDeploymentRead)).toEqual([]);
  });

  it("names unstuck as the client of its watch, as of every other request", async () => {
    const { sim, cached } = await world();
    await warm(sim, cached);
    // A 1 s watch ends and is logged by the simulator, as an audit log would record it.
    const watch = await eventually(
      () => sim.requests().find((r) => r.path === DEPLOYMENTS && isWatch(r)),
      5_000,
      "a finished watch of the Deployments",
    );
    expect(watch.userAgent).toMatch(/^unstuck /);
  });

  it("re-lists after 410 Gone and keeps answering what the API server holds", async () => {
    // No bookmark in time: the 1 s watch resumes from the list's revision, which is compacted.
    const { sim, cached, plain } = await world({ bookmarkIntervalMs: 600_000 });
    await cached.listDeployments();
    await warm(sim, cached);
    sim.resetRequests();
    sim.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "bump", namespace: "alpha" } });
    sim.store.compact();
    await eventually(
      () =>
        sim.requests().some((r) => r.method === "GET" && r.path === DEPLOYMENTS && !isWatch(r))
          ? true
          : undefined,
      5_000,
      "the cache's own re-list",
    );
    sim.store.delete("apps/v1", "Deployment", stored(sim, "d-1").metadata?.namespace, "d-1");
    await eventually(
      async () =>
        names(await cached.listDeployments()).join() === names(await plain.listDeployments()).join()
          ? true
          : undefined,
      5_000,
      "the answer after the re-list",
    );
  });

  it("sends a selector it cannot read to the API server, which rejects it", async () => {
    const { sim, cached, plain } = await world();
    await cached.listDeployments();
    await warm(sim, cached);
    const bad = "tier in (web";
    const live = await plain.listDeployments({ labelSelector: bad }).then(
      () => "",
      (e: unknown) => String(e),
    );
    expect(live).not.toBe("");
    sim.resetRequests();
    const viaCache = await cached.listDeployments({ labelSelector: bad }).then(
      () => "",
      (e: unknown) => String(e),
    );
    expect(viaCache).toBe(live);
    expect(sim.requests().filter(isDeploymentRead).length).toBe(1);
  });
});
