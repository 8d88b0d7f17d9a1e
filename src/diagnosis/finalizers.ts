/**
 * Well-known finalizers: who owns each, what it guards, what removing it by hand leaves behind,
 * and how to find the owning controller in a cluster. Pure data plus matching; no I/O.
 *
 * Every string here was checked against the owning project's source or documentation; matchers use
 * the labels the project's own Helm chart (or operator) puts on its Deployment, so a chart install
 * is recognised without configuration.
 */
import type { DeploymentSnapshot } from "../kube/types.js";
import { clusterNameFromArgs } from "../edge/lbc-names.js";

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

// The argo-cd chart labels each component with its own app.kubernetes.io/name; the application
// controller is a StatefulSet by default (a Deployment only with `controller.dynamicClusterDistribution`).
// No image matcher: every Argo CD component runs the same quay.io/argoproj/argocd image.
const ARGO_APP: ControllerMatcher = {
  labels: [
    ["app.kubernetes.io/name", "argocd-application-controller"],
    ["app.kubernetes.io/component", "application-controller"],
  ],
  nameIncludes: ["argocd-application-controller"],
};
const ARGO_STS =
  "the Argo CD application controller runs as a StatefulSet by default, which is not listed here";

// cert-manager chart: the controller Deployment is app.kubernetes.io/name=cert-manager; webhook
// and cainjector carry their own names and run other images.
const CERT_MANAGER: ControllerMatcher = {
  labels: [["app.kubernetes.io/name", "cert-manager"]],
  names: ["cert-manager"],
  imageIncludes: ["cert-manager-controller"],
};

// Crossplane core (chart app.kubernetes.io/name=crossplane) reconciles claims and composites;
// providers are Deployments the package manager creates, labelled pkg.crossplane.io/provider.
const CROSSPLANE_CORE: ControllerMatcher = {
  labels: [
    ["app.kubernetes.io/name", "crossplane"],
    ["app", "crossplane"],
  ],
  names: ["crossplane"],
  imageIncludes: ["crossplane/crossplane:"],
};
const CROSSPLANE_PROVIDER: ControllerMatcher = {
  labelKeys: ["pkg.crossplane.io/provider"],
  imageIncludes: ["/provider-"],
};

const KARPENTER: ControllerMatcher = {
  labels: [["app.kubernetes.io/name", "karpenter"]],
  names: ["karpenter"],
  imageIncludes: ["karpenter/controller"],
};

const SNAPSHOT_CONTROLLER: ControllerMatcher = {
  labels: [["app.kubernetes.io/name", "snapshot-controller"]],
  nameIncludes: ["snapshot-controller"],
  imageIncludes: ["sig-storage/snapshot-controller"],
};
const CSI_SIDECAR = "CSI sidecars run inside the storage driver's controller (a Deployment or StatefulSet)";

const FLEET: ControllerMatcher = {
  labels: [
    ["app", "fleet-controller"],
    ["app", "fleet-agent"],
  ],
  names: ["fleet-controller", "fleet-agent"],
  imageIncludes: ["rancher/fleet:", "rancher/fleet-agent:"],
};
const RANCHER: ControllerMatcher = {
  labels: [["app", "rancher"]],
  names: ["rancher"],
  imageIncludes: ["rancher/rancher:"],
};

/** `finalizers.<service>.services.k8s.aws/<Kind>`: the AWS service the ACK controller manages. */
function ackService(finalizer: string): string | undefined {
  return /^finalizers\.([a-z0-9-]+)\.services\.k8s\.aws(?:\/|$)/.exec(finalizer)?.[1];
}

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

  // Argo CD (argoproj/argo-cd common/common.go, controller/appcontroller.go)
  {
    pattern: "resources-finalizer.argocd.argoproj.io",
    prefix: true,
    controller: "Argo CD application controller",
    purpose:
      "cascades deletion of every resource the Application manages (`/background` and `/foreground` choose the propagation)",
    cleanup: "the Application's managed resources (they stay in the cluster, no longer tracked)",
    matcher: ARGO_APP,
    notOnlyDeployment: ARGO_STS,
  },
  {
    pattern: "post-delete-finalizer.argocd.argoproj.io",
    prefix: true,
    controller: "Argo CD application controller",
    purpose: "runs the Application's PostDelete hooks (`/cleanup` then removes the hook resources)",
    cleanup: "the PostDelete hooks never run, and hook Jobs already created stay behind",
    matcher: ARGO_APP,
    notOnlyDeployment: ARGO_STS,
  },
  {
    pattern: "pre-delete-finalizer.argocd.argoproj.io",
    prefix: true,
    controller: "Argo CD application controller",
    purpose: "runs the Application's PreDelete hooks before its resources are deleted (Argo CD 3.x)",
    cleanup: "the PreDelete hooks never run, and hook Jobs already created stay behind",
    matcher: ARGO_APP,
    notOnlyDeployment: ARGO_STS,
  },

  // cert-manager (internal/apis/acme: the UseDomainQualifiedFinalizer gate, GA in v1.18, switched
  // Challenges from the old spelling to the domain-qualified one; both are still met).
  {
    pattern: "acme.cert-manager.io/finalizer",
    controller: "cert-manager",
    purpose:
      "cleans up an ACME Challenge: removes the HTTP-01 solver pod/Service/Ingress or the DNS-01 TXT record",
    cleanup:
      "the solver pod, Service and Ingress of an HTTP-01 challenge, or the _acme-challenge TXT record in DNS",
    matcher: CERT_MANAGER,
  },
  {
    pattern: "finalizer.acme.cert-manager.io",
    controller: "cert-manager",
    purpose:
      "cleans up an ACME Challenge (spelling used before cert-manager 1.18): removes the HTTP-01 solver or DNS-01 record",
    cleanup:
      "the solver pod, Service and Ingress of an HTTP-01 challenge, or the _acme-challenge TXT record in DNS",
    matcher: CERT_MANAGER,
  },
  {
    pattern: "cert-manager.io/",
    prefix: true,
    controller: "cert-manager",
    purpose: "a cert-manager clean-up step",
    cleanup: "whatever cert-manager created for this object (check its Orders and Challenges)",
    matcher: CERT_MANAGER,
  },

  // Crossplane (crossplane-runtime managed reconciler; crossplane internal/controller/apiextensions)
  {
    pattern: "finalizer.managedresource.crossplane.io",
    controller: "Crossplane provider",
    purpose: "deletes the external cloud resource a managed resource represents (deletionPolicy Delete)",
    cleanup: "the external cloud resource (named by the crossplane.io/external-name annotation)",
    letGo:
      "set `spec.deletionPolicy: Orphan` on the managed resource: the provider then removes its finalizer without deleting the external resource",
    matcher: CROSSPLANE_PROVIDER,
    shared: true,
  },
  {
    pattern: "composite.apiextensions.crossplane.io",
    controller: "Crossplane",
    purpose: "deletes the composed resources of a composite resource (XR)",
    cleanup: "the composed managed resources, and through them the cloud resources",
    matcher: CROSSPLANE_CORE,
  },
  {
    pattern: "finalizer.apiextensions.crossplane.io",
    controller: "Crossplane",
    purpose:
      "deletes the composite resource bound to a claim (also used on XRDs to remove the CRDs they define)",
    cleanup: "the bound composite resource and everything it composed",
    matcher: CROSSPLANE_CORE,
  },
  {
    pattern: "defined.apiextensions.crossplane.io",
    controller: "Crossplane",
    purpose: "removes the composite CRD a CompositeResourceDefinition defines",
    cleanup: "the composite CRD and its controller",
    matcher: CROSSPLANE_CORE,
  },
  {
    pattern: "offered.apiextensions.crossplane.io",
    controller: "Crossplane",
    purpose: "removes the claim CRD a CompositeResourceDefinition offers",
    cleanup: "the claim CRD and its controller",
    matcher: CROSSPLANE_CORE,
  },
  {
    pattern: "in-use.crossplane.io",
    controller: "Crossplane provider",
    purpose: "keeps a ProviderConfig while managed resources still use it",
    cleanup: "managed resources left without credentials (they can no longer be reconciled or deleted)",
    matcher: CROSSPLANE_PROVIDER,
    shared: true,
  },

  // Karpenter (kubernetes-sigs/karpenter, aws/karpenter-provider-aws)
  {
    pattern: "karpenter.sh/termination",
    controller: "Karpenter",
    purpose:
      "drains a Node/NodeClaim and terminates the instance behind it (on a NodePool: its NodeClaims first)",
    cleanup: "the EC2 instance, which keeps running and billing",
    matcher: KARPENTER,
  },
  {
    pattern: "karpenter.k8s.aws/termination",
    controller: "Karpenter",
    purpose: "deletes an EC2NodeClass's instance profile once no NodeClaim uses it",
    cleanup: "the IAM instance profile Karpenter created for the EC2NodeClass",
    matcher: KARPENTER,
  },

  // Velero (vmware-tanzu/velero pkg/controller)
  {
    pattern: "restores.velero.io/external-resources-finalizer",
    controller: "Velero",
    purpose: "deletes a Restore's data in object storage (restore logs and results) before the Restore goes",
    cleanup: "the restore's log and result files in the backup storage location",
    matcher: {
      labels: [["app.kubernetes.io/name", "velero"]],
      names: ["velero"],
      imageIncludes: ["velero/velero:"],
    },
  },

  // Istio (istio/istio operator; istio-ecosystem/sail-operator)
  {
    pattern: "istio-finalizer.install.istio.io",
    controller: "Istio operator",
    purpose: "uninstalls the Istio components an IstioOperator installed",
    cleanup: "Istio control-plane components and cluster-wide resources the operator installed",
    matcher: {
      names: ["istio-operator"],
      nameIncludes: ["istio-operator"],
      imageIncludes: ["istio/operator:"],
    },
  },
  {
    pattern: "istio-finalizer.sailoperator.io",
    controller: "Sail operator (Istio)",
    purpose: "uninstalls the Istio control plane an Istio resource installed",
    cleanup: "the Istio control-plane components the operator installed",
    matcher: { nameIncludes: ["sail-operator"], imageIncludes: ["sail-operator"] },
  },

  // KEDA (kedacore/keda controllers/keda): ScaledObject, ScaledJob, TriggerAuthentication, CloudEventSource
  {
    pattern: "finalizer.keda.sh",
    controller: "KEDA operator",
    purpose: "stops the scale loop and deletes the HPA KEDA created for a ScaledObject/ScaledJob",
    cleanup: "the keda-hpa-<name> HorizontalPodAutoscaler, which keeps scaling the workload",
    matcher: {
      labels: [["app.kubernetes.io/name", "keda-operator"]],
      names: ["keda-operator"],
      imageIncludes: ["kedacore/keda:"],
    },
  },

  // Strimzi (topic operator: BatchingTopicController)
  {
    pattern: "strimzi.io/topic-operator",
    controller: "Strimzi topic operator (entity operator)",
    purpose: "deletes the Kafka topic a KafkaTopic represents",
    cleanup: "the topic in the Kafka cluster (and its data)",
    matcher: {
      labels: [["app.kubernetes.io/name", "entity-operator"]],
      nameIncludes: ["entity-operator"],
    },
  },

  // Flux (fluxcd/pkg: every Flux controller uses the same finalizer)
  {
    pattern: "finalizers.fluxcd.io",
    controller: "Flux",
    purpose: "garbage-collects what a Flux object applied or fetched (the controller depends on the kind)",
    cleanup: "the resources a Kustomization/HelmRelease applied, or a source's cached artifact",
    matcher: {
      labels: [["app.kubernetes.io/part-of", "flux"]],
      names: ["kustomize-controller", "helm-controller", "source-controller", "notification-controller"],
      imageIncludes: ["fluxcd/kustomize-controller", "fluxcd/helm-controller", "fluxcd/source-controller"],
    },
    shared: true,
  },

  // External Secrets Operator
  {
    pattern: "externalsecrets.external-secrets.io/externalsecret-cleanup",
    controller: "External Secrets Operator",
    purpose: "deletes (or releases) the Secret an ExternalSecret created, by its deletionPolicy",
    cleanup: "the generated Kubernetes Secret",
    matcher: { labels: [["app.kubernetes.io/name", "external-secrets"]], names: ["external-secrets"] },
  },
  {
    pattern: "externalsecrets.external-secrets.io/",
    prefix: true,
    controller: "External Secrets Operator",
    purpose: "an External Secrets clean-up step",
    cleanup: "the Secret or provider-side secret the operator manages for this object",
    matcher: { labels: [["app.kubernetes.io/name", "external-secrets"]], names: ["external-secrets"] },
  },

  // Prometheus operator (pkg/k8sutil StatusCleanupFinalizerName)
  {
    pattern: "monitoring.coreos.com/status-cleanup",
    controller: "Prometheus operator",
    purpose:
      "removes the status bindings a Prometheus/Alertmanager/ThanosRuler wrote to its config resources",
    cleanup: "stale status bindings on ServiceMonitors, PodMonitors and rules (harmless)",
    matcher: {
      labels: [["app.kubernetes.io/name", "prometheus-operator"]],
      nameIncludes: ["prometheus-operator"],
      imageIncludes: ["prometheus-operator/prometheus-operator"],
    },
  },

  // Rancher and Fleet
  {
    pattern: "fleet.cattle.io/",
    prefix: true,
    controller: "Fleet",
    purpose: "removes what a GitRepo/Bundle/BundleDeployment deployed to downstream clusters",
    cleanup: "the bundles and the Helm releases Fleet deployed from them",
    matcher: FLEET,
    shared: true,
  },
  {
    pattern: "controller.cattle.io/",
    prefix: true,
    controller: "Rancher",
    purpose: "a Rancher lifecycle handler's clean-up (RBAC, projects, cluster agents)",
    cleanup: "the RBAC bindings and Rancher objects the handler created",
    matcher: RANCHER,
  },
  {
    pattern: "clusterscoped.controller.cattle.io/",
    prefix: true,
    controller: "Rancher",
    purpose: "a Rancher per-cluster lifecycle handler's clean-up",
    cleanup: "the RBAC bindings and Rancher objects the handler created in that cluster",
    matcher: RANCHER,
  },
  {
    pattern: "wrangler.cattle.io/",
    prefix: true,
    controller: "Rancher",
    purpose: "a Rancher (wrangler) handler's clean-up",
    cleanup: "the objects the handler created",
    matcher: RANCHER,
  },

  // AWS Controllers for Kubernetes: finalizers.<service>.services.k8s.aws/<Kind>
  {
    pattern: "finalizers.",
    regex: /^finalizers\.[a-z0-9-]+\.services\.k8s\.aws(?:\/|$)/,
    controller: "ACK service controller",
    purpose:
      "deletes the AWS resource an ACK custom resource represents (unless its deletion policy is retain)",
    cleanup: "the AWS resource itself (bucket, queue, table, …), which keeps existing and billing",
    letGo:
      "annotate the resource `services.k8s.aws/deletion-policy=retain`: the controller then removes its finalizer and keeps the AWS resource",
    matcher: { imageIncludes: ["aws-controllers-k8s/"], nameIncludes: ["ack-"] },
    matcherFor: (f) => {
      const svc = ackService(f) ?? "";
      return {
        labels: [["app.kubernetes.io/name", `${svc}-chart`]],
        nameIncludes: [`ack-${svc}-controller`],
        imageIncludes: [`aws-controllers-k8s/${svc}-controller`],
      };
    },
  },

  // Kubernetes storage: built-in protections and the CSI sidecars / snapshot controller
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
    matcher: { imageIncludes: ["sig-storage/csi-provisioner"] },
    notOnlyDeployment: CSI_SIDECAR,
  },
  {
    pattern: "provisioner.storage.kubernetes.io/",
    prefix: true,
    controller: "CSI external-provisioner",
    purpose: "keeps a PVC or VolumeSnapshot while a new volume is being cloned or restored from it",
    cleanup: "a half-provisioned volume in the storage backend",
    matcher: { imageIncludes: ["sig-storage/csi-provisioner"] },
    notOnlyDeployment: CSI_SIDECAR,
  },
  {
    pattern: "external-attacher/",
    prefix: true,
    controller: "CSI external-attacher",
    purpose: "detaches the volume from its node (ControllerUnpublish) before the VolumeAttachment or PV goes",
    cleanup: "a volume still attached to an instance (an EBS volume stays in-use)",
    matcher: { imageIncludes: ["sig-storage/csi-attacher"] },
    notOnlyDeployment: CSI_SIDECAR,
  },
  {
    pattern: "snapshot.storage.kubernetes.io/",
    prefix: true,
    controller: "CSI snapshot-controller",
    purpose:
      "protects a VolumeSnapshot/VolumeSnapshotContent while it is bound or a restore source, and a PVC while it is being snapshotted",
    cleanup: "the snapshot in the storage backend (e.g. an EBS snapshot)",
    matcher: SNAPSHOT_CONTROLLER,
  },

  // Kubernetes itself
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
    pattern: "customresourcecleanup.apiextensions.k8s.io",
    controller: "kube-apiserver (apiextensions CRD finalizer)",
    purpose: "deletes every custom resource of a CRD before the CRD goes",
    cleanup: "custom resources that still exist (and their own finalizers) are lost with the CRD",
    builtin: true,
  },
];

/** The Load Balancer Controller's finalizers of an Ingress (its own, or its IngressGroup's). */
export function isIngressLbcFinalizer(finalizer: string): boolean {
  return finalizer === "ingress.k8s.aws/resources" || finalizer.startsWith("group.ingress.k8s.aws/");
}

/**
 * What removing a member's finalizer by hand leaves when other, live members share its
 * IngressGroup: only the member's own listener rules and target groups; the load balancer and its
 * security groups are the other members' live traffic path and stay.
 */
export function sharedGroupMemberCleanup(m: {
  readonly group: string;
  /** The other live members, `Ingress ns/name`. */
  readonly others: readonly string[];
  readonly loadBalancer?: string;
  /** `sg-… (name)` of the groups that stay. */
  readonly securityGroups: readonly string[];
  /** The member's own target groups, by name. */
  readonly targetGroups: readonly string[];
}): string {
  const others = `${m.others.slice(0, 3).join(", ")}${m.others.length > 3 ? ` and ${String(m.others.length - 3)} more` : ""}`;
  const lb =
    m.loadBalancer !== undefined
      ? `the load balancer ${m.loadBalancer}`
      : `IngressGroup ${m.group}'s load balancer`;
  return (
    `only this member's listener rules and target groups${m.targetGroups.length > 0 ? ` (${m.targetGroups.join(", ")})` : ""} — ` +
    `${lb} and its security groups${m.securityGroups.length > 0 ? ` (${m.securityGroups.join(", ")})` : ""} stay: ` +
    `they are the live traffic path of ${others}, still ${m.others.length === 1 ? "a member" : "members"} of IngressGroup ${m.group}; never delete them, ` +
    "check only this member's rules and target groups for orphans after a forced removal"
  );
}

/** What removing a TargetGroupBinding's finalizer by hand leaves, from what AWS says now. */
export function bindingCleanup(b: {
  readonly targetGroup: string;
  readonly exists?: boolean;
  readonly owner?: string;
  /** `Id=…,Port=…` of the targets still registered; absent when unread. */
  readonly targets?: readonly string[];
}): string {
  const rules = "the node security-group ingress rules the binding added";
  if (b.exists === false)
    return `no registered targets (target group ${b.targetGroup} does not exist); only ${rules}`;
  const keep = `not the target group itself${b.owner !== undefined ? `, which is ${b.owner}` : ""}`;
  if (b.targets === undefined)
    return `the targets still registered in target group ${b.targetGroup} (${keep}), and ${rules}`;
  if (b.targets.length === 0)
    return `no registered targets (none is left in target group ${b.targetGroup}; ${keep}); only ${rules}`;
  const shown = `${b.targets.slice(0, 10).join(" ")}${b.targets.length > 10 ? ` and ${String(b.targets.length - 10)} more` : ""}`;
  return `the ${b.targets.length === 1 ? "target" : `${String(b.targets.length)} targets`} still registered in target group ${b.targetGroup} (${shown}) — ${keep} — and ${rules}`;
}

/** Finalizers already looked up: a namespace's thousands of blockers share a handful of them. */
const looked = new Map<string, FinalizerInfo | null>();
const MAX_LOOKED = 1_000;

/** The table entry for a finalizer: exact match first, then a pattern family, then the longest prefix. */
/** Words of a finalizer or an API group that name no controller. */
const GENERIC_WORDS = new Set([
  "apis",
  "apps",
  "cleanup",
  "cloud",
  "controller",
  "controllers",
  "delete",
  "deletion",
  "example",
  "finalizer",
  "finalizers",
  "github",
  "kubernetes",
  "operator",
  "operators",
  "protection",
  "resource",
  "resources",
]);

/**
 * The Deployments that most likely run an unknown finalizer's controller: those whose name or image
 * names the custom resource's kind (`Bucket` → `bucket-operator`) or a distinctive word of the
 * finalizer's domain. A guess, said as one; built-in kinds are never matched by kind (`Service`
 * would match half the cluster).
 */
export function guessControllers(
  finalizer: string,
  object: { readonly apiVersion: string; readonly kind: string },
  deployments: readonly DeploymentSnapshot[],
): { deployment: DeploymentSnapshot; word: string }[] {
  const custom = object.apiVersion.includes(".") && !/\.k8s\.io\//.test(object.apiVersion);
  const domain = finalizer.includes("/") ? (finalizer.split("/")[0] ?? "") : "";
  const words = [
    ...(custom ? [object.kind.toLowerCase()] : []),
    ...domain.split(".").filter((w) => w.length >= 4 && !GENERIC_WORDS.has(w)),
  ];
  const out: { deployment: DeploymentSnapshot; word: string }[] = [];
  for (const d of deployments) {
    const names = [d.name, ...d.images.map((i) => (i.split("/").pop() ?? i).split(/[:@]/)[0] ?? "")];
    const word = words.find((w) => names.some((n) => n.toLowerCase().includes(w)));
    if (word !== undefined) out.push({ deployment: d, word });
  }
  return out;
}

export function lookupFinalizer(finalizer: string): FinalizerInfo | undefined {
  const kept = looked.get(finalizer);
  if (kept !== undefined) return kept ?? undefined;
  const found = findFinalizer(finalizer);
  if (looked.size >= MAX_LOOKED) looked.clear();
  looked.set(finalizer, found ?? null);
  return found;
}

function findFinalizer(finalizer: string): FinalizerInfo | undefined {
  const exact = FINALIZERS.find((f) => !f.prefix && !f.regex && f.pattern === finalizer);
  if (exact) return exact;
  const family = FINALIZERS.find((f) => f.regex?.test(finalizer) === true);
  if (family) return family;
  return FINALIZERS.filter((f) => f.prefix && finalizer.startsWith(f.pattern)).sort(
    (a, b) => b.pattern.length - a.pattern.length,
  )[0];
}

/**
 * Deployments in the cluster that look like the controller that owns a finalizer. With the
 * finalizer itself, a family entry (ACK) narrows the match to the controller it names.
 */
export function matchControllers(
  info: FinalizerInfo,
  deployments: readonly DeploymentSnapshot[],
  finalizer?: string,
): DeploymentSnapshot[] {
  const m = finalizer !== undefined && info.matcherFor ? info.matcherFor(finalizer) : info.matcher;
  if (!m) return [];
  return deployments.filter(
    (d) =>
      (m.labels ?? []).some(([k, v]) => d.labels[k] === v || d.selector[k] === v) ||
      (m.labelKeys ?? []).some((k) => k in d.labels || k in d.selector) ||
      (m.names ?? []).includes(d.name) ||
      (m.nameIncludes ?? []).some((s) => d.name.includes(s)) ||
      (m.imageIncludes ?? []).some((s) => d.images.some((img) => img.includes(s))),
  );
}

/**
 * The cluster names the Load Balancer Controller's Deployments tag with (their `--cluster-name`),
 * distinct, in Deployment order: what the controller's `elbv2.k8s.aws/cluster` tags say.
 */
export function lbcClusterNames(deployments: readonly DeploymentSnapshot[]): string[] {
  const info = lookupFinalizer("ingress.k8s.aws/resources");
  if (!info) return [];
  const names = matchControllers(info, deployments)
    .map((d) => clusterNameFromArgs(d.args))
    .filter((c): c is string => c !== undefined);
  return [...new Set(names)];
}
