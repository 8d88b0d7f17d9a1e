/**
 * Pods no kubelet will confirm (their node is NotReady or gone) and the claims that pods still
 * mount: `kubernetes.io/pvc-protection` lets a claim go only once its pods are gone.
 */
import type { NamespaceSnapshot } from "../../kube/types.js";
import type { ListedType } from "./rule.js";
import { namespaceRule, neverBlocks, refOf, type LinkOf } from "./rule.js";

export const PVC_PROTECTION = "kubernetes.io/pvc-protection";

const listedOf = (listed: readonly ListedType[], resource: string) =>
  listed.find((l) => l.type.group === "" && l.type.resource === resource)?.objects ?? [];

/** Pods being deleted: their node may be what keeps them. */
const podsDeleting = (_ns: NamespaceSnapshot, listed: readonly ListedType[]): boolean =>
  listedOf(listed, "pods").some((o) => o.deletionTimestamp !== undefined);

/** A claim being deleted that pvc-protection keeps: the pods that mount it are what hold it. */
const claimsHeld = (_ns: NamespaceSnapshot, listed: readonly ListedType[]): boolean =>
  listedOf(listed, "persistentvolumeclaims").some(
    (o) => o.deletionTimestamp !== undefined && o.finalizers.includes(PVC_PROTECTION),
  );

/** Pods being deleted whose node is NotReady or gone: no kubelet will confirm them. Grouped by node. */
export const podsOnLostNode = namespaceRule<"pods-on-lost-node">({
  kinds: ["pods-on-lost-node"],
  needs: [{ read: "placements", when: podsDeleting }],
  stage: "recover",
  find: (f) => {
    const reads = f.reads;
    const byNode = new Map<string, string[]>();
    for (const p of reads?.pods ?? []) {
      if (p.deletionTimestamp === undefined || p.nodeName === undefined) continue;
      if (p.phase === "Succeeded" || p.phase === "Failed") continue;
      const node = reads?.nodes?.get(p.nodeName);
      if (node === undefined || node?.ready?.status === "True") continue;
      byNode.set(p.nodeName, [...(byNode.get(p.nodeName) ?? []), p.name]);
    }
    return [...byNode].map(([name, pods]): LinkOf<"pods-on-lost-node"> => {
      const node = reads?.nodes?.get(name) ?? null;
      return {
        kind: "pods-on-lost-node",
        pods: pods.sort(),
        node: node
          ? { name, state: "not-ready", ...(node.ready ? { ready: node.ready } : {}), taints: node.taints }
          : { name, state: "missing", taints: [] },
      };
    });
  },
  // A node that is NotReady may never come back by itself; a deleted one lets pod GC finish.
  blocks: (links) => links.some((l) => l.node.state === "not-ready"),
  remedies: (links, f) =>
    links.map((l) => ({ kind: "recover-node", node: l.node, namespace: f.ns.name, pods: l.pods })),
});

/** Claims kept by pvc-protection, with the scheduled pods that still mount them. */
export const claimInUse = namespaceRule<"claim-in-use">({
  kinds: ["claim-in-use"],
  needs: [{ read: "placements", when: claimsHeld }],
  stage: "recover",
  find: (f, found) => {
    const stuck = new Set(found.of("pods-on-lost-node").flatMap((l) => l.pods));
    const out: LinkOf<"claim-in-use">[] = [];
    for (const b of f.blockers) {
      if (b.kind !== "PersistentVolumeClaim" || !b.finalizers.includes(PVC_PROTECTION)) continue;
      const pods = (f.reads?.pods ?? [])
        .filter((p) => p.nodeName !== undefined && p.claims.includes(b.name))
        .map((p) => p.name)
        .sort();
      if (pods.length === 0) continue;
      // A mounting pod that a finalizer of its own keeps: the claim waits on that finalizer.
      const podsHeld = f.blockers
        .filter((p) => p.kind === "Pod" && p.namespace === b.namespace && pods.includes(p.name))
        .map((p) => ({ pod: p.name, finalizers: p.finalizers }));
      out.push({
        kind: "claim-in-use",
        claim: refOf(b),
        pods,
        podsStuck: pods.some((p) => stuck.has(p)),
        podsHeld,
      });
    }
    return out;
  },
  blocks: neverBlocks,
  remedies: (links) =>
    links.map((c) => ({ kind: "release-claim", claim: c.claim, pods: c.pods, podsHeld: c.podsHeld })),
});
