/* eslint-disable @typescript-eslint/no-unsafe-class-instance-assignment, @typescript-eslint/no-misused-spread --
   client-node's generated models are plain JSON on the wire; its own examples pass object literals. */
/**
 * @kubernetes/client-node 1.4 against the simulator: typed APIs, custom objects, the generic
 * object API, selectors, pagination, logs, optimistic concurrency and JSON-patch tests.
 */
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  NetworkingV1Api,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";

const SEED = "test/fixtures/scenarios/seed-incident.yaml";

async function apiError(p: Promise<unknown>): Promise<{ code: number; body: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiException) {
      const body =
        typeof e.body === "string"
          ? (JSON.parse(e.body) as Record<string, unknown>)
          : (e.body as Record<string, unknown>);
      return { code: e.code, body };
    }
    throw e;
  }
  throw new Error("expected the call to fail");
}

describe("client-node against the kube simulator (seed scenario)", () => {
  let sim: KubeSim;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  let net: NetworkingV1Api;
  let custom: CustomObjectsApi;
  let objects: KubernetesObjectApi;
  const ns = `cn-${process.pid}`;

  beforeAll(async () => {
    sim = await startKubeSim({ scenario: SEED, controllerIntervalMs: 50 });
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfig());
    core = kc.makeApiClient(CoreV1Api);
    apps = kc.makeApiClient(AppsV1Api);
    net = kc.makeApiClient(NetworkingV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
    objects = KubernetesObjectApi.makeApiClient(kc);
    await core.createNamespace({ body: { metadata: { name: ns } } });
  });
  afterAll(async () => {
    await sim.stop();
  });

  it("reads the terminating namespace and the blocking ingress", async () => {
    const myapp = await core.readNamespace({ name: "myapp" });
    expect(myapp.status?.phase).toBe("Terminating");
    expect(myapp.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    expect(myapp.spec?.finalizers).toEqual(["kubernetes"]);
    const ing = await net.readNamespacedIngress({ name: "myapp-worker-ingress", namespace: "myapp" });
    expect(ing.metadata?.finalizers).toEqual(["ingress.k8s.aws/resources"]);
    expect(ing.spec?.ingressClassName).toBe("alb");
    expect(ing.status?.loadBalancer?.ingress?.[0]?.hostname).toBe(
      "k8s-myapp-myappwor-0733a56cbb-1559597038.ap-northeast-2.elb.amazonaws.com",
    );
    expect(ing.metadata?.annotations?.["argocd.argoproj.io/tracking-id"]).toBe(
      "myapp-worker:networking.k8s.io/Ingress:myapp/myapp-worker-ingress",
    );
    // the ingress was marked for deletion after its namespace
    expect(ing.metadata!.deletionTimestamp!.getTime()).toBeGreaterThan(
      myapp.metadata!.deletionTimestamp!.getTime(),
    );
  });

  it("finds both load balancer controllers by label across namespaces, and their pods", async () => {
    const list = await apps.listDeploymentForAllNamespaces({
      labelSelector: "app.kubernetes.io/name=aws-load-balancer-controller",
    });
    expect(list.items.map((d) => d.metadata?.name).sort()).toEqual([
      "aws-load-balancer-controller",
      "myapp-aws-load-balancer-controller",
    ]);
    for (const d of list.items) {
      expect(d.spec?.template.spec?.containers[0]?.args).toEqual([
        "--cluster-name=prod-eks",
        "--ingress-class=alb",
      ]);
      expect(d.status?.readyReplicas).toBe(2);
      const pods = await core.listNamespacedPod({
        namespace: "kube-system",
        labelSelector: `app.kubernetes.io/instance=${d.metadata?.name ?? ""}`,
      });
      expect(pods.items).toHaveLength(2);
    }
  });

  it("reads controller logs with tailLines", async () => {
    const pods = await core.listNamespacedPod({
      namespace: "kube-system",
      labelSelector: "app.kubernetes.io/instance=aws-load-balancer-controller",
    });
    const texts = await Promise.all(
      pods.items.map((p) =>
        core.readNamespacedPodLog({
          name: p.metadata?.name ?? "",
          namespace: "kube-system",
          container: "aws-load-balancer-controller",
          tailLines: 50,
        }),
      ),
    );
    const errors = texts
      .join("")
      .split("\n")
      .filter((l) => l.includes('"Reconciler error"'))
      .map((l) => JSON.parse(l) as { name: string; namespace: string; error: string; ts: string });
    expect(errors.length).toBeGreaterThanOrEqual(2);
    for (const e of errors) {
      expect(e).toMatchObject({
        name: "myapp-worker-ingress",
        namespace: "myapp",
        error: "failed to delete securityGroup: timed out waiting for the condition",
      });
      expect(Date.now() - new Date(e.ts).getTime()).toBeLessThan(40 * 60_000);
    }
    const last = await core.readNamespacedPodLog({
      name: pods.items[0]?.metadata?.name ?? "",
      namespace: "kube-system",
      tailLines: 1,
    });
    expect(last.trim().split("\n")).toHaveLength(1);
  });

  it("supports set-based and negated label selectors and field selectors", async () => {
    const mk = (name: string, labels: Record<string, string>) =>
      core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name, labels } } });
    await mk("a", { tier: "web", env: "prod" });
    await mk("b", { tier: "db", env: "prod" });
    await mk("c", { tier: "cache" });
    const names = async (labelSelector?: string, fieldSelector?: string) =>
      (await core.listNamespacedConfigMap({ namespace: ns, labelSelector, fieldSelector })).items.map(
        (i) => i.metadata?.name,
      );
    expect(await names("tier in (web,db)")).toEqual(["a", "b"]);
    // The namespace's CA bundle (`kube-root-ca.crt`) has no labels: `notin` and `!` match it.
    expect(await names("tier notin (web)")).toEqual(["b", "c", "kube-root-ca.crt"]);
    expect(await names("env")).toEqual(["a", "b"]);
    expect(await names("!env")).toEqual(["c", "kube-root-ca.crt"]);
    expect(await names("env==prod,tier!=db")).toEqual(["a"]);
    expect(await names(undefined, "metadata.name=b")).toEqual(["b"]);
    expect(await names(undefined, "metadata.name!=b")).toEqual(["a", "c", "kube-root-ca.crt"]);
    const running = await core.listPodForAllNamespaces({ fieldSelector: "status.phase=Running" });
    expect(running.items.length).toBeGreaterThan(0);
    expect(running.items.every((p) => p.status?.phase === "Running")).toBe(true);
    const events = await core.listNamespacedEvent({
      namespace: "payments",
      fieldSelector: "involvedObject.kind=Pod,involvedObject.name=payments-api-59d8c7f7b9-x7wqp",
    });
    expect(events.items.map((e) => e.reason)).toEqual(["BackOff"]);
    const bad = await apiError(core.listNamespacedConfigMap({ namespace: ns, fieldSelector: "data.x=1" }));
    expect(bad.code).toBe(400);
  });

  it("pages with limit and continue, with remainingItemCount", async () => {
    for (let i = 0; i < 7; i++) {
      await core.createNamespacedSecret({
        namespace: ns,
        body: { metadata: { name: `s-${i}` }, stringData: { k: "v" } },
      });
    }
    const seen: string[] = [];
    let token: string | undefined;
    const remaining: (number | undefined)[] = [];
    do {
      const page = await core.listNamespacedSecret({ namespace: ns, limit: 3, _continue: token });
      seen.push(...page.items.map((s) => s.metadata?.name ?? ""));
      remaining.push(page.metadata?.remainingItemCount);
      token = page.metadata?._continue;
      expect(page.metadata?.resourceVersion).toBeTruthy();
    } while (token !== undefined && token !== "");
    expect(seen).toEqual(["s-0", "s-1", "s-2", "s-3", "s-4", "s-5", "s-6"]);
    expect(remaining).toEqual([4, 1, undefined]);
  });

  it("answers a stale update with the real 409 Conflict", async () => {
    const cm = await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: "cas" }, data: { v: "1" } },
    });
    const first = await core.replaceNamespacedConfigMap({
      name: "cas",
      namespace: ns,
      body: { ...cm, data: { v: "2" } },
    });
    expect(Number(first.metadata?.resourceVersion)).toBeGreaterThan(Number(cm.metadata?.resourceVersion));
    const err = await apiError(
      core.replaceNamespacedConfigMap({ name: "cas", namespace: ns, body: { ...cm, data: { v: "3" } } }),
    );
    expect(err.code).toBe(409);
    expect(err.body).toMatchObject({
      kind: "Status",
      status: "Failure",
      reason: "Conflict",
      message:
        'Operation cannot be fulfilled on configmaps "cas": the object has been modified; please apply your changes to the latest version and try again',
      details: { name: "cas", kind: "configmaps" },
    });
    const dup = await apiError(
      core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "cas" } } }),
    );
    expect(dup.code).toBe(409);
    expect(dup.body.reason).toBe("AlreadyExists");
  });

  it("rejects a JSON patch whose test fails with 422 and leaves the object unchanged", async () => {
    const before = await net.readNamespacedIngress({ name: "myapp-worker-ingress", namespace: "myapp" });
    const err = await apiError(
      net.patchNamespacedIngress(
        {
          name: "myapp-worker-ingress",
          namespace: "myapp",
          body: [
            { op: "test", path: "/metadata/resourceVersion", value: "1" },
            { op: "replace", path: "/metadata/finalizers", value: [] },
          ],
        },
        setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
      ),
    );
    expect(err.code).toBe(422);
    // Exactly what a real API server sends: the json-patch error itself is not passed on.
    expect(err.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      reason: "Invalid",
      message: "the server rejected our request due to an error in our request",
      details: {},
      code: 422,
    });
    const after = await net.readNamespacedIngress({ name: "myapp-worker-ingress", namespace: "myapp" });
    expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
    expect(after.metadata?.finalizers).toEqual(["ingress.k8s.aws/resources"]);
  });

  it("applies a JSON patch whose tests pass (the bot's finalizer removal), with move/copy/add", async () => {
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: "jp", finalizers: ["x/y"] }, data: { a: "1" } },
    });
    const cur = await core.readNamespacedConfigMap({ name: "jp", namespace: ns });
    const patched = await core.patchNamespacedConfigMap(
      {
        name: "jp",
        namespace: ns,
        body: [
          { op: "test", path: "/metadata/resourceVersion", value: cur.metadata?.resourceVersion },
          { op: "test", path: "/metadata/finalizers", value: ["x/y"] },
          { op: "copy", from: "/data/a", path: "/data/b" },
          { op: "move", from: "/data/a", path: "/data/c" },
          { op: "add", path: "/data/d", value: "4" },
          { op: "remove", path: "/metadata/finalizers" },
        ],
      },
      setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
    );
    expect(patched.data).toEqual({ b: "1", c: "1", d: "4" });
    expect(patched.metadata?.finalizers).toBeUndefined();
  });

  it("lists and reads custom objects and generic objects", async () => {
    const apps2 = (await custom.listNamespacedCustomObject({
      group: "argoproj.io",
      version: "v1alpha1",
      namespace: "argocd",
      plural: "applications",
    })) as { items: { metadata: { name: string }; kind: string }[] };
    expect(apps2.items.map((a) => a.metadata.name)).toEqual(["myapp-api", "myapp-worker"]);
    expect(apps2.items[0]?.kind).toBe("Application");
    const ing = await objects.read({
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: "myapp-worker-ingress", namespace: "myapp" },
    });
    expect(ing.metadata?.finalizers).toEqual(["ingress.k8s.aws/resources"]);
    const created = await objects.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "generic", namespace: ns },
      data: { x: "1" },
    } as KubernetesObject);
    expect(created.metadata?.uid).toBeTruthy();
    const listed = await objects.list("v1", "ConfigMap", ns);
    expect(listed.items.some((i) => i.metadata?.name === "generic")).toBe(true);
    await objects.delete({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "generic", namespace: ns },
    });
    const gone = await apiError(core.readNamespacedConfigMap({ name: "generic", namespace: ns }));
    expect(gone.code).toBe(404);
    expect(gone.body.message).toBe('configmaps "generic" not found');
  });

  it("answers 404 with the real Status for a missing ingress, on read and delete", async () => {
    for (const call of [
      net.readNamespacedIngress({ name: "nope", namespace: ns }),
      net.deleteNamespacedIngress({ name: "nope", namespace: ns }),
    ]) {
      const err = await apiError(call);
      expect(err.code).toBe(404);
      expect(err.body).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: 'ingresses.networking.k8s.io "nope" not found',
        reason: "NotFound",
        details: { name: "nope", group: "networking.k8s.io", kind: "ingresses" },
        code: 404,
      });
    }
  });
});
