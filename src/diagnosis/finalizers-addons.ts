/**
 * The finalizers of the cluster add-ons that are not AWS's own: GitOps (Argo CD, Flux, Fleet and
 * Rancher), cert-manager, Crossplane, Velero, Istio, KEDA, Strimzi, External Secrets and the
 * Prometheus operator. Pure data.
 *
 * Every string here was checked against the owning project's source or documentation; matchers use
 * the labels the project's own Helm chart (or operator) puts on its Deployment, so a chart install
 * is recognised without configuration.
 */
import type { ControllerMatcher, FinalizerInfo } from "./finalizer-info.js";

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

/** The add-ons' finalizers, by project. */
export const ADDON_FINALIZERS: readonly FinalizerInfo[] = [
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
];
