/**
 * A namespace held in Terminating by a broken aggregated API (metrics-server with no ready pods),
 * diagnosed through the real adapter against the kube simulator: the diagnosis names the
 * APIService, its Service and its ready endpoints, and the real kubectl sees the same APIService.
 */
import { nextStepTexts } from "../../../src/render/diagnosis-prose.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";

import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../../src/kube/port.js";
import { renderDiagnosisText } from "../../../src/render/diagnosis-text.js";
import { renderDiagnosisBlocks, renderDiagnosisDetails } from "../../../src/slack/blocks/diagnosis.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { kubectl } from "../../sim/kube/testing.js";
import { eventually } from "../../helpers/eventually.js";

const NS = `stats-${process.pid}`;
const API = "v1beta1.metrics.k8s.io";

/** metrics-server as its chart installs it, with its only pod not ready. */
function loadBrokenMetricsServer(sim: KubeSim): void {
  const labels = { "app.kubernetes.io/name": "metrics-server" };
  sim.store.create({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "metrics-server", namespace: "kube-system", labels },
    spec: {
      type: "ClusterIP",
      selector: labels,
      ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: "https" }],
    },
  });
  // Its one pod, not ready: the endpoints controllers give the Service its slice and Endpoints.
  sim.store.create({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "metrics-server-7f9c6d5b8-qx2lp", namespace: "kube-system", labels },
    spec: {
      containers: [
        {
          name: "metrics-server",
          image: "metrics-server:v0.7.2",
          ports: [{ name: "https", containerPort: 10250 }],
        },
      ],
    },
    status: { phase: "Running", podIP: "10.0.2.7", conditions: [{ type: "Ready", status: "False" }] },
  });
  sim.store.create({
    apiVersion: "apiregistration.k8s.io/v1",
    kind: "APIService",
    metadata: { name: API, labels },
    spec: {
      group: "metrics.k8s.io",
      version: "v1beta1",
      groupPriorityMinimum: 100,
      versionPriority: 100,
      insecureSkipTLSVerify: true,
      service: { name: "metrics-server", namespace: "kube-system", port: 443 },
    },
  });
}

describe("a namespace stuck behind an unavailable aggregated API", () => {
  let sim: KubeSim;
  let kube: KubePort;
  let dir: string;
  let kc: string;

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 50 });
    kube = createKubeAdapter(sim.kubeconfig(), { maxAttempts: 1 });
    dir = await mkdtemp(join(tmpdir(), "unstuck-apiservice-"));
    kc = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kc);
    loadBrokenMetricsServer(sim);
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    sim.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: NS } });
    sim.store.delete("v1", "Namespace", undefined, NS);
    await eventually(() => {
      const ns = sim.store.get("v1", "Namespace", undefined, NS);
      const conds = (ns?.status as { conditions?: { type: string; status: string }[] } | undefined)
        ?.conditions;
      return conds?.some((c) => c.type === "NamespaceDeletionDiscoveryFailure" && c.status === "True")
        ? true
        : undefined;
    });
  });
  afterAll(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });
  afterEach(() => sim.setFaults({}));

  it("names the APIService, its Service and its 0 ready endpoints", async () => {
    const d = await diagnoseNamespace(kube, NS, { now: () => new Date() });
    expect(d.verdict).toBe("blocked");
    const f = d.discoveryFailures.find((x) => x.groupVersion === "metrics.k8s.io/v1beta1");
    expect(f?.apiService).toMatchObject({
      name: API,
      service: "kube-system/metrics-server",
      available: "False",
      reason: "MissingEndpoints",
      readyEndpoints: 0,
    });
    expect(f?.apiService?.message).toContain("service/metrics-server");
    const step = nextStepTexts(d).find((s) => s.includes(`APIService ${API}`));
    expect(step).toContain("is not Available (MissingEndpoints)");
    expect(step).toContain("kube-system/metrics-server has 0 ready endpoints");
    expect(step).toContain(`kubectl delete apiservice ${API}`);
    const text = renderDiagnosisText(d);
    expect(text).toContain(`APIService ${API}: Available=False (MissingEndpoints)`);
    expect(text).toContain("Service kube-system/metrics-server: 0 ready endpoints");
    // The card names the fix; its Details reply names the APIService's state.
    const card = JSON.stringify(renderDiagnosisBlocks(d));
    expect(card).toContain(`APIService ${API} is not Available`);
    const slack = JSON.stringify(renderDiagnosisDetails(d));
    expect(slack).toContain("APIService `" + API + "` Available=False (MissingEndpoints)");
    expect(slack).toContain("*0* ready endpoints");
  });

  it("counts ready endpoints from core Endpoints when EndpointSlices are forbidden", async () => {
    sim.setFaults({ forbid: [{ verb: "list", resource: "endpointslices", group: "discovery.k8s.io" }] });
    const d = await diagnoseNamespace(kube, NS, { now: () => new Date() });
    expect(d.discoveryFailures[0]?.apiService?.readyEndpoints).toBe(0);
    const ep = await kube.getServiceEndpoints("kube-system", "metrics-server");
    expect(ep).toMatchObject({ source: "endpoints", ready: 0, notReady: 1 });
  });

  it("turns missing RBAC on APIServices into a warning, not a failure", async () => {
    sim.setFaults({ forbid: [{ verb: "list", resource: "apiservices", group: "apiregistration.k8s.io" }] });
    const d = await diagnoseNamespace(kube, NS, { now: () => new Date() });
    expect(d.verdict).toBe("blocked");
    expect(d.discoveryFailures[0]?.groupVersion).toBe("metrics.k8s.io/v1beta1");
    expect(d.discoveryFailures[0]?.apiService).toBeUndefined();
    expect(d.warnings.join("\n")).toMatch(/Could not read APIServices.*apiservices/);
    expect(nextStepTexts(d).join("\n")).toContain("kubectl get apiservice");
  });

  it("shows the same APIService to the real kubectl", async () => {
    const cache = join(dir, "cache");
    const table = await kubectl(kc, cache, ["get", "apiservice"]);
    const row = table.stdout.split("\n").find((l) => l.startsWith(API));
    expect(row?.split(/\s{2,}/).slice(0, 3)).toEqual([
      API,
      "kube-system/metrics-server",
      "False (MissingEndpoints)",
    ]);
    const yaml = await kubectl(kc, cache, ["get", "apiservice", API, "-o", "yaml"]);
    expect(yaml.code, yaml.stderr).toBe(0);
    const obj = parseYaml(yaml.stdout) as {
      spec: { service: { namespace: string; name: string } };
      status: { conditions: { type: string; status: string; reason: string; message: string }[] };
    };
    expect(obj.spec.service).toMatchObject({ namespace: "kube-system", name: "metrics-server" });
    expect(obj.status.conditions).toContainEqual(
      expect.objectContaining({
        type: "Available",
        status: "False",
        reason: "MissingEndpoints",
        message:
          'endpoints for service/metrics-server in "kube-system" have no addresses with port name "https"',
      }),
    );
  });

  it("a failing-group fault is an APIService whose ready pods fail the discovery check", async () => {
    const other = await startKubeSim({ faults: { failingGroups: ["custom.metrics.k8s.io/v1beta2"] } });
    try {
      const port = createKubeAdapter(other.kubeconfig(), { maxAttempts: 1 });
      const a = (await port.listApiServices()).find((x) => x.name === "v1beta2.custom.metrics.k8s.io");
      expect(a?.service).toMatchObject({ namespace: "kube-system", name: "custom" });
      expect(a?.conditions.find((c) => c.type === "Available")).toMatchObject({
        status: "False",
        reason: "FailedDiscoveryCheck",
      });
      expect((await port.getServiceEndpoints("kube-system", "custom")).ready).toBe(1);
    } finally {
      await other.stop();
    }
  });

  it("lets the namespace go once metrics-server has a ready pod", async () => {
    const pod = sim.store.get("v1", "Pod", "kube-system", "metrics-server-7f9c6d5b8-qx2lp");
    if (!pod) throw new Error("the metrics-server pod is gone");
    sim.store.update(
      { ...pod, status: { ...(pod.status as object), conditions: [{ type: "Ready", status: "True" }] } },
      { subresource: "status" },
    );
    await eventually(() =>
      sim.store.get("v1", "Namespace", undefined, NS) === undefined ? true : undefined,
    );
    const a = (await kube.listApiServices()).find((x) => x.name === API);
    expect(a?.conditions.find((c) => c.type === "Available")?.status).toBe("True");
  });
});
