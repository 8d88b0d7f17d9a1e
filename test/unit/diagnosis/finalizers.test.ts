import { describe, expect, it } from "vitest";
import { nextStepTexts } from "../../../src/render/diagnosis-prose.js";

import { analyzeNamespace } from "../../../src/diagnosis/analyze.js";
import { ownersOf } from "../../../src/diagnosis/owners.js";
import { guessControllers, lookupFinalizer, matchControllers } from "../../../src/diagnosis/finalizers.js";
import type { DeploymentSnapshot } from "../../../src/kube/types.js";
import { held, podType, terminatingNs } from "./fixtures.js";

const POD = { apiVersion: "v1", kind: "Pod" };

function deployment(
  name: string,
  labels: Record<string, string>,
  images: string[],
  ready = 1,
  namespace = "ops",
): DeploymentSnapshot {
  return {
    namespace,
    name,
    labels,
    selector: labels,
    replicas: 1,
    readyReplicas: ready,
    availableReplicas: ready,
    images,
    args: [],
  };
}

/**
 * Finalizers users meet, each with the owning controller and a Deployment labelled as that
 * project's own chart (or operator) installs it.
 */
const CASES: readonly { finalizer: string; controller: RegExp; deployment: DeploymentSnapshot }[] = [
  {
    finalizer: "acme.cert-manager.io/finalizer",
    controller: /cert-manager/,
    deployment: deployment(
      "cert-manager",
      { "app.kubernetes.io/name": "cert-manager", "app.kubernetes.io/component": "controller" },
      ["quay.io/jetstack/cert-manager-controller:v1.18.2"],
    ),
  },
  {
    finalizer: "finalizer.acme.cert-manager.io",
    controller: /cert-manager/,
    deployment: deployment("cert-manager", { "app.kubernetes.io/name": "cert-manager" }, [
      "quay.io/jetstack/cert-manager-controller:v1.14.4",
    ]),
  },
  ...[
    "resources-finalizer.argocd.argoproj.io",
    "resources-finalizer.argocd.argoproj.io/background",
    "resources-finalizer.argocd.argoproj.io/foreground",
    "post-delete-finalizer.argocd.argoproj.io",
    "post-delete-finalizer.argocd.argoproj.io/cleanup",
    "pre-delete-finalizer.argocd.argoproj.io",
  ].map((finalizer) => ({
    finalizer,
    controller: /Argo CD application controller/,
    deployment: deployment(
      "argocd-application-controller",
      { "app.kubernetes.io/name": "argocd-application-controller", "app.kubernetes.io/part-of": "argocd" },
      ["quay.io/argoproj/argocd:v2.13.1"],
    ),
  })),
  {
    finalizer: "finalizer.managedresource.crossplane.io",
    controller: /Crossplane provider/,
    deployment: deployment(
      "provider-aws-s3-5f4c8e0a1b2c",
      {
        "pkg.crossplane.io/provider": "provider-aws-s3",
        "pkg.crossplane.io/revision": "provider-aws-s3-5f4c",
      },
      ["xpkg.upbound.io/upbound/provider-aws-s3:v1.14.0"],
    ),
  },
  ...[
    "composite.apiextensions.crossplane.io",
    "finalizer.apiextensions.crossplane.io",
    "defined.apiextensions.crossplane.io",
  ].map((finalizer) => ({
    finalizer,
    controller: /^Crossplane$/,
    deployment: deployment("crossplane", { app: "crossplane", "app.kubernetes.io/name": "crossplane" }, [
      "xpkg.upbound.io/crossplane/crossplane:v1.17.1",
    ]),
  })),
  ...["karpenter.sh/termination", "karpenter.k8s.aws/termination"].map((finalizer) => ({
    finalizer,
    controller: /Karpenter/,
    deployment: deployment(
      "karpenter",
      { "app.kubernetes.io/name": "karpenter", "app.kubernetes.io/instance": "karpenter" },
      ["public.ecr.aws/karpenter/controller:1.1.0"],
    ),
  })),
  {
    finalizer: "restores.velero.io/external-resources-finalizer",
    controller: /Velero/,
    deployment: deployment("velero", { "app.kubernetes.io/name": "velero", component: "velero" }, [
      "velero/velero:v1.15.0",
    ]),
  },
  {
    finalizer: "istio-finalizer.install.istio.io",
    controller: /Istio operator/,
    deployment: deployment("istio-operator", { name: "istio-operator" }, ["docker.io/istio/operator:1.22.0"]),
  },
  {
    finalizer: "finalizer.keda.sh",
    controller: /KEDA/,
    deployment: deployment(
      "keda-operator",
      { "app.kubernetes.io/name": "keda-operator", app: "keda-operator" },
      ["ghcr.io/kedacore/keda:2.16.0"],
    ),
  },
  {
    finalizer: "strimzi.io/topic-operator",
    controller: /Strimzi/,
    deployment: deployment(
      "my-cluster-entity-operator",
      { "app.kubernetes.io/name": "entity-operator", "strimzi.io/kind": "Kafka" },
      ["quay.io/strimzi/operator:0.45.0"],
    ),
  },
  {
    finalizer: "finalizers.fluxcd.io",
    controller: /Flux/,
    deployment: deployment(
      "kustomize-controller",
      { app: "kustomize-controller", "app.kubernetes.io/part-of": "flux" },
      ["ghcr.io/fluxcd/kustomize-controller:v1.4.0"],
    ),
  },
  {
    finalizer: "externalsecrets.external-secrets.io/externalsecret-cleanup",
    controller: /External Secrets/,
    deployment: deployment("external-secrets", { "app.kubernetes.io/name": "external-secrets" }, [
      "ghcr.io/external-secrets/external-secrets:v0.12.1",
    ]),
  },
  {
    finalizer: "monitoring.coreos.com/status-cleanup",
    controller: /Prometheus operator/,
    deployment: deployment(
      "kube-prometheus-stack-operator",
      { app: "kube-prometheus-stack-operator", release: "kube-prometheus-stack" },
      ["quay.io/prometheus-operator/prometheus-operator:v0.79.2"],
    ),
  },
  {
    finalizer: "fleet.cattle.io/bundle-finalizer",
    controller: /Fleet/,
    deployment: deployment("fleet-controller", { app: "fleet-controller" }, ["rancher/fleet:v0.11.2"]),
  },
  {
    finalizer: "controller.cattle.io/namespace-auth",
    controller: /Rancher/,
    deployment: deployment("rancher", { app: "rancher" }, ["rancher/rancher:v2.10.1"]),
  },
  {
    finalizer: "finalizers.s3.services.k8s.aws/Bucket",
    controller: /ACK/,
    deployment: deployment("ack-s3-controller", { "app.kubernetes.io/name": "s3-chart" }, [
      "public.ecr.aws/aws-controllers-k8s/s3-controller:1.0.20",
    ]),
  },
  {
    finalizer: "external-attacher/ebs-csi-aws-com",
    controller: /external-attacher/,
    deployment: deployment("ebs-csi-controller", { app: "ebs-csi-controller" }, [
      "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.38.1",
      "public.ecr.aws/eks-distro/kubernetes-csi/external-attacher:v4.8.0",
      "registry.k8s.io/sig-storage/csi-attacher:v4.8.0",
    ]),
  },
  {
    finalizer: "external-provisioner.volume.kubernetes.io/finalizer",
    controller: /external-provisioner/,
    deployment: deployment("ebs-csi-controller", { app: "ebs-csi-controller" }, [
      "registry.k8s.io/sig-storage/csi-provisioner:v5.1.0",
    ]),
  },
  ...[
    "snapshot.storage.kubernetes.io/volumesnapshot-bound-protection",
    "snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection",
    "snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection",
    "snapshot.storage.kubernetes.io/pvc-as-source-protection",
  ].map((finalizer) => ({
    finalizer,
    controller: /snapshot-controller/,
    deployment: deployment("snapshot-controller", { app: "snapshot-controller" }, [
      "registry.k8s.io/sig-storage/snapshot-controller:v8.2.0",
    ]),
  })),
  ...[
    "ingress.k8s.aws/resources",
    "group.ingress.k8s.aws/shared",
    "service.k8s.aws/resources",
    "elbv2.k8s.aws/resources",
  ].map((finalizer) => ({
    finalizer,
    controller: /AWS Load Balancer Controller/,
    deployment: deployment(
      "aws-load-balancer-controller",
      { "app.kubernetes.io/name": "aws-load-balancer-controller" },
      ["public.ecr.aws/eks/aws-load-balancer-controller:v2.11.0"],
      1,
      "kube-system",
    ),
  })),
];

describe("the finalizer owner table", () => {
  it.each(CASES)(
    "maps $finalizer to its owner and finds its Deployment",
    ({ finalizer, controller, deployment: d }) => {
      const info = lookupFinalizer(finalizer);
      expect(info?.controller).toMatch(controller);
      expect(info?.purpose.length).toBeGreaterThan(10);
      expect(info?.cleanup.length).toBeGreaterThan(5);
      const unrelated = deployment("coredns", { "k8s-app": "kube-dns" }, [
        "registry.k8s.io/coredns/coredns:v1.11.3",
      ]);
      expect(matchControllers(info!, [unrelated, d], finalizer)).toEqual([d]);
      expect(ownersOf([finalizer], [d], POD)[0]?.status).toBe("healthy");
    },
  );

  it("keeps the Load Balancer Controller's finalizers flagged for the AWS look-up", () => {
    for (const f of [
      "ingress.k8s.aws/resources",
      "group.ingress.k8s.aws/g",
      "service.k8s.aws/resources",
      "elbv2.k8s.aws/resources",
    ]) {
      expect(lookupFinalizer(f)?.awsLoadBalancer).toBe(true);
    }
    expect(lookupFinalizer("finalizer.keda.sh")?.awsLoadBalancer).toBeUndefined();
  });

  it("does not mistake a project's other components for its controller", () => {
    const info = lookupFinalizer("acme.cert-manager.io/finalizer");
    const webhook = deployment("cert-manager-webhook", { "app.kubernetes.io/name": "webhook" }, [
      "quay.io/jetstack/cert-manager-webhook:v1.18.2",
    ]);
    const cainjector = deployment("cert-manager-cainjector", { "app.kubernetes.io/name": "cainjector" }, [
      "quay.io/jetstack/cert-manager-cainjector:v1.18.2",
    ]);
    expect(matchControllers(info!, [webhook, cainjector])).toEqual([]);
    const keda = lookupFinalizer("finalizer.keda.sh");
    const metricsApi = deployment(
      "keda-operator-metrics-apiserver",
      { "app.kubernetes.io/name": "keda-operator-metrics-apiserver" },
      ["ghcr.io/kedacore/keda-metrics-apiserver:2.16.0"],
    );
    expect(matchControllers(keda!, [metricsApi])).toEqual([]);
  });

  it("narrows an ACK finalizer to the controller of the service it names", () => {
    const s3 = deployment("ack-s3-controller", {}, [
      "public.ecr.aws/aws-controllers-k8s/s3-controller:1.0.20",
    ]);
    const rds = deployment("ack-rds-controller", {}, [
      "public.ecr.aws/aws-controllers-k8s/rds-controller:1.4.0",
    ]);
    const info = lookupFinalizer("finalizers.rds.services.k8s.aws/DBInstance");
    expect(matchControllers(info!, [s3, rds], "finalizers.rds.services.k8s.aws/DBInstance")).toEqual([rds]);
    expect(lookupFinalizer("finalizers.fluxcd.io")?.controller).toBe("Flux");
  });

  it("treats Kubernetes' own finalizers as builtin", () => {
    for (const f of [
      "kubernetes.io/pvc-protection",
      "kubernetes.io/pv-protection",
      "foregroundDeletion",
      "kubernetes",
    ]) {
      expect(ownersOf([f], [], POD)[0]?.status).toBe("builtin");
    }
  });
});

describe("owner status", () => {
  it("is not-installed for a known finalizer without its controller, and the step says nothing will remove it", () => {
    const [owner] = ownersOf(["finalizer.keda.sh"], [deployment("coredns", {}, ["coredns"])], POD);
    expect(owner).toMatchObject({ known: true, status: "not-installed", candidates: [] });
    const pod = held(podType, "scaled", ["finalizer.keda.sh"]);
    const d = analyzeNamespace({
      name: "myapp",
      namespace: terminatingNs("myapp", new Date(Date.now() - 60_000)),
      listed: [{ type: podType, objects: [pod] }],
      deployments: [],
      discoveryFailures: [],
      evidence: new Map(),
      warnings: [],
      now: new Date(),
      blockedAfterSeconds: 300,
    });
    expect(d.verdict).toBe("blocked");
    const step = nextStepTexts(d).find((s) => s.includes("finalizer.keda.sh"));
    expect(step).toMatch(/KEDA operator is not installed/);
    expect(step).toMatch(/nothing will ever remove `finalizer\.keda\.sh`/);
  });

  it("is degraded when the controller is found but has no ready replica", () => {
    const d = deployment(
      "keda-operator",
      { "app.kubernetes.io/name": "keda-operator" },
      ["ghcr.io/kedacore/keda:2.16.0"],
      0,
    );
    expect(ownersOf(["finalizer.keda.sh"], [d], POD)[0]?.status).toBe("degraded");
  });

  it("is unknown when the controller may run as something other than a Deployment", () => {
    // Argo CD's application controller is a StatefulSet by default: no Deployment proves nothing.
    expect(ownersOf(["resources-finalizer.argocd.argoproj.io"], [], POD)[0]?.status).toBe("unknown");
    expect(ownersOf(["example.com/custom"], [], POD)[0]).toMatchObject({ known: false, status: "unknown" });
  });
});

describe("the likely controller of a finalizer the table does not know", () => {
  const bucketOp = deployment("bucket-operator", {}, ["ghcr.io/example/bucket-operator:1.4.0"]);
  const queues = deployment("mq", {}, ["registry.example.com/team/queuekeeper:2"]);
  const web = deployment("payments-service", {}, ["example.com/payments:1"]);
  const bucket = { apiVersion: "storage.example.com/v1", kind: "Bucket" };

  it("names the Deployment whose name or image carries the custom kind or a distinctive domain word", () => {
    expect(guessControllers("storage.example.com/finalizer", bucket, [web, bucketOp, queues])).toEqual([
      { deployment: bucketOp, word: "bucket" },
    ]);
    expect(
      guessControllers("queuekeeper.acme.io/cleanup", { apiVersion: "v1", kind: "ConfigMap" }, [web, queues]),
    ).toEqual([{ deployment: queues, word: "queuekeeper" }]);
  });

  it("never matches by a built-in kind or a generic word", () => {
    const svc = { apiVersion: "v1", kind: "Service" };
    expect(guessControllers("example.com/finalizer", svc, [web, bucketOp])).toEqual([]);
    expect(
      guessControllers(
        "operator.example.com/cleanup",
        { apiVersion: "networking.k8s.io/v1", kind: "Ingress" },
        [deployment("ingress-operator", {}, ["example.com/ingress-operator:1"])],
      ),
    ).toEqual([]);
  });

  it("answers each Deployment list on its own, however often the same finalizer is asked", () => {
    const before = [web, queues];
    const after = [web, queues, bucketOp];
    for (let i = 0; i < 3; i++) {
      expect(guessControllers("storage.example.com/finalizer", bucket, before)).toEqual([]);
      expect(guessControllers("storage.example.com/finalizer", bucket, after)).toEqual([
        { deployment: bucketOp, word: "bucket" },
      ]);
    }
    // The same finalizer on another kind is guessed by that kind, not by the first answer.
    const queue = { apiVersion: "storage.example.com/v1", kind: "QueueKeeper" };
    expect(guessControllers("storage.example.com/finalizer", queue, after)).toEqual([
      { deployment: queues, word: "queuekeeper" },
    ]);
    const lbc = lookupFinalizer("elbv2.k8s.aws/resources");
    expect(lbc).toBeDefined();
    if (lbc === undefined) return;
    const controller = deployment(
      "aws-load-balancer-controller",
      { "app.kubernetes.io/name": "aws-load-balancer-controller" },
      [],
    );
    expect(matchControllers(lbc, [web], "elbv2.k8s.aws/resources")).toEqual([]);
    expect(matchControllers(lbc, [web, controller], "elbv2.k8s.aws/resources")).toEqual([controller]);
  });

  it("is a guess in the owner: unknown to the table, with the word it was guessed by", () => {
    const [owner] = ownersOf(["storage.example.com/finalizer"], [bucketOp], bucket);
    expect(owner).toMatchObject({ known: false, status: "healthy", guessedBy: "bucket" });
    expect(owner?.candidates.map((c) => c.name)).toEqual(["bucket-operator"]);
  });
});
