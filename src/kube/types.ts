/**
 * Plain snapshots of cluster state, as the adapters collect them. The pure core
 * (`src/diagnosis`) reads only these types, never a client library type.
 */

export interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
}

export interface NamespaceSnapshot {
  readonly name: string;
  readonly uid?: string;
  /** Absent from hand-made snapshots; the adapter always fills it in. */
  readonly resourceVersion?: string;
  readonly phase: string;
  readonly creationTimestamp?: string;
  readonly deletionTimestamp?: string;
  /** `spec.finalizers` (the namespace controller's own, usually `["kubernetes"]`). */
  readonly specFinalizers: readonly string[];
  /** `metadata.finalizers`. */
  readonly finalizers: readonly string[];
  readonly conditions: readonly Condition[];
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/** A namespaced, listable resource type found by discovery. */
export interface ResourceType {
  /** `""` for the core group. */
  readonly group: string;
  readonly version: string;
  /** `v1` or `networking.k8s.io/v1`. */
  readonly apiVersion: string;
  readonly kind: string;
  /** Plural resource name, e.g. `ingresses`. */
  readonly resource: string;
  readonly namespaced: boolean;
  readonly verbs: readonly string[];
}

export interface DiscoveryFailure {
  readonly groupVersion: string;
  readonly message: string;
}

export interface DiscoverySnapshot {
  readonly resources: readonly ResourceType[];
  readonly failures: readonly DiscoveryFailure[];
}

export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid?: string;
}

/** The metadata of any object, plus the few fields of status the diagnosis reads. */
export interface ObjectSnapshot {
  readonly apiVersion: string;
  readonly kind: string;
  /** Plural resource name this object was listed under. */
  readonly resource: string;
  readonly namespace?: string;
  readonly name: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly creationTimestamp?: string;
  readonly deletionTimestamp?: string;
  readonly finalizers: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly ownerReferences: readonly OwnerReference[];
  /** e.g. `spec.ingressClassName` or the legacy class annotation. */
  readonly ingressClassName?: string;
  /** An Ingress's `spec.rules[].host`: the names it says it serves. */
  readonly ruleHosts?: readonly string[];
  /**
   * An Ingress with a rule that names no host or a `spec.defaultBackend`: its load balancer answers
   * for any `Host` (the controller writes such a rule without a host-header condition).
   */
  readonly servesAnyHost?: boolean;
  /** Load-balancer hostnames from `status.loadBalancer.ingress[].hostname`. */
  readonly loadBalancerHostnames?: readonly string[];
  /** A Service's `spec.type` (e.g. `LoadBalancer`). */
  readonly serviceType?: string;
  /** A Service's `spec.loadBalancerClass` (e.g. `service.k8s.aws/nlb`). */
  readonly loadBalancerClass?: string;
  /** A TargetGroupBinding's `spec.targetGroupARN`. */
  readonly targetGroupArn?: string;
}

/**
 * An object its finalizers hold: deleted (a `deletionTimestamp`) and kept by at least one
 * finalizer. An object with finalizers that is not being deleted holds nothing — its finalizers
 * still guard a live object — so no step ever forces them.
 */
export function heldByFinalizers(o: Pick<ObjectSnapshot, "deletionTimestamp" | "finalizers">): boolean {
  return o.deletionTimestamp !== undefined && o.finalizers.length > 0;
}

export interface DeploymentSnapshot {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly selector: Readonly<Record<string, string>>;
  readonly replicas: number;
  readonly readyReplicas: number;
  readonly availableReplicas: number;
  readonly images: readonly string[];
  /** Container args, to read e.g. `--cluster-name` or `--ingress-class`. */
  readonly args: readonly string[];
}

export interface PodSnapshot {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly phase: string;
  readonly containers: readonly string[];
  readonly ready: boolean;
  readonly startTime?: string;
}

export interface EventSnapshot {
  readonly namespace: string;
  readonly type: string;
  readonly reason: string;
  readonly message: string;
  readonly count: number;
  readonly involvedKind: string;
  readonly involvedName: string;
  readonly involvedNamespace?: string;
  readonly lastTimestamp?: string;
  readonly source?: string;
}

export interface LogLine {
  readonly pod: string;
  readonly container: string;
  readonly line: string;
}

/** An `apiregistration.k8s.io/v1` APIService: which Service serves a group-version, and whether it is up. */
export interface ApiServiceSnapshot {
  /** `<version>.<group>`, e.g. `v1beta1.metrics.k8s.io`. */
  readonly name: string;
  readonly group: string;
  readonly version: string;
  /** `spec.service`; absent for a local APIService (served by kube-apiserver itself). */
  readonly service?: { readonly namespace: string; readonly name: string; readonly port?: number };
  readonly conditions: readonly Condition[];
}

/** Endpoints of one Service, from its EndpointSlices (or core Endpoints when slices cannot be read). */
export interface ServiceEndpointsSnapshot {
  readonly namespace: string;
  readonly service: string;
  /** Distinct addresses whose endpoint is ready. */
  readonly ready: number;
  /** Distinct addresses that exist but are not ready. */
  readonly notReady: number;
  readonly source: "endpointslices" | "endpoints";
}

/** An Argo CD Application (`argoproj.io/v1alpha1`): what it manages and how it syncs. */
export interface ArgoApplicationSnapshot {
  readonly namespace: string;
  readonly name: string;
  readonly destinationNamespace?: string;
  /** `status.resources`: every object the app manages. */
  readonly resources: readonly {
    readonly group: string;
    readonly kind: string;
    readonly namespace?: string;
    readonly name: string;
  }[];
  /** `status.conditions` (e.g. `SharedResourceWarning`). */
  readonly conditions: readonly { readonly type: string; readonly message?: string }[];
  readonly automated: boolean;
  readonly prune: boolean;
  readonly selfHeal: boolean;
}
