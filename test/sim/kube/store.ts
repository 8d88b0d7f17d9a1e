/**
 * The simulated etcd + registry: typed-by-resource object storage with the API server's write
 * semantics (resourceVersion, uid, generation, finalizers and deletionTimestamp, ownerReference
 * garbage collection with Foreground/Background/Orphan propagation). The HTTP layer and tests
 * share it; faults and RBAC live in the HTTP layer only.
 */
import { fromEventsView, isEventsView, toEventsView } from "./events-view.js";
import { EventEmitter } from "node:events";
import { randomUUID } from "node:crypto";

import { apiVersionOf, typeKey, type ResourceDef, type ResourceRegistry } from "./registry.js";
import { clone, deepEqual, isRecord, rfc3339, type KubeObject } from "./object.js";
import { PVC_PROTECTION_FINALIZER, awaitsKubelet, podGracePeriod } from "./workloads.js";
import {
  KubeApiError,
  alreadyExists,
  badRequest,
  conflict,
  invalid,
  namespaceTerminating,
  notFound,
  type FieldError,
} from "./status.js";

/** A change, as a watch would report it. */
export interface StoreEvent {
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  readonly def: ResourceDef;
  readonly object: KubeObject;
  readonly resourceVersion: number;
}

export const PropagationPolicy = {
  Foreground: "Foreground",
  Background: "Background",
  Orphan: "Orphan",
} as const;
export type PropagationPolicy = (typeof PropagationPolicy)[keyof typeof PropagationPolicy];

export interface DeleteOptions {
  propagationPolicy?: PropagationPolicy;
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
  /** Pods: the grace period asked for (0 with `--force`: gone without waiting for the kubelet). */
  gracePeriodSeconds?: number;
}

export interface WriteOptions {
  dryRun?: boolean;
  /** `status` or `finalize` (namespaces) when writing a subresource. */
  subresource?: string;
  /**
   * Keep `status` given on create (the API drops it for kinds with a status subresource). The
   * programmatic store API keeps it so tests can build any state.
   */
  keepStatus?: boolean;
}

const FINALIZER_FOREGROUND = "foregroundDeletion";
const FINALIZER_ORPHAN = "orphan";
const FINALIZER_CRD_CLEANUP = "customresourcecleanup.apiextensions.k8s.io";
const NAMESPACE_FINALIZER = "kubernetes";
/** kube-apiserver compacts etcd every 5 minutes by default (`--etcd-compaction-interval`). */
const LIST_SNAPSHOT_TTL_MS = 5 * 60_000;
const MAX_LIST_SNAPSHOTS = 64;
const GENERATE_CHARS = "bcdfghjklmnpqrstvwxz2456789";

const RFC1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const RFC1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const RFC1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** Name validation messages, verbatim from k8s.io/apimachinery/pkg/util/validation. */
function nameError(def: ResourceDef, name: string): string | undefined {
  if (def.group === "" && (def.resource === "namespaces" || def.resource === "services")) {
    if (def.resource === "services") {
      if (name.length > 63) return "must be no more than 63 characters";
      if (!RFC1035_LABEL.test(name)) {
        return "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
      }
      return undefined;
    }
    if (name.length > 63) return "must be no more than 63 characters";
    if (!RFC1123_LABEL.test(name)) {
      return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    }
    return undefined;
  }
  if (name.length > 253) return "must be no more than 253 characters";
  if (!RFC1123_SUBDOMAIN.test(name)) {
    return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
  }
  return undefined;
}

function objKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ""}/${name}`;
}

/**
 * The built-in types whose create strategy sets `metadata.generation` (1.32's `PrepareForCreate`):
 * workloads, Ingresses, policies, webhook configurations, CRDs — not Pods (from 1.33), Services,
 * ConfigMaps, Secrets, Namespaces, Nodes or Events. Every custom resource gets one.
 */
const GENERATION_TYPES = new Set([
  "apps/deployments",
  "apps/daemonsets",
  "apps/statefulsets",
  "apps/replicasets",
  "/replicationcontrollers",
  "/podtemplates",
  "batch/jobs",
  "batch/cronjobs",
  "networking.k8s.io/ingresses",
  "networking.k8s.io/ingressclasses",
  "networking.k8s.io/networkpolicies",
  "policy/poddisruptionbudgets",
  "discovery.k8s.io/endpointslices",
  "apiextensions.k8s.io/customresourcedefinitions",
  "admissionregistration.k8s.io/validatingwebhookconfigurations",
  "admissionregistration.k8s.io/mutatingwebhookconfigurations",
  "admissionregistration.k8s.io/validatingadmissionpolicies",
  "admissionregistration.k8s.io/validatingadmissionpolicybindings",
]);

function setsGeneration(d: ResourceDef): boolean {
  return d.custom || GENERATION_TYPES.has(`${d.group}/${d.resource}`);
}

/** Everything but metadata and status: a change here bumps `metadata.generation`. */
function specPart(obj: KubeObject): Record<string, unknown> {
  const rest: Record<string, unknown> = { ...obj };
  delete rest.metadata;
  delete rest.status;
  delete rest.apiVersion;
  delete rest.kind;
  return rest;
}

/**
 * One type's objects, keyed `namespace/name` (etcd's key order), with what the API server's watch
 * cache keeps beside them: an index by namespace and the sorted lists already served, dropped on
 * any write to the type. Stored objects are never changed in place — every write stores a new
 * object — so a stored object's serializations (see {@link SimStore.serialized}) stay valid for its
 * life.
 */
class TypeBucket {
  private readonly objects = new Map<string, KubeObject>();
  private readonly namespaces = new Map<string, Map<string, KubeObject>>();
  /** Sorted lists by namespace (`undefined`: every namespace), valid until the next write. */
  private readonly sorted = new Map<string | undefined, readonly KubeObject[]>();

  public get size(): number {
    return this.objects.size;
  }

  public get(key: string): KubeObject | undefined {
    return this.objects.get(key);
  }

  public has(key: string): boolean {
    return this.objects.has(key);
  }

  public set(key: string, o: KubeObject): void {
    this.objects.set(key, o);
    const ns = key.slice(0, key.indexOf("/"));
    let inNs = this.namespaces.get(ns);
    if (inNs === undefined) {
      inNs = new Map();
      this.namespaces.set(ns, inNs);
    }
    inNs.set(key, o);
    this.sorted.clear();
  }

  public delete(key: string): void {
    if (!this.objects.delete(key)) return;
    const ns = key.slice(0, key.indexOf("/"));
    const inNs = this.namespaces.get(ns);
    inNs?.delete(key);
    if (inNs?.size === 0) this.namespaces.delete(ns);
    this.sorted.clear();
  }

  public values(): IterableIterator<KubeObject> {
    return this.objects.values();
  }

  public [Symbol.iterator](): IterableIterator<[string, KubeObject]> {
    return this.objects.entries();
  }

  /** The stored objects (of one namespace), in key order; shared, never to be changed. */
  public list(namespace: string | undefined): readonly KubeObject[] {
    const kept = this.sorted.get(namespace);
    if (kept !== undefined) return kept;
    const from = namespace === undefined ? this.objects : this.namespaces.get(namespace);
    const keys = [...(from?.keys() ?? [])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const out = keys.map((k) => from?.get(k) as KubeObject);
    this.sorted.set(namespace, out);
    return out;
  }
}

/** The representations of a stored object that lists are assembled from. */
export type Serialized = "item" | "partial";

/**
 * The object store. Methods named `*In` take a resolved {@link ResourceDef} (used by the HTTP
 * layer); `create/get/list/update/delete` resolve the type from `apiVersion` + `kind`.
 */
export class SimStore {
  private readonly data = new Map<string, TypeBucket>();
  /** JSON text of stored objects by representation (and version asked through), per object. */
  private readonly texts = new WeakMap<KubeObject, Map<string, string>>();
  private readonly events = new EventEmitter();
  private readonly history: StoreEvent[] = [];
  /** Lists served in pages, by type, namespace and resourceVersion (see {@link listAt}). */
  private readonly listSnapshots = new Map<
    string,
    { readonly at: number; readonly items: readonly KubeObject[] }
  >();
  private rv = 1000;
  /** The revision of the last {@link compact}: a watch from before it is answered 410 Gone. */
  private compactedRv = 0;
  private gcNeeded = false;
  private collecting = false;

  /** @param now the simulator's clock; timestamps and `deletionTimestamp` come from it. */
  public constructor(
    public readonly registry: ResourceRegistry,
    private readonly now: () => Date,
  ) {
    this.events.setMaxListeners(0);
  }

  /** Admission of a DELETE (the API server's webhooks); throws to refuse. Set by the server. */
  private deleteAdmission: ((d: ResourceDef, obj: KubeObject) => void) | undefined;

  /** Install the DELETE admission every delete passes (the HTTP API's, the controllers', the tests'). */
  /** Whether a node's kubelet runs (the node lifecycle's knowledge; every kubelet runs by default). */
  private kubeletCheck: (node: string) => boolean = () => true;

  public setKubeletCheck(check: (node: string) => boolean): void {
    this.kubeletCheck = check;
  }

  /** Whether the kubelet of `node` runs and so confirms its pods' deletions. */
  public kubeletUp(node: string): boolean {
    return this.kubeletCheck(node);
  }

  public setDeleteAdmission(admit: ((d: ResourceDef, obj: KubeObject) => void) | undefined): void {
    this.deleteAdmission = admit;
  }

  /** The current global resourceVersion (the counter every write bumps). */
  public get resourceVersion(): string {
    return String(this.rv);
  }

  /** Subscribe to every change; returns the unsubscribe function. */
  public onChange(listener: (e: StoreEvent) => void): () => void {
    this.events.on("change", listener);
    return () => this.events.off("change", listener);
  }

  /** Changes after `resourceVersion` still in the bounded history (for watches that resume). */
  public eventsSince(resourceVersion: number): StoreEvent[] | undefined {
    if (resourceVersion < this.compactedRv) return undefined;
    const first = this.history[0];
    if (first !== undefined && first.resourceVersion > resourceVersion + 1 && resourceVersion < this.rv) {
      return undefined;
    }
    return this.history.filter((e) => e.resourceVersion > resourceVersion);
  }

  // ---- programmatic API (by apiVersion + kind) ----

  public resolve(apiVersion: string | undefined, kind: string | undefined): ResourceDef {
    const d =
      apiVersion !== undefined && kind !== undefined ? this.registry.byKind(apiVersion, kind) : undefined;
    if (d === undefined) {
      throw new KubeApiError(
        404,
        "NotFound",
        `the server could not find the requested resource (kind ${String(kind)} in ${String(apiVersion)})`,
      );
    }
    return d;
  }

  /** Create as the API would (uid, resourceVersion, defaults); `status` is kept as given. */
  public create(obj: KubeObject, opts: WriteOptions = {}): KubeObject {
    const d = this.resolve(obj.apiVersion, obj.kind);
    return this.createIn(d, obj.metadata?.namespace, obj, { keepStatus: true, ...opts });
  }

  public get(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
  ): KubeObject | undefined {
    const d = this.resolve(apiVersion, kind);
    const o = this.bucket(d).get(objKey(d.namespaced ? namespace : undefined, name));
    return o === undefined ? undefined : this.present(d, o);
  }

  public list(apiVersion: string, kind: string, namespace?: string): KubeObject[] {
    return this.listIn(this.resolve(apiVersion, kind), namespace);
  }

  public update(obj: KubeObject, opts: WriteOptions = {}): KubeObject {
    const d = this.resolve(obj.apiVersion, obj.kind);
    return this.updateIn(d, obj.metadata?.namespace, obj.metadata?.name ?? "", obj, opts);
  }

  public delete(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions = {},
  ): KubeObject {
    return this.deleteIn(this.resolve(apiVersion, kind), namespace, name, opts);
  }

  /**
   * Insert an object verbatim (scenario loading): deletionTimestamp, finalizers and status are
   * kept; uid, creationTimestamp and resourceVersion are filled in only when missing.
   */
  public load(obj: KubeObject): KubeObject {
    const d = this.resolve(obj.apiVersion, obj.kind);
    const o = clone(obj);
    const meta = (o.metadata ??= {});
    if (meta.name === undefined) throw badRequest("scenario object without metadata.name");
    if (!d.namespaced) delete meta.namespace;
    else meta.namespace ??= "default";
    meta.uid ??= randomUUID();
    meta.creationTimestamp ??= rfc3339(this.now());
    if (setsGeneration(d)) meta.generation ??= 1;
    // A deleted namespace carries no grace period on a real server (its REST delete sets only the
    // timestamp); every other deleted object does.
    if (meta.deletionTimestamp !== undefined && !(d.group === "" && d.resource === "namespaces"))
      meta.deletionGracePeriodSeconds ??= 0;
    if (d.group === "" && d.resource === "namespaces") {
      meta.labels = { ...meta.labels, "kubernetes.io/metadata.name": meta.name };
      o.spec ??= { finalizers: [NAMESPACE_FINALIZER] };
      o.status ??= { phase: meta.deletionTimestamp === undefined ? "Active" : "Terminating" };
    }
    if (d.group === "apiextensions.k8s.io" && d.resource === "customresourcedefinitions") this.crdCreated(o);
    meta.resourceVersion = String(++this.rv);
    this.bucket(d).set(objKey(meta.namespace, meta.name), o);
    this.emit("ADDED", d, o);
    this.gcNeeded = true;
    this.collectGarbage();
    return this.present(d, o);
  }

  // ---- resolved-type API (HTTP layer) ----

  public getIn(d: ResourceDef, namespace: string | undefined, name: string): KubeObject {
    const o = this.bucket(d).get(objKey(d.namespaced ? namespace : undefined, name));
    if (o === undefined) throw notFound(d, name);
    return this.present(d, o);
  }

  /** Objects of one type, in key order (namespace, then name), like etcd. */
  public listIn(d: ResourceDef, namespace?: string): KubeObject[] {
    return this.listStored(d, namespace).map((o) => this.present(d, o));
  }

  /**
   * The stored objects of one type (and namespace), in key order, without copies: what the HTTP
   * layer serves lists from, as the API server serves them from its watch cache. Read-only — pass
   * them to {@link present} or {@link serialized}, never change them.
   */
  public listStored(d: ResourceDef, namespace?: string): readonly KubeObject[] {
    return this.bucket(d).list(
      namespace !== undefined && namespace !== "" && d.namespaced ? namespace : undefined,
    );
  }

  /**
   * A stored object's JSON text, computed once per object and representation (a write stores a
   * new object, so nothing is ever stale): `item` — as an item of a list asked through `d`'s
   * version (built-in types carry no kind/apiVersion there, custom ones do); `partial` — its
   * `PartialObjectMetadata`.
   */
  public serialized(d: ResourceDef, o: KubeObject, form: Serialized): string {
    let forms = this.texts.get(o);
    if (forms === undefined) {
      forms = new Map();
      this.texts.set(o, forms);
    }
    const key = form === "item" && (d.custom || isEventsView(d)) ? `item ${apiVersionOf(d)}` : form;
    let text = forms.get(key);
    if (text === undefined) {
      if (form === "partial") {
        text = JSON.stringify({
          kind: "PartialObjectMetadata",
          apiVersion: "meta.k8s.io/v1",
          metadata: o.metadata,
        });
      } else if (d.custom) {
        // As `present` orders it: apiVersion and kind first, then the stored keys.
        const c: KubeObject = { apiVersion: "", kind: "", ...o };
        c.apiVersion = apiVersionOf(d);
        c.kind = d.kind;
        text = JSON.stringify(c);
      } else {
        const c: KubeObject = isEventsView(d) ? toEventsView(o) : { ...o };
        delete c.apiVersion;
        delete c.kind;
        text = JSON.stringify(c);
      }
      forms.set(key, text);
    }
    return text;
  }

  public count(d: ResourceDef): number {
    return this.bucket(d).size;
  }

  /**
   * The list of one type (and namespace) as it was at `resourceVersion`, for the later pages of a
   * chunked list: etcd serves every page from the revision of the first one until compaction
   * removes that revision. Instead of a full MVCC history the simulator keeps the lists it served
   * in pages (see {@link keepListAt}); `undefined` once forgotten, like a compacted revision.
   */
  public listAt(
    d: ResourceDef,
    namespace: string | undefined,
    resourceVersion: string,
  ): readonly KubeObject[] | undefined {
    const key = `${typeKey(d)}|${namespace ?? ""}|${resourceVersion}`;
    const kept = this.listSnapshots.get(key);
    if (kept === undefined) return undefined;
    if (this.now().getTime() - kept.at > LIST_SNAPSHOT_TTL_MS) {
      this.listSnapshots.delete(key);
      return undefined;
    }
    return kept.items;
  }

  /** Remember a list served with a continue token (`items` as {@link listStored} returned them). */
  public keepListAt(
    d: ResourceDef,
    namespace: string | undefined,
    resourceVersion: string,
    items: readonly KubeObject[],
  ): void {
    const key = `${typeKey(d)}|${namespace ?? ""}|${resourceVersion}`;
    this.listSnapshots.delete(key);
    this.listSnapshots.set(key, { at: this.now().getTime(), items });
    // Bounded like etcd's retained revisions: the oldest lists go first.
    for (const k of this.listSnapshots.keys()) {
      if (this.listSnapshots.size <= MAX_LIST_SNAPSHOTS) break;
      this.listSnapshots.delete(k);
    }
  }

  /**
   * Forget every past list and every past change, as an etcd compaction does: an outstanding
   * continue token is then answered 410 Expired, and a watch from an older resourceVersion gets
   * the 410 `Expired` ERROR event (the client re-lists).
   */
  public compact(): void {
    this.listSnapshots.clear();
    this.history.length = 0;
    this.compactedRv = this.rv;
  }

  public createIn(
    d: ResourceDef,
    namespace: string | undefined,
    input: KubeObject,
    opts: WriteOptions = {},
  ): KubeObject {
    if (!isRecord(input)) throw badRequest("the body of the request was in an unknown format");
    const o = clone(isEventsView(d) ? fromEventsView(input) : input);
    o.apiVersion = apiVersionOf(d);
    o.kind = d.kind;
    const meta = (o.metadata ??= {});
    if (d.namespaced) {
      if (
        meta.namespace !== undefined &&
        meta.namespace !== "" &&
        namespace !== undefined &&
        meta.namespace !== namespace
      ) {
        throw badRequest(
          "the namespace of the provided object does not match the namespace sent on the request",
        );
      }
      meta.namespace = namespace ?? meta.namespace ?? "default";
    } else delete meta.namespace;
    if (
      (meta.name === undefined || meta.name === "") &&
      meta.generateName !== undefined &&
      meta.generateName !== ""
    ) {
      let suffix = "";
      for (let i = 0; i < 5; i++)
        suffix += GENERATE_CHARS[Math.floor(Math.random() * GENERATE_CHARS.length)] ?? "x";
      meta.name = `${meta.generateName}${suffix}`;
    }
    const name = meta.name ?? "";
    const errors: FieldError[] = [];
    if (name === "")
      errors.push({ field: "metadata.name", type: "Required", detail: "name or generateName is required" });
    else {
      const why = nameError(d, name);
      if (why !== undefined)
        errors.push({ field: "metadata.name", type: "Invalid", value: name, detail: why });
    }
    if (errors.length > 0) throw invalid(d, name, errors);

    if (d.namespaced) {
      const ns = this.data.get("/namespaces")?.get(objKey(undefined, meta.namespace ?? ""));
      if (ns === undefined) throw notFound({ group: "", resource: "namespaces" }, meta.namespace ?? "");
      if (ns.metadata?.deletionTimestamp !== undefined)
        throw namespaceTerminating(d, name, meta.namespace ?? "");
    }
    const bucket = this.bucket(d);
    const key = objKey(meta.namespace, name);
    if (bucket.has(key)) throw alreadyExists(d, name);

    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.now());
    if (setsGeneration(d)) meta.generation = 1;
    else delete meta.generation;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.resourceVersion;
    if (meta.finalizers?.length === 0) delete meta.finalizers;
    if (!opts.keepStatus && d.subresources.includes("status")) delete o.status;
    this.applyCreateDefaults(d, o);
    if (opts.dryRun) return this.present(d, o);

    meta.resourceVersion = String(++this.rv);
    bucket.set(key, o);
    this.emit("ADDED", d, o);
    return this.present(d, o);
  }

  private applyCreateDefaults(d: ResourceDef, o: KubeObject): void {
    const meta = o.metadata ?? {};
    if (d.group === "" && d.resource === "namespaces") {
      meta.labels = { ...meta.labels, "kubernetes.io/metadata.name": meta.name ?? "" };
      const spec = isRecord(o.spec) ? o.spec : {};
      const fins = Array.isArray(spec.finalizers) ? (spec.finalizers as string[]) : [];
      o.spec = {
        ...spec,
        finalizers: fins.includes(NAMESPACE_FINALIZER) ? fins : [...fins, NAMESPACE_FINALIZER],
      };
      o.status = { phase: "Active" };
    }
    if (d.group === "" && d.resource === "pods") {
      const status = isRecord(o.status) ? o.status : {};
      o.status = { phase: "Pending", qosClass: "BestEffort", ...status };
    }
    if (d.group === "" && d.resource === "persistentvolumeclaims") {
      // The StorageObjectInUseProtection admission plugin (enabled by default).
      const fins = meta.finalizers ?? [];
      if (!fins.includes(PVC_PROTECTION_FINALIZER)) meta.finalizers = [...fins, PVC_PROTECTION_FINALIZER];
    }
    if (d.group === "apiextensions.k8s.io" && d.resource === "customresourcedefinitions") this.crdCreated(o);
  }

  private crdCreated(o: KubeObject): void {
    const meta = (o.metadata ??= {});
    const fins = meta.finalizers ?? [];
    if (!fins.includes(FINALIZER_CRD_CLEANUP)) meta.finalizers = [...fins, FINALIZER_CRD_CLEANUP];
    const spec = isRecord(o.spec) ? o.spec : {};
    const names = isRecord(spec.names) ? spec.names : {};
    const at = rfc3339(this.now());
    const versions = Array.isArray(spec.versions)
      ? (spec.versions as { name?: string; storage?: boolean }[])
      : [];
    o.status = {
      acceptedNames: names,
      conditions: [
        {
          type: "NamesAccepted",
          status: "True",
          lastTransitionTime: at,
          reason: "NoConflicts",
          message: "no conflicts found",
        },
        {
          type: "Established",
          status: "True",
          lastTransitionTime: at,
          reason: "InitialNamesAccepted",
          message: "the initial names have been accepted",
        },
      ],
      storedVersions: versions.filter((v) => v.storage === true).map((v) => v.name ?? ""),
    };
    this.registry.applyCrd(o);
  }

  /**
   * PUT semantics: optimistic concurrency on `metadata.resourceVersion`, status and
   * `spec.finalizers` (namespaces) only through their subresources, no new finalizers on a
   * deleting object, removal once a deleting object's finalizers are empty.
   */
  public updateIn(
    d: ResourceDef,
    namespace: string | undefined,
    name: string,
    input: KubeObject,
    opts: WriteOptions = {},
  ): KubeObject {
    if (!isRecord(input)) throw badRequest("the body of the request was in an unknown format");
    if (isEventsView(d)) input = fromEventsView(input);
    const bucket = this.bucket(d);
    const key = objKey(d.namespaced ? namespace : undefined, name);
    const cur = bucket.get(key);
    if (cur === undefined) throw notFound(d, name);
    const inMeta = input.metadata ?? {};
    if (inMeta.name !== undefined && inMeta.name !== name) {
      throw badRequest(
        `the name of the object (${inMeta.name}) does not match the name on the URL (${name})`,
      );
    }
    if (
      d.namespaced &&
      inMeta.namespace !== undefined &&
      inMeta.namespace !== "" &&
      inMeta.namespace !== namespace
    ) {
      throw badRequest(
        "the namespace of the provided object does not match the namespace sent on the request",
      );
    }
    if (
      inMeta.resourceVersion !== undefined &&
      inMeta.resourceVersion !== "" &&
      inMeta.resourceVersion !== cur.metadata?.resourceVersion
    ) {
      throw conflict(d, name);
    }
    if (inMeta.uid !== undefined && inMeta.uid !== "" && inMeta.uid !== cur.metadata?.uid) {
      throw conflict(
        d,
        name,
        `Precondition failed: UID in precondition: ${inMeta.uid}, UID in object meta: ${cur.metadata?.uid ?? ""}`,
      );
    }

    let next: KubeObject;
    const isNamespace = d.group === "" && d.resource === "namespaces";
    if (opts.subresource === "status") {
      next = { ...clone(cur), status: clone(input.status) };
    } else if (opts.subresource === "finalize") {
      const spec = isRecord(input.spec) ? input.spec : {};
      next = {
        ...clone(cur),
        spec: { ...(isRecord(cur.spec) ? cur.spec : {}), finalizers: clone(spec.finalizers ?? []) },
      };
    } else {
      next = clone(input);
      next.metadata ??= {};
      if (d.subresources.includes("status")) {
        if (cur.status === undefined) delete next.status;
        else next.status = clone(cur.status);
      }
      if (isNamespace) {
        const spec = isRecord(next.spec) ? next.spec : {};
        const curSpec = isRecord(cur.spec) ? cur.spec : {};
        next.spec = { ...spec, finalizers: clone(curSpec.finalizers ?? []) };
      }
    }
    next.apiVersion = apiVersionOf(d);
    next.kind = d.kind;
    const meta = (next.metadata ??= {});
    const curMeta = cur.metadata ?? {};
    meta.name = name;
    if (d.namespaced) meta.namespace = curMeta.namespace;
    else delete meta.namespace;
    meta.uid = curMeta.uid;
    meta.creationTimestamp = curMeta.creationTimestamp;
    meta.generation = curMeta.generation;
    if (curMeta.deletionTimestamp !== undefined) {
      meta.deletionTimestamp = curMeta.deletionTimestamp;
      meta.deletionGracePeriodSeconds = curMeta.deletionGracePeriodSeconds;
    } else {
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
    }
    if (meta.finalizers?.length === 0) delete meta.finalizers;
    if (curMeta.deletionTimestamp !== undefined) {
      const added = (meta.finalizers ?? []).filter((f) => !(curMeta.finalizers ?? []).includes(f));
      if (added.length > 0) {
        throw invalid(d, name, [
          {
            field: "metadata.finalizers",
            type: "Forbidden",
            detail: `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added
              .map((f) => JSON.stringify(f))
              .join(", ")}}`,
          },
        ]);
      }
    }
    if (setsGeneration(d) && opts.subresource === undefined && !deepEqual(specPart(cur), specPart(next))) {
      meta.generation = (curMeta.generation ?? 1) + 1;
    }
    meta.resourceVersion = curMeta.resourceVersion;
    if (deepEqual(cur, next)) return this.present(d, cur);
    if (opts.dryRun) return this.present(d, next);

    meta.resourceVersion = String(++this.rv);
    bucket.set(key, next);
    if (d.group === "apiextensions.k8s.io" && d.resource === "customresourcedefinitions")
      this.registry.applyCrd(next);
    this.emit("MODIFIED", d, next);
    const result = this.present(d, next);
    if (meta.deletionTimestamp !== undefined) {
      this.gcNeeded = true;
      this.finishIfFinalized(d, key);
      this.collectGarbage();
    }
    return result;
  }

  /** DELETE semantics; returns the object as last seen (with deletionTimestamp if it stays). */
  public deleteIn(
    d: ResourceDef,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions = {},
  ): KubeObject {
    const bucket = this.bucket(d);
    const key = objKey(d.namespaced ? namespace : undefined, name);
    const cur = bucket.get(key);
    if (cur === undefined) throw notFound(d, name);
    const curMeta = cur.metadata ?? {};
    const pre = opts.preconditions;
    if (pre?.uid !== undefined && pre.uid !== curMeta.uid) {
      throw conflict(
        d,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${curMeta.uid ?? ""}`,
      );
    }
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== curMeta.resourceVersion) {
      throw conflict(
        d,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${curMeta.resourceVersion ?? ""}`,
      );
    }
    this.deleteAdmission?.(d, cur);
    if (opts.dryRun) return this.present(d, cur);
    const isPod = d.group === "" && d.resource === "pods";
    if (curMeta.deletionTimestamp !== undefined) {
      // A pod waiting for its kubelet goes at once when deleted again with grace 0 (`--force`).
      if (isPod && opts.gracePeriodSeconds === 0 && (curMeta.deletionGracePeriodSeconds ?? 0) > 0) {
        const next = clone(cur);
        const meta = (next.metadata ??= {});
        meta.deletionGracePeriodSeconds = 0;
        meta.resourceVersion = String(++this.rv);
        bucket.set(key, next);
        this.emit("MODIFIED", d, next);
        this.gcNeeded = true;
        this.finishIfFinalized(d, key);
        this.collectGarbage();
        return this.present(d, bucket.get(key) ?? next);
      }
      return this.present(d, cur);
    }

    const policy: PropagationPolicy =
      opts.propagationPolicy ??
      (opts.orphanDependents === true ? PropagationPolicy.Orphan : PropagationPolicy.Background);
    const next = clone(cur);
    const meta = (next.metadata ??= {});
    const fins = [...(meta.finalizers ?? [])];
    if (policy === PropagationPolicy.Foreground && !fins.includes(FINALIZER_FOREGROUND))
      fins.push(FINALIZER_FOREGROUND);
    if (policy === PropagationPolicy.Orphan && !fins.includes(FINALIZER_ORPHAN)) fins.push(FINALIZER_ORPHAN);
    const isNamespace = d.group === "" && d.resource === "namespaces";
    const specFins =
      isNamespace && isRecord(next.spec) && Array.isArray(next.spec.finalizers) ? next.spec.finalizers : [];
    // A bound, running pod waits for its node's kubelet (graceful deletion); see workloads.ts.
    const grace = isPod ? podGracePeriod(cur, opts.gracePeriodSeconds) : 0;
    const graceful =
      grace > 0 &&
      awaitsKubelet(this, { ...cur, metadata: { ...curMeta, deletionGracePeriodSeconds: grace } });
    if (fins.length === 0 && specFins.length === 0 && !graceful) {
      bucket.delete(key);
      this.rv++;
      meta.resourceVersion = String(this.rv);
      this.emit("DELETED", d, next);
      this.afterRemoval(d, next);
      this.gcNeeded = true;
      this.collectGarbage();
      return this.present(d, next);
    }
    if (fins.length > 0) meta.finalizers = fins;
    meta.deletionTimestamp = rfc3339(new Date(this.now().getTime() + (graceful ? grace * 1000 : 0)));
    if (isNamespace) delete meta.deletionGracePeriodSeconds;
    else meta.deletionGracePeriodSeconds = graceful ? grace : 0;
    if (isNamespace) next.status = { ...(isRecord(next.status) ? next.status : {}), phase: "Terminating" };
    meta.resourceVersion = String(++this.rv);
    bucket.set(key, next);
    this.emit("MODIFIED", d, next);
    this.gcNeeded = true;
    this.collectGarbage();
    return this.present(d, next);
  }

  /** Remove an object outright (the end of finalization). */
  private remove(d: ResourceDef, key: string): void {
    const bucket = this.bucket(d);
    const cur = bucket.get(key);
    if (cur === undefined) return;
    bucket.delete(key);
    const gone = clone(cur);
    (gone.metadata ??= {}).resourceVersion = String(++this.rv);
    this.emit("DELETED", d, gone);
    this.afterRemoval(d, gone);
    this.gcNeeded = true;
  }

  private afterRemoval(d: ResourceDef, o: KubeObject): void {
    if (d.group === "apiextensions.k8s.io" && d.resource === "customresourcedefinitions") {
      this.registry.removeCrd(o.metadata?.name ?? "");
    }
  }

  /** A deleting object whose finalizers (and a namespace's spec.finalizers) are empty goes away. */
  private finishIfFinalized(d: ResourceDef, key: string): void {
    const o = this.bucket(d).get(key);
    if (o?.metadata?.deletionTimestamp === undefined) return;
    if ((o.metadata.finalizers ?? []).length > 0) return;
    if (d.group === "" && d.resource === "namespaces") {
      const spec = isRecord(o.spec) ? o.spec : {};
      if (Array.isArray(spec.finalizers) && spec.finalizers.length > 0) return;
    }
    if (d.group === "" && d.resource === "pods" && awaitsKubelet(this, o)) return;
    this.remove(d, key);
  }

  /** Rewrite one stored object's finalizers (the garbage collector's own updates). */
  private setFinalizers(d: ResourceDef, key: string, finalizers: string[]): void {
    const cur = this.bucket(d).get(key);
    if (cur === undefined) return;
    const next = clone(cur);
    const meta = (next.metadata ??= {});
    if (finalizers.length === 0) delete meta.finalizers;
    else meta.finalizers = finalizers;
    meta.resourceVersion = String(++this.rv);
    this.bucket(d).set(key, next);
    this.emit("MODIFIED", d, next);
    this.finishIfFinalized(d, key);
  }

  /**
   * The garbage collector and the CRD cleanup finalizer, run to a fixed point after writes that
   * can matter: dependents of a gone owner are deleted (background), Foreground owners wait for
   * their dependents, Orphan owners release theirs.
   */
  public collectGarbage(): void {
    // Deletions made by the collector call back in here; the outer loop picks up their effects.
    if (this.collecting) return;
    this.collecting = true;
    try {
      this.gcRounds();
    } finally {
      this.collecting = false;
    }
  }

  private gcRounds(): void {
    for (let round = 0; this.gcNeeded && round < 50; round++) {
      this.gcNeeded = false;
      const all: { d: ResourceDef; key: string; o: KubeObject }[] = [];
      const byUid = new Map<string, { d: ResourceDef; key: string; o: KubeObject }>();
      for (const d of this.registry.preferred()) {
        for (const [key, o] of this.bucket(d)) {
          const e = { d, key, o };
          all.push(e);
          if (o.metadata?.uid !== undefined) byUid.set(o.metadata.uid, e);
        }
      }
      const dependents = (uid: string) =>
        all.filter((e) => (e.o.metadata?.ownerReferences ?? []).some((r) => r.uid === uid));

      for (const e of all) {
        const meta = e.o.metadata ?? {};
        const fins = meta.finalizers ?? [];
        if (meta.deletionTimestamp === undefined) continue;
        if (fins.includes(FINALIZER_ORPHAN) && meta.uid !== undefined) {
          for (const dep of dependents(meta.uid)) this.stripOwner(dep.d, dep.key, meta.uid);
          this.setFinalizers(
            e.d,
            e.key,
            fins.filter((f) => f !== FINALIZER_ORPHAN),
          );
          this.gcNeeded = true;
          continue;
        }
        if (fins.includes(FINALIZER_FOREGROUND) && meta.uid !== undefined) {
          const deps = dependents(meta.uid);
          for (const dep of deps) {
            if (dep.o.metadata?.deletionTimestamp === undefined) {
              this.gcDelete(dep.d, dep.o, PropagationPolicy.Foreground);
            }
          }
          const blocking = dependents(meta.uid).filter(
            (dep) =>
              this.bucket(dep.d).has(dep.key) &&
              (dep.o.metadata?.ownerReferences ?? []).some(
                (r) => r.uid === meta.uid && r.blockOwnerDeletion === true,
              ),
          );
          if (blocking.length === 0) {
            this.setFinalizers(
              e.d,
              e.key,
              fins.filter((f) => f !== FINALIZER_FOREGROUND),
            );
            this.gcNeeded = true;
          }
          continue;
        }
        if (fins.includes(FINALIZER_CRD_CLEANUP) && e.d.resource === "customresourcedefinitions") {
          const spec = isRecord(e.o.spec) ? e.o.spec : {};
          const names = isRecord(spec.names) ? spec.names : {};
          const group = typeof spec.group === "string" ? spec.group : "";
          const plural = typeof names.plural === "string" ? names.plural : "";
          const crBucket = this.data.get(`${group}/${plural}`);
          const crDef = this.registry.preferred().find((x) => x.group === group && x.resource === plural);
          if (crBucket !== undefined && crDef !== undefined) {
            for (const cr of [...crBucket.values()]) {
              if (cr.metadata?.deletionTimestamp === undefined) this.gcDelete(crDef, cr);
            }
          }
          if (crBucket === undefined || crBucket.size === 0) {
            this.setFinalizers(
              e.d,
              e.key,
              fins.filter((f) => f !== FINALIZER_CRD_CLEANUP),
            );
            this.gcNeeded = true;
          }
        }
      }

      // Dependents whose owners are all gone are collected; dangling references are dropped.
      for (const e of all) {
        const refs = e.o.metadata?.ownerReferences ?? [];
        if (refs.length === 0 || !this.bucket(e.d).has(e.key)) continue;
        const live = refs.filter(
          (r) => byUid.has(r.uid) && this.bucket(byUid.get(r.uid)!.d).has(byUid.get(r.uid)!.key),
        );
        if (live.length === 0) {
          if (e.o.metadata?.deletionTimestamp === undefined && this.gcDelete(e.d, e.o)) {
            this.gcNeeded = true;
          }
        } else if (live.length < refs.length) {
          for (const r of refs) if (!live.includes(r)) this.stripOwner(e.d, e.key, r.uid);
        }
      }
    }
  }

  /** A collector's delete; one an admission webhook refuses is left for a later round. */
  private gcDelete(d: ResourceDef, o: KubeObject, propagationPolicy?: PropagationPolicy): boolean {
    try {
      this.deleteIn(d, o.metadata?.namespace, o.metadata?.name ?? "", {
        ...(propagationPolicy !== undefined ? { propagationPolicy } : {}),
      });
      return true;
    } catch (err) {
      if (err instanceof KubeApiError) return false;
      throw err;
    }
  }

  private stripOwner(d: ResourceDef, key: string, uid: string): void {
    const cur = this.bucket(d).get(key);
    if (cur === undefined) return;
    const next = clone(cur);
    const meta = (next.metadata ??= {});
    const refs = (meta.ownerReferences ?? []).filter((r) => r.uid !== uid);
    if (refs.length === 0) delete meta.ownerReferences;
    else meta.ownerReferences = refs;
    meta.resourceVersion = String(++this.rv);
    this.bucket(d).set(key, next);
    this.emit("MODIFIED", d, next);
  }

  /** Clock, for collaborators (controller, logs). */
  public clock(): Date {
    return this.now();
  }

  private bucket(d: Pick<ResourceDef, "group" | "resource">): TypeBucket {
    const k = typeKey(d);
    let b = this.data.get(k);
    if (b === undefined) {
      b = new TypeBucket();
      this.data.set(k, b);
    }
    return b;
  }

  /** A caller's copy, labelled with the version it was asked through. */
  public present(d: ResourceDef, o: KubeObject): KubeObject {
    const c = isEventsView(d) ? toEventsView(clone(o)) : clone(o);
    c.apiVersion = apiVersionOf(d);
    c.kind = d.kind;
    return { apiVersion: c.apiVersion, kind: c.kind, ...c };
  }

  private emit(type: StoreEvent["type"], d: ResourceDef, o: KubeObject): void {
    const e: StoreEvent = { type, def: d, object: clone(o), resourceVersion: this.rv };
    this.history.push(e);
    if (this.history.length > 5000) this.history.splice(0, this.history.length - 5000);
    this.events.emit("change", e);
  }
}
