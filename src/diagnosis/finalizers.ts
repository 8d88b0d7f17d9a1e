/**
 * Well-known finalizers: the table of who owns each (one file per family of controllers) and the
 * matching over it — looking a finalizer up, finding its controller's Deployments, guessing the
 * controller of an unknown one — plus what removing a Load Balancer Controller finalizer leaves. Pure
 * data plus matching; no I/O.
 */
import type { DeploymentSnapshot } from "../kube/types.js";
import { clusterNameFromArgs } from "../edge/lbc-names.js";
import type { FinalizerInfo } from "./finalizer-info.js";
import { ADDON_FINALIZERS } from "./finalizers-addons.js";
import { AWS_FINALIZERS } from "./finalizers-aws.js";
import { KUBERNETES_FINALIZERS } from "./finalizers-kubernetes.js";

/** Every known finalizer: the AWS controllers', the add-ons', then Kubernetes' own. */
export const FINALIZERS: readonly FinalizerInfo[] = [
  ...AWS_FINALIZERS,
  ...ADDON_FINALIZERS,
  ...KUBERNETES_FINALIZERS,
];

/** The Load Balancer Controller's finalizers of an Ingress (its own, or its IngressGroup's). */
export function isIngressLbcFinalizer(finalizer: string): boolean {
  return finalizer === "ingress.k8s.aws/resources" || finalizer.startsWith("group.ingress.k8s.aws/");
}

/**
 * What removing a member's finalizer by hand leaves when other, live members share its
 * IngressGroup: only the member's own listener rules and target groups; the load balancer and its
 * security groups are the other members' live traffic path and stay.
 */
export function sharedGroupMemberCleanup(m: {
  readonly group: string;
  /** The other live members, `Ingress ns/name`. */
  readonly others: readonly string[];
  readonly loadBalancer?: string;
  /** `sg-… (name)` of the groups that stay. */
  readonly securityGroups: readonly string[];
  /** The member's own target groups, by name. */
  readonly targetGroups: readonly string[];
}): string {
  const others = `${m.others.slice(0, 3).join(", ")}${m.others.length > 3 ? ` and ${String(m.others.length - 3)} more` : ""}`;
  const lb =
    m.loadBalancer !== undefined
      ? `the load balancer ${m.loadBalancer}`
      : `IngressGroup ${m.group}'s load balancer`;
  return (
    `only this member's listener rules and target groups${m.targetGroups.length > 0 ? ` (${m.targetGroups.join(", ")})` : ""} — ` +
    `${lb} and its security groups${m.securityGroups.length > 0 ? ` (${m.securityGroups.join(", ")})` : ""} stay: ` +
    `they are the live traffic path of ${others}, still ${m.others.length === 1 ? "a member" : "members"} of IngressGroup ${m.group}; never delete them, ` +
    "check only this member's rules and target groups for orphans after a forced removal"
  );
}

/** What removing a TargetGroupBinding's finalizer by hand leaves, from what AWS says now. */
export function bindingCleanup(b: {
  readonly targetGroup: string;
  readonly exists?: boolean;
  readonly owner?: string;
  /** `Id=…,Port=…` of the targets still registered; absent when unread. */
  readonly targets?: readonly string[];
}): string {
  const rules = "the node security-group ingress rules the binding added";
  if (b.exists === false)
    return `no registered targets (target group ${b.targetGroup} does not exist); only ${rules}`;
  const keep = `not the target group itself${b.owner !== undefined ? `, which is ${b.owner}` : ""}`;
  if (b.targets === undefined)
    return `the targets still registered in target group ${b.targetGroup} (${keep}), and ${rules}`;
  if (b.targets.length === 0)
    return `no registered targets (none is left in target group ${b.targetGroup}; ${keep}); only ${rules}`;
  const shown = `${b.targets.slice(0, 10).join(" ")}${b.targets.length > 10 ? ` and ${String(b.targets.length - 10)} more` : ""}`;
  return `the ${b.targets.length === 1 ? "target" : `${String(b.targets.length)} targets`} still registered in target group ${b.targetGroup} (${shown}) — ${keep} — and ${rules}`;
}

/** Finalizers already looked up: a namespace's thousands of blockers share a handful of them. */
const looked = new Map<string, FinalizerInfo | null>();
const MAX_LOOKED = 1_000;

/** Words of a finalizer or an API group that name no controller. */
const GENERIC_WORDS = new Set([
  "apis",
  "apps",
  "cleanup",
  "cloud",
  "controller",
  "controllers",
  "delete",
  "deletion",
  "example",
  "finalizer",
  "finalizers",
  "github",
  "kubernetes",
  "operator",
  "operators",
  "protection",
  "resource",
  "resources",
]);

/**
 * The Deployments that most likely run an unknown finalizer's controller: those whose name or image
 * names the custom resource's kind (`Bucket` → `bucket-operator`) or a distinctive word of the
 * finalizer's domain. A guess, said as one; built-in kinds are never matched by kind (`Service`
 * would match half the cluster).
 */
export function guessControllers(
  finalizer: string,
  object: { readonly apiVersion: string; readonly kind: string },
  deployments: readonly DeploymentSnapshot[],
): readonly Guess[] {
  const custom = object.apiVersion.includes(".") && !/\.k8s\.io\//.test(object.apiVersion);
  const domain = finalizer.includes("/") ? (finalizer.split("/")[0] ?? "") : "";
  const words = [
    ...(custom ? [object.kind.toLowerCase()] : []),
    ...domain.split(".").filter((w) => w.length >= 4 && !GENERIC_WORDS.has(w)),
  ];
  return remembered(deployments, GUESSES, words.join(" "), () => {
    const names = searchNames(deployments);
    const out: Guess[] = [];
    deployments.forEach((d, i) => {
      const word = words.find((w) => names[i]?.some((n) => n.includes(w)));
      if (word !== undefined) out.push({ deployment: d, word });
    });
    return out;
  });
}

/** A Deployment guessed to run an unknown finalizer's controller, and the word it was guessed by. */
export interface Guess {
  readonly deployment: DeploymentSnapshot;
  readonly word: string;
}

/**
 * Answers kept per Deployment list: a diagnosis matches thousands of blockers against one list of
 * thousands of Deployments, and the blockers share a handful of finalizers and kinds. Each answer
 * depends only on the list and its key, and the list is dropped with the diagnosis.
 */
const answers = new WeakMap<readonly DeploymentSnapshot[], Map<object, Map<string, unknown>>>();
const GUESSES = {};
const NAMES = {};

function remembered<T>(
  deployments: readonly DeploymentSnapshot[],
  scope: object,
  key: string,
  compute: () => T,
): T {
  let byScope = answers.get(deployments);
  if (byScope === undefined) answers.set(deployments, (byScope = new Map<object, Map<string, unknown>>()));
  let byKey = byScope.get(scope);
  if (byKey === undefined) byScope.set(scope, (byKey = new Map<string, unknown>()));
  if (byKey.has(key)) return byKey.get(key) as T;
  const value = compute();
  byKey.set(key, value);
  return value;
}

/** Each Deployment's name and image names (no registry, tag or digest), lower-cased, in list order. */
function searchNames(deployments: readonly DeploymentSnapshot[]): readonly (readonly string[])[] {
  return remembered(deployments, NAMES, "", () =>
    deployments.map((d) =>
      [d.name, ...d.images.map((i) => (i.split("/").pop() ?? i).split(/[:@]/)[0] ?? "")].map((n) =>
        n.toLowerCase(),
      ),
    ),
  );
}

/** The table entry for a finalizer: exact match first, then a pattern family, then the longest prefix. */
export function lookupFinalizer(finalizer: string): FinalizerInfo | undefined {
  const kept = looked.get(finalizer);
  if (kept !== undefined) return kept ?? undefined;
  const found = findFinalizer(finalizer);
  if (looked.size >= MAX_LOOKED) looked.clear();
  looked.set(finalizer, found ?? null);
  return found;
}

/** The lookup itself, uncached (see {@link lookupFinalizer}). */
function findFinalizer(finalizer: string): FinalizerInfo | undefined {
  const exact = FINALIZERS.find((f) => !f.prefix && !f.regex && f.pattern === finalizer);
  if (exact) return exact;
  const family = FINALIZERS.find((f) => f.regex?.test(finalizer) === true);
  if (family) return family;
  return FINALIZERS.filter((f) => f.prefix && finalizer.startsWith(f.pattern)).sort(
    (a, b) => b.pattern.length - a.pattern.length,
  )[0];
}

/**
 * Deployments in the cluster that look like the controller that owns a finalizer. With the
 * finalizer itself, a family entry (ACK) narrows the match to the controller it names.
 */
export function matchControllers(
  info: FinalizerInfo,
  deployments: readonly DeploymentSnapshot[],
  finalizer?: string,
): readonly DeploymentSnapshot[] {
  const m = finalizer !== undefined && info.matcherFor ? info.matcherFor(finalizer) : info.matcher;
  if (!m) return [];
  // Keyed by the entry and, for a family entry, the finalizer its matcher is made for.
  const key = finalizer !== undefined && info.matcherFor ? finalizer : "";
  return remembered(deployments, info, key, () =>
    deployments.filter(
      (d) =>
        (m.labels ?? []).some(([k, v]) => d.labels[k] === v || d.selector[k] === v) ||
        (m.labelKeys ?? []).some((k) => k in d.labels || k in d.selector) ||
        (m.names ?? []).includes(d.name) ||
        (m.nameIncludes ?? []).some((s) => d.name.includes(s)) ||
        (m.imageIncludes ?? []).some((s) => d.images.some((img) => img.includes(s))),
    ),
  );
}

/**
 * The cluster names the Load Balancer Controller's Deployments tag with (their `--cluster-name`),
 * distinct, in Deployment order: what the controller's `elbv2.k8s.aws/cluster` tags say.
 */
export function lbcClusterNames(deployments: readonly DeploymentSnapshot[]): string[] {
  const info = lookupFinalizer("ingress.k8s.aws/resources");
  if (!info) return [];
  const names = matchControllers(info, deployments)
    .map((d) => clusterNameFromArgs(d.args))
    .filter((c): c is string => c !== undefined);
  return [...new Set(names)];
}
