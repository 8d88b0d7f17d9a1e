/**
 * The namespace controller's own report of what is left in a Terminating namespace — its
 * `NamespaceContentRemaining` (`Some resources are remaining: ingresses.networking.k8s.io has 1
 * resource instances, pods. has 2 resource instances`) and `NamespaceFinalizersRemaining` (`Some
 * content in the namespace has finalizers remaining: ingress.k8s.aws/resources in 1 resource
 * instances`) conditions — read, and checked against what the lists found. Pure; no I/O.
 */
import type { NamespaceSnapshot, ObjectSnapshot, ResourceType } from "../kube/types.js";
import type { ScanFallback } from "./types.js";

export const CONTENT_REMAINING = "NamespaceContentRemaining";
export const FINALIZERS_REMAINING = "NamespaceFinalizersRemaining";

/** What the controller counted on its last pass: per `resource.group` (`pods.` for the core group), per finalizer. */
export interface ControllerReport {
  readonly types: ReadonlyMap<string, number>;
  readonly finalizers: ReadonlyMap<string, number>;
}

/** The controller's name for a type: `resource.group`, with the core group's trailing dot (`pods.`). */
export function reportLabel(t: Pick<ResourceType, "group" | "resource">): string {
  return `${t.resource}.${t.group}`;
}

const CONTENT = { prefix: "Some resources are remaining: ", part: /^(\S+) has (\d+) resource instances$/ };
const FINALIZERS = {
  prefix: "Some content in the namespace has finalizers remaining: ",
  part: /^(\S+) in (\d+) resource instances$/,
};

/** One condition's counts; `False` is "nothing left". */
function counts(
  ns: Pick<NamespaceSnapshot, "conditions">,
  type: string,
  form: { prefix: string; part: RegExp },
): Map<string, number> | ScanFallback {
  const c = ns.conditions.find((x) => x.type === type);
  if (c === undefined) return { kind: "no-report", condition: type };
  if (c.status === "False") return new Map();
  if (c.status !== "True") return { kind: "report-unknown", condition: type };
  const message = c.message ?? "";
  if (!message.startsWith(form.prefix)) return { kind: "report-unreadable", condition: type };
  const out = new Map<string, number>();
  for (const part of message.slice(form.prefix.length).split(", ")) {
    if (part === "") continue;
    const m = form.part.exec(part);
    if (m === null) return { kind: "report-unreadable", condition: type };
    const [, key = "", n = "0"] = m;
    out.set(key, (out.get(key) ?? 0) + Number(n));
  }
  return out;
}

/**
 * Failures the controller reports beside its counts. `unexpected items still remain` names a type
 * whose objects it did count; any other failure (a list or delete that errored) may have left a
 * type out of the counts.
 */
function onlyCountedFailures(message: string): boolean {
  const n = /^Failed to delete all resource types, (\d+) remaining: /.exec(message)?.[1];
  if (n === undefined) return false;
  const counted = message.split("unexpected items still remain in namespace: ").length - 1;
  return counted === Number(n);
}

/**
 * The report, when the diagnosis may list only what it names; otherwise why not. `discoveryFailed`:
 * the bot's own discovery failed for some group-version.
 */
export function readControllerReport(
  ns: Pick<NamespaceSnapshot, "conditions">,
  discoveryFailed: boolean,
): ControllerReport | ScanFallback {
  const isTrue = (type: string) => ns.conditions.some((c) => c.type === type && c.status === "True");
  if (discoveryFailed) return { kind: "discovery-failed", by: "unstuck" };
  // Types the controller could not discover (or parse) are in neither count.
  if (isTrue("NamespaceDeletionDiscoveryFailure") || isTrue("NamespaceDeletionGroupVersionParsingFailure"))
    return { kind: "discovery-failed", by: "namespace-controller" };
  const failure = ns.conditions.find((c) => c.type === "NamespaceDeletionContentFailure");
  if (failure?.status === "True" && !onlyCountedFailures(failure.message ?? ""))
    return { kind: "content-failure" };
  const types = counts(ns, CONTENT_REMAINING, CONTENT);
  if (!(types instanceof Map)) return types;
  const finalizers = counts(ns, FINALIZERS_REMAINING, FINALIZERS);
  if (!(finalizers instanceof Map)) return finalizers;
  return { types, finalizers };
}

/**
 * Where what the lists found disagrees with the report: a type holding another number of objects
 * than reported, or (when every type named was read) another number of objects with a finalizer —
 * an object in a type the report left out. `listed` is what the reported types hold; a type whose
 * list failed is absent (and is reported unread, not as a disagreement).
 */
export function checkReport(
  report: ControllerReport,
  listed: readonly { readonly type: ResourceType; readonly objects: readonly ObjectSnapshot[] }[],
  allRead: boolean,
): ScanFallback | undefined {
  for (const l of listed) {
    const reported = report.types.get(reportLabel(l.type)) ?? 0;
    if (l.objects.length !== reported) {
      return {
        kind: "count-mismatch",
        resource: l.type.group === "" ? l.type.resource : reportLabel(l.type),
        reported,
        found: l.objects.length,
      };
    }
  }
  if (!allRead) return undefined;
  const found = new Map<string, number>();
  for (const l of listed) {
    for (const o of l.objects) for (const f of o.finalizers) found.set(f, (found.get(f) ?? 0) + 1);
  }
  const names = [...new Set([...report.finalizers.keys(), ...found.keys()])].sort();
  for (const finalizer of names) {
    const reported = report.finalizers.get(finalizer) ?? 0;
    const n = found.get(finalizer) ?? 0;
    if (n !== reported) return { kind: "finalizer-mismatch", finalizer, reported, found: n };
  }
  return undefined;
}
