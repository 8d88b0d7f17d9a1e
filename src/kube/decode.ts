/**
 * Decoding: the API server's JSON (or a client-node model) into the plain snapshots of
 * `./types.ts`. Owns the lenient readers (`str`, `obj`, …: client-node may hand back `Date`
 * objects for timestamps, and any field may be missing), the snapshot conversions and the
 * discovery documents. Pure: no I/O, no errors of its own.
 */
import type {
  ApiServiceSnapshot,
  ArgoApplicationSnapshot,
  Condition,
  DeploymentSnapshot,
  DiscoveryFailure,
  EventSnapshot,
  NamespaceSnapshot,
  ObjectSnapshot,
  PodSnapshot,
  ResourceType,
} from "./types.js";

/** A JSON object as parsed: every field read through the helpers below. */
export type Json = Record<string, unknown>;

export function str(v: unknown): string {
  if (v instanceof Date) return v.toISOString().replace(".000Z", "Z");
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return v === undefined || v === null ? "" : JSON.stringify(v);
}

export function optStr(v: unknown): string | undefined {
  const s = str(v);
  return s === "" ? undefined : s;
}

/** `v`'s fields, or none when it is not an object. */
export function obj(v: unknown): Json {
  return v && typeof v === "object" ? (v as Json) : {};
}

/**
 * The items of a JSON array (none when `v` is not one). An API list's items are objects; they are
 * not checked one by one here — the snapshot conversions read each through {@link obj}.
 */
export function jsonArray(v: unknown): Json[] {
  return Array.isArray(v) ? (v as Json[]) : [];
}

/** One frozen empty map and list for every snapshot without labels, annotations, finalizers or owners. */
const NO_ENTRIES: Readonly<Record<string, string>> = Object.freeze({});
const NO_ITEMS: readonly never[] = Object.freeze([]);

/**
 * A map of strings (labels, annotations). A parsed map whose values are all strings, as the API
 * gives them, is kept as it is rather than copied: a big namespace's lists hold thousands.
 */
function strMap(v: unknown): Readonly<Record<string, string>> {
  if (v === null || typeof v !== "object") return NO_ENTRIES;
  let size = 0;
  let plain = !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
  for (const key in v) {
    size++;
    if (typeof (v as Json)[key] !== "string") plain = false;
  }
  if (size === 0) return NO_ENTRIES;
  if (plain) return v as Readonly<Record<string, string>>;
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) out[k] = str(val);
  return out;
}

function strList(v: unknown): readonly string[] {
  return Array.isArray(v) && v.length > 0 ? v.map(str) : NO_ITEMS;
}

function toConditions(v: unknown): Condition[] {
  if (!Array.isArray(v)) return [];
  return v.map((c) => {
    const o = obj(c);
    const reason = optStr(o.reason);
    const message = optStr(o.message);
    const lastTransitionTime = optStr(o.lastTransitionTime);
    return {
      type: str(o.type),
      status: str(o.status),
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
      ...(lastTransitionTime ? { lastTransitionTime } : {}),
    };
  });
}

/** A Namespace (raw JSON or client-node's `V1Namespace`). */
export function toNamespaceSnapshot(input: object): NamespaceSnapshot {
  const ns = obj(input);
  const meta = obj(ns.metadata);
  const deletionTimestamp = optStr(meta.deletionTimestamp);
  const creationTimestamp = optStr(meta.creationTimestamp);
  const uid = optStr(meta.uid);
  const resourceVersion = optStr(meta.resourceVersion);
  return {
    name: str(meta.name),
    ...(uid ? { uid } : {}),
    ...(resourceVersion ? { resourceVersion } : {}),
    phase: str(obj(ns.status).phase) || (deletionTimestamp ? "Terminating" : "Active"),
    ...(creationTimestamp ? { creationTimestamp } : {}),
    ...(deletionTimestamp ? { deletionTimestamp } : {}),
    specFinalizers: strList(obj(ns.spec).finalizers),
    finalizers: strList(meta.finalizers),
    conditions: toConditions(obj(ns.status).conditions),
    labels: strMap(meta.labels),
    annotations: strMap(meta.annotations),
  };
}

/** A legacy discovery `APIResourceList`'s resources (subresources left out). */
export function toResourceTypes(group: string, version: string, list: readonly object[]): ResourceType[] {
  return list
    .map(obj)
    .filter((r) => !str(r.name).includes("/"))
    .map((r) => ({
      group,
      version,
      apiVersion: group === "" ? version : `${group}/${version}`,
      kind: str(r.kind),
      resource: str(r.name),
      namespaced: r.namespaced === true,
      verbs: strList(r.verbs),
    }));
}

/** An `apidiscovery.k8s.io` `APIGroupDiscoveryList` (v2, or v2beta1 from a 1.26–1.29 server). */
export function isAggregatedDiscovery(doc: Json): boolean {
  return (
    doc.kind === "APIGroupDiscoveryList" &&
    typeof doc.apiVersion === "string" &&
    doc.apiVersion.startsWith("apidiscovery.k8s.io/")
  );
}

/**
 * Resources of each group's preferred version (the first one listed that is not stale, as
 * client-go reads it), and every `Stale` group-version as a failure: kube-aggregator marks an
 * aggregated API stale when its APIService is not available, where legacy discovery answers 503.
 */
export function readAggregatedDiscovery(
  doc: Json,
  resources: ResourceType[],
  failures: DiscoveryFailure[],
): void {
  for (const item of Array.isArray(doc.items) ? doc.items.map(obj) : []) {
    const group = str(obj(item.metadata).name);
    let preferred = false;
    for (const v of Array.isArray(item.versions) ? item.versions.map(obj) : []) {
      const version = str(v.version);
      const groupVersion = group === "" ? version : `${group}/${version}`;
      if (v.freshness === "Stale") {
        failures.push({
          groupVersion,
          message: `The API server reports discovery of ${groupVersion} as stale: the aggregated API serving it is not available.`,
        });
        continue;
      }
      if (preferred) continue;
      preferred = true;
      for (const r of Array.isArray(v.resources) ? v.resources.map(obj) : []) {
        const kind = optStr(obj(r.responseKind).kind);
        if (kind === undefined) continue;
        resources.push({
          group,
          version,
          apiVersion: groupVersion,
          kind,
          resource: str(r.resource),
          namespaced: r.scope === "Namespaced",
          verbs: strList(r.verbs),
        });
      }
    }
  }
}

/** Any object of a listed type. Exported for the pure tests of other modules that need realistic snapshots. */
export function toObjectSnapshot(input: object, type: ResourceType): ObjectSnapshot {
  const o = obj(input);
  const meta = obj(o.metadata);
  const spec = obj(o.spec);
  const annotations = strMap(meta.annotations);
  const ingressClassName =
    optStr(spec.ingressClassName) ?? annotations["kubernetes.io/ingress.class"] ?? undefined;
  const lbIngress = obj(obj(o.status).loadBalancer).ingress;
  const hostnames = Array.isArray(lbIngress)
    ? lbIngress.map((i) => optStr(obj(i).hostname)).filter((h): h is string => h !== undefined)
    : [];
  const namespace = optStr(meta.namespace);
  const uid = optStr(meta.uid);
  const resourceVersion = optStr(meta.resourceVersion);
  const creationTimestamp = optStr(meta.creationTimestamp);
  const deletionTimestamp = optStr(meta.deletionTimestamp);
  const ruleHosts =
    type.kind === "Ingress" && Array.isArray(spec.rules)
      ? spec.rules.map((r) => optStr(obj(r).host)).filter((h): h is string => h !== undefined)
      : [];
  const servesAnyHost =
    type.kind === "Ingress" &&
    ((Array.isArray(spec.rules) && spec.rules.some((r) => optStr(obj(r).host) === undefined)) ||
      (spec.defaultBackend !== undefined && spec.defaultBackend !== null));
  return {
    apiVersion: optStr(o.apiVersion) ?? type.apiVersion,
    kind: optStr(o.kind) ?? type.kind,
    resource: type.resource,
    ...(namespace ? { namespace } : {}),
    name: str(meta.name),
    ...(uid ? { uid } : {}),
    ...(resourceVersion ? { resourceVersion } : {}),
    ...(creationTimestamp ? { creationTimestamp } : {}),
    ...(deletionTimestamp ? { deletionTimestamp } : {}),
    finalizers: strList(meta.finalizers),
    labels: strMap(meta.labels),
    annotations,
    ownerReferences:
      Array.isArray(meta.ownerReferences) && meta.ownerReferences.length > 0
        ? meta.ownerReferences.map((r) => {
            const ref = obj(r);
            const refUid = optStr(ref.uid);
            return {
              apiVersion: str(ref.apiVersion),
              kind: str(ref.kind),
              name: str(ref.name),
              ...(refUid ? { uid: refUid } : {}),
            };
          })
        : NO_ITEMS,
    ...(ingressClassName ? { ingressClassName } : {}),
    ...(hostnames.length > 0 ? { loadBalancerHostnames: hostnames } : {}),
    ...(ruleHosts.length > 0 ? { ruleHosts } : {}),
    ...(servesAnyHost ? { servesAnyHost } : {}),
    ...(optStr(spec.type) && type.kind === "Service" ? { serviceType: optStr(spec.type) } : {}),
    ...(optStr(spec.loadBalancerClass) ? { loadBalancerClass: optStr(spec.loadBalancerClass) } : {}),
    ...(optStr(spec.targetGroupARN) ? { targetGroupArn: optStr(spec.targetGroupARN) } : {}),
  };
}

/** A Deployment (client-node's `V1Deployment`). */
export function toDeploymentSnapshot(input: object): DeploymentSnapshot {
  const d = obj(input);
  const meta = obj(d.metadata);
  const spec = obj(d.spec);
  const status = obj(d.status);
  const containers = obj(obj(spec.template).spec).containers;
  const list = Array.isArray(containers) ? containers.map(obj) : [];
  return {
    namespace: str(meta.namespace),
    name: str(meta.name),
    labels: strMap(meta.labels),
    selector: strMap(obj(spec.selector).matchLabels),
    replicas: Number(spec.replicas ?? 1),
    readyReplicas: Number(status.readyReplicas ?? 0),
    availableReplicas: Number(status.availableReplicas ?? 0),
    images: list.map((c) => str(c.image)),
    args: list.flatMap((c) => [...strList(c.command), ...strList(c.args)]),
  };
}

/** A Pod (client-node's `V1Pod`). */
export function toPodSnapshot(input: object): PodSnapshot {
  const p = obj(input);
  const meta = obj(p.metadata);
  const status = obj(p.status);
  const containers = obj(p.spec).containers;
  const conditions = toConditions(status.conditions);
  const startTime = optStr(status.startTime);
  return {
    namespace: str(meta.namespace),
    name: str(meta.name),
    labels: strMap(meta.labels),
    phase: str(status.phase),
    containers: (Array.isArray(containers) ? containers : []).map((c) => str(obj(c).name)),
    ready: conditions.some((c) => c.type === "Ready" && c.status === "True"),
    ...(startTime ? { startTime } : {}),
  };
}

/** A core Event (client-node's `CoreV1Event`). */
export function toEventSnapshot(input: object): EventSnapshot {
  const e = obj(input);
  const meta = obj(e.metadata);
  const inv = obj(e.involvedObject);
  const source = obj(e.source);
  const lastTimestamp = optStr(e.lastTimestamp) ?? optStr(e.eventTime) ?? optStr(meta.creationTimestamp);
  const involvedNamespace = optStr(inv.namespace);
  const src = optStr(source.component) ?? optStr(e.reportingComponent);
  return {
    namespace: str(meta.namespace),
    type: str(e.type),
    reason: str(e.reason),
    message: str(e.message),
    count: Number(e.count ?? 1),
    involvedKind: str(inv.kind),
    involvedName: str(inv.name),
    ...(involvedNamespace ? { involvedNamespace } : {}),
    ...(lastTimestamp ? { lastTimestamp } : {}),
    ...(src ? { source: src } : {}),
  };
}

export function toApiServiceSnapshot(a: Json): ApiServiceSnapshot {
  const meta = obj(a.metadata);
  const spec = obj(a.spec);
  const svc = spec.service === null || spec.service === undefined ? undefined : obj(spec.service);
  const port = svc?.port === undefined ? undefined : Number(svc.port);
  return {
    name: str(meta.name),
    group: str(spec.group),
    version: str(spec.version),
    ...(svc
      ? {
          service: {
            namespace: str(svc.namespace),
            name: str(svc.name),
            ...(port !== undefined && Number.isFinite(port) ? { port } : {}),
          },
        }
      : {}),
    conditions: toConditions(obj(a.status).conditions),
  };
}

/**
 * Distinct addresses across a Service's EndpointSlices (an address may appear in two slices while
 * they are rebalanced). `conditions.ready` unset means ready, as the EndpointSlice API defines it.
 */
export function countSliceEndpoints(slices: readonly Json[]): { ready: number; notReady: number } {
  const ready = new Set<string>();
  const notReady = new Set<string>();
  for (const s of slices) {
    const endpoints = Array.isArray(s.endpoints) ? s.endpoints.map(obj) : [];
    for (const e of endpoints) {
      const isReady = obj(e.conditions).ready !== false;
      for (const addr of strList(e.addresses)) (isReady ? ready : notReady).add(addr);
    }
  }
  for (const a of ready) notReady.delete(a);
  return { ready: ready.size, notReady: notReady.size };
}

/** Distinct ready and not-ready addresses of a core Endpoints object (`null`: none). */
export function countEndpoints(ep: Json | null): { ready: number; notReady: number } {
  const subsets = Array.isArray(ep?.subsets) ? ep.subsets.map(obj) : [];
  const ips = (list: unknown) => (Array.isArray(list) ? list.map((a) => str(obj(a).ip)) : []);
  return {
    ready: new Set(subsets.flatMap((s) => ips(s.addresses))).size,
    notReady: new Set(subsets.flatMap((s) => ips(s.notReadyAddresses))).size,
  };
}

/** An Argo CD Application as the ownership check reads it. */
export function toArgoApplicationSnapshot(input: object): ArgoApplicationSnapshot {
  const a = obj(input);
  const meta = obj(a.metadata);
  const spec = obj(a.spec);
  const status = obj(a.status);
  const automated = spec.syncPolicy !== undefined ? obj(obj(spec.syncPolicy).automated) : undefined;
  const destNs = optStr(obj(spec.destination).namespace);
  return {
    namespace: str(meta.namespace),
    name: str(meta.name),
    ...(destNs ? { destinationNamespace: destNs } : {}),
    resources: (Array.isArray(status.resources) ? status.resources : []).map((r) => {
      const x = obj(r);
      const ns = optStr(x.namespace);
      return { group: str(x.group), kind: str(x.kind), ...(ns ? { namespace: ns } : {}), name: str(x.name) };
    }),
    conditions: (Array.isArray(status.conditions) ? status.conditions : []).map((c) => {
      const x = obj(c);
      const message = optStr(x.message);
      return { type: str(x.type), ...(message ? { message } : {}) };
    }),
    automated: automated !== undefined && obj(obj(spec.syncPolicy)).automated !== undefined,
    prune: automated?.prune === true,
    selfHeal: automated?.selfHeal === true,
  };
}
