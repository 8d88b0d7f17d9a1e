/**
 * Every cause the namespace controller can be stuck on, named with its owner and evidence, end to
 * end: the simulator's worlds (`test/sim/kube/stuck-worlds.ts`), the real client adapter, the
 * diagnosis, and its words on the terminal and on the Slack card.
 */
import { afterEach, describe, expect, it } from "vitest";
import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import type { CauseLink, NamespaceDiagnosis } from "../../../src/diagnosis/types.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../../src/kube/port.js";
import { causeSentence, nextStepTexts } from "../../../src/render/diagnosis-prose.js";
import { renderDiagnosisText } from "../../../src/render/diagnosis-text.js";
import { renderDiagnosisDetails } from "../../../src/slack/blocks/diagnosis.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { lostNodeWorld, namespaceFinalizerWorld, webhookBlockedWorld } from "../../sim/kube/stuck-worlds.js";
import { eventually } from "../../helpers/eventually.js";
import type { Scenario } from "../../sim/scenario.js";

function link<K extends CauseLink["kind"]>(
  d: NamespaceDiagnosis,
  kind: K,
): Extract<CauseLink, { kind: K }>[] {
  return d.cause.filter((c): c is Extract<CauseLink, { kind: K }> => c.kind === kind);
}

function detailsText(d: NamespaceDiagnosis): string {
  return JSON.stringify(renderDiagnosisDetails(d).blocks);
}

describe("ns diagnosis names each cause the namespace controller reports", () => {
  let sim: KubeSim | undefined;
  afterEach(async () => {
    await sim?.stop();
    sim = undefined;
  });

  async function diagnose(
    scenario: Scenario,
    ns: string,
    ready: (s: KubeSim) => boolean,
  ): Promise<NamespaceDiagnosis> {
    const s = await startKubeSim({ scenario, controllerIntervalMs: 50 });
    sim = s;
    await eventually(() => (ready(s) ? true : undefined));
    const kube = createKubeAdapter(s.kubeconfig(), { maxAttempts: 1 });
    return diagnoseNamespace(kube, ns, { now: () => new Date() });
  }

  const condition = (s: KubeSim, ns: string, type: string): boolean => {
    const o = s.store.get("v1", "Namespace", undefined, ns);
    const conds = (o?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
    return conds?.some((c) => c.type === type && c.status === "True") === true;
  };

  it("a DELETE refused by a webhook whose Service is gone: the configuration, the webhook, its Service, DELETE", async () => {
    const d = await diagnose(webhookBlockedWorld({ namespace: "shop" }), "shop", (s) =>
      condition(s, "shop", "NamespaceDeletionContentFailure"),
    );
    expect(d.verdict).toBe("blocked");
    const [refused] = link(d, "delete-refused-by-webhook");
    expect(refused?.webhook).toEqual({
      configuration: "policy-validator",
      configurationKind: "ValidatingWebhookConfiguration",
      webhook: "validate.policy.example.com",
      failurePolicy: "Fail",
      interceptsDelete: true,
      service: "policy-system/policy-webhook",
      serviceExists: false,
    });
    expect(refused?.message).toContain('service "policy-webhook" not found');
    // Not "all content is gone": the refused ConfigMap is what the controller's count leaves out.
    expect(d.namespaceFinalizers).toEqual([]);
    expect(causeSentence(d)).toBe(
      "the namespace controller cannot delete its content: webhook validate.policy.example.com of ValidatingWebhookConfiguration policy-validator (failurePolicy Fail, intercepts DELETE), whose Service policy-system/policy-webhook does not exist refuses the deletes",
    );
    const rec = d.remedies[d.recommended ?? -1];
    expect(rec?.kind).toBe("fix-webhook");
    expect(nextStepTexts(d)[0]).toContain("`kubectl delete validatingwebhookconfiguration policy-validator`");
    expect(d.remedies.some((r) => r.kind === "force-finalizer")).toBe(false);
    expect(detailsText(d)).toContain("What holds it");
    // The controller's count leaves the refused type out: its failure sends the diagnosis to the full scan.
    expect(d.scan).toMatchObject({ path: "full", reason: { kind: "content-failure" } });
    const text = renderDiagnosisText(d);
    expect(text).toContain("What holds it:");
    expect(text).toContain("Deletes refused by");
  });

  it("a Service with no ready endpoint behind a mutating webhook: counted, not called missing", async () => {
    const d = await diagnose(
      webhookBlockedWorld({ namespace: "shop2", kind: "Mutating", serviceState: "no-endpoints" }),
      "shop2",
      (s) => condition(s, "shop2", "NamespaceDeletionContentFailure"),
    );
    const [refused] = link(d, "delete-refused-by-webhook");
    expect(refused?.webhook).toMatchObject({
      configurationKind: "MutatingWebhookConfiguration",
      serviceExists: true,
      readyEndpoints: 0,
    });
    expect(causeSentence(d)).toContain("whose Service policy-system/policy-webhook has no ready endpoint");
  });

  it("pods on a NotReady node and the claim one mounts: the pods, the node's Ready condition, the claim and its pod", async () => {
    const node = "ip-10-0-3-41.ap-northeast-2.compute.internal";
    const d = await diagnose(lostNodeWorld({ namespace: "web" }), "web", (s) =>
      condition(s, "web", "NamespaceFinalizersRemaining"),
    );
    expect(d.verdict).toBe("blocked");
    const [lost] = link(d, "pods-on-lost-node");
    expect(lost?.pods).toEqual(["web-0", "web-1"]);
    expect(lost?.node).toMatchObject({
      name: node,
      state: "not-ready",
      ready: {
        status: "Unknown",
        reason: "NodeStatusUnknown",
        message: "Kubelet stopped posting node status.",
      },
    });
    expect(lost?.node.taints).toContain("node.kubernetes.io/unreachable:NoExecute");
    const [claim] = link(d, "claim-in-use");
    expect(claim).toMatchObject({
      claim: { kind: "PersistentVolumeClaim", namespace: "web", name: "data-web-0" },
      pods: ["web-0"],
      podsStuck: true,
    });
    expect(causeSentence(d)).toContain(
      `because their node ${node} is NotReady (Ready=Unknown, NodeStatusUnknown`,
    );
    // Never force the claim's pvc-protection: the node (then the pods) is the fix.
    expect(d.remedies.some((r) => r.kind === "force-finalizer")).toBe(false);
    expect(d.remedies[d.recommended ?? -1]?.kind).toBe("recover-node");
    const steps = nextStepTexts(d).join("\n");
    expect(steps).toContain(`\`kubectl delete node ${node}\``);
    expect(steps).toContain("never with its kubernetes.io/pvc-protection finalizer");
    expect(detailsText(d)).toContain("data-web-0");
  });

  it("pods whose node no longer exists: named as missing before the pod garbage collector removes them", async () => {
    const d = await diagnose(
      lostNodeWorld({ namespace: "gone", nodeState: "missing", claim: null }),
      "gone",
      (s) => s.store.get("v1", "Pod", "gone", "web-0")?.metadata?.deletionTimestamp !== undefined,
    );
    const [lost] = link(d, "pods-on-lost-node");
    expect(lost?.node).toEqual({
      name: "ip-10-0-3-41.ap-northeast-2.compute.internal",
      state: "missing",
      taints: [],
    });
    expect(nextStepTexts(d)[0]).toContain("the pod garbage collector force-deletes its pods");
  });

  it("the namespace's own finalizer other than kubernetes: the finalizer and its owner", async () => {
    const d = await diagnose(namespaceFinalizerWorld({ namespace: "tenant" }), "tenant", (s) => {
      const ns = s.store.get("v1", "Namespace", undefined, "tenant");
      return (ns?.spec as { finalizers?: string[] } | undefined)?.finalizers?.length === 1;
    });
    expect(d.namespaceFinalizers).toEqual(["example.com/tenant-cleanup"]);
    expect(link(d, "namespace-finalizer")).toEqual([
      {
        kind: "namespace-finalizer",
        finalizer: "example.com/tenant-cleanup",
        controller: "unknown controller (example.com)",
        known: false,
        candidates: [],
      },
    ]);
    expect(causeSentence(d)).toContain("still carries its finalizer example.com/tenant-cleanup");
  });

  it("reads what the conditions point at beside the evidence and AWS, not after them", async () => {
    // The namespace's events (the evidence's first read) are answered only once the webhook
    // configurations are asked for: read one after the other, the events would wait out the hold
    // (10 s) and the webhooks come after them.
    const s = await startKubeSim({
      scenario: webhookBlockedWorld({ namespace: "shop" }),
      controllerIntervalMs: 50,
    });
    sim = s;
    await eventually(() => (condition(s, "shop", "NamespaceDeletionContentFailure") ? true : undefined));
    const real = createKubeAdapter(s.kubeconfig(), { maxAttempts: 1 });
    let webhooksAsked!: () => void;
    const webhooks = new Promise<void>((resolve) => (webhooksAsked = resolve));
    const released: string[] = [];
    const kube = new Proxy(real, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (key === "listAdmissionWebhooks")
          return () => {
            webhooksAsked();
            return target.listAdmissionWebhooks();
          };
        if (key === "listEvents")
          return async (...args: Parameters<KubePort["listEvents"]>) => {
            released.push(
              await Promise.race([
                webhooks.then(() => "webhooks asked"),
                new Promise<string>((r) => setTimeout(() => r("hold ran out"), 10_000).unref()),
              ]),
            );
            return target.listEvents(...args);
          };
        return value;
      },
    });
    const d = await diagnoseNamespace(kube, "shop", { now: () => new Date() });
    expect(link(d, "delete-refused-by-webhook")).toHaveLength(1);
    expect(released.length).toBeGreaterThan(0);
    expect(new Set(released)).toEqual(new Set(["webhooks asked"]));
  }, 30_000);

  it("reads nodes and webhooks only when the namespace's state points at them", async () => {
    await diagnose(namespaceFinalizerWorld({ namespace: "quiet" }), "quiet", (s) => {
      const ns = s.store.get("v1", "Namespace", undefined, "quiet");
      return (ns?.spec as { finalizers?: string[] } | undefined)?.finalizers?.length === 1;
    });
    const paths = sim!.requests().map((r) => r.path);
    expect(paths.some((p) => p.includes("webhookconfigurations"))).toBe(false);
    expect(paths.some((p) => p.startsWith("/api/v1/nodes"))).toBe(false);
  });
});
