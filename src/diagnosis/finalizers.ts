/**
 * Well-known finalizers: who owns each, what it guards, what removing it by hand leaves behind,
 * and how to find the owning controller in a cluster. Pure data plus matching; no I/O.
 */
import type { DeploymentSnapshot } from "../kube/types.js";

export interface ControllerMatcher {
  /** Label key/value pairs; a Deployment matches if any pair matches. */
  readonly labels?: readonly (readonly [string, string])[];
  /** Substrings of the Deployment name. */
  readonly nameIncludes?: readonly string[];
  /** Substrings of a container image. */
  readonly imageIncludes?: readonly string[];
}

export interface FinalizerInfo {
  /** Exact finalizer, or a prefix when `prefix` is true. */
  readonly pattern: string;
  readonly prefix?: boolean;
  readonly controller: string;
  readonly purpose: string;
  readonly cleanup: string;
  /** `builtin` = part of Kubernetes itself (kube-controller-manager / API server). */
  readonly builtin?: boolean;
  readonly matcher?: ControllerMatcher;
  /** `true` when the controller talks to AWS load balancers (diagnosis looks there). */
  readonly awsLoadBalancer?: boolean;
}

const LBC: ControllerMatcher = {
  labels: [["app.kubernetes.io/name", "aws-load-balancer-controller"]],
  nameIncludes: ["aws-load-balancer-controller"],
  imageIncludes: ["aws-load-balancer-controller"],
};
const LBC_NAME = "AWS Load Balancer Controller";
const LBC_CLEANUP =
  "the load balancer, its listeners and target groups, the managed security group, the shared backend " +
  "security group (k8s-traffic-<cluster>-*, when no other LBC finalizer remains) and the node security-group rules " +
  "that reference it; check them for orphans after a forced removal";

const ARGO: ControllerMatcher = {
  labels: [
    ["app.kubernetes.io/name", "argocd-application-controller"],
    ["app.kubernetes.io/component", "application-controller"],
  ],
  nameIncludes: ["argocd-application-controller"],
  imageIncludes: ["argoproj/argocd"],
};

export const FINALIZERS: readonly FinalizerInfo[] = [
  {
    pattern: "ingress.k8s.aws/resources",
    controller: LBC_NAME,
    purpose: "deletes the Ingress's ALB and its AWS resources before the Ingress goes",
    cleanup: LBC_CLEANUP,
    matcher: LBC,
    awsLoadBalancer: true,
  },
  {
    pattern: "group.ingress.k8s.aws/",
    prefix: true,
    controller: LBC_NAME,
    purpose: "deletes the IngressGroup's shared ALB (or its rules) before the member Ingress goes",
    cleanup: LBC_CLEANUP,
    matcher: LBC,
    awsLoadBalancer: true,
  },
  {
    pattern: "service.k8s.aws/resources",
    controller: LBC_NAME,
    purpose: "deletes the Service's NLB and its target groups before the Service goes",
    cleanup: LBC_CLEANUP.replace("the load balancer", "the NLB"),
    matcher: LBC,
    awsLoadBalancer: true,
  },
  {
    pattern: "elbv2.k8s.aws/resources",
    controller: LBC_NAME,
    purpose: "deregisters targets and revokes node security-group rules of a TargetGroupBinding",
    cleanup: "registered targets and the node security-group ingress rules the binding added",
    matcher: LBC,
    awsLoadBalancer: true,
  },
  {
    pattern: "gateway.k8s.aws/alb",
    controller: LBC_NAME,
    purpose: "deletes the Gateway's ALB",
    cleanup: LBC_CLEANUP,
    matcher: LBC,
    awsLoadBalancer: true,
  },
  {
    pattern: "gateway.k8s.aws/nlb",
    controller: LBC_NAME,
    purpose: "deletes the Gateway's NLB",
    cleanup: LBC_CLEANUP,
    matcher: LBC,
    awsLoadBalancer: true,
  },
  {
    pattern: "service.kubernetes.io/load-balancer-cleanup",
    controller: "cloud-controller-manager (service controller)",
    purpose: "deletes the cloud load balancer of a Service of type LoadBalancer",
    cleanup: "the cloud load balancer (CLB/NLB) and its security groups",
    builtin: true,
    awsLoadBalancer: true,
  },
  {
    pattern: "resources-finalizer.argocd.argoproj.io",
    prefix: true,
    controller: "Argo CD application controller",
    purpose: "cascades deletion of every resource the Application manages",
    cleanup: "the Application's managed resources (they stay in the cluster, no longer tracked)",
    matcher: ARGO,
  },
  {
    pattern: "post-delete-finalizer.argocd.argoproj.io",
    prefix: true,
    controller: "Argo CD application controller",
    purpose: "runs the Application's post-delete hooks",
    cleanup: "the post-delete hooks never run",
    matcher: ARGO,
  },
  {
    pattern: "kubernetes.io/pvc-protection",
    controller: "kube-controller-manager (pvc-protection)",
    purpose: "keeps a PersistentVolumeClaim while a Pod still uses it",
    cleanup: "nothing in AWS; deleting the Pods that mount the claim releases it",
    builtin: true,
  },
  {
    pattern: "kubernetes.io/pv-protection",
    controller: "kube-controller-manager (pv-protection)",
    purpose: "keeps a PersistentVolume while a claim is bound to it",
    cleanup: "the EBS/EFS volume behind it if the reclaim policy is Delete and the provisioner never runs",
    builtin: true,
  },
  {
    pattern: "external-provisioner.volume.kubernetes.io/finalizer",
    controller: "CSI external-provisioner",
    purpose: "deletes the backing volume before the PersistentVolume goes",
    cleanup: "the EBS/EFS volume",
  },
  {
    pattern: "foregroundDeletion",
    controller: "kube-controller-manager (garbage collector)",
    purpose: "foreground deletion: waits until every dependent (ownerReferences) is gone",
    cleanup: "dependents that still exist become orphans",
    builtin: true,
  },
  {
    pattern: "orphan",
    controller: "kube-controller-manager (garbage collector)",
    purpose: "orphan deletion: strips ownerReferences from dependents first",
    cleanup: "dependents keep a dangling ownerReference",
    builtin: true,
  },
  {
    pattern: "batch.kubernetes.io/job-tracking",
    controller: "kube-controller-manager (job controller)",
    purpose: "counts a Job's finished Pods before they go",
    cleanup: "the Job's status may miss this Pod",
    builtin: true,
  },
  {
    pattern: "kubernetes",
    controller: "kube-controller-manager (namespace controller)",
    purpose: "deletes all content of a namespace before the namespace goes",
    cleanup: "content that still exists is left without a namespace",
    builtin: true,
  },
  {
    pattern: "snapshot.storage.kubernetes.io/",
    prefix: true,
    controller: "CSI snapshot-controller",
    purpose: "protects a VolumeSnapshot while it is bound or used as a source",
    cleanup: "the snapshot in the storage backend",
    matcher: { nameIncludes: ["snapshot-controller"], imageIncludes: ["snapshot-controller"] },
  },
  {
    pattern: "karpenter.sh/termination",
    controller: "Karpenter",
    purpose: "drains and terminates the EC2 instance behind a node",
    cleanup: "the EC2 instance",
    matcher: { labels: [["app.kubernetes.io/name", "karpenter"]], nameIncludes: ["karpenter"] },
  },
  {
    pattern: "externalsecrets.external-secrets.io/",
    prefix: true,
    controller: "External Secrets Operator",
    purpose: "cleans up the Secret an ExternalSecret created",
    cleanup: "the generated Kubernetes Secret",
    matcher: { labels: [["app.kubernetes.io/name", "external-secrets"]], nameIncludes: ["external-secrets"] },
  },
  {
    pattern: "finalizers.fluxcd.io",
    controller: "Flux",
    purpose: "garbage-collects what a Flux object applied",
    cleanup: "the resources Flux applied for this object",
    matcher: {
      labels: [["app.kubernetes.io/part-of", "flux"]],
      nameIncludes: ["kustomize-controller", "helm-controller"],
    },
  },
  {
    pattern: "finalizer.managedresource.crossplane.io",
    controller: "Crossplane provider",
    purpose: "deletes the external cloud resource a managed resource represents",
    cleanup: "the external cloud resource",
    matcher: { nameIncludes: ["crossplane", "provider-"] },
  },
  {
    pattern: "cert-manager.io/",
    prefix: true,
    controller: "cert-manager",
    purpose: "cleans up ACME orders and challenges",
    cleanup: "pending ACME challenges (DNS records or solver pods)",
    matcher: { labels: [["app.kubernetes.io/name", "cert-manager"]], nameIncludes: ["cert-manager"] },
  },
  {
    pattern: "istio-finalizer.install.istio.io",
    controller: "Istio operator",
    purpose: "uninstalls Istio components",
    cleanup: "Istio components the operator installed",
    matcher: { nameIncludes: ["istio-operator"] },
  },
];

/** The table entry for a finalizer, exact match first, then the longest prefix. */
export function lookupFinalizer(finalizer: string): FinalizerInfo | undefined {
  const exact = FINALIZERS.find((f) => !f.prefix && f.pattern === finalizer);
  if (exact) return exact;
  return FINALIZERS.filter((f) => f.prefix && finalizer.startsWith(f.pattern)).sort(
    (a, b) => b.pattern.length - a.pattern.length,
  )[0];
}

/** Deployments in the cluster that look like the controller that owns a finalizer. */
export function matchControllers(
  info: FinalizerInfo,
  deployments: readonly DeploymentSnapshot[],
): DeploymentSnapshot[] {
  const m = info.matcher;
  if (!m) return [];
  return deployments.filter(
    (d) =>
      (m.labels ?? []).some(([k, v]) => d.labels[k] === v || d.selector[k] === v) ||
      (m.nameIncludes ?? []).some((s) => d.name.includes(s)) ||
      (m.imageIncludes ?? []).some((s) => d.images.some((img) => img.includes(s))),
  );
}
