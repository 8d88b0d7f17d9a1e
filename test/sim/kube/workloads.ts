/**
 * What finishes a pod's and a claim's deletion on a real cluster, simulated:
 *
 * - Graceful pod deletion (the pod registry's `CheckGracefulDelete`): a pod bound to a node
 *   (`spec.nodeName`), not Succeeded or Failed, deleted with a grace period above 0 (the request's
 *   `gracePeriodSeconds`, else `spec.terminationGracePeriodSeconds`, else 30) gets a
 *   `deletionTimestamp` of now + grace and stays until its node's kubelet confirms with a delete of
 *   grace 0. The simulator's kubelet of a node whose `Ready` condition is `True` confirms at once
 *   (pods there go as they always did); a node that is NotReady/Unknown, or gone, confirms nothing,
 *   so its pods keep their deletionTimestamp. An unscheduled pod goes at once.
 * - The pod garbage collector (`pkg/controller/podgc`, `gcOrphaned`): a pod bound to a node that
 *   does not exist is force-deleted once it has been seen orphaned for the quarantine (40 s).
 * - The PVC protection admission plugin adds `kubernetes.io/pvc-protection` to every new claim; the
 *   pvc-protection controller removes it from a deleting claim once no scheduled pod of its
 *   namespace names it in `spec.volumes[].persistentVolumeClaim.claimName`.
 */
import { isRecord, type KubeObject } from "./object.js";
import { KubeApiError } from "./status.js";
import type { SimStore } from "./store.js";

export const PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection";
/** podgc's quarantine before an orphaned pod is force-deleted. */
export const ORPHAN_QUARANTINE_MS = 40_000;
const DEFAULT_GRACE_SECONDS = 30;

export type NodeState = "ready" | "not-ready" | "missing";

export function nodeState(store: SimStore, nodeName: string): NodeState {
  const node = store.get("v1", "Node", undefined, nodeName);
  if (node === undefined) return "missing";
  const status = isRecord(node.status) ? node.status : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  const ready = conditions.find((c) => isRecord(c) && c.type === "Ready");
  return isRecord(ready) && ready.status === "True" ? "ready" : "not-ready";
}

function spec(o: KubeObject): Record<string, unknown> {
  return isRecord(o.spec) ? o.spec : {};
}

export function nodeNameOf(pod: KubeObject): string {
  const n = spec(pod).nodeName;
  return typeof n === "string" ? n : "";
}

function terminal(pod: KubeObject): boolean {
  const phase = isRecord(pod.status) ? pod.status.phase : undefined;
  return phase === "Succeeded" || phase === "Failed";
}

/** The grace period a delete of `pod` gets: 0 when it goes at once. */
export function podGracePeriod(pod: KubeObject, requested: number | undefined): number {
  if (nodeNameOf(pod) === "" || terminal(pod)) return 0;
  if (requested !== undefined) return Math.max(0, requested);
  const g = spec(pod).terminationGracePeriodSeconds;
  return typeof g === "number" ? g : DEFAULT_GRACE_SECONDS;
}

/** Whether a deleting pod still waits for a kubelet that will not come (its node is not Ready). */
export function awaitsKubelet(store: SimStore, pod: KubeObject): boolean {
  const grace = pod.metadata?.deletionGracePeriodSeconds ?? 0;
  const node = nodeNameOf(pod);
  return (
    grace > 0 &&
    node !== "" &&
    !terminal(pod) &&
    (nodeState(store, node) !== "ready" || !store.kubeletUp(node))
  );
}

/** Claim names a pod mounts. */
export function claimNames(pod: KubeObject): string[] {
  const volumes = Array.isArray(spec(pod).volumes) ? (spec(pod).volumes as unknown[]) : [];
  return volumes.flatMap((v) => {
    const claim = isRecord(v) && isRecord(v.persistentVolumeClaim) ? v.persistentVolumeClaim : undefined;
    return typeof claim?.claimName === "string" ? [claim.claimName] : [];
  });
}

/** The kubelets of Ready nodes, the pod garbage collector and the pvc-protection controller. */
export class WorkloadControllers {
  private readonly orphanSince = new Map<string, number>();

  public constructor(private readonly store: SimStore) {}

  public reconcileAll(): void {
    try {
      this.kubelets();
      this.podGc();
      this.pvcProtection();
    } catch (err) {
      // A concurrent writer won the race, or an admission webhook refused: the next pass retries.
      if (!(err instanceof KubeApiError)) throw err;
    }
  }

  private pods(): KubeObject[] {
    return this.store.list("v1", "Pod");
  }

  /** A Ready node's kubelet confirms its deleting pods (the final delete with grace 0). */
  private kubelets(): void {
    for (const pod of this.pods()) {
      const node = nodeNameOf(pod);
      if (pod.metadata?.deletionTimestamp === undefined || node === "") continue;
      if ((pod.metadata.deletionGracePeriodSeconds ?? 0) === 0) continue;
      if (nodeState(this.store, node) !== "ready" || !this.store.kubeletUp(node)) continue;
      this.forceDelete(pod);
    }
  }

  private podGc(): void {
    const now = this.store.clock().getTime();
    const seen = new Set<string>();
    for (const pod of this.pods()) {
      const node = nodeNameOf(pod);
      if (node === "" || nodeState(this.store, node) !== "missing") continue;
      const key = `${pod.metadata?.namespace ?? ""}/${pod.metadata?.name ?? ""}/${pod.metadata?.uid ?? ""}`;
      seen.add(key);
      const since = this.orphanSince.get(key) ?? now;
      this.orphanSince.set(key, since);
      if (now - since >= ORPHAN_QUARANTINE_MS) this.forceDelete(pod);
    }
    for (const k of this.orphanSince.keys()) if (!seen.has(k)) this.orphanSince.delete(k);
  }

  private forceDelete(pod: KubeObject): void {
    try {
      this.store.delete("v1", "Pod", pod.metadata?.namespace, pod.metadata?.name ?? "", {
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata?.uid },
      });
    } catch (err) {
      if (!(err instanceof KubeApiError)) throw err;
    }
  }

  private pvcProtection(): void {
    for (const pvc of this.store.list("v1", "PersistentVolumeClaim")) {
      const meta = pvc.metadata ?? {};
      if (meta.deletionTimestamp === undefined) continue;
      if (!(meta.finalizers ?? []).includes(PVC_PROTECTION_FINALIZER)) continue;
      const inUse = this.store
        .list("v1", "Pod", meta.namespace)
        .some((p) => nodeNameOf(p) !== "" && claimNames(p).includes(meta.name ?? ""));
      if (inUse) continue;
      this.store.update({
        ...pvc,
        metadata: {
          ...meta,
          finalizers: (meta.finalizers ?? []).filter((f) => f !== PVC_PROTECTION_FINALIZER),
        },
      });
    }
  }
}
