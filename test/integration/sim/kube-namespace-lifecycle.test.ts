/* eslint-disable @typescript-eslint/no-unsafe-class-instance-assignment, @typescript-eslint/no-misused-spread --
   client-node's generated models are plain JSON on the wire; its own examples pass object literals. */
/**
 * The simulated namespace controller and garbage collector: upstream's exact deletion
 * conditions, finalizers that hold content (and so the namespace), /finalize, discovery
 * failures, and ownerReference propagation.
 */
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  NetworkingV1Api,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import type { V1Namespace, V1NamespaceCondition } from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";

import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { eventually } from "../../helpers/eventually.js";

const SEED = "test/fixtures/scenarios/seed-incident.yaml";

function clients(sim: KubeSim) {
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  return {
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    net: kc.makeApiClient(NetworkingV1Api),
  };
}

async function readOrNull(core: CoreV1Api, name: string): Promise<V1Namespace | null> {
  try {
    return await core.readNamespace({ name });
  } catch (e) {
    if (e instanceof ApiException && e.code === 404) return null;
    throw e;
  }
}

function condition(ns: V1Namespace | null, type: string): V1NamespaceCondition | undefined {
  return ns?.status?.conditions?.find((c) => c.type === type);
}

const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

describe("namespace lifecycle in the kube simulator", () => {
  let sim: KubeSim | undefined;
  afterEach(async () => {
    await sim?.stop();
    sim = undefined;
  });

  it("seed: shows the exact conditions, and the namespace disappears once the ingress finalizer is removed", async () => {
    sim = await startKubeSim({ scenario: SEED, controllerIntervalMs: 50 });
    const { core, net } = clients(sim);
    await sim.reconcileNow();
    const ns = await core.readNamespace({ name: "myapp" });
    expect(ns.status?.phase).toBe("Terminating");
    expect(condition(ns, "NamespaceContentRemaining")).toMatchObject({
      status: "True",
      reason: "SomeResourcesRemain",
      message: "Some resources are remaining: ingresses.networking.k8s.io has 1 resource instances",
    });
    expect(condition(ns, "NamespaceFinalizersRemaining")).toMatchObject({
      status: "True",
      reason: "SomeFinalizersRemain",
      message:
        "Some content in the namespace has finalizers remaining: ingress.k8s.aws/resources in 1 resource instances",
    });
    expect(condition(ns, "NamespaceDeletionDiscoveryFailure")).toMatchObject({
      status: "False",
      reason: "ResourcesDiscovered",
    });
    // Nothing else removes the finalizer: a reconcile pass changes nothing.
    const rv = ns.metadata?.resourceVersion;
    await sim.reconcileNow();
    expect((await core.readNamespace({ name: "myapp" })).metadata?.resourceVersion).toBe(rv);

    await net.patchNamespacedIngress(
      { name: "myapp-worker-ingress", namespace: "myapp", body: { metadata: { finalizers: [] } } },
      mergePatch,
    );
    await eventually(
      async () => ((await readOrNull(core, "myapp")) === null ? true : undefined),
      5_000,
      "namespace myapp gone",
    );
    const err = await core.readNamespace({ name: "myapp" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiException);
    expect(JSON.parse((err as ApiException<string>).body).message).toBe('namespaces "myapp" not found');
    // other namespaces are untouched
    expect((await core.readNamespace({ name: "payments" })).status?.phase).toBe("Active");
  });

  it("deletes a namespace's content, counts what finalizers hold, and finishes when they are removed", async () => {
    sim = await startKubeSim({ controllerIntervalMs: 50 });
    const { core } = clients(sim);
    const name = `life-${process.pid}`;
    await core.createNamespace({ body: { metadata: { name } } });
    await core.createNamespacedConfigMap({ namespace: name, body: { metadata: { name: "plain" } } });
    for (const p of ["p1", "p2"]) {
      await core.createNamespacedPod({
        namespace: name,
        body: {
          metadata: { name: p, finalizers: ["example.com/hold"] },
          spec: { containers: [{ name: "c", image: "x" }] },
        },
      });
    }
    await core.deleteNamespace({ name });
    const ns = await eventually(async () => {
      const n = await readOrNull(core, name);
      return condition(n, "NamespaceContentRemaining")?.status === "True" ? n : undefined;
    });
    expect(ns?.status?.phase).toBe("Terminating");
    expect(condition(ns, "NamespaceContentRemaining")?.message).toBe(
      "Some resources are remaining: pods. has 2 resource instances",
    );
    expect(condition(ns, "NamespaceFinalizersRemaining")?.message).toBe(
      "Some content in the namespace has finalizers remaining: example.com/hold in 2 resource instances",
    );
    const cms = await core.listNamespacedConfigMap({ namespace: name });
    expect(cms.items).toHaveLength(0);
    const pods = await core.listNamespacedPod({ namespace: name });
    expect(pods.items.every((p) => p.metadata?.deletionTimestamp instanceof Date)).toBe(true);

    // new content is refused while terminating
    const refused = await core
      .createNamespacedConfigMap({ namespace: name, body: { metadata: { name: "late" } } })
      .then(
        () => {
          throw new Error("expected a failure");
        },
        (e: unknown) => e as ApiException<string>,
      );
    expect(refused.code).toBe(403);
    expect(JSON.parse(refused.body).message).toBe(
      `configmaps "late" is forbidden: unable to create new content in namespace ${name} because it is being terminated`,
    );

    await core.patchNamespacedPod(
      { name: "p1", namespace: name, body: { metadata: { finalizers: null } } },
      mergePatch,
    );
    await eventually(async () => {
      const n = await readOrNull(core, name);
      return condition(n, "NamespaceContentRemaining")?.message?.includes("has 1 resource instances") === true
        ? n
        : undefined;
    });
    await core.patchNamespacedPod(
      { name: "p2", namespace: name, body: { metadata: { finalizers: null } } },
      mergePatch,
    );
    await eventually(
      async () => ((await readOrNull(core, name)) === null ? true : undefined),
      5_000,
      "namespace gone",
    );
  });

  it("an unavailable API group blocks deletion with NamespaceDeletionDiscoveryFailure until it recovers", async () => {
    sim = await startKubeSim({
      controllerIntervalMs: 50,
      faults: { failingGroups: ["metrics.k8s.io/v1beta1"] },
    });
    const { core } = clients(sim);
    const name = `disc-${process.pid}`;
    await core.createNamespace({ body: { metadata: { name } } });
    await core.deleteNamespace({ name });
    const ns = await eventually(async () => {
      const n = await readOrNull(core, name);
      return condition(n, "NamespaceDeletionDiscoveryFailure")?.status === "True" ? n : undefined;
    });
    expect(condition(ns, "NamespaceDeletionDiscoveryFailure")).toMatchObject({
      reason: "DiscoveryFailed",
      message:
        "Discovery failed for some groups, 1 failing: unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: stale GroupVersion discovery: metrics.k8s.io/v1beta1",
    });
    expect(condition(ns, "NamespaceContentRemaining")).toMatchObject({
      status: "False",
      reason: "ContentRemoved",
    });
    await sim.reconcileNow();
    expect(await readOrNull(core, name)).not.toBeNull();
    sim.setFaults({});
    await eventually(
      async () => ((await readOrNull(core, name)) === null ? true : undefined),
      5_000,
      "namespace gone",
    );
  });

  it("finalize is the only way to change spec.finalizers", async () => {
    sim = await startKubeSim({ controllerIntervalMs: 60_000 });
    const { core } = clients(sim);
    const name = `fin-${process.pid}`;
    const created = await core.createNamespace({ body: { metadata: { name } } });
    expect(created.spec?.finalizers).toEqual(["kubernetes"]);
    const updated = await core.replaceNamespace({ name, body: { ...created, spec: { finalizers: [] } } });
    expect(updated.spec?.finalizers).toEqual(["kubernetes"]);
    // an empty namespace held only by a custom spec finalizer: the controller cannot finish it
    await core.replaceNamespaceFinalize({
      name,
      body: { metadata: { name }, spec: { finalizers: ["kubernetes", "example.com/x"] } },
    });
    await core.deleteNamespace({ name });
    await sim.reconcileNow();
    const held = await core.readNamespace({ name });
    expect(held.spec?.finalizers).toEqual(["example.com/x"]);
    expect(held.status?.phase).toBe("Terminating");
    await core.replaceNamespaceFinalize({ name, body: { metadata: { name }, spec: { finalizers: [] } } });
    expect(await readOrNull(core, name)).toBeNull();
  });

  it("garbage-collects dependents: background, foreground and orphan propagation", async () => {
    sim = await startKubeSim({ controllerIntervalMs: 60_000 });
    const { apps, core } = clients(sim);
    const ns = "default";
    const family = async (prefix: string) => {
      const d = await apps.createNamespacedDeployment({
        namespace: ns,
        body: {
          metadata: { name: `${prefix}-d` },
          spec: {
            selector: { matchLabels: { a: prefix } },
            template: {
              metadata: { labels: { a: prefix } },
              spec: { containers: [{ name: "c", image: "x" }] },
            },
          },
        },
      });
      const owner = (kind: string, o: { metadata?: { name?: string; uid?: string } }, apiVersion: string) => [
        {
          apiVersion,
          kind,
          name: o.metadata?.name ?? "",
          uid: o.metadata?.uid ?? "",
          controller: true,
          blockOwnerDeletion: true,
        },
      ];
      const rs = await apps.createNamespacedReplicaSet({
        namespace: ns,
        body: {
          metadata: { name: `${prefix}-rs`, ownerReferences: owner("Deployment", d, "apps/v1") },
          spec: { selector: { matchLabels: { a: prefix } } },
        },
      });
      await core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: {
            name: `${prefix}-pod`,
            ownerReferences: owner("ReplicaSet", rs, "apps/v1"),
            finalizers: ["example.com/drain"],
          },
          spec: { containers: [{ name: "c", image: "x" }] },
        },
      });
    };
    const exists = (kind: string, name: string) =>
      sim!.store.get(kind === "Pod" ? "v1" : "apps/v1", kind, ns, name) !== undefined;

    await family("bg");
    await apps.deleteNamespacedDeployment({ name: "bg-d", namespace: ns, propagationPolicy: "Background" });
    expect(exists("Deployment", "bg-d")).toBe(false);
    expect(exists("ReplicaSet", "bg-rs")).toBe(false);
    expect(sim.store.get("v1", "Pod", ns, "bg-pod")?.metadata?.deletionTimestamp).toBeTruthy();

    await family("fg");
    await apps.deleteNamespacedDeployment({ name: "fg-d", namespace: ns, propagationPolicy: "Foreground" });
    const fg = sim.store.get("apps/v1", "Deployment", ns, "fg-d");
    expect(fg?.metadata?.finalizers).toEqual(["foregroundDeletion"]);
    expect(fg?.metadata?.deletionTimestamp).toBeTruthy();
    // the pod's own finalizer holds the replicaset, which holds the deployment
    expect(exists("ReplicaSet", "fg-rs")).toBe(true);
    await core.patchNamespacedPod(
      { name: "fg-pod", namespace: ns, body: { metadata: { finalizers: null } } },
      mergePatch,
    );
    expect(exists("Pod", "fg-pod")).toBe(false);
    expect(exists("ReplicaSet", "fg-rs")).toBe(false);
    expect(exists("Deployment", "fg-d")).toBe(false);

    await family("or");
    await apps.deleteNamespacedDeployment({ name: "or-d", namespace: ns, propagationPolicy: "Orphan" });
    expect(exists("Deployment", "or-d")).toBe(false);
    const rs = sim.store.get("apps/v1", "ReplicaSet", ns, "or-rs");
    expect(rs?.metadata?.deletionTimestamp).toBeUndefined();
    expect(rs?.metadata?.ownerReferences).toBeUndefined();
  });

  it("refuses new finalizers on an object being deleted", async () => {
    sim = await startKubeSim({ controllerIntervalMs: 60_000 });
    const { core } = clients(sim);
    await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "f", finalizers: ["a/b"] } },
    });
    await core.deleteNamespacedConfigMap({ name: "f", namespace: "default" });
    const err = await core
      .patchNamespacedConfigMap(
        { name: "f", namespace: "default", body: { metadata: { finalizers: ["a/b", "c/d"] } } },
        mergePatch,
      )
      .then(
        () => {
          throw new Error("expected a failure");
        },
        (e: unknown) => e as ApiException<string>,
      );
    expect(err.code).toBe(422);
    expect(JSON.parse(err.body).message).toContain(
      "no new finalizers can be added if the object is being deleted",
    );
  });
});
