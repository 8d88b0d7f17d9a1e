/**
 * The causes found from the namespace's own state reach the person asking, through the wiring a
 * user starts from — `npm run unstuck -- ns` (the CLI's entry, building its services from the
 * environment) and `/unstuck ns` (the runtime building its own services) — not only through the
 * adapter: a webhook that refuses the deletes, pods on a NotReady node with the claim one mounts,
 * pods whose node is gone. Each world is the Kubernetes simulator's; nothing here is injected.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import {
  lostNodeWorld,
  namespaceFinalizerWorld,
  operatorFailingWorld,
  webhookBlockedWorld,
} from "../sim/kube/stuck-worlds.js";
import { eventually } from "../helpers/eventually.js";
import type { Scenario } from "../sim/scenario.js";
import { askSlack, askTerminal } from "./ask-ns.js";

const NODE = "ip-10-0-3-41.ap-northeast-2.compute.internal";

interface Started {
  readonly sim: KubeSim;
  readonly kubeconfig: string;
  readonly close: () => Promise<void>;
}

/** The world, once the namespace controller has reported what holds `ns` (`condition` True). */
async function world(scenario: Scenario, ns: string, condition: string): Promise<Started> {
  const sim = await startKubeSim({ scenario, controllerIntervalMs: 50 });
  const dir = await mkdtemp(join(tmpdir(), "unstuck-causes-"));
  const kubeconfig = join(dir, "kubeconfig");
  await sim.writeKubeconfig(kubeconfig);
  await eventually(() => {
    const o = sim.store.get("v1", "Namespace", undefined, ns);
    const conds = (o?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
    return conds?.some((c) => c.type === condition && c.status === "True") === true ? true : undefined;
  }, 15_000);
  return {
    sim,
    kubeconfig,
    close: async () => {
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** `npm run unstuck -- ns <ns>`: what the terminal prints, and the exit code. */
function terminal(ns: string, kubeconfig: string): Promise<{ code: number; text: string }> {
  return askTerminal(["ns", ns, "--kubeconfig", kubeconfig]);
}

/** `/unstuck ns <ns>` on a runtime started from configuration alone: the card posted in the channel. */
function slack(ns: string, kubeconfig: string): Promise<string> {
  return askSlack(ns, kubeconfig);
}

describe("every cause reaches the terminal and Slack through the real wiring", () => {
  it("a webhook that refuses the deletes: its configuration, its missing Service, the fix — not forcing", async () => {
    const w = await world(
      webhookBlockedWorld({ namespace: "shop" }),
      "shop",
      "NamespaceDeletionContentFailure",
    );
    try {
      const { code, text } = await terminal("shop", w.kubeconfig);
      expect(code).toBe(0);
      expect(text).toContain(
        "webhook validate.policy.example.com of ValidatingWebhookConfiguration policy-validator",
      );
      expect(text).toContain("policy-system/policy-webhook does not exist");
      expect(text).toContain("kubectl delete validatingwebhookconfiguration policy-validator");
      const card = await slack("shop", w.kubeconfig);
      expect(card).toContain("policy-validator");
      expect(card).toContain("policy-system/policy-webhook");
    } finally {
      await w.close();
    }
  });

  it("objects with finalizers that the refused deletes never reached: no step forces, deregisters or names them blockers", async () => {
    const w = await world(
      webhookBlockedWorld({ namespace: "shop", loadBalancerObjects: true }),
      "shop",
      "NamespaceDeletionContentFailure",
    );
    try {
      // The webhook refused their deletes: neither carries a deletionTimestamp.
      expect(w.sim.store.get("networking.k8s.io/v1", "Ingress", "shop", "web")?.metadata).not.toHaveProperty(
        "deletionTimestamp",
      );
      const { code, text } = await terminal("shop", w.kubeconfig);
      expect(code).toBe(0);
      expect(text).toContain("kubectl delete validatingwebhookconfiguration policy-validator");
      expect(text).not.toMatch(/finalize ingress|finalize targetgroupbinding|deregister-targets|Blocker:/);
      expect(text).not.toContain("still being removed");
      const card = await slack("shop", w.kubeconfig);
      expect(card).toContain("policy-validator");
      expect(card).not.toMatch(/finalize:request|finalize ingress|deregister-targets/);
    } finally {
      await w.close();
    }
  });

  it("pods on a NotReady node and the claim one mounts: the node, its condition, the claim, the safe order", async () => {
    const w = await world(lostNodeWorld({ namespace: "web" }), "web", "NamespaceFinalizersRemaining");
    try {
      const { code, text } = await terminal("web", w.kubeconfig);
      expect(code).toBe(0);
      expect(text).toContain(`because their node ${NODE} is NotReady (Ready=Unknown, NodeStatusUnknown`);
      expect(text).toContain("data-web-0");
      expect(text).toContain(`kubectl delete node ${NODE}`);
      expect(text).not.toContain("TERMINATING (progressing)");
      const card = await slack("web", w.kubeconfig);
      expect(card).toContain(NODE);
      expect(card).toContain("NotReady");
    } finally {
      await w.close();
    }
  });

  it("a node lost while its namespace is deleted: progressing within the grace period, then the lost node", async () => {
    let clock = Date.now();
    const sim = await startKubeSim({
      scenario: lostNodeWorld({ namespace: "cache", nodeState: "ready", claim: null }),
      controllerIntervalMs: 50,
      now: () => new Date(clock),
    });
    const dir = await mkdtemp(join(tmpdir(), "unstuck-causes-"));
    const kubeconfig = join(dir, "kubeconfig");
    try {
      await sim.writeKubeconfig(kubeconfig);
      // The machine stops answering, then someone deletes the namespace.
      sim.silenceKubelet(NODE);
      sim.store.delete("v1", "Namespace", undefined, "cache");
      await sim.reconcileNow();
      // Its pods wait for a kubelet that does not answer; the node still reads Ready.
      expect(
        sim.store.list("v1", "Pod", "cache").every((p) => p.metadata?.deletionTimestamp !== undefined),
      ).toBe(true);
      const early = await terminal("cache", kubeconfig);
      expect(early.text).toContain("TERMINATING (progressing)");
      expect(early.text).not.toContain("NotReady");

      // Past the node monitor's grace period the controller marks it Unknown and unreachable.
      clock += 51_000;
      await sim.reconcileNow();
      const node = sim.store.get("v1", "Node", undefined, NODE);
      const ready = (
        node?.status as { conditions: { type: string; status: string; message?: string }[] }
      ).conditions.find((c) => c.type === "Ready");
      expect(ready).toMatchObject({ status: "Unknown", message: "Kubelet stopped posting node status." });
      expect(
        (node?.spec as { taints: { key: string; effect: string }[] }).taints.map(
          (t) => `${t.key}:${t.effect}`,
        ),
      ).toEqual(["node.kubernetes.io/unreachable:NoSchedule", "node.kubernetes.io/unreachable:NoExecute"]);
      const late = await terminal("cache", kubeconfig);
      expect(late.text).toContain(`because their node ${NODE} is NotReady (Ready=Unknown, NodeStatusUnknown`);
      expect(late.text).toContain(`kubectl delete node ${NODE}`);
    } finally {
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a mistyped namespace: the nearest existing name, in the terminal and in Slack", async () => {
    const sim = await startKubeSim({ namespacePublishers: false });
    const dir = await mkdtemp(join(tmpdir(), "unstuck-causes-"));
    const kubeconfig = join(dir, "kubeconfig");
    try {
      sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "checkout" } });
      await sim.writeKubeconfig(kubeconfig);
      const { text } = await terminal("chekout", kubeconfig);
      expect(text).toContain("Did you mean `checkout`?");
      expect(await slack("chekout", kubeconfig)).toContain("Did you mean `checkout`?");
    } finally {
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("pods whose node is gone: named missing, with what removes them", async () => {
    const w = await world(
      lostNodeWorld({ namespace: "gone", nodeState: "missing", claim: null }),
      "gone",
      "NamespaceContentRemaining",
    );
    try {
      const { text } = await terminal("gone", w.kubeconfig);
      expect(text).toContain(NODE);
      expect(text).toContain("the pod garbage collector force-deletes its pods");
      const card = await slack("gone", w.kubeconfig);
      expect(card).toContain(NODE);
    } finally {
      await w.close();
    }
  });

  it("a type RBAC will not let the bot list: which one, and the chart value that grants it — not 'ask again'", async () => {
    const base = namespaceFinalizerWorld({ namespace: "tenant", finalizers: [] });
    const objects = [
      ...(base.kube?.objects ?? []).map((o) =>
        o.kind === "ConfigMap" ? { ...o, metadata: { ...o.metadata, finalizers: ["example.com/hold"] } } : o,
      ),
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "db-creds", namespace: "tenant", finalizers: ["example.com/vault-sync"] },
      },
    ];
    const w = await world(
      { ...base, kube: { objects, logs: [], failingGroups: [] } },
      "tenant",
      "NamespaceFinalizersRemaining",
    );
    try {
      // The chart's default: Secrets not granted, and an explicit list that leaves ConfigMaps out.
      w.sim.setFaults({
        forbid: [
          { verb: "list", resource: "configmaps" },
          { verb: "list", resource: "secrets" },
        ],
      });
      const { code, text } = await terminal("tenant", w.kubeconfig);
      expect(code).toBe(0);
      expect(text).toMatch(
        /the bot may not list (configmaps, secrets|secrets, configmaps) \(RBAC refuses `list`\)/,
      );
      expect(text).toContain('`{apiGroups: [""], resources: ["configmaps"]}` to `rbac.explicitResources`');
      // Secrets by their own value, never through the list.
      expect(text).toContain("`rbac.listSecrets: true`");
      expect(text).not.toContain('resources: ["secrets"]');
      expect(text).not.toContain("ask again");
      const card = await slack("tenant", w.kubeconfig);
      expect(card).toContain("rbac.explicitResources");
      expect(card).toContain("rbac.listSecrets");
      expect(card).not.toContain("ask again");
    } finally {
      await w.close();
    }
  });

  it("an operator the table does not know, running and failing: its own words first, its fix before forcing", async () => {
    const w = await world(
      operatorFailingWorld({ namespace: "shop" }),
      "shop",
      "NamespaceFinalizersRemaining",
    );
    try {
      const { code, text } = await terminal("shop", w.kubeconfig);
      expect(code).toBe(0);
      const lines = text.split("\n");
      expect(lines[1]).toBe(
        "  Cause: bucket-operator is running but fails to finalize Bucket shop/assets: failed to delete bucket shop-assets-prod: BucketNotEmpty: The bucket you tried to delete is not empty, so Bucket shop/assets keeps its finalizer storage.example.com/finalizer.",
      );
      expect(text).toContain(
        'likely controller (its name or image says "bucket") bucket-system/bucket-operator',
      );
      const steps = text.slice(text.indexOf("Next steps:"));
      const fix = steps.indexOf(
        "bucket-operator is running and says why it cannot finish Bucket shop/assets",
      );
      const force = steps.indexOf("finalize bucket/assets");
      expect(fix).toBeGreaterThan(0);
      expect(force).toBeGreaterThan(fix);
      expect(steps).toMatch(
        /by itself\. Forcing the finalizer instead leaves behind whatever it was deleting\. {2}← recommended/,
      );
      expect(steps).not.toContain("orphaned AWS resources");
      const card = await slack("shop", w.kubeconfig);
      expect(card).toContain("bucket-operator is running but fails to finalize");
      expect(card).not.toContain("finalize:request");
    } finally {
      await w.close();
    }
  });
});
