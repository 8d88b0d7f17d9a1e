/**
 * Who owns a finalizer: the table's controller and every candidate Deployment found in the
 * cluster, or — for a finalizer the table does not know — the Deployments whose name or image
 * names it (a guess, said as one). Pure.
 */
import type { DeploymentSnapshot } from "../kube/types.js";
import type { FinalizerInfo } from "./finalizer-info.js";
import { guessControllers, lookupFinalizer, matchControllers } from "./finalizers.js";
import type { ControllerRef, FinalizerOwner, OwnerStatus } from "./types.js";

function controllerRef(d: DeploymentSnapshot): ControllerRef {
  return {
    namespace: d.namespace,
    name: d.name,
    kind: "Deployment",
    replicas: d.replicas,
    readyReplicas: d.readyReplicas,
    healthy: d.replicas > 0 && d.readyReplicas >= d.replicas,
    images: d.images,
  };
}

/**
 * The owners of each finalizer, with every candidate controller found in the cluster, and whether
 * anything will remove it (`status`): a known finalizer whose controller is not in the cluster is
 * `not-installed` — nothing will ever remove it — which is a different fix from a degraded one.
 */
export function ownersOf(
  finalizers: readonly string[],
  deployments: readonly DeploymentSnapshot[],
  object: { readonly apiVersion: string; readonly kind: string },
): readonly FinalizerOwner[] {
  let known = answers.get(deployments);
  if (known === undefined) answers.set(deployments, (known = { owners: new Map(), lists: new Map() }));
  const { owners, lists } = known;
  const listKey = `${finalizers.join("\n")}\n\n${object.apiVersion}\n${object.kind}`;
  let list = lists.get(listKey);
  if (list === undefined)
    lists.set(
      listKey,
      (list = finalizers.map((finalizer) => {
        const key = `${finalizer}\n${object.apiVersion}\n${object.kind}`;
        let owner = owners.get(key);
        if (owner === undefined) owners.set(key, (owner = ownerOf(finalizer, deployments, object)));
        return owner;
      })),
    );
  return list;
}

/**
 * Owners kept per Deployment list, by finalizer and kind: the thousands of blockers of a big
 * namespace share a handful of each, and an owner depends on nothing else. The objects are
 * immutable, so the blockers share them (and the memory); the list is dropped with the diagnosis.
 */
const answers = new WeakMap<
  readonly DeploymentSnapshot[],
  {
    readonly owners: Map<string, FinalizerOwner>;
    /** The same finalizers on the same kind: one list for all those blockers. */
    readonly lists: Map<string, readonly FinalizerOwner[]>;
  }
>();

function ownerOf(
  finalizer: string,
  deployments: readonly DeploymentSnapshot[],
  object: { readonly apiVersion: string; readonly kind: string },
): FinalizerOwner {
  const info = lookupFinalizer(finalizer);
  if (!info) {
    const domain = finalizer.includes("/") ? finalizer.split("/")[0] : undefined;
    // Not in the table: the Deployments whose name or image names the kind or the domain.
    const guessed = guessControllers(finalizer, object, deployments);
    const candidates = guessed.map((g) => controllerRef(g.deployment));
    return {
      finalizer,
      controller: domain ? `unknown controller (${domain})` : "unknown controller",
      purpose: "not in the table of well-known finalizers",
      cleanup: "unknown: find the controller that added it before removing it",
      candidates,
      known: false,
      status: candidates.some((c) => c.healthy) ? "healthy" : candidates.length > 0 ? "degraded" : "unknown",
      ...(guessed[0] !== undefined ? { guessedBy: guessed[0].word } : {}),
    };
  }
  const candidates: ControllerRef[] = info.builtin
    ? [
        {
          namespace: "kube-system",
          name: info.controller,
          kind: "builtin",
          replicas: 1,
          readyReplicas: 1,
          healthy: true,
          images: [],
        },
      ]
    : matchControllers(info, deployments, finalizer).map(controllerRef);
  return {
    finalizer,
    controller: info.controller,
    purpose: info.purpose,
    cleanup: info.cleanup,
    candidates,
    known: true,
    status: ownerStatus(info, candidates),
  };
}

function ownerStatus(info: FinalizerInfo, candidates: readonly ControllerRef[]): OwnerStatus {
  if (info.builtin) return "builtin";
  if (candidates.some((c) => c.healthy)) return "healthy";
  if (candidates.length > 0) return "degraded";
  // No matcher, or a controller that may run as something other than a Deployment: absence of a
  // matching Deployment proves nothing, and "not installed" would invite a forced removal.
  if (!info.matcher || info.notOnlyDeployment !== undefined) return "unknown";
  return "not-installed";
}
