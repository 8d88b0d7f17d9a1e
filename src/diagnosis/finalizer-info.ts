/**
 * The shape of an entry of the finalizer table: who owns a finalizer, what it guards, what removing
 * it by hand leaves behind, and how to recognise the owning controller's Deployment. Types only, so
 * every family's table and the matching logic share them without importing one another.
 */
export interface ControllerMatcher {
  /** Label key/value pairs; a Deployment matches if any pair matches (its labels or selector). */
  readonly labels?: readonly (readonly [string, string])[];
  /** Label keys whose mere presence identifies the controller (e.g. `pkg.crossplane.io/provider`). */
  readonly labelKeys?: readonly string[];
  /** Exact Deployment names. */
  readonly names?: readonly string[];
  /** Substrings of the Deployment name. */
  readonly nameIncludes?: readonly string[];
  /** Substrings of a container image. */
  readonly imageIncludes?: readonly string[];
}

export interface FinalizerInfo {
  /** Exact finalizer, or a prefix when `prefix` is true. */
  readonly pattern: string;
  readonly prefix?: boolean;
  /** A family of finalizers no single prefix describes (e.g. `finalizers.<service>.services.k8s.aws/<Kind>`). */
  readonly regex?: RegExp;
  readonly controller: string;
  readonly purpose: string;
  readonly cleanup: string;
  /** `builtin` = part of Kubernetes itself (kube-controller-manager / API server). */
  readonly builtin?: boolean;
  readonly matcher?: ControllerMatcher;
  /** A matcher narrowed by the finalizer itself (e.g. the ACK service it names). */
  readonly matcherFor?: (finalizer: string) => ControllerMatcher;
  /**
   * The controller often runs as something this check cannot see (a StatefulSet, a sidecar of a
   * vendor's driver): when no Deployment matches, say "unknown", never "not installed".
   */
  readonly notOnlyDeployment?: string;
  /** Several Deployments share this finalizer by design (one per kind), so several are no conflict. */
  readonly shared?: boolean;
  /** `true` when the controller talks to AWS load balancers (diagnosis looks there). */
  readonly awsLoadBalancer?: boolean;
  /** The controller's own way to let an object go without deleting what it stands for. */
  readonly letGo?: string;
}
