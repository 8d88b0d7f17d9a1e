/**
 * The simulated endpoints and EndpointSlice controllers, read back with the real kubectl: a
 * Service with a selector has an Endpoints object and a controller-managed slice even with no pod,
 * its pods' addresses once they run, and loses both with the Service; one without a selector gets
 * nothing.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { kubectl, type KubectlResult } from "../../sim/kube/testing.js";
import { eventually } from "../../helpers/eventually.js";

const NS = "ep-test";

describe("endpoints controllers in the kube simulator", () => {
  let sim: KubeSim;
  let dir: string;
  let k: (...args: string[]) => Promise<KubectlResult>;
  const json = async (...args: string[]) => {
    const r = await k("-n", NS, ...args, "-o", "json");
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as Record<string, unknown> & { items?: Record<string, unknown>[] };
  };

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 50 });
    dir = await mkdtemp(join(tmpdir(), "kube-sim-endpoints-"));
    await sim.writeKubeconfig(join(dir, "kubeconfig"));
    k = (...args) => kubectl(join(dir, "kubeconfig"), join(dir, "cache"), args);
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    sim.store.create({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: NS, labels: { app: "web" } },
      spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: "http" }] },
    });
    sim.store.create({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "external", namespace: NS },
      spec: { ports: [{ port: 5432 }] },
    });
    await sim.reconcileNow();
  });
  afterAll(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("gives a selector Service an Endpoints without subsets and a placeholder slice while no pod matches", async () => {
    const ep = await json("get", "endpoints", "web");
    expect(ep.subsets).toBeUndefined();
    expect((ep.metadata as { labels: Record<string, string> }).labels).toEqual({ app: "web" });
    const slices = (await json("get", "endpointslices", "-l", "kubernetes.io/service-name=web")).items ?? [];
    expect(slices).toHaveLength(1);
    const slice = slices[0] as {
      metadata: {
        name: string;
        labels: Record<string, string>;
        ownerReferences: { kind: string; name: string }[];
      };
      endpoints: unknown;
    };
    expect(slice.metadata.name).toMatch(/^web-[a-z0-9]{5}$/);
    expect(slice.metadata.labels["endpointslice.kubernetes.io/managed-by"]).toBe(
      "endpointslice-controller.k8s.io",
    );
    expect(slice.metadata.ownerReferences[0]).toMatchObject({ kind: "Service", name: "web" });
    expect(slice.endpoints).toBeNull();
    // A Service without a selector: its endpoints are someone else's.
    const none = await k("-n", NS, "get", "endpoints", "external");
    expect(none.stderr.trim()).toBe('Error from server (NotFound): endpoints "external" not found');
  });

  it("lists a ready pod's address, resolving the named target port, and a not-ready one apart", async () => {
    const pod = (name: string, ip: string, ready: boolean) =>
      sim.store.create({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace: NS, labels: { app: "web" } },
        spec: {
          containers: [{ name: "web", image: "nginx:1.27", ports: [{ name: "http", containerPort: 8080 }] }],
        },
        status: {
          phase: "Running",
          podIP: ip,
          conditions: [{ type: "Ready", status: ready ? "True" : "False" }],
        },
      });
    pod("web-a", "10.0.1.5", true);
    pod("web-b", "10.0.1.6", false);
    await sim.reconcileNow();
    const ep = (await json("get", "endpoints", "web")) as {
      subsets: {
        addresses: { ip: string }[];
        notReadyAddresses: { ip: string }[];
        ports: { port: number }[];
      }[];
    };
    expect(ep.subsets[0]?.addresses.map((a) => a.ip)).toEqual(["10.0.1.5"]);
    expect(ep.subsets[0]?.notReadyAddresses.map((a) => a.ip)).toEqual(["10.0.1.6"]);
    expect(ep.subsets[0]?.ports).toEqual([{ name: "http", port: 8080, protocol: "TCP" }]);
    const slice = ((await json("get", "endpointslices", "-l", "kubernetes.io/service-name=web")).items ??
      [])[0] as {
      endpoints: { addresses: string[]; conditions: { ready: boolean } }[];
    };
    expect(slice.endpoints.map((e) => `${e.addresses[0] ?? ""}=${String(e.conditions.ready)}`)).toEqual([
      "10.0.1.5=true",
      "10.0.1.6=false",
    ]);
  });

  it("deletes the Endpoints with the Service, and the garbage collector its slice", async () => {
    const del = await k("-n", NS, "delete", "service", "web");
    expect(del.code, del.stderr).toBe(0);
    await eventually(() =>
      sim.store.get("v1", "Endpoints", NS, "web") === undefined &&
      sim.store.list("discovery.k8s.io/v1", "EndpointSlice", NS).length === 0
        ? true
        : undefined,
    );
  });
});
