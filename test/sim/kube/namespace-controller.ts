/**
 * kube-controller-manager's namespace controller, simulated after kubernetes
 * `pkg/controller/namespace/deletion` (namespaced_resources_deleter.go,
 * status_condition_utils.go): for a namespace with a deletionTimestamp it deletes all namespaced
 * content with background propagation, records the five deletion conditions with upstream's
 * exact reasons and messages, and when nothing remains (and discovery fully succeeded) removes
 * `kubernetes` from `spec.finalizers` through the finalize path so the namespace goes away.
 */
import { apiVersionOf, type ResourceDef } from "./registry.js";
import { isRecord, rfc3339, type KubeObject } from "./object.js";
import { KubeApiError } from "./status.js";
import { PropagationPolicy, type SimStore } from "./store.js";

interface Condition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

const CONDITION_TYPES = [
  "NamespaceDeletionDiscoveryFailure",
  "NamespaceDeletionGroupVersionParsingFailure",
  "NamespaceDeletionContentFailure",
  "NamespaceContentRemaining",
  "NamespaceFinalizersRemaining",
] as const;

const OK_MESSAGES: Record<string, string> = {
  NamespaceDeletionDiscoveryFailure: "All resources successfully discovered",
  NamespaceDeletionGroupVersionParsingFailure: "All legacy kube types successfully parsed",
  NamespaceDeletionContentFailure: "All content successfully deleted, may be waiting on finalization",
  NamespaceContentRemaining: "All content successfully removed",
  NamespaceFinalizersRemaining: "All content-preserving finalizers finished",
};

const OK_REASONS: Record<string, string> = {
  NamespaceDeletionDiscoveryFailure: "ResourcesDiscovered",
  NamespaceDeletionGroupVersionParsingFailure: "ParsedGroupVersions",
  NamespaceDeletionContentFailure: "ContentDeleted",
  NamespaceContentRemaining: "ContentRemoved",
  NamespaceFinalizersRemaining: "ContentHasNoFinalizers",
};

/** What a real client-go says for a group-version whose aggregated discovery is unavailable (1.30+). */
export function discoveryFailureMessage(failing: readonly string[]): string {
  const groups = [...failing].sort().map((gv) => `${gv}: stale GroupVersion discovery: ${gv}`);
  return `Discovery failed for some groups, ${failing.length} failing: unable to retrieve the complete list of server APIs: ${groups.join(", ")}`;
}

/** upstream `estimateGracefulTerminationForPods`. */
function podEstimateSeconds(pods: readonly KubeObject[]): number {
  let estimate = 0;
  for (const p of pods) {
    const phase = isRecord(p.status) ? p.status.phase : undefined;
    if (phase === "Succeeded" || phase === "Failed") continue;
    const grace = isRecord(p.spec) ? p.spec.terminationGracePeriodSeconds : undefined;
    // The API server defaults an unset grace period to 30 s.
    const g = typeof grace === "number" ? grace : 30;
    if (g > estimate) estimate = g;
  }
  return estimate;
}

export class NamespaceController {
  /**
   * @param failingGroups the group-versions whose discovery currently fails (`metrics.k8s.io/v1beta1`).
   */
  public constructor(
    private readonly store: SimStore,
    private readonly failingGroups: () => readonly string[],
  ) {}

  /** One pass over every terminating namespace. */
  public reconcileAll(): void {
    const nsDef = this.store.registry.find("", "v1", "namespaces");
    if (nsDef === undefined) return;
    for (const ns of this.store.listIn(nsDef)) {
      if (ns.metadata?.deletionTimestamp === undefined) continue;
      try {
        this.reconcile(nsDef, ns);
      } catch (err) {
        // A concurrent writer (a test, kubectl) won the race; the next pass sees the new state.
        if (!(err instanceof KubeApiError)) throw err;
      }
    }
  }

  private reconcile(nsDef: ResourceDef, ns: KubeObject): void {
    const name = ns.metadata?.name ?? "";
    if (isRecord(ns.status) && ns.status.phase !== "Terminating") {
      ns = this.store.updateIn(
        nsDef,
        undefined,
        name,
        { ...ns, status: { ...ns.status, phase: "Terminating" } },
        {
          subresource: "status",
        },
      );
    }
    const specFins =
      isRecord(ns.spec) && Array.isArray(ns.spec.finalizers) ? (ns.spec.finalizers as string[]) : [];
    if (!specFins.includes("kubernetes")) return;

    const newConditions: Condition[] = [];
    const errors: string[] = [];
    const failing = this.failingGroups();
    const failingSet = new Set(failing);
    if (failing.length > 0) {
      const message = discoveryFailureMessage(failing);
      errors.push(message);
      newConditions.push({
        type: "NamespaceDeletionDiscoveryFailure",
        status: "True",
        reason: "DiscoveryFailed",
        message,
      });
    }

    const deletable = this.store.registry
      .preferred()
      .filter((d) => d.namespaced && d.verbs.includes("delete") && !failingSet.has(apiVersionOf(d)));
    const remaining = new Map<string, number>();
    const finalizers = new Map<string, number>();
    const deleteErrors: string[] = [];
    for (const d of deletable) {
      // upstream deletes the collection; the first refusal (an admission webhook that cannot be
      // called) is that type's error, and the type is then not counted as remaining.
      let refused: string | undefined;
      for (const o of this.store.listIn(d, name)) {
        if (o.metadata?.deletionTimestamp !== undefined) continue;
        try {
          this.store.deleteIn(d, name, o.metadata?.name ?? "", {
            propagationPolicy: PropagationPolicy.Background,
          });
        } catch (err) {
          if (!(err instanceof KubeApiError) || err.code === 404 || err.code === 409) throw err;
          refused = err.message;
          break;
        }
      }
      if (refused !== undefined) {
        deleteErrors.push(refused);
        continue;
      }
      const left = this.store.listIn(d, name);
      if (left.length === 0) continue;
      remaining.set(`${d.resource}.${d.group}`, left.length);
      for (const o of left) {
        for (const f of o.metadata?.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
      }
      // Pods: upstream's estimate is the longest terminationGracePeriodSeconds of the pods not yet
      // Succeeded or Failed; while it is above 0, pods left are no error (their kubelets finish them).
      if (d.group === "" && d.resource === "pods" && podEstimateSeconds(left) > 0) continue;
      if (!left.some((o) => (o.metadata?.finalizers ?? []).length > 0)) {
        errors.push(
          `unexpected items still remain in namespace: ${name} for gvr: ${d.group}/${d.version}, Resource=${d.resource}`,
        );
      }
    }
    if (remaining.size > 0) {
      const parts = [...remaining].map(([r, n]) => `${r} has ${n} resource instances`).sort();
      newConditions.push({
        type: "NamespaceContentRemaining",
        status: "True",
        reason: "SomeResourcesRemain",
        message: `Some resources are remaining: ${parts.join(", ")}`,
      });
    }
    if (finalizers.size > 0) {
      const parts = [...finalizers].map(([f, n]) => `${f} in ${n} resource instances`).sort();
      newConditions.push({
        type: "NamespaceFinalizersRemaining",
        status: "True",
        reason: "SomeFinalizersRemain",
        message: `Some content in the namespace has finalizers remaining: ${parts.join(", ")}`,
      });
    }
    errors.push(...deleteErrors);
    const contentErrors = [...errors.filter((e) => e.startsWith("unexpected items")), ...deleteErrors];
    if (contentErrors.length > 0) {
      newConditions.push({
        type: "NamespaceDeletionContentFailure",
        status: "True",
        reason: "ContentDeletionFailed",
        message: `Failed to delete all resource types, ${contentErrors.length} remaining: ${contentErrors.sort().join(", ")}`,
      });
    }

    const fresh = this.store.getIn(nsDef, undefined, name);
    const status = isRecord(fresh.status) ? fresh.status : {};
    const conditions = Array.isArray(status.conditions)
      ? (structuredClone(status.conditions) as Condition[])
      : [];
    if (this.updateConditions(conditions, newConditions)) {
      this.store.updateIn(
        nsDef,
        undefined,
        name,
        { ...fresh, status: { ...status, conditions } },
        { subresource: "status" },
      );
    }
    if (errors.length > 0 || remaining.size > 0) return;

    const latest = this.store.getIn(nsDef, undefined, name);
    const spec = isRecord(latest.spec) ? latest.spec : {};
    const fins = Array.isArray(spec.finalizers) ? (spec.finalizers as string[]) : [];
    this.store.updateIn(
      nsDef,
      undefined,
      name,
      { ...latest, spec: { ...spec, finalizers: fins.filter((f) => f !== "kubernetes") } },
      { subresource: "finalize" },
    );
  }

  /** upstream `updateConditions`: ok-variants for absent types, transition time only on status flips. */
  private updateConditions(conditions: Condition[], fresh: Condition[]): boolean {
    let changed = false;
    const at = rfc3339(this.store.clock());
    for (const type of CONDITION_TYPES) {
      const next = fresh.find((c) => c.type === type) ?? {
        type,
        status: "False",
        reason: OK_REASONS[type],
        message: OK_MESSAGES[type],
      };
      const old = conditions.find((c) => c.type === type);
      if (old === undefined) {
        conditions.push({
          type,
          status: next.status,
          lastTransitionTime: at,
          reason: next.reason,
          message: next.message,
        });
        changed = true;
      } else if (old.status !== next.status || old.message !== next.message || old.reason !== next.reason) {
        if (old.status !== next.status) old.lastTransitionTime = at;
        old.status = next.status;
        old.reason = next.reason;
        old.message = next.message;
        changed = true;
      }
    }
    return changed;
  }
}
