import type {
  DeploymentSnapshot,
  DiscoverySnapshot,
  ApiServiceSnapshot,
  ArgoApplicationSnapshot,
  EventSnapshot,
  NamespaceSnapshot,
  ObjectSnapshot,
  PodSnapshot,
  ResourceType,
  ServiceEndpointsSnapshot,
} from "./types.js";

/** One webhook of a Validating- or MutatingWebhookConfiguration (cluster-scoped). */
export interface AdmissionWebhookSnapshot {
  readonly configuration: string;
  readonly configurationKind: "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration";
  /** The webhook's own name (`webhooks[].name`), as the API server's errors quote it. */
  readonly name: string;
  /** `Fail` (the v1 default) or `Ignore`. */
  readonly failurePolicy: string;
  readonly service?: { readonly namespace: string; readonly name: string; readonly port?: number };
  readonly url?: string;
  readonly rules: readonly {
    readonly operations: readonly string[];
    readonly apiGroups: readonly string[];
    readonly resources: readonly string[];
  }[];
}

/** A Node as the diagnosis reads it: is its kubelet there to finish its pods' deletion? */
export interface NodeSnapshot {
  readonly name: string;
  /** The `Ready` condition; absent when the node reports none. */
  readonly ready?: {
    readonly status: string;
    readonly reason?: string;
    readonly message?: string;
    readonly lastTransitionTime?: string;
  };
  readonly unschedulable: boolean;
  /** `key:effect` of each taint, e.g. `node.kubernetes.io/unreachable:NoExecute`. */
  readonly taints: readonly string[];
}

/** Where a pod runs and what it mounts: what holds a Terminating pod and a protected claim. */
export interface PodPlacementSnapshot {
  readonly namespace: string;
  readonly name: string;
  readonly nodeName?: string;
  readonly phase: string;
  readonly deletionTimestamp?: string;
  readonly deletionGracePeriodSeconds?: number;
  readonly finalizers: readonly string[];
  /** `spec.volumes[].persistentVolumeClaim.claimName`. */
  readonly claims: readonly string[];
}

/** The namespace as read before an annotation change. */
export interface NamespaceAnnotationPrecondition {
  readonly uid: string;
  readonly resourceVersion: string;
  readonly annotations: Readonly<Record<string, string>>;
}

/**
 * Who a write is made for: the approval request it carries out. The adapter names it to the API
 * server, so its audit log ties the write to the approval: the field manager
 * `unstuck-<request id>` (recorded in the object's `managedFields`) and a User-Agent naming the
 * request.
 */
export interface WriteContext {
  readonly requestId: string;
}

/**
 * The narrow set of Kubernetes reads and writes the bot makes. `client-node-adapter.ts`
 * implements it with `@kubernetes/client-node`; tests may substitute a hand-made one for pure
 * logic, but integration tests use the real adapter against the simulator.
 *
 * Every method throws `UnstuckError` (NotFound, Forbidden with verb/resource, Unreachable,
 * Throttled, Upstream) — never a raw client error. No method is optional: a consumer that needs
 * fewer takes a `Pick` of this port, so a read left out of a wrapper is a compile error, never a
 * cause silently skipped at run time.
 */
export interface KubePort {
  /** `null` when the namespace does not exist. */
  getNamespace(name: string): Promise<NamespaceSnapshot | null>;
  /** All resource types (namespaced and not) with their verbs; failures per group-version. */
  discover(): Promise<DiscoverySnapshot>;
  /**
   * Every object of one type in one namespace, or in all namespaces when `namespace` is undefined
   * (follows `continue`).
   */
  listObjects(type: ResourceType, namespace?: string): Promise<ObjectSnapshot[]>;
  /** `null` when absent. */
  getObject(type: ResourceType, namespace: string, name: string): Promise<ObjectSnapshot | null>;
  /** Deployments in all namespaces (or one), optionally filtered by a label selector. */
  listDeployments(options?: {
    namespace?: string;
    labelSelector?: string;
  }): Promise<readonly DeploymentSnapshot[]>;
  listPods(namespace: string, labelSelector?: string): Promise<PodSnapshot[]>;
  /** The last `tailLines` lines of one container's log. */
  podLog(namespace: string, pod: string, container: string, tailLines: number): Promise<string[]>;
  /** Events in a namespace, optionally those about one object. */
  listEvents(namespace: string, involved?: { kind: string; name: string }): Promise<EventSnapshot[]>;
  /** Every APIService (`apiregistration.k8s.io/v1`, cluster-scoped), with its status conditions. */
  listApiServices(): Promise<ApiServiceSnapshot[]>;
  /** Argo CD Applications in all namespaces (`argoproj.io/v1alpha1`), with what each manages. */
  listArgoApplications(): Promise<ArgoApplicationSnapshot[]>;
  /**
   * Ready and not-ready endpoints of one Service: its EndpointSlices (`kubernetes.io/service-name`),
   * or the core Endpoints object when slices cannot be read. No endpoints at all counts as 0 ready.
   */
  getServiceEndpoints(namespace: string, service: string): Promise<ServiceEndpointsSnapshot>;
  /**
   * Every webhook of every Validating- and MutatingWebhookConfiguration; read only when the
   * namespace reports `NamespaceDeletionContentFailure`.
   */
  listAdmissionWebhooks(): Promise<AdmissionWebhookSnapshot[]>;
  /** Whether a Service exists (a list of that one name, so only `list services` is needed). */
  serviceExists(namespace: string, name: string): Promise<boolean>;
  /**
   * One Node by name (a list of that one name), `null` when it does not exist; read only for the
   * nodes of pods being deleted.
   */
  getNode(name: string): Promise<NodeSnapshot | null>;
  /** The pods of a namespace with their node and claims. */
  listPodPlacements(namespace: string): Promise<PodPlacementSnapshot[]>;
  /**
   * Remove finalizers from one object with a JSON patch whose `test` operations pin the
   * approved state: the object's `resourceVersion` and its exact finalizer list. If anything
   * changed since, the API server rejects the patch (422/409) and this throws
   * `UnstuckError(Stale)`; nothing is modified. Returns the object after the patch.
   */
  removeFinalizers(
    type: ResourceType,
    namespace: string,
    name: string,
    precondition: { readonly resourceVersion: string; readonly finalizers: readonly string[] },
    remove: readonly string[],
    write?: WriteContext,
  ): Promise<ObjectSnapshot>;
  /**
   * Set (`value`) or remove (`null`) one annotation of a Namespace with a JSON patch whose `test`
   * operations pin the namespace as the caller read it (uid and resourceVersion; the annotations
   * read decide the exact operations, see `annotation-patch.ts`). A namespace that moved on since
   * is refused by the API server and this throws `UnstuckError(Stale)`; nothing is modified.
   * Only the deletion guard writes namespaces; returns the namespace after.
   */
  annotateNamespace(
    name: string,
    key: string,
    value: string | null,
    seen: NamespaceAnnotationPrecondition,
    write?: WriteContext,
  ): Promise<NamespaceSnapshot>;
  /**
   * Every namespace, metadata only (`PartialObjectMetadataList`, every page): name, uid,
   * resourceVersion, deletionTimestamp, labels and annotations; status and spec are not read, so
   * `conditions` and `specFinalizers` are empty and `phase` follows the deletionTimestamp.
   * The deletion guard's reconcile loop uses it to find the namespaces carrying its annotation.
   */
  listNamespaces(): Promise<NamespaceSnapshot[]>;
  /**
   * Remove one annotation of a Namespace only while it still has exactly `expected.value` (and the
   * namespace is still `expected.uid`): a JSON patch of `test` operations on both, then `remove`.
   * Not pinned to a resourceVersion, so an unrelated change to the namespace does not make it fail,
   * and a new value written meanwhile (a re-approval) is never undone. `removed`: taken off now;
   * `changed`: the namespace or the value is not the one expected (nothing written); `gone`: no
   * such namespace.
   */
  removeNamespaceAnnotation(
    name: string,
    key: string,
    expected: { readonly uid: string; readonly value: string },
    write?: WriteContext,
  ): Promise<"removed" | "changed" | "gone">;
  /**
   * Release what the adapter holds open (the discovery cache's watches); a port without long-lived
   * state has nothing to close. Calls made after it still work, uncached.
   */
  close(): Promise<void>;
}
