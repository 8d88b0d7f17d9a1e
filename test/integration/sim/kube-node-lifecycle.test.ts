/**
 * The simulated node lifecycle controller: a silent kubelet turns its node `Ready=Unknown` and
 * unreachable only after the grace period, a kubelet reporting `Ready=False` gets the not-ready
 * taints, and a node Ready again loses them — read back with the real kubectl.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { NODE_MONITOR_GRACE_MS } from "../../sim/kube/node-lifecycle.js";
import { kubectl } from "../../sim/kube/testing.js";

interface NodeView {
  spec: { taints?: { key: string; effect: string; timeAdded?: string }[] };
  status: { conditions: { type: string; status: string; reason?: string; message?: string }[] };
}

describe("node lifecycle in the kube simulator", () => {
  let sim: KubeSim;
  let dir: string;
  let clock = Date.parse("2026-06-01T10:00:00Z");
  const node = (name: string) => ({
    apiVersion: "v1",
    kind: "Node",
    metadata: { name },
    status: {
      conditions: [
        { type: "Ready", status: "True", reason: "KubeletReady", message: "kubelet is posting ready status" },
        { type: "DiskPressure", status: "False", reason: "KubeletHasNoDiskPressure" },
      ],
    },
  });
  const read = async (name: string): Promise<NodeView> => {
    const r = await kubectl(join(dir, "kubeconfig"), join(dir, "cache"), ["get", "node", name, "-o", "json"]);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as NodeView;
  };
  const taints = (n: NodeView) => (n.spec.taints ?? []).map((t) => `${t.key}:${t.effect}`);

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000, now: () => new Date(clock) });
    dir = await mkdtemp(join(tmpdir(), "kube-sim-nodes-"));
    await sim.writeKubeconfig(join(dir, "kubeconfig"));
    sim.store.create(node("silent"));
    sim.store.create(node("sick"));
  });
  afterAll(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("marks a node whose kubelet went silent Unknown and unreachable once the grace period is over", async () => {
    sim.silenceKubelet("silent");
    clock += NODE_MONITOR_GRACE_MS - 1_000;
    await sim.reconcileNow();
    expect((await read("silent")).status.conditions[0]?.status).toBe("True");
    clock += 1_000;
    await sim.reconcileNow();
    const n = await read("silent");
    for (const c of n.status.conditions)
      expect(c).toMatchObject({
        status: "Unknown",
        reason: "NodeStatusUnknown",
        message: "Kubelet stopped posting node status.",
      });
    expect(taints(n)).toEqual([
      "node.kubernetes.io/unreachable:NoSchedule",
      "node.kubernetes.io/unreachable:NoExecute",
    ]);
    expect(n.spec.taints?.[0]?.timeAdded).toBe(new Date(clock).toISOString().replace(/\.\d{3}Z$/, "Z"));
  });

  it("taints a node its kubelet reports NotReady, and lifts the taints once it is Ready again", async () => {
    const set = async (status: string) => {
      const cur = sim.store.get("v1", "Node", undefined, "sick");
      const conditions = [
        { type: "Ready", status, reason: status === "True" ? "KubeletReady" : "KubeletNotReady" },
      ];
      sim.store.update({ ...cur, status: { conditions } }, { subresource: "status" });
      await sim.reconcileNow();
    };
    await set("False");
    expect(taints(await read("sick"))).toEqual([
      "node.kubernetes.io/not-ready:NoSchedule",
      "node.kubernetes.io/not-ready:NoExecute",
    ]);
    await set("True");
    expect(taints(await read("sick"))).toEqual([]);
  });
});
