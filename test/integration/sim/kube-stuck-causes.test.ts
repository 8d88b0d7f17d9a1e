/**
 * The simulator's causes of a stuck namespace, checked with the real kubectl: a DELETE refused by
 * an admission webhook whose Service is gone (and the namespace controller's
 * NamespaceDeletionContentFailure), pods on a NotReady node that stay Terminating, a claim held by
 * `kubernetes.io/pvc-protection` while such a pod mounts it, podgc's orphan collection, and the
 * namespace's own `spec.finalizers` emptied through `/finalize`.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";

import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { lostNodeWorld, namespaceFinalizerWorld, webhookBlockedWorld } from "../../sim/kube/stuck-worlds.js";
import { kubectl, type KubectlResult } from "../../sim/kube/testing.js";
import { eventually } from "../../helpers/eventually.js";

interface Cond {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

describe("stuck-namespace causes in the kube simulator", () => {
  let sim: KubeSim | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await sim?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    sim = undefined;
    dir = undefined;
  });

  async function start(
    scenario: Parameters<typeof startKubeSim>[0],
  ): Promise<(...args: string[]) => Promise<KubectlResult>> {
    sim = await startKubeSim({ controllerIntervalMs: 50, ...scenario });
    const d = await mkdtemp(join(tmpdir(), "kube-sim-stuck-"));
    dir = d;
    const kc = join(d, "kubeconfig");
    await sim.writeKubeconfig(kc);
    return (...args) => kubectl(kc, join(d, "cache"), args);
  }

  function conditions(s: KubeSim, ns: string): Cond[] {
    const o = s.store.get("v1", "Namespace", undefined, ns);
    return ((o?.status as { conditions?: Cond[] } | undefined)?.conditions ?? []).map((c) => ({ ...c }));
  }

  it("a webhook whose Service is gone refuses DELETE: kubectl's error and the namespace controller's condition", async () => {
    const k = await start({ scenario: webhookBlockedWorld({ namespace: "shop" }) });
    const s = sim!;
    const refusal =
      'failed calling webhook "validate.policy.example.com": failed to call webhook: Post "https://policy-webhook.policy-system.svc:443/validate?timeout=10s": service "policy-webhook" not found';
    const c = await eventually(() =>
      conditions(s, "shop").find((x) => x.type === "NamespaceDeletionContentFailure" && x.status === "True"),
    );
    expect(c).toEqual(
      expect.objectContaining({
        reason: "ContentDeletionFailed",
        message: `Failed to delete all resource types, 1 remaining: Internal error occurred: ${refusal}`,
      }),
    );
    // The refused type is not counted as remaining (upstream returns before counting it).
    expect(conditions(s, "shop").find((x) => x.type === "NamespaceContentRemaining")?.status).toBe("False");

    const del = await k("delete", "configmap", "app-settings", "-n", "shop");
    expect(del.code).not.toBe(0);
    expect(del.stderr.trim()).toBe(`Error from server (InternalError): Internal error occurred: ${refusal}`);

    const list = await k("get", "validatingwebhookconfigurations");
    expect(list.code, list.stderr).toBe(0);
    const rows = list.stdout
      .trim()
      .split("\n")
      .map((l) => l.trim().split(/\s+/));
    expect(rows[0]).toEqual(["NAME", "WEBHOOKS", "AGE"]);
    expect(rows.find((r) => r[0] === "policy-validator")?.[1]).toBe("1");

    // Configurations themselves are never sent to webhooks: removing the broken one unblocks it.
    const rm = await k("delete", "validatingwebhookconfiguration", "policy-validator");
    expect(rm.code, rm.stderr).toBe(0);
    await eventually(() =>
      s.store.get("v1", "Namespace", undefined, "shop") === undefined ? true : undefined,
    );
  });

  it("a webhook Service without ready endpoints: `no endpoints available`; failurePolicy Ignore lets it through", async () => {
    const k = await start({
      scenario: webhookBlockedWorld({ namespace: "shop2", serviceState: "no-endpoints", kind: "Mutating" }),
    });
    const s = sim!;
    const c = await eventually(() =>
      conditions(s, "shop2").find((x) => x.type === "NamespaceDeletionContentFailure" && x.status === "True"),
    );
    expect(c.message).toContain('no endpoints available for service "policy-webhook"');
    const mwc = await k("get", "mutatingwebhookconfigurations", "-o", "name");
    expect(mwc.stdout.trim()).toBe(
      "mutatingwebhookconfiguration.admissionregistration.k8s.io/policy-validator",
    );
    await s.stop();
    sim = undefined;

    await start({
      scenario: webhookBlockedWorld({ namespace: "shop3", failurePolicy: "Ignore" }),
    });
    const t = sim!;
    await eventually(() =>
      t.store.get("v1", "Namespace", undefined, "shop3") === undefined ? true : undefined,
    );
  });

  it("pods on a NotReady node stay Terminating; the claim one mounts stays with pvc-protection; a Ready node lets both go", async () => {
    const k = await start({ scenario: lostNodeWorld({ namespace: "web" }) });
    const s = sim!;
    const node = "ip-10-0-3-41.ap-northeast-2.compute.internal";
    await eventually(() =>
      conditions(s, "web").find(
        (x) => x.type === "NamespaceFinalizersRemaining" && x.status === "True" && x.message?.includes("pvc"),
      ),
    );
    const byType = Object.fromEntries(conditions(s, "web").map((c) => [c.type, c]));
    expect(byType.NamespaceContentRemaining?.message).toBe(
      "Some resources are remaining: persistentvolumeclaims. has 1 resource instances, pods. has 2 resource instances",
    );
    expect(byType.NamespaceFinalizersRemaining?.message).toBe(
      "Some content in the namespace has finalizers remaining: kubernetes.io/pvc-protection in 1 resource instances",
    );
    // Pods left while their grace estimate holds are no content failure.
    expect(byType.NamespaceDeletionContentFailure?.status).toBe("False");

    const nodes = await k("get", "node", node);
    expect(nodes.code, nodes.stderr).toBe(0);
    const row = nodes.stdout.trim().split("\n")[1]?.trim().split(/\s+/);
    expect(row?.slice(0, 3)).toEqual([node, "NotReady", "<none>"]);
    expect(row?.[4]).toBe("v1.32.3-eks-4096722");

    const pods = await k("get", "pods", "-n", "web", "-o", "wide");
    expect(pods.code, pods.stderr).toBe(0);
    const podRows = pods.stdout.trim().split("\n").slice(1);
    expect(podRows).toHaveLength(2);
    for (const r of podRows) {
      expect(r).toContain("Terminating");
      expect(r).toContain(node);
    }
    const pod = parseYaml((await k("get", "pod", "web-0", "-n", "web", "-o", "yaml")).stdout);
    expect(pod.metadata.deletionGracePeriodSeconds).toBe(30);
    const pvc = parseYaml((await k("get", "pvc", "data-web-0", "-n", "web", "-o", "yaml")).stdout);
    expect(pvc.metadata.finalizers).toEqual(["kubernetes.io/pvc-protection"]);
    expect(pvc.metadata.deletionTimestamp).toBeTruthy();

    // The kubelet comes back: it confirms the pods, the claim is released, the namespace goes.
    const n = s.store.get("v1", "Node", undefined, node)!;
    s.store.update(
      {
        ...n,
        status: { conditions: [{ type: "Ready", status: "True", reason: "KubeletReady" }] },
      },
      { subresource: "status" },
    );
    await eventually(() =>
      s.store.get("v1", "Namespace", undefined, "web") === undefined ? true : undefined,
    );
  });

  it("a force delete (grace 0) removes a pod its kubelet will never confirm", async () => {
    const k = await start({ scenario: lostNodeWorld({ namespace: "web2", claim: null }) });
    const s = sim!;
    await eventually(() =>
      s.store.get("v1", "Pod", "web2", "web-1")?.metadata?.deletionTimestamp ? true : undefined,
    );
    const r = await k("delete", "pod", "web-1", "-n", "web2", "--grace-period=0", "--force");
    expect(r.code, r.stderr).toBe(0);
    expect(s.store.get("v1", "Pod", "web2", "web-1")).toBeUndefined();
    expect(s.store.get("v1", "Pod", "web2", "web-0")?.metadata?.deletionTimestamp).toBeTruthy();
  });

  it("pods bound to a node that no longer exists are force-deleted by podgc after its quarantine", async () => {
    let now = Date.now();
    await start({
      scenario: lostNodeWorld({ namespace: "gone", nodeState: "missing", claim: null }),
      now: () => new Date(now),
    });
    const s = sim!;
    await eventually(() =>
      s.store.get("v1", "Pod", "gone", "web-0")?.metadata?.deletionTimestamp ? true : undefined,
    );
    await s.reconcileNow();
    expect(s.store.list("v1", "Pod", "gone")).toHaveLength(2);
    now += 41_000;
    await s.reconcileNow();
    await eventually(() =>
      s.store.get("v1", "Namespace", undefined, "gone") === undefined ? true : undefined,
    );
  });

  it("a namespace finalizer other than kubernetes keeps the emptied namespace until /finalize", async () => {
    const k = await start({ scenario: namespaceFinalizerWorld({ namespace: "tenant" }) });
    const s = sim!;
    await eventually(() => {
      const ns = s.store.get("v1", "Namespace", undefined, "tenant");
      const fins = (ns?.spec as { finalizers?: string[] } | undefined)?.finalizers;
      return fins?.length === 1 ? fins : undefined;
    });
    const ns = parseYaml((await k("get", "ns", "tenant", "-o", "yaml")).stdout);
    expect(ns.spec.finalizers).toEqual(["example.com/tenant-cleanup"]);
    expect(ns.status.phase).toBe("Terminating");
    expect(
      (ns.status.conditions as Cond[]).every((c) => c.status === "False"),
      JSON.stringify(ns.status.conditions),
    ).toBe(true);
    const body = join(dir!, "finalize.json");
    await writeFile(
      body,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "tenant" },
        spec: { finalizers: [] },
      }),
    );
    const r = await k("replace", "--raw", "/api/v1/namespaces/tenant/finalize", "-f", body);
    expect(r.code, r.stderr).toBe(0);
    await eventually(() =>
      s.store.get("v1", "Namespace", undefined, "tenant") === undefined ? true : undefined,
    );
  });
});
