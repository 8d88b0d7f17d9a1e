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

/**
 * RBAC on. The real kubectl sends no bearer token over plain HTTP (client-go keeps credentials to
 * TLS), so against the simulator it is always `system:anonymous`; the clients that do send one
 * (client-node, the bot's) are the judges here, and the refusal's wording is the one the forbid
 * rules above share.
 */
describe("kube simulator with RBAC on", () => {
  let sim: KubeSim;
  const SA = "system:serviceaccount:ops:reader";
  let reader: { core: CoreV1Api; net: NetworkingV1Api };
  let admin: CoreV1Api;

  const clients = (user?: string) => {
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfig(user !== undefined ? { user } : {}));
    return { core: kc.makeApiClient(CoreV1Api), net: kc.makeApiClient(NetworkingV1Api) };
  };

  beforeAll(async () => {
    sim = await startKubeSim({ scenario: "test/fixtures/scenarios/seed-incident.yaml", rbac: {} });
    const rbac = "rbac.authorization.k8s.io/v1";
    sim.store.create({
      apiVersion: rbac,
      kind: "ClusterRole",
      metadata: { name: "reader" },
      rules: [
        { apiGroups: [""], resources: ["pods"], verbs: ["list"] },
        {
          apiGroups: ["networking.k8s.io"],
          resources: ["ingresses"],
          verbs: ["get"],
          resourceNames: ["web"],
        },
      ],
    });
    sim.store.create({
      apiVersion: rbac,
      kind: "ClusterRoleBinding",
      metadata: { name: "reader" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "reader" },
      subjects: [{ kind: "ServiceAccount", name: "reader", namespace: "ops" }],
    });
    // A Role in one namespace, bound there to every ServiceAccount of `ops` (a group subject).
    sim.store.create({
      apiVersion: rbac,
      kind: "Role",
      metadata: { name: "cm", namespace: "payments" },
      rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["list"] }],
    });
    sim.store.create({
      apiVersion: rbac,
      kind: "RoleBinding",
      metadata: { name: "cm", namespace: "payments" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "cm" },
      subjects: [
        { kind: "Group", name: "system:serviceaccounts:ops", apiGroup: "rbac.authorization.k8s.io" },
      ],
    });
    reader = clients(SA);
    admin = clients().core;
  });

  afterAll(async () => {
    await sim.stop();
  });

  it("allows what the bindings grant and refuses the rest with the authorizer's message", async () => {
    expect((await reader.core.listPodForAllNamespaces()).items.length).toBeGreaterThan(0);
    expect((await reader.core.listNamespacedConfigMap({ namespace: "payments" })).items).toBeDefined();
    const secrets = await failure(reader.core.listNamespacedSecret({ namespace: "myapp" }));
    expect(secrets.code).toBe(403);
    expect(secrets.body.message).toBe(
      `secrets is forbidden: User "${SA}" cannot list resource "secrets" in API group "" in the namespace "myapp"`,
    );
    // A Role binds in its own namespace only.
    const elsewhere = await failure(reader.core.listNamespacedConfigMap({ namespace: "myapp" }));
    expect(elsewhere.body.message).toContain(`User "${SA}" cannot list resource "configmaps"`);
    // resourceNames: that one object (here, none of that name: 404, not 403), and no other.
    const named = await failure(reader.net.readNamespacedIngress({ name: "web", namespace: "payments" }));
    expect(named.code).toBe(404);
    const other = await failure(
      reader.net.readNamespacedIngress({ name: "myapp-worker-ingress", namespace: "myapp" }),
    );
    expect(other.body.message).toBe(
      `ingresses.networking.k8s.io "myapp-worker-ingress" is forbidden: User "${SA}" cannot get resource "ingresses" in API group "networking.k8s.io" in the namespace "myapp"`,
    );
    // Discovery stays open to every authenticated user.
    expect((await reader.core.getAPIResources()).resources.length).toBeGreaterThan(0);
    // The simulator's own user stands for system:masters.
    expect((await admin.listNamespacedSecret({ namespace: "myapp" })).items).toBeDefined();
  });
});
