/**
 * What is left in a Terminating namespace, read through the `KubePort`: only the types the
 * namespace controller's own report names when that report can be trusted, every namespaced
 * listable type otherwise (metadata only, in parallel, bounded). A list that fails becomes a
 * warning and its type unread; the controllers of the finalizers the report names are asked for
 * beside the lists.
 */
import { ErrorCode, isUnstuckError, UnstuckError, toUserError } from "../errors.js";
import { DEFAULT_KUBE_CONCURRENCY } from "../kube/limiter.js";
import type { KubePort } from "../kube/port.js";
import type { DiscoverySnapshot, NamespaceSnapshot, ResourceType } from "../kube/types.js";
import { mapLimit } from "../util/concurrency.js";
import { resourceLabel } from "./analyze.js";
import type { ListedType } from "./causes/rule.js";
import { checkReport, readControllerReport, reportLabel } from "./controller-report.js";
import { earlyControllers, type EarlyControllers } from "./controllers-collect.js";
import type { ContentScan, ForbiddenType, ScanFallback } from "./types.js";

/** Groups whose objects are the same as another group's (listing both would double-count). */
const DUPLICATE_GROUPS = new Set(["events.k8s.io"]);

/**
 * Types whose bodies are secrets. The adapter lists every type metadata only
 * (`PartialObjectMetadataList`), but RBAC authorizes the verb, not the representation: the `list`
 * this needs would return every Secret's data to a request for the full form, and even metadata can
 * carry it (`kubectl.kubernetes.io/last-applied-configuration` of an applied Secret). So the
 * diagnosis reads them only when the namespace's `NamespaceContentRemaining` condition names them
 * (or says nothing), and a chart installed with `rbac.readScope=explicit` can leave the grant out.
 */
const BODY_SENSITIVE = new Set(["/secrets"]);

/**
 * Whether the namespace may still hold objects of `type`, by its own `NamespaceContentRemaining`
 * condition (the namespace controller's last count, e.g. `Some resources are remaining: secrets.
 * has 2 resource instances`). A Terminating namespace admits no new object, so a type the condition
 * does not name is gone. Missing, Unknown or unreadable condition: true (list it to find out).
 */
export function contentMayRemain(
  ns: Pick<NamespaceSnapshot, "conditions"> | null,
  type: Pick<ResourceType, "group" | "resource">,
): boolean {
  const c = ns?.conditions.find((x) => x.type === "NamespaceContentRemaining");
  if (c === undefined) return true;
  if (c.status === "False") return false;
  if (c.status !== "True") return true;
  const listed = /^Some resources are remaining: (.*)$/.exec(c.message ?? "")?.[1];
  if (listed === undefined) return true;
  const label = `${type.resource}.${type.group} has `;
  return listed.split(", ").some((part) => part.startsWith(label));
}

/** How the content is read: parallel list requests (default the adapter's own bound, 64). */
export interface ContentOptions {
  readonly concurrency?: number;
}

/** What the lists found, what they could not read, and how the namespace was scanned. */
export interface ContentRead {
  readonly listed: ListedType[];
  readonly unlisted: string[];
  /** Of `unlisted`, the types RBAC refuses (403). */
  readonly forbidden: ForbiddenType[];
  readonly scan: ContentScan;
  /** The controllers of the finalizers the report names, asked for beside the lists. */
  readonly controllers?: EarlyControllers;
}

/**
 * What is left in the namespace. When the namespace controller's report can be trusted (see
 * `readControllerReport`), only the types it names are listed — and the controllers of the
 * finalizers it names are asked for at the same time; should what the lists find disagree with it,
 * every other type is listed too. Otherwise every namespaced listable type is listed. `early`: the
 * controllers already asked for (`earlyControllers`), when the diagnosis asked before its discovery.
 */
export async function readContent(
  kube: KubePort,
  ns: NamespaceSnapshot,
  discovery: DiscoverySnapshot,
  options: ContentOptions,
  warnings: string[],
  early: EarlyControllers | undefined,
): Promise<ContentRead> {
  const listable = discovery.resources.filter((t) => t.namespaced && t.verbs.includes("list"));
  const all = listable.filter((t) => !DUPLICATE_GROUPS.has(t.group));
  const report = readControllerReport(ns, discovery.failures.length > 0);
  const full = async (reason: ScanFallback): Promise<ContentRead> => ({
    ...(await listTypes(kube, ns, all, options, warnings, { mustReadSome: true })),
    scan: { path: "full", listedTypes: all.length, reason },
  });
  if (!("types" in report)) return full(report);

  const named: ResourceType[] = [];
  // By the report's label, the first type of each (a lookup per label was types × labels).
  const byLabel = new Map<string, ResourceType>();
  for (const t of listable) if (!byLabel.has(reportLabel(t))) byLabel.set(reportLabel(t), t);
  for (const label of report.types.keys()) {
    const type = byLabel.get(label);
    if (type === undefined) return full({ kind: "unknown-type", resource: label });
    // The same objects as another group's type, counted there.
    if (!DUPLICATE_GROUPS.has(type.group)) named.push(type);
  }
  const controllers = early ?? earlyControllers(kube, report);
  const first = await listTypes(kube, ns, named, options, warnings, { mustReadSome: false });
  const disagreement = checkReport(report, first.listed, first.unlisted.length === 0);
  if (disagreement === undefined) {
    return { ...first, scan: { path: "report", listedTypes: named.length }, controllers };
  }
  const rest = await listTypes(
    kube,
    ns,
    all.filter((t) => !named.includes(t)),
    options,
    warnings,
    { mustReadSome: false },
  );
  return {
    listed: [...first.listed, ...rest.listed],
    unlisted: [...first.unlisted, ...rest.unlisted],
    forbidden: [...first.forbidden, ...rest.forbidden],
    scan: { path: "full", listedTypes: all.length, reason: disagreement },
    controllers,
  };
}

/**
 * Every object of `types` in the namespace (metadata only, bounded in parallel). A list that fails
 * is a warning and its type unread. `mustReadSome`: when not one list answered, the first failure
 * is the answer (an empty verdict would mislead).
 */
async function listTypes(
  kube: KubePort,
  ns: NamespaceSnapshot,
  types: readonly ResourceType[],
  options: ContentOptions,
  warnings: string[],
  { mustReadSome }: { readonly mustReadSome: boolean },
): Promise<{ listed: ListedType[]; unlisted: string[]; forbidden: ForbiddenType[] }> {
  const results = await mapLimit(types, options.concurrency ?? DEFAULT_KUBE_CONCURRENCY, (t) =>
    // Listed only when the namespace's own condition says some remain (or says nothing).
    BODY_SENSITIVE.has(`${t.group}/${t.resource}`) && !contentMayRemain(ns, t)
      ? Promise.resolve([])
      : kube.listObjects(t, ns.name),
  );
  const listed: ListedType[] = [];
  const unlisted: string[] = [];
  const forbidden: ForbiddenType[] = [];
  results.forEach((r, i) => {
    const type = types[i];
    if (!type) return;
    if (r.ok) listed.push({ type, objects: r.value });
    else if (isUnstuckError(r.error) && r.error.code === ErrorCode.Forbidden && !contentMayRemain(ns, type)) {
      // Not granted (rbac.readScope=explicit), and the namespace's own count says none is left.
      listed.push({ type, objects: [] });
    } else {
      unlisted.push(resourceLabel(type));
      if (isUnstuckError(r.error) && r.error.code === ErrorCode.Forbidden)
        forbidden.push({ group: type.group, resource: type.resource });
      warnings.push(`Could not list ${resourceLabel(type)}: ${toUserError(r.error).message}`);
    }
  });
  const first = results[0];
  if (mustReadSome && listed.length === 0 && first && !first.ok) {
    throw first.error instanceof UnstuckError
      ? first.error
      : new UnstuckError(ErrorCode.Upstream, toUserError(first.error).message);
  }
  return { listed, unlisted, forbidden };
}
