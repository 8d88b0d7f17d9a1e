/**
 * Who owns a namespace in Argo CD: the Applications whose `status.resources` list the Namespace
 * object itself or objects in it, their sync settings, and Argo CD's own `SharedResourceWarning`.
 * Two Applications owning one Namespace is the seed incident's root cause: deleting it from one
 * app's dashboard deleted everything (docs/incident.md, steps 1–2). Pure.
 */
import type { ArgoApplicationSnapshot } from "../kube/types.js";

export interface ArgoAppRef {
  /** `argocd/myapp-api`. */
  readonly app: string;
  readonly automated: boolean;
  readonly prune: boolean;
  readonly selfHeal: boolean;
}

export interface ArgoOwnership {
  /** Applications that manage the Namespace object itself. */
  readonly namespaceOwners: readonly ArgoAppRef[];
  /** Objects in the namespace that more than one Application manages. */
  readonly shared: readonly {
    readonly kind: string;
    readonly name: string;
    readonly apps: readonly string[];
  }[];
  /** `SharedResourceWarning` conditions that name this namespace or its objects. */
  readonly warnings: readonly { readonly app: string; readonly message: string }[];
  /** Every Application that manages something in the namespace. */
  readonly apps: readonly ArgoAppRef[];
  /** One sentence, when ownership is doubled; absent when it is clean. */
  readonly redFlag?: string;
}

const refOf = (a: ArgoApplicationSnapshot): ArgoAppRef => ({
  app: `${a.namespace}/${a.name}`,
  automated: a.automated,
  prune: a.prune,
  selfHeal: a.selfHeal,
});

export function describeSync(a: ArgoAppRef): string {
  if (!a.automated) return "manual sync";
  return `auto-sync${a.prune ? " + prune" : ""}${a.selfHeal ? " + self-heal" : ""}`;
}

export function analyzeArgoOwnership(
  namespace: string,
  apps: readonly ArgoApplicationSnapshot[],
): ArgoOwnership | undefined {
  const namespaceOwners = apps.filter((a) =>
    a.resources.some((r) => r.kind === "Namespace" && r.group === "" && r.name === namespace),
  );
  const inside = apps.filter((a) => a.resources.some((r) => r.namespace === namespace));
  const involved = [...new Set([...namespaceOwners, ...inside])];
  if (involved.length === 0) return undefined;

  const byObject = new Map<string, string[]>();
  for (const a of involved) {
    for (const r of a.resources) {
      if (r.namespace !== namespace) continue;
      const key = `${r.group === "" ? "" : `${r.group}/`}${r.kind}|${r.name}`;
      byObject.set(key, [...(byObject.get(key) ?? []), `${a.namespace}/${a.name}`]);
    }
  }
  const shared = [...byObject]
    .filter(([, owners]) => new Set(owners).size > 1)
    .map(([key, owners]) => {
      const [kind = "", name = ""] = key.split("|");
      return { kind, name, apps: [...new Set(owners)] };
    });
  const warnings = involved.flatMap((a) =>
    a.conditions
      .filter((c) => c.type === "SharedResourceWarning" && (c.message ?? "").includes(namespace))
      .map((c) => ({ app: `${a.namespace}/${a.name}`, message: c.message ?? "" })),
  );
  const owners = namespaceOwners.map(refOf);
  let redFlag: string | undefined;
  if (owners.length > 1) {
    redFlag =
      `${String(owners.length)} Argo CD Applications manage Namespace ${namespace} (${owners.map((o) => `${o.app}: ${describeSync(o)}`).join("; ")}): ` +
      "deleting or pruning it from any one of them deletes everything in it. Keep the Namespace in exactly one Application (remove it from the others' manifests) before the next sync.";
  } else if (shared.length > 0) {
    redFlag = `${String(shared.length)} object${shared.length === 1 ? "" : "s"} in ${namespace} ${shared.length === 1 ? "is" : "are"} managed by more than one Argo CD Application (${shared
      .slice(0, 3)
      .map((s) => `${s.kind} ${s.name}: ${s.apps.join(", ")}`)
      .join("; ")}): give each object one owner.`;
  } else if (warnings.length > 0) {
    redFlag = `Argo CD reports SharedResourceWarning: ${warnings[0]?.message ?? ""}`;
  }
  return {
    namespaceOwners: owners,
    shared,
    warnings,
    apps: involved.map(refOf),
    ...(redFlag !== undefined ? { redFlag } : {}),
  };
}
