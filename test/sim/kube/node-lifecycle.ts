/**
 * The node lifecycle controller (`pkg/controller/nodelifecycle`), simulated for what a stuck
 * namespace depends on. A node's kubelet posts its status; {@link NodeLifecycle.silence} stops it
 * (the machine crashed, lost its network). Once no status has come for the grace period
 * (`--node-monitor-grace-period`, {@link NODE_MONITOR_GRACE_MS}), the controller sets the node's
 * `Ready` condition — and its pressure conditions — to `Unknown` with reason `NodeStatusUnknown`
 * and message "Kubelet stopped posting node status.", and taints it
 * `node.kubernetes.io/unreachable` (`NoSchedule` and `NoExecute`); a node whose kubelet reports
 * `Ready=False` is tainted `node.kubernetes.io/not-ready` the same way; a Ready node carries
 * neither. Until then the node still reads Ready, though nothing on it answers.
 */
import { isRecord, type KubeObject } from "./object.js";
import { KubeApiError } from "./status.js";
import type { SimStore } from "./store.js";

/** kube-controller-manager's default `--node-monitor-grace-period` in 1.32. */
export const NODE_MONITOR_GRACE_MS = 50_000;

const UNREACHABLE = "node.kubernetes.io/unreachable";
const NOT_READY = "node.kubernetes.io/not-ready";
const STATUS_UNKNOWN = { reason: "NodeStatusUnknown", message: "Kubelet stopped posting node status." };
const WATCHED_CONDITIONS = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"];

interface Taint {
  readonly key: string;
  readonly effect: string;
  readonly value?: string;
  readonly timeAdded?: string;
}

function rfc3339(d: Date): string {
  return `${d.toISOString().slice(0, 19)}Z`;
}

export class NodeLifecycle {
  /** Node name → when its kubelet last posted status (ms), for silenced kubelets only. */
  private readonly silentSince = new Map<string, number>();

  public constructor(private readonly store: SimStore) {}

  /** The node's kubelet stops posting status and confirming anything (its pods stay). */
  public silence(node: string): void {
    if (!this.silentSince.has(node)) this.silentSince.set(node, this.store.clock().getTime());
  }

  /** Whether the node's kubelet is running (it confirms pod deletions when the node is Ready). */
  public kubeletUp(node: string): boolean {
    return !this.silentSince.has(node);
  }

  public reconcileAll(): void {
    for (const node of this.store.list("v1", "Node")) {
      try {
        this.reconcile(node);
      } catch (err) {
        // A concurrent writer won the race: the next pass retries.
        if (!(err instanceof KubeApiError)) throw err;
      }
    }
  }

  private reconcile(node: KubeObject): void {
    const name = node.metadata?.name ?? "";
    const now = this.store.clock();
    const status = isRecord(node.status) ? node.status : {};
    let conditions = (Array.isArray(status.conditions) ? status.conditions : []).filter(isRecord);
    const silent = this.silentSince.get(name);
    let changed = false;
    if (silent !== undefined && now.getTime() - silent >= NODE_MONITOR_GRACE_MS) {
      conditions = conditions.map((c) => {
        if (!WATCHED_CONDITIONS.includes(String(c.type)) || c.status === "Unknown") return c;
        changed = true;
        return {
          ...c,
          status: "Unknown",
          ...STATUS_UNKNOWN,
          lastTransitionTime: rfc3339(now),
          // The last status the kubelet posted.
          lastHeartbeatTime: rfc3339(new Date(silent)),
        };
      });
    }
    if (changed) this.store.update({ ...node, status: { ...status, conditions } }, { subresource: "status" });
    const ready = conditions.find((c) => c.type === "Ready");
    const wanted =
      ready?.status === "Unknown" ? UNREACHABLE : ready?.status === "False" ? NOT_READY : undefined;
    const current = this.store.get("v1", "Node", undefined, name) ?? node;
    const spec = isRecord(current.spec) ? current.spec : {};
    const taints = (Array.isArray(spec.taints) ? spec.taints : []).filter(isRecord) as unknown as Taint[];
    const next = taints.filter((t) => (t.key !== UNREACHABLE && t.key !== NOT_READY) || t.key === wanted);
    if (wanted !== undefined)
      for (const effect of ["NoSchedule", "NoExecute"])
        if (!next.some((t) => t.key === wanted && t.effect === effect))
          next.push({ key: wanted, effect, timeAdded: rfc3339(now) });
    if (next.length === taints.length && next.every((t, i) => t === taints[i])) return;
    const rest: Record<string, unknown> = { ...spec };
    delete rest.taints;
    this.store.update({ ...current, spec: next.length > 0 ? { ...rest, taints: next } : rest });
  }
}
