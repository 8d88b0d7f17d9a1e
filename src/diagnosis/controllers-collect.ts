/**
 * The Deployments that may run the controllers of the blockers' finalizers, read through the
 * `KubePort` by the labels the finalizer table knows them by, and every Deployment only when that
 * cannot settle it. A list that fails becomes a warning; the diagnosis goes on without controllers.
 */
import { toUserError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import type { DeploymentSnapshot, ObjectSnapshot } from "../kube/types.js";
import { lookupFinalizer, matchControllers } from "./finalizers.js";

/** The Deployments read, or why they could not be. */
export type Controllers =
  { ok: true; deployments: readonly DeploymentSnapshot[] } | { ok: false; error: unknown };

/** The controllers of the finalizers the namespace controller's report names, asked for beside the lists. */
export interface EarlyControllers {
  readonly finalizers: ReadonlySet<string>;
  readonly read: Promise<Controllers>;
}

/**
 * The controllers of the finalizers the namespace controller's report names, asked for now: beside
 * the lists of its content, a round before the blockers that hold those finalizers are known.
 */
export function earlyControllers(
  kube: KubePort,
  report: { readonly finalizers: ReadonlyMap<string, number> },
): EarlyControllers {
  const finalizers = new Set(report.finalizers.keys());
  return { finalizers, read: readControllers(kube, finalizers) };
}

/** The Deployments of the blockers' controllers: those asked for beside the lists when they cover every finalizer. */
export async function controllerDeployments(
  kube: KubePort,
  blockers: readonly ObjectSnapshot[],
  early: EarlyControllers | undefined,
  warnings: string[],
): Promise<readonly DeploymentSnapshot[]> {
  const finalizers = new Set(blockers.flatMap((b) => b.finalizers));
  const covered = early !== undefined && [...finalizers].every((f) => early.finalizers.has(f));
  const r = await (covered ? early.read : readControllers(kube, finalizers));
  if (r.ok) return r.deployments;
  warnings.push(`Could not list controller Deployments: ${toUserError(r.error).message}`);
  return [];
}

/** A label value a selector accepts. */
const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/**
 * The Deployments that may run the controllers of `finalizers`, read where they are: by the labels
 * the finalizer table knows each controller by (`app.kubernetes.io/name in (…)`, one list per
 * label key) rather than every Deployment of the cluster. Every Deployment is read only when a
 * controller has no label to look for, or no Deployment of it was found by label: it may be
 * installed without its chart's labels (matched by name or image), and "not installed" is said
 * only after looking at all of them. Built-in finalizers need none; an unknown one needs every
 * Deployment, to guess its controller from their names and images.
 */
export async function readControllers(kube: KubePort, finalizers: Iterable<string>): Promise<Controllers> {
  const all = [...new Set(finalizers)];
  const wanted = all.flatMap((finalizer) => {
    const info = lookupFinalizer(finalizer);
    const matcher = info && !info.builtin ? (info.matcherFor?.(finalizer) ?? info.matcher) : undefined;
    return info && matcher ? [{ finalizer, info, matcher }] : [];
  });
  try {
    // A finalizer the table does not know: its controller is guessed from every Deployment.
    if (all.some((f) => lookupFinalizer(f) === undefined))
      return { ok: true, deployments: await kube.listDeployments() };
    if (wanted.length === 0) return { ok: true, deployments: [] };
    const values = new Map<string, Set<string>>();
    const keys = new Set<string>();
    let unlabelled = false;
    for (const { matcher } of wanted) {
      const labels = (matcher.labels ?? []).filter(([, v]) => v !== "" && LABEL_VALUE.test(v));
      for (const [k, v] of labels) values.set(k, (values.get(k) ?? new Set()).add(v));
      for (const k of matcher.labelKeys ?? []) keys.add(k);
      if (labels.length === 0 && (matcher.labelKeys ?? []).length === 0) unlabelled = true;
    }
    if (unlabelled) return { ok: true, deployments: await kube.listDeployments() };
    const selectors = [...[...values].map(([k, vs]) => `${k} in (${[...vs].sort().join(",")})`), ...keys];
    const lists = await Promise.all(
      selectors.map((labelSelector) => kube.listDeployments({ labelSelector })),
    );
    const byName = new Map(lists.flat().map((d) => [`${d.namespace}/${d.name}`, d]));
    const found = [...byName.values()];
    if (wanted.some(({ finalizer, info }) => matchControllers(info, found, finalizer).length === 0))
      return { ok: true, deployments: await kube.listDeployments() };
    return { ok: true, deployments: found };
  } catch (error) {
    return { ok: false, error };
  }
}
