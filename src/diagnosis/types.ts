import type { ArgoOwnership } from "./argo.js";
import type { Condition } from "../kube/types.js";
import type { AwsFindings } from "./aws.js";

/** Verdicts of `ns`: `terminating` is still progressing, `blocked` will not finish on its own. */
export const Verdict = {
  Active: "active",
  NotFound: "not-found",
  Terminating: "terminating",
  Blocked: "blocked",
} as const;
export type Verdict = (typeof Verdict)[keyof typeof Verdict];

export interface ControllerRef {
  readonly namespace: string;
  readonly name: string;
  readonly kind: "Deployment" | "StatefulSet" | "DaemonSet" | "builtin";
  readonly replicas: number;
  readonly readyReplicas: number;
  readonly healthy: boolean;
  readonly images: readonly string[];
}

export interface FinalizerOwner {
  readonly finalizer: string;
  /** Human name of the controller family, e.g. "AWS Load Balancer Controller". */
  readonly controller: string;
  /** What the finalizer guards, in one line. */
  readonly purpose: string;
  /** What removing it by hand would leave behind (the clean-up plan). */
  readonly cleanup: string;
  /** Controllers found in the cluster that may own it; several are all listed. */
  readonly candidates: readonly ControllerRef[];
  /** `true` when the table knows this finalizer. */
  readonly known: boolean;
  /**
   * Whether anything will remove it: `builtin` (Kubernetes itself), `healthy` (a matching controller
   * has all replicas ready), `degraded` (found, but none has all replicas ready), `not-installed`
   * (a known finalizer whose controller is nowhere in the cluster: nothing will ever remove it),
   * `unknown` (an unknown finalizer, or a controller this check cannot see).
   */
  readonly status: OwnerStatus;
}

export const OwnerStatus = {
  Builtin: "builtin",
  Healthy: "healthy",
  Degraded: "degraded",
  NotInstalled: "not-installed",
  Unknown: "unknown",
} as const;
export type OwnerStatus = (typeof OwnerStatus)[keyof typeof OwnerStatus];

/** The aggregated API behind a group-version whose discovery fails, and what backs it. */
export interface ApiServiceFinding {
  /** e.g. `v1beta1.metrics.k8s.io`. */
  readonly name: string;
  /** `namespace/name` of `spec.service`; absent for a local (built-in) APIService. */
  readonly service?: string;
  /** The `Available` condition's status: `True`, `False` or `Unknown` (no condition yet). */
  readonly available: string;
  readonly reason?: string;
  readonly message?: string;
  /** Ready endpoints of the backing Service; absent when they could not be read. */
  readonly readyEndpoints?: number;
}

export interface DiscoveryFailureFinding {
  readonly groupVersion: string;
  readonly message: string;
  /** The APIService serving this group-version, when one exists and could be read. */
  readonly apiService?: ApiServiceFinding;
}

export interface Evidence {
  readonly source: "log" | "event" | "condition" | "discovery" | "aws" | "cloudtrail";
  /** e.g. `kube-system/aws-load-balancer-controller-7d9f-abcde/controller` or `Event Ingress/x`. */
  readonly from: string;
  readonly text: string;
  readonly time?: string;
  /** `true` when it reports an error (rather than progress). */
  readonly error: boolean;
}

export interface Blocker {
  readonly apiVersion: string;
  readonly kind: string;
  readonly resource: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly finalizers: readonly string[];
  readonly deletionTimestamp?: string;
  readonly owners: readonly FinalizerOwner[];
  readonly evidence: readonly Evidence[];
  readonly loadBalancerHostnames?: readonly string[];
  /** For Load Balancer Controller finalizers: the stack's AWS resources and what holds them. */
  readonly aws?: AwsFindings;
}

export interface RemainingResource {
  /** `ingresses.networking.k8s.io`, or `pods` for the core group. */
  readonly resource: string;
  readonly count: number;
}

export interface NamespaceDiagnosis {
  readonly namespace: string;
  readonly phase: string;
  readonly verdict: Verdict;
  /** Seconds since `deletionTimestamp`, or `null` when not terminating. */
  readonly terminatingSeconds: number | null;
  readonly deletionTimestamp?: string;
  readonly conditions: readonly Condition[];
  readonly remaining: readonly RemainingResource[];
  readonly blockers: readonly Blocker[];
  /** The namespace's own `spec.finalizers` when they are what remains. */
  readonly namespaceFinalizers: readonly string[];
  readonly discoveryFailures: readonly DiscoveryFailureFinding[];
  /** Argo CD Applications that manage the namespace or its objects; `redFlag` when ownership is doubled. */
  readonly argo?: ArgoOwnership;
  /** One-line summary of the cause. */
  readonly summary: string;
  readonly nextSteps: readonly string[];
  /** What could not be read (partial results say so). */
  readonly warnings: readonly string[];
  readonly checkedAt: string;
}
