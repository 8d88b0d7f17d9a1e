/**
 * The resource types the simulated API server serves: the built-in kinds the bot touches plus
 * whatever CustomResourceDefinitions have been created. Discovery documents are derived from
 * this registry, so a CRD shows up in `kubectl api-resources` as soon as it is created.
 */
import type { KubeObject } from "./object.js";
import { isEventsView } from "./events-view.js";

/** One served resource (one group/version/plural). */
export interface ResourceDef {
  readonly group: string;
  readonly version: string;
  /** Plural, e.g. `ingresses`. */
  readonly resource: string;
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly verbs: readonly string[];
  readonly categories: readonly string[];
  /** Subresources served, e.g. `status`, `log`, `finalize`. */
  readonly subresources: readonly string[];
  /** True when the type came from a CRD (lists carry item kinds, no built-in schema). */
  readonly custom: boolean;
}

const ALL_VERBS = [
  "create",
  "delete",
  "deletecollection",
  "get",
  "list",
  "patch",
  "update",
  "watch",
] as const;

function def(
  gv: string,
  resource: string,
  kind: string,
  opts: {
    namespaced?: boolean;
    short?: string[];
    sub?: string[];
    verbs?: readonly string[];
    categories?: string[];
  } = {},
): ResourceDef {
  const [group, version] = gv.includes("/") ? (gv.split("/") as [string, string]) : ["", gv];
  return {
    group,
    version,
    resource,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced: opts.namespaced ?? true,
    shortNames: opts.short ?? [],
    verbs: opts.verbs ?? ALL_VERBS,
    categories: opts.categories ?? [],
    subresources: opts.sub ?? [],
    custom: false,
  };
}

const ALL = ["all"];

/** Built-in kinds, in the order the real server lists them. */
export const BUILTIN_RESOURCES: readonly ResourceDef[] = [
  def("v1", "configmaps", "ConfigMap", { short: ["cm"] }),
  def("v1", "endpoints", "Endpoints", { short: ["ep"] }),
  def("v1", "events", "Event", { short: ["ev"] }),
  def("v1", "limitranges", "LimitRange", { short: ["limits"] }),
  def("v1", "namespaces", "Namespace", {
    namespaced: false,
    short: ["ns"],
    sub: ["finalize", "status"],
    verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
  }),
  def("v1", "nodes", "Node", { namespaced: false, short: ["no"], sub: ["status"] }),
  def("v1", "persistentvolumeclaims", "PersistentVolumeClaim", { short: ["pvc"], sub: ["status"] }),
  def("v1", "persistentvolumes", "PersistentVolume", { namespaced: false, short: ["pv"], sub: ["status"] }),
  def("v1", "pods", "Pod", { short: ["po"], sub: ["log", "status"], categories: ALL }),
  def("v1", "podtemplates", "PodTemplate"),
  def("v1", "replicationcontrollers", "ReplicationController", {
    short: ["rc"],
    sub: ["scale", "status"],
    categories: ALL,
  }),
  def("v1", "resourcequotas", "ResourceQuota", { short: ["quota"], sub: ["status"] }),
  def("v1", "secrets", "Secret"),
  def("v1", "serviceaccounts", "ServiceAccount", { short: ["sa"] }),
  def("v1", "services", "Service", {
    short: ["svc"],
    sub: ["status"],
    categories: ALL,
    verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
  }),
  def("apiextensions.k8s.io/v1", "customresourcedefinitions", "CustomResourceDefinition", {
    namespaced: false,
    short: ["crd", "crds"],
    sub: ["status"],
  }),
  def("apiregistration.k8s.io/v1", "apiservices", "APIService", { namespaced: false, sub: ["status"] }),
  def("admissionregistration.k8s.io/v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", {
    namespaced: false,
  }),
  def(
    "admissionregistration.k8s.io/v1",
    "validatingwebhookconfigurations",
    "ValidatingWebhookConfiguration",
    {
      namespaced: false,
    },
  ),
  def("apps/v1", "daemonsets", "DaemonSet", { short: ["ds"], sub: ["status"], categories: ALL }),
  def("apps/v1", "deployments", "Deployment", {
    short: ["deploy"],
    sub: ["scale", "status"],
    categories: ALL,
  }),
  def("apps/v1", "replicasets", "ReplicaSet", { short: ["rs"], sub: ["scale", "status"], categories: ALL }),
  def("apps/v1", "statefulsets", "StatefulSet", {
    short: ["sts"],
    sub: ["scale", "status"],
    categories: ALL,
  }),
  def("batch/v1", "cronjobs", "CronJob", { short: ["cj"], sub: ["status"], categories: ALL }),
  def("batch/v1", "jobs", "Job", { sub: ["status"], categories: ALL }),
  def("discovery.k8s.io/v1", "endpointslices", "EndpointSlice"),
  // The core Events again, under their newer names (one storage: see events-view.ts).
  def("events.k8s.io/v1", "events", "Event", { short: ["ev"] }),
  def("coordination.k8s.io/v1", "leases", "Lease"),
  def("networking.k8s.io/v1", "ingressclasses", "IngressClass", { namespaced: false }),
  def("networking.k8s.io/v1", "ingresses", "Ingress", { short: ["ing"], sub: ["status"] }),
  def("networking.k8s.io/v1", "networkpolicies", "NetworkPolicy", { short: ["netpol"] }),
  // Served by every 1.32 API server, so listed by a diagnosis's every-type scan like the rest.
  def("apps/v1", "controllerrevisions", "ControllerRevision"),
  def("autoscaling/v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", {
    short: ["hpa"],
    sub: ["status"],
    categories: ALL,
  }),
  def("policy/v1", "poddisruptionbudgets", "PodDisruptionBudget", { short: ["pdb"], sub: ["status"] }),
  def("rbac.authorization.k8s.io/v1", "clusterroles", "ClusterRole", { namespaced: false }),
  def("rbac.authorization.k8s.io/v1", "clusterrolebindings", "ClusterRoleBinding", { namespaced: false }),
  def("rbac.authorization.k8s.io/v1", "roles", "Role"),
  def("rbac.authorization.k8s.io/v1", "rolebindings", "RoleBinding"),
  def("storage.k8s.io/v1", "csistoragecapacities", "CSIStorageCapacity"),
];

/**
 * Admission policies, served only when a test asks (`startKubeSim({ installKinds: true })`): the
 * deletion guard's tests show both a cluster that serves them and one that does not.
 */
export const INSTALL_RESOURCES: readonly ResourceDef[] = [
  def("admissionregistration.k8s.io/v1", "validatingadmissionpolicies", "ValidatingAdmissionPolicy", {
    namespaced: false,
    sub: ["status"],
  }),
  def(
    "admissionregistration.k8s.io/v1",
    "validatingadmissionpolicybindings",
    "ValidatingAdmissionPolicyBinding",
    {
      namespaced: false,
    },
  ),
];

/** `apps/v1`, or `v1` for the core group. */
export function apiVersionOf(d: Pick<ResourceDef, "group" | "version">): string {
  return d.group === "" ? d.version : `${d.group}/${d.version}`;
}

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf("/");
  return i < 0
    ? { group: "", version: apiVersion }
    : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

/**
 * Key of a type independent of version: objects are stored once per group/resource — and
 * `events.k8s.io` Events in the core Event storage, as the real server keeps them.
 */
export function typeKey(d: Pick<ResourceDef, "group" | "resource">): string {
  return isEventsView(d) ? "/events" : `${d.group}/${d.resource}`;
}

/** Registry of served types; CRDs are added and removed at run time. */
export class ResourceRegistry {
  private readonly builtins: ResourceDef[];

  /** `extra`: more built-in kinds to serve (e.g. {@link INSTALL_RESOURCES}). */
  public constructor(extra: readonly ResourceDef[] = []) {
    this.builtins = [...BUILTIN_RESOURCES, ...extra];
  }
  /** CRD name → the defs it serves (one per served version). */
  private readonly crds = new Map<string, ResourceDef[]>();
  /**
   * What every request asks of the registry (routing, discovery, the store's type lookups), built
   * once per change of the served types instead of on every call.
   */
  private index:
    | {
        readonly all: readonly ResourceDef[];
        readonly groupVersions: readonly { group: string; version: string }[];
        readonly servedGroupVersions: ReadonlySet<string>;
        readonly byResource: ReadonlyMap<string, ResourceDef>;
        readonly byKind: ReadonlyMap<string, ResourceDef>;
        readonly byGroupKind: ReadonlyMap<string, ResourceDef>;
        readonly preferred: readonly ResourceDef[];
      }
    | undefined;

  private built(): NonNullable<ResourceRegistry["index"]> {
    if (this.index !== undefined) return this.index;
    const all = [...this.builtins, ...[...this.crds.values()].flat()];
    const gvs = new Map<string, { group: string; version: string }>();
    const byResource = new Map<string, ResourceDef>();
    const byKind = new Map<string, ResourceDef>();
    const byGroupKind = new Map<string, ResourceDef>();
    const preferred = new Map<string, ResourceDef>();
    // First match wins everywhere, as the linear searches this replaces did.
    const first = <K>(m: Map<K, ResourceDef>, k: K, d: ResourceDef) => {
      if (!m.has(k)) m.set(k, d);
    };
    for (const d of all) {
      gvs.set(apiVersionOf(d), { group: d.group, version: d.version });
      first(byResource, `${d.group}/${d.version}/${d.resource}`, d);
      first(byKind, `${apiVersionOf(d)}/${d.kind}`, d);
      first(byGroupKind, `${d.group}/${d.kind}`, d);
      first(preferred, typeKey(d), d);
    }
    this.index = {
      all,
      groupVersions: [...gvs.values()],
      servedGroupVersions: new Set(gvs.keys()),
      byResource,
      byKind,
      byGroupKind,
      preferred: [...preferred.values()],
    };
    return this.index;
  }

  /** Every served resource, built-ins first. */
  public all(): readonly ResourceDef[] {
    return this.built().all;
  }

  /** Group-versions in serving order, core first. */
  public groupVersions(): readonly { group: string; version: string }[] {
    return this.built().groupVersions;
  }

  /** Whether a group-version is served. */
  public serves(group: string, version: string): boolean {
    return this.built().servedGroupVersions.has(apiVersionOf({ group, version }));
  }

  public find(group: string, version: string, resource: string): ResourceDef | undefined {
    return this.built().byResource.get(`${group}/${version}/${resource}`);
  }

  public byKind(apiVersion: string, kind: string): ResourceDef | undefined {
    const { group, version } = splitApiVersion(apiVersion);
    return this.built().byKind.get(`${apiVersionOf({ group, version })}/${kind}`);
  }

  /** Any version of a type (objects are stored once per group/resource). */
  public byGroupKind(group: string, kind: string): ResourceDef | undefined {
    return this.built().byGroupKind.get(`${group}/${kind}`);
  }

  /** The first-listed (preferred) version of every group/resource, as a namespace deleter would see. */
  public preferred(): readonly ResourceDef[] {
    return this.built().preferred;
  }

  /** (Re)register the types a CRD object declares. */
  public applyCrd(crd: KubeObject): void {
    const name = crd.metadata?.name;
    if (name === undefined) return;
    const spec = (crd.spec ?? {}) as CrdSpec;
    const names = spec.names ?? {};
    if (spec.group === undefined || names.plural === undefined || names.kind === undefined) return;
    const versions = (spec.versions ?? []).filter((v) => v.served !== false);
    // The storage version is preferred, like the real server orders CRD versions.
    versions.sort((a, b) => Number(b.storage === true) - Number(a.storage === true));
    const plural = names.plural;
    const kind = names.kind;
    const group = spec.group;
    this.index = undefined;
    this.crds.set(
      name,
      versions.map((v) => ({
        group,
        version: v.name,
        resource: plural,
        singular: names.singular ?? kind.toLowerCase(),
        kind,
        listKind: names.listKind ?? `${kind}List`,
        namespaced: spec.scope !== "Cluster",
        shortNames: names.shortNames ?? [],
        verbs: ALL_VERBS,
        categories: names.categories ?? [],
        subresources: v.subresources?.status !== undefined ? ["status"] : [],
        custom: true,
      })),
    );
  }

  public removeCrd(name: string): void {
    this.index = undefined;
    this.crds.delete(name);
  }
}

interface CrdSpec {
  group?: string;
  scope?: string;
  names?: {
    plural?: string;
    singular?: string;
    kind?: string;
    listKind?: string;
    shortNames?: string[];
    categories?: string[];
  };
  versions?: { name: string; served?: boolean; storage?: boolean; subresources?: { status?: unknown } }[];
}

/** Legacy discovery `APIResourceList` for one group-version. */
export function resourceList(
  defs: readonly ResourceDef[],
  group: string,
  version: string,
): Record<string, unknown> {
  const resources: Record<string, unknown>[] = [];
  for (const d of defs.filter((x) => x.group === group && x.version === version)) {
    const entry: Record<string, unknown> = {
      name: d.resource,
      singularName: d.singular,
      namespaced: d.namespaced,
      kind: d.kind,
      verbs: d.verbs,
    };
    if (d.shortNames.length > 0) entry.shortNames = d.shortNames;
    if (d.categories.length > 0) entry.categories = d.categories;
    entry.storageVersionHash = storageHash(`${apiVersionOf(d)}/${d.kind}`);
    resources.push(entry);
    for (const sub of d.subresources) {
      resources.push({
        name: `${d.resource}/${sub}`,
        singularName: "",
        namespaced: d.namespaced,
        kind: sub === "log" ? "Pod" : sub === "scale" ? "Scale" : d.kind,
        ...(sub === "scale" ? { group: "autoscaling", version: "v1" } : {}),
        verbs: sub === "log" ? ["get"] : sub === "finalize" ? ["update"] : ["get", "patch", "update"],
      });
    }
  }
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: group === "" ? version : `${group}/${version}`,
    resources,
  };
}

/** A stable, short, opaque hash (the real one is a base64 of a sha256 prefix). */
export function storageHash(text: string): string {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return Buffer.from((h >>> 0).toString(16).padStart(8, "0"))
    .toString("base64")
    .slice(0, 11);
}

/**
 * Aggregated discovery (`apidiscovery.k8s.io/v2` `APIGroupDiscoveryList`), the form kube-apiserver
 * ≥ 1.26 serves on `/api` (`core` true: the core group only) and `/apis` (every other group) to a
 * client that asks for it: every group-version's resources in one document, preferred version
 * first. A group-version in `stale` (an aggregated API whose APIService is not Available) is listed
 * with `freshness: "Stale"` and no resources, as kube-aggregator reports it; clients treat it as a
 * discovery failure of that group-version.
 */
export function aggregatedDiscovery(
  defs: readonly ResourceDef[],
  groupVersions: readonly { group: string; version: string }[],
  stale: ReadonlySet<string>,
  core: boolean,
): Record<string, unknown> {
  const groups = new Map<string, string[]>();
  for (const { group, version } of groupVersions) {
    if ((group === "") !== core) continue;
    groups.set(group, [...(groups.get(group) ?? []), version]);
  }
  if (!core) {
    // A broken APIService still appears, as a broken metrics-server does in /apis.
    for (const gv of stale) {
      const i = gv.indexOf("/");
      if (i < 0) continue;
      const [g, v] = [gv.slice(0, i), gv.slice(i + 1)];
      if (!(groups.get(g) ?? []).includes(v)) groups.set(g, [...(groups.get(g) ?? []), v]);
    }
  }
  return {
    kind: "APIGroupDiscoveryList",
    apiVersion: "apidiscovery.k8s.io/v2",
    metadata: {},
    items: [...groups].map(([group, versions]) => ({
      metadata: { name: group, creationTimestamp: null },
      versions: versions.map((version) => {
        if (stale.has(group === "" ? version : `${group}/${version}`)) return { version, freshness: "Stale" };
        const resources = defs
          .filter((d) => d.group === group && d.version === version)
          .map((d) => discoveredResource(d));
        return { version, ...(resources.length > 0 ? { resources } : {}), freshness: "Current" };
      }),
    })),
  };
}

/** One `APIResourceDiscovery` (fields Go marks `omitempty` are left out when empty). */
function discoveredResource(d: ResourceDef): Record<string, unknown> {
  const responseKind = { group: d.group, version: d.version, kind: d.kind };
  return {
    resource: d.resource,
    responseKind,
    scope: d.namespaced ? "Namespaced" : "Cluster",
    singularResource: d.singular,
    verbs: d.verbs,
    ...(d.shortNames.length > 0 ? { shortNames: d.shortNames } : {}),
    ...(d.categories.length > 0 ? { categories: d.categories } : {}),
    ...(d.subresources.length > 0
      ? {
          subresources: d.subresources.map((sub) => ({
            subresource: sub,
            responseKind:
              sub === "log"
                ? { group: "", version: "v1", kind: "Pod" }
                : sub === "scale"
                  ? { group: "autoscaling", version: "v1", kind: "Scale" }
                  : responseKind,
            verbs: sub === "log" ? ["get"] : sub === "finalize" ? ["update"] : ["get", "patch", "update"],
          })),
        }
      : {}),
  };
}
