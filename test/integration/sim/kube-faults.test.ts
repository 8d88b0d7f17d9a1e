/**
 * Fault injection: latency, 500s, 429 with Retry-After, RBAC 403s, unavailable API groups, and
 * the request log that tests and benchmarks count calls with.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiException, CoreV1Api, KubeConfig, NetworkingV1Api } from "@kubernetes/client-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { kubectl } from "../../sim/kube/testing.js";

async function failure(
  p: Promise<unknown>,
): Promise<{ code: number; body: Record<string, unknown>; headers: Record<string, string> }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiException) {
      return {
        code: e.code,
        body: JSON.parse(e.body as string) as Record<string, unknown>,
        headers: e.headers,
      };
    }
    throw e;
  }
  throw new Error("expected a failure");
}

describe("kube simulator faults", () => {
  let sim: KubeSim;
  let core: CoreV1Api;
  let net: NetworkingV1Api;
  let dir: string;

  beforeAll(async () => {
    sim = await startKubeSim({ scenario: "test/fixtures/scenarios/seed-incident.yaml" });
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfig());
    core = kc.makeApiClient(CoreV1Api);
    net = kc.makeApiClient(NetworkingV1Api);
    dir = await mkdtemp(join(tmpdir(), "kube-sim-faults-"));
  });
  afterAll(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    sim.setFaults({});
  });

  it("adds latency to every request", async () => {
    const t0 = performance.now();
    await core.readNamespace({ name: "default" });
    const fast = performance.now() - t0;
    sim.setFaults({ latencyMs: 150 });
    const t1 = performance.now();
    await core.readNamespace({ name: "default" });
    const slow = performance.now() - t1;
    expect(slow).toBeGreaterThanOrEqual(150);
    expect(slow).toBeGreaterThan(fast);
  });

  it("answers a fraction of requests with 500 InternalError", async () => {
    sim.setFaults({ errorRate: 1 });
    const err = await failure(core.listNamespace());
    expect(err.code).toBe(500);
    expect(err.body).toMatchObject({ kind: "Status", status: "Failure", reason: "InternalError", code: 500 });
    expect(String(err.body.message)).toMatch(/^Internal error occurred: /);
    sim.setFaults({ errorRate: 0.5 });
    const results = await Promise.allSettled(
      Array.from({ length: 60 }, () => core.readNamespace({ name: "default" })),
    );
    const failed = results.filter((r) => r.status === "rejected").length;
    expect(failed).toBeGreaterThan(5);
    expect(failed).toBeLessThan(55);
  });

  it("throttles the next N requests with 429, Retry-After and a TooManyRequests Status", async () => {
    sim.setFaults({ throttle: { count: 2, retryAfterSeconds: 1 } });
    for (let i = 0; i < 2; i++) {
      const err = await failure(core.readNamespace({ name: "default" }));
      expect(err.code).toBe(429);
      expect(err.headers["retry-after"]).toBe("1");
      expect(err.body).toMatchObject({
        reason: "TooManyRequests",
        code: 429,
        details: { retryAfterSeconds: 1 },
      });
    }
    expect((await core.readNamespace({ name: "default" })).metadata?.name).toBe("default");
  });

  it("forbids by rule with the RBAC authorizer's exact message", async () => {
    sim.setFaults({
      forbid: [{ verb: "list", resource: "ingresses", group: "networking.k8s.io", namespace: "myapp" }],
    });
    const err = await failure(net.listNamespacedIngress({ namespace: "myapp" }));
    expect(err.code).toBe(403);
    expect(err.body).toMatchObject({
      reason: "Forbidden",
      message:
        'ingresses.networking.k8s.io is forbidden: User "unstuck" cannot list resource "ingresses" in API group "networking.k8s.io" in the namespace "myapp"',
      details: { group: "networking.k8s.io", kind: "ingresses" },
    });
    // other verbs and namespaces still work
    expect(
      (await net.readNamespacedIngress({ name: "myapp-worker-ingress", namespace: "myapp" })).metadata?.name,
    ).toBe("myapp-worker-ingress");
    expect((await net.listNamespacedIngress({ namespace: "payments" })).items).toHaveLength(1);

    sim.setFaults({
      forbid: [
        { verb: "get", resource: "pods/log" },
        { verb: "delete", resource: "namespaces" },
      ],
    });
    const log = await failure(
      core.readNamespacedPodLog({ name: "coredns-7bf648ff5d-8lq4x", namespace: "kube-system" }),
    );
    expect(log.body.message).toBe(
      'pods "coredns-7bf648ff5d-8lq4x" is forbidden: User "unstuck" cannot get resource "pods/log" in API group "" in the namespace "kube-system"',
    );
    const del = await failure(core.deleteNamespace({ name: "payments" }));
    expect(del.body.message).toBe(
      'namespaces "payments" is forbidden: User "unstuck" cannot delete resource "namespaces" in API group "" at the cluster scope',
    );
  });

  it("names the user of the kubeconfig in RBAC denials", async () => {
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfig({ user: "oncall-bot" }));
    sim.setFaults({ forbid: [{ verb: "get", resource: "namespaces", user: "oncall-bot" }] });
    const err = await failure(kc.makeApiClient(CoreV1Api).readNamespace({ name: "default" }));
    expect(err.body.message).toBe(
      'namespaces "default" is forbidden: User "oncall-bot" cannot get resource "namespaces" in API group "" at the cluster scope',
    );
    expect((await core.readNamespace({ name: "default" })).metadata?.name).toBe("default");
  });

  it("keeps a failing group in /apis while its discovery answers 503 (stale in aggregated discovery)", async () => {
    sim.setFaults({ failingGroups: ["metrics.k8s.io/v1beta1"] });
    const groups = (await (await fetch(`${sim.url}/apis`)).json()) as { groups: { name: string }[] };
    expect(groups.groups.map((g) => g.name)).toContain("metrics.k8s.io");
    const gv = await fetch(`${sim.url}/apis/metrics.k8s.io/v1beta1`);
    expect(gv.status).toBe(503);
    // kubectl ≥ 1.26 reads aggregated discovery, where the group-version is Stale with no
    // resources: it lists everything else and none of the failing group's types.
    const kcPath = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kcPath);
    const r = await kubectl(kcPath, join(dir, "cache"), ["api-resources", "-o", "wide"]);
    expect(r.stdout).toContain("ingresses");
    expect(r.stdout).not.toContain("metrics.k8s.io");
    const svc = sim.store.get("apiregistration.k8s.io/v1", "APIService", undefined, "v1beta1.metrics.k8s.io");
    expect(JSON.stringify(svc?.status)).toContain("FailedDiscoveryCheck");
  });

  it("records every request with method, path and status", async () => {
    sim.resetRequests();
    await core.readNamespace({ name: "default" });
    await failure(core.readNamespace({ name: "absent" }));
    await net.listNamespacedIngress({ namespace: "myapp" });
    expect(sim.requests().map(({ method, path, status }) => ({ method, path, status }))).toEqual([
      { method: "GET", path: "/api/v1/namespaces/default", status: 200 },
      { method: "GET", path: "/api/v1/namespaces/absent", status: 404 },
      { method: "GET", path: "/apis/networking.k8s.io/v1/namespaces/myapp/ingresses", status: 200 },
    ]);
  });
});
