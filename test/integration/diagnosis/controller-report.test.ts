/**
 * The namespace controller's own report first: in a cluster serving many types, a Terminating
 * namespace whose `NamespaceContentRemaining` / `NamespaceFinalizersRemaining` conditions name a
 * few types is diagnosed by listing only those (plus its Events), counted at the simulator; a
 * report that disagrees with what the lists find, or that is missing, falls back to listing every
 * type — and the diagnosis says which path it took and why, in `--json`, the terminal and Slack.
 * The controllers' Deployments are read by their labels, only when a finalizer names one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ownersOf } from "../../../src/diagnosis/owners.js";
import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../../src/kube/port.js";
import { renderDiagnosisText } from "../../../src/render/diagnosis-text.js";
import { renderDiagnosisBlocks, renderDiagnosisDetails } from "../../../src/slack/blocks/diagnosis.js";
import { startKubeSim, type KubeSim, type RequestRecord } from "../../sim/kube/index.js";
import { eventually } from "../../helpers/eventually.js";

const GROUP = "many.example.com";
/** Namespaced custom types served besides the built-in ones. */
const EXTRA_TYPES = 150;
const NOW = () => new Date();

function crd(i: number) {
  const plural = `kind${String(i).padStart(3, "0")}s`;
  const kind = `Kind${String(i).padStart(3, "0")}`;
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

/** The three conditions the controller writes as `False` when all is well. */
const QUIET = [
  {
    type: "NamespaceDeletionDiscoveryFailure",
    status: "False",
    reason: "ResourcesDiscovered",
    message: "All resources successfully discovered",
  },
  {
    type: "NamespaceDeletionGroupVersionParsingFailure",
    status: "False",
    reason: "ParsedGroupVersions",
    message: "All legacy kube types successfully parsed",
  },
  {
    type: "NamespaceDeletionContentFailure",
    status: "False",
    reason: "ContentDeleted",
    message: "All content successfully deleted, may be waiting on finalization",
  },
];

describe("the namespace controller's report first", () => {
  let sim: KubeSim;
  let kube: KubePort;
  let namespacedTypes: number;

  /** Every request the simulator served for one diagnosis with a fresh adapter (discovery included). */
  const diagnoseCounted = async (name: string) => {
    const fresh = createKubeAdapter(sim.kubeconfig(), { maxAttempts: 1 });
    sim.resetRequests();
    const d = await diagnoseNamespace(fresh, name, { now: NOW });
    return { d, requests: sim.requests() };
  };
  const lists = (requests: readonly RequestRecord[], ns: string) =>
    requests.filter((r) => r.method === "GET" && r.path.includes(`/namespaces/${ns}/`));
  const deploymentLists = (requests: readonly RequestRecord[]) =>
    requests.filter((r) => r.method === "GET" && r.path.endsWith("/deployments"));

  /** A Terminating namespace whose conditions are the test's: the controller does not reconcile it. */
  const loadHeld = (name: string, conditions: readonly object[]) => {
    sim.store.load({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name, deletionTimestamp: new Date(Date.now() - 3_600_000).toISOString() },
      // Without `kubernetes` in spec.finalizers the namespace controller leaves it alone.
      spec: { finalizers: ["example.com/tenant-hold"] },
      status: { phase: "Terminating", conditions },
    });
  };
  /** An object the namespace controller deleted and its finalizer still holds. */
  const held = (ns: string, apiVersion: string, kind: string, name: string, finalizer: string) =>
    sim.store.load({
      apiVersion,
      kind,
      metadata: {
        name,
        namespace: ns,
        finalizers: [finalizer],
        deletionTimestamp: new Date(Date.now() - 3_000_000).toISOString(),
      },
    });

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
    kube = createKubeAdapter(sim.kubeconfig(), { maxAttempts: 1 });
    const { store } = sim;
    for (let i = 0; i < EXTRA_TYPES; i++) store.create(crd(i));
    // Many Deployments elsewhere in the cluster, none of them a controller of these finalizers.
    store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "workloads" } });
    for (let i = 0; i < 30; i++) {
      store.create({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: `app-${String(i)}`, namespace: "workloads", labels: { app: `app-${String(i)}` } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: `app-${String(i)}` } },
          template: {
            metadata: { labels: { app: `app-${String(i)}` } },
            spec: { containers: [{ name: "app", image: "example.com/app:1" }] },
          },
        },
      });
    }

    // Reported by the real (simulated) controller: three types left, each held by a finalizer.
    store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "few-left" } });
    store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "cm", namespace: "few-left", finalizers: ["example.com/config-sync"] },
    });
    store.create({
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "deployer", namespace: "few-left", finalizers: ["example.com/token-sync"] },
    });
    for (const n of ["a", "b"]) {
      store.create({
        apiVersion: `${GROUP}/v1`,
        kind: "Kind007",
        metadata: { name: n, namespace: "few-left", finalizers: [`${GROUP}/cleanup`] },
      });
    }
    // Unfinalized content the controller deletes.
    store.create({ apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace: "few-left" } });

    // An Ingress held by the Load Balancer Controller's finalizer; the controller is installed.
    store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "edge-left" } });
    store.create({
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: "web", namespace: "edge-left", finalizers: ["ingress.k8s.aws/resources"] },
      spec: { ingressClassName: "alb" },
    });
    store.create({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {
        name: "aws-load-balancer-controller",
        namespace: "kube-system",
        labels: { "app.kubernetes.io/name": "aws-load-balancer-controller" },
      },
      spec: {
        replicas: 1,
        selector: { matchLabels: { "app.kubernetes.io/name": "aws-load-balancer-controller" } },
        template: {
          metadata: { labels: { "app.kubernetes.io/name": "aws-load-balancer-controller" } },
          spec: {
            containers: [
              {
                name: "controller",
                image: "public.ecr.aws/eks/aws-load-balancer-controller:v2.8.1",
                args: ["--cluster-name=sim"],
              },
            ],
          },
        },
      },
      status: { replicas: 1, readyReplicas: 1, availableReplicas: 1 },
    });
    // A cert-manager finalizer whose controller runs without its chart's labels (found by name).
    store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "unlabelled-left" } });
    store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "acme",
        namespace: "unlabelled-left",
        finalizers: ["acme.cert-manager.io/finalizer"],
      },
    });
    store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "cert-manager" } });
    store.create({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "cert-manager", namespace: "cert-manager", labels: { app: "cm" } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "cm" } },
        template: {
          metadata: { labels: { app: "cm" } },
          spec: {
            containers: [{ name: "cert-manager", image: "quay.io/jetstack/cert-manager-controller:v1" }],
          },
        },
      },
      status: { replicas: 1, readyReplicas: 1, availableReplicas: 1 },
    });
    store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "live" } });
    for (const name of ["few-left", "edge-left", "unlabelled-left"])
      store.delete("v1", "Namespace", undefined, name);
    await sim.reconcileNow();

    // A report that leaves out a type still holding an object with a finalizer: the content
    // condition omits it, the finalizer condition still counts it.
    loadHeld("stale", [
      ...QUIET,
      {
        type: "NamespaceContentRemaining",
        status: "True",
        reason: "SomeResourcesRemain",
        message: "Some resources are remaining: configmaps. has 1 resource instances",
      },
      {
        type: "NamespaceFinalizersRemaining",
        status: "True",
        reason: "SomeFinalizersRemain",
        message:
          "Some content in the namespace has finalizers remaining: example.com/config-sync in 1 resource instances, " +
          `${GROUP}/cleanup in 1 resource instances`,
      },
    ]);
    held("stale", "v1", "ConfigMap", "cm", "example.com/config-sync");
    held("stale", `${GROUP}/v1`, "Kind042", "missed", `${GROUP}/cleanup`);
    // A report that leaves a type out of both conditions, and miscounts another.
    loadHeld("miscounted", [
      ...QUIET,
      {
        type: "NamespaceContentRemaining",
        status: "True",
        reason: "SomeResourcesRemain",
        message: "Some resources are remaining: configmaps. has 1 resource instances",
      },
      {
        type: "NamespaceFinalizersRemaining",
        status: "True",
        reason: "SomeFinalizersRemain",
        message:
          "Some content in the namespace has finalizers remaining: example.com/config-sync in 1 resource instances",
      },
    ]);
    held("miscounted", "v1", "ConfigMap", "cm-1", "example.com/config-sync");
    held("miscounted", "v1", "ConfigMap", "cm-2", "example.com/other-sync");
    held("miscounted", `${GROUP}/v1`, "Kind099", "missed", `${GROUP}/cleanup`);
    // No report at all yet.
    loadHeld("uncounted", []);
    held("uncounted", `${GROUP}/v1`, "Kind120", "w", `${GROUP}/cleanup`);

    namespacedTypes = (await kube.discover()).resources.filter(
      (t) => t.namespaced && t.verbs.includes("list") && t.group !== "events.k8s.io",
    ).length;
  }, 120_000);

  afterAll(async () => {
    await sim.stop();
  });

  it("lists only the types the report names: at most that many requests plus five, in a cluster of many types", async () => {
    expect(namespacedTypes).toBeGreaterThan(EXTRA_TYPES);
    const ns = await kube.getNamespace("few-left");
    const reported = ns?.conditions.find((c) => c.type === "NamespaceContentRemaining")?.message ?? "";
    const remainingTypes = reported.split(", ").length;
    expect(remainingTypes).toBe(3);

    const { d, requests } = await diagnoseCounted("few-left");
    expect(d.scan).toEqual({ path: "report", listedTypes: remainingTypes });
    expect(requests.length).toBeLessThanOrEqual(remainingTypes + 5);
    expect(d.remaining).toEqual([
      { resource: "configmaps", count: 1 },
      { resource: `kind007s.${GROUP}`, count: 2 },
      { resource: "serviceaccounts", count: 1 },
    ]);
    expect(d.blockers.map((b) => `${b.kind}/${b.name}`).sort()).toEqual([
      "ConfigMap/cm",
      "Kind007/a",
      "Kind007/b",
      "ServiceAccount/deployer",
    ]);
    // Only finalizers no table knows: every Deployment read once, to guess their controllers.
    expect(deploymentLists(requests).map((r) => r.path)).toEqual(["/apis/apps/v1/deployments"]);
    // The Events are still read, beside the three lists.
    expect(
      lists(requests, "few-left")
        .map((r) => r.path.split("/").pop())
        .sort(),
    ).toEqual(["configmaps", "events", "kind007s", "serviceaccounts"]);

    // Said in --json (the diagnosis itself), the terminal and the Slack card.
    expect(JSON.parse(JSON.stringify(d))).toHaveProperty("scan.path", "report");
    expect(renderDiagnosisText(d)).toContain(
      "Content: listed only the 3 types the namespace controller reports as remaining.",
    );
    const card = JSON.stringify(renderDiagnosisBlocks(d).blocks);
    expect(card).toContain("from the namespace controller's report (3 types listed)");
  });

  it("answers asks for the same namespace in flight together with one run, and a later ask afresh", async () => {
    const fresh = createKubeAdapter(sim.kubeconfig(), { maxAttempts: 1 });
    const namespaceReads = () =>
      sim.requests().filter((r) => r.method === "GET" && r.path === "/api/v1/namespaces/few-left").length;
    sim.resetRequests();
    const together = await Promise.all(
      Array.from({ length: 10 }, () => diagnoseNamespace(fresh, "few-left", { now: NOW })),
    );
    expect(namespaceReads()).toBe(1);
    expect(new Set(together.map((d) => d.blockers.length))).toEqual(new Set([4]));
    // Another namespace at the same time is its own run.
    sim.resetRequests();
    const [a, b] = await Promise.all([
      diagnoseNamespace(fresh, "few-left", { now: NOW }),
      diagnoseNamespace(fresh, "live", { now: NOW }),
    ]);
    expect([a.blockers.length, b.verdict]).toEqual([4, "active"]);
    // Settled runs are not kept: the next ask reads the namespace again.
    sim.resetRequests();
    await diagnoseNamespace(fresh, "few-left", { now: NOW });
    expect(namespaceReads()).toBe(1);
  });

  it("costs a live namespace its own read and discovery beside it, and no list", async () => {
    const { d } = await diagnoseCounted("live");
    expect(d.verdict).toBe("active");
    expect(d.scan).toBeUndefined();
    // Discovery was asked for with the namespace (a Terminating one needs it next); its answer
    // may land after the diagnosis.
    const seen = await eventually(
      () => {
        const paths = sim.requests().map((r) => `${r.method} ${r.path}`);
        return paths.includes("GET /api") && paths.includes("GET /apis") ? paths : undefined;
      },
      5_000,
      "discovery's answers",
    );
    expect(seen.sort()).toEqual(["GET /api", "GET /api/v1/namespaces/live", "GET /apis"]);
    const namespaceRead = sim.requests().find((r) => r.path === "/api/v1/namespaces/live");
    const discoveryStarts = sim.requests().filter((r) => r.path === "/api" || r.path === "/apis");
    expect(discoveryStarts.every((r) => r.startedAt < (namespaceRead?.finishedAt ?? 0))).toBe(true);
  });

  it("falls back to every type when a type the report leaves out still holds a finalizer", async () => {
    const { d, requests } = await diagnoseCounted("stale");
    expect(d.scan).toEqual({
      path: "full",
      listedTypes: namespacedTypes,
      reason: { kind: "finalizer-mismatch", finalizer: `${GROUP}/cleanup`, reported: 1, found: 0 },
    });
    expect(d.blockers.map((b) => `${b.kind}/${b.name}`).sort()).toEqual(["ConfigMap/cm", "Kind042/missed"]);
    expect(d.remaining).toContainEqual({ resource: `kind042s.${GROUP}`, count: 1 });
    // Every type listed once (the report's first, then the rest), never twice.
    const typeLists = lists(requests, "stale").filter((r) => !r.path.endsWith("/events"));
    expect(new Set(typeLists.map((r) => r.path)).size).toBe(typeLists.length);
    const text = renderDiagnosisText(d);
    expect(text).toContain(`listed every namespaced type (${String(namespacedTypes)})`);
    expect(text).toContain(`the report counts 1 object with finalizer ${GROUP}/cleanup`);
    const details = JSON.stringify(renderDiagnosisDetails(d).blocks);
    expect(details).toContain(`finalizer ${GROUP}/cleanup`);
    expect(JSON.stringify(renderDiagnosisBlocks(d).blocks)).toContain("every type listed");
  });

  it("falls back when a count disagrees, and finds the type the report left out of both conditions", async () => {
    const { d } = await diagnoseCounted("miscounted");
    expect(d.scan).toEqual({
      path: "full",
      listedTypes: namespacedTypes,
      reason: { kind: "count-mismatch", resource: "configmaps", reported: 1, found: 2 },
    });
    expect(d.blockers.map((b) => `${b.kind}/${b.name}`).sort()).toEqual([
      "ConfigMap/cm-1",
      "ConfigMap/cm-2",
      "Kind099/missed",
    ]);
    expect(renderDiagnosisText(d)).toContain("the report says configmaps has 1, but 2 were found");
  });

  it("lists every type when the namespace controller has not reported yet", async () => {
    const { d, requests } = await diagnoseCounted("uncounted");
    expect(d.scan).toEqual({
      path: "full",
      listedTypes: namespacedTypes,
      reason: { kind: "no-report", condition: "NamespaceContentRemaining" },
    });
    expect(d.blockers.map((b) => `${b.kind}/${b.name}`)).toEqual(["Kind120/w"]);
    // Every namespaced type once (Secrets too: the condition that would rule them out is missing);
    // Events twice, as a type and as the blockers' evidence.
    const paths = lists(requests, "uncounted").map((r) => r.path);
    expect(new Set(paths).size).toBe(namespacedTypes);
    expect(paths.filter((p) => p.endsWith("/events"))).toHaveLength(2);
    expect(renderDiagnosisText(d)).toContain("the namespace controller has not reported yet");
  });

  it("reads the controllers' Deployments by their labels, not every Deployment of the cluster", async () => {
    const { d, requests } = await diagnoseCounted("edge-left");
    expect(d.scan?.path).toBe("report");
    const deployments = deploymentLists(requests);
    expect(deployments).toHaveLength(1);
    expect(new URLSearchParams(deployments[0]?.query ?? "").get("labelSelector")).toBe(
      "app.kubernetes.io/name in (aws-load-balancer-controller)",
    );
    const owner = d.blockers[0]?.owners[0];
    expect(owner?.status).toBe("healthy");
    expect(owner?.candidates.map((c) => `${c.namespace}/${c.name}`)).toEqual([
      "kube-system/aws-load-balancer-controller",
    ]);
    // The same owners as from every Deployment of the cluster.
    const all = await kube.listDeployments();
    for (const b of d.blockers) expect(b.owners).toEqual(ownersOf(b.finalizers, all, b));
  });

  it("looks at every Deployment before calling a controller not installed (one without its chart's labels)", async () => {
    const { d, requests } = await diagnoseCounted("unlabelled-left");
    const owner = d.blockers[0]?.owners[0];
    expect(owner?.status).toBe("healthy");
    expect(owner?.candidates.map((c) => `${c.namespace}/${c.name}`)).toEqual(["cert-manager/cert-manager"]);
    const deployments = deploymentLists(requests);
    expect(deployments.map((r) => r.query.includes("labelSelector"))).toEqual([true, false]);
    const all = await kube.listDeployments();
    for (const b of d.blockers) expect(b.owners).toEqual(ownersOf(b.finalizers, all, b));
  });
});
