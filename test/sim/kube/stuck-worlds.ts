/**
 * Scenario builders: one world per cause the namespace controller can be stuck on, each a
 * namespace already deleted (a `deletionTimestamp` in the past) whose content is still live, so
 * the simulator's own controllers do the deleting on start and end up where a real cluster would:
 *
 * - {@link webhookBlockedWorld}: a webhook configuration with `failurePolicy: Fail` intercepting
 *   DELETE, whose Service is gone or has no ready endpoint → `NamespaceDeletionContentFailure`.
 * - {@link lostNodeWorld}: pods bound to a NotReady (or deleted) node, one of them mounting a PVC →
 *   pods Terminating for good, the claim held by `kubernetes.io/pvc-protection`.
 * - {@link namespaceFinalizerWorld}: a namespace whose `spec.finalizers` carry a finalizer other
 *   than `kubernetes` → empty, conditions all False, still Terminating until `/finalize`.
 *
 * `startKubeSim({ scenario: webhookBlockedWorld({ namespace: "shop" }) })`.
 */
import type { Scenario, ScenarioObject } from "../scenario.js";

function at(now: Date, offsetMs: number): string {
  return new Date(now.getTime() + offsetMs).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function scenario(name: string, objects: ScenarioObject[]): Scenario {
  return { name, kube: { objects, logs: [], failingGroups: [] } };
}

function terminatingNamespace(
  name: string,
  now: Date,
  deletedMinutesAgo: number,
  finalizers: readonly string[] = ["kubernetes"],
): ScenarioObject {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name,
      creationTimestamp: at(now, -30 * 86_400_000),
      deletionTimestamp: at(now, -deletedMinutesAgo * 60_000),
    },
    spec: { finalizers: [...finalizers] },
    status: { phase: "Terminating" },
  };
}

export interface WebhookWorldOptions {
  readonly namespace: string;
  readonly now?: Date;
  /** `Validating` (default) or `Mutating`. */
  readonly kind?: "Validating" | "Mutating";
  readonly configuration?: string;
  readonly webhook?: string;
  /** Where the webhook's Service lives (its own namespace, not the one being deleted). */
  readonly serviceNamespace?: string;
  readonly service?: string;
  /** `missing` (default): no Service at all; `no-endpoints`: the Service without a ready endpoint. */
  readonly serviceState?: "missing" | "no-endpoints";
  /** The types its rules intercept (default `configmaps`, core group). */
  readonly resources?: readonly string[];
  readonly failurePolicy?: "Fail" | "Ignore";
  readonly deletedMinutesAgo?: number;
  /**
   * Also an Ingress (live ALB in its status) and a TargetGroupBinding, each with the AWS Load
   * Balancer Controller's finalizer, whose deletes the webhook refuses too: objects with finalizers
   * that are not being deleted.
   */
  readonly loadBalancerObjects?: boolean;
}

export function webhookBlockedWorld(o: WebhookWorldOptions): Scenario {
  const now = o.now ?? new Date();
  const svcNs = o.serviceNamespace ?? "policy-system";
  const svc = o.service ?? "policy-webhook";
  const kind = o.kind ?? "Validating";
  const rules: Record<string, unknown>[] = [
    {
      operations: ["CREATE", "UPDATE", "DELETE"],
      apiGroups: [""],
      apiVersions: ["v1"],
      resources: [...(o.resources ?? ["configmaps"])],
      scope: "Namespaced",
    },
  ];
  const objects: ScenarioObject[] = [
    terminatingNamespace(o.namespace, now, o.deletedMinutesAgo ?? 25),
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "app-settings", namespace: o.namespace },
      data: { mode: "production" },
    },
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: `${kind}WebhookConfiguration`,
      metadata: { name: o.configuration ?? "policy-validator" },
      webhooks: [
        {
          name: o.webhook ?? "validate.policy.example.com",
          admissionReviewVersions: ["v1"],
          sideEffects: "None",
          failurePolicy: o.failurePolicy ?? "Fail",
          timeoutSeconds: 10,
          clientConfig: { service: { namespace: svcNs, name: svc, path: "/validate", port: 443 } },
          rules,
          namespaceSelector: {
            matchExpressions: [
              { key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system", svcNs] },
            ],
          },
        },
      ],
    },
  ];
  if (o.loadBalancerObjects === true) {
    rules.push(
      {
        operations: ["DELETE"],
        apiGroups: ["networking.k8s.io"],
        apiVersions: ["v1"],
        resources: ["ingresses"],
        scope: "Namespaced",
      },
      {
        operations: ["DELETE"],
        apiGroups: ["elbv2.k8s.aws"],
        apiVersions: ["v1beta1"],
        resources: ["targetgroupbindings"],
        scope: "Namespaced",
      },
    );
    objects.push(
      {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "targetgroupbindings.elbv2.k8s.aws" },
        spec: {
          group: "elbv2.k8s.aws",
          scope: "Namespaced",
          names: {
            kind: "TargetGroupBinding",
            listKind: "TargetGroupBindingList",
            plural: "targetgroupbindings",
            singular: "targetgroupbinding",
          },
          versions: [
            {
              name: "v1beta1",
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
            },
          ],
        },
      },
      {
        apiVersion: "networking.k8s.io/v1",
        kind: "Ingress",
        metadata: { name: "web", namespace: o.namespace, finalizers: ["ingress.k8s.aws/resources"] },
        spec: {
          ingressClassName: "alb",
          rules: [{ host: "shop.example.com", http: { paths: [] } }],
        },
        status: {
          loadBalancer: {
            ingress: [{ hostname: "k8s-shop-web-4f1c2a9b7e-1234567890.ap-northeast-2.elb.amazonaws.com" }],
          },
        },
      },
      {
        apiVersion: "elbv2.k8s.aws/v1beta1",
        kind: "TargetGroupBinding",
        metadata: { name: "api", namespace: o.namespace, finalizers: ["elbv2.k8s.aws/resources"] },
        spec: {
          serviceRef: { name: "api", port: 8080 },
          targetGroupARN:
            "arn:aws:elasticloadbalancing:ap-northeast-2:123456789012:targetgroup/tf-api/0a1b2c3d4e5f6071",
          targetType: "ip",
        },
      },
    );
  }
  if (o.serviceState === "no-endpoints") {
    objects.push(
      { apiVersion: "v1", kind: "Namespace", metadata: { name: svcNs } },
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: svc, namespace: svcNs },
        spec: {
          type: "ClusterIP",
          clusterIP: "10.100.23.7",
          selector: { app: svc },
          ports: [{ port: 443, targetPort: 9443, protocol: "TCP" }],
        },
      },
      // No pod matches: the endpoints controllers give it an Endpoints without subsets and a
      // placeholder EndpointSlice.
    );
  }
  return scenario(`webhook-blocked-${o.namespace}`, objects);
}

export interface LostNodeWorldOptions {
  readonly namespace: string;
  readonly now?: Date;
  readonly node?: string;
  /**
   * `not-ready` (default): the Node is there, its kubelet silent for long; `missing`: no Node
   * object; `ready`: the node is healthy and the namespace not yet deleted — the world before the
   * machine is lost (`KubeSim.silenceKubelet`, then delete the namespace).
   */
  readonly nodeState?: "not-ready" | "missing" | "ready";
  /** Pods bound to the node (default `web-0`, `web-1`); the first mounts the claim. */
  readonly pods?: readonly string[];
  /** The claim the first pod mounts (default `data-web-0`); `null` for none. */
  readonly claim?: string | null;
  readonly deletedMinutesAgo?: number;
}

export function lostNodeWorld(o: LostNodeWorldOptions): Scenario {
  const now = o.now ?? new Date();
  const node = o.node ?? "ip-10-0-3-41.ap-northeast-2.compute.internal";
  const pods = o.pods ?? ["web-0", "web-1"];
  const claim = o.claim === undefined ? "data-web-0" : o.claim;
  const objects: ScenarioObject[] = [
    o.nodeState === "ready"
      ? { apiVersion: "v1", kind: "Namespace", metadata: { name: o.namespace } }
      : terminatingNamespace(o.namespace, now, o.deletedMinutesAgo ?? 40),
  ];
  if (o.nodeState === "ready") {
    objects.push({
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: node, labels: { "kubernetes.io/hostname": node } },
      status: {
        conditions: [
          {
            type: "Ready",
            status: "True",
            reason: "KubeletReady",
            message: "kubelet is posting ready status",
            lastHeartbeatTime: at(now, 0),
            lastTransitionTime: at(now, -20 * 86_400_000),
          },
          { type: "MemoryPressure", status: "False", reason: "KubeletHasSufficientMemory" },
        ],
        nodeInfo: { kubeletVersion: "v1.32.3-eks-4096722" },
      },
    });
  } else if (o.nodeState !== "missing") {
    objects.push({
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name: node,
        creationTimestamp: at(now, -20 * 86_400_000),
        labels: { "kubernetes.io/hostname": node },
      },
      spec: {
        taints: [
          { key: "node.kubernetes.io/unreachable", effect: "NoSchedule", timeAdded: at(now, -55 * 60_000) },
          { key: "node.kubernetes.io/unreachable", effect: "NoExecute", timeAdded: at(now, -55 * 60_000) },
        ],
      },
      status: {
        conditions: [
          {
            type: "Ready",
            status: "Unknown",
            reason: "NodeStatusUnknown",
            message: "Kubelet stopped posting node status.",
            lastHeartbeatTime: at(now, -56 * 60_000),
            lastTransitionTime: at(now, -55 * 60_000),
          },
        ],
        nodeInfo: { kubeletVersion: "v1.32.3-eks-4096722" },
      },
    });
  }
  if (claim !== null) {
    objects.push({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: {
        name: claim,
        namespace: o.namespace,
        // What the StorageObjectInUseProtection admission plugin put on it at creation.
        finalizers: ["kubernetes.io/pvc-protection"],
      },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "10Gi" } } },
      status: { phase: "Bound" },
    });
  }
  pods.forEach((name, i) => {
    objects.push({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: o.namespace, labels: { app: "web" } },
      spec: {
        nodeName: node,
        terminationGracePeriodSeconds: 30,
        containers: [{ name: "web", image: "nginx:1.27" }],
        ...(i === 0 && claim !== null
          ? { volumes: [{ name: "data", persistentVolumeClaim: { claimName: claim } }] }
          : {}),
      },
      status: { phase: "Running" },
    });
  });
  return scenario(`lost-node-${o.namespace}`, objects);
}

export interface NamespaceFinalizerWorldOptions {
  readonly namespace: string;
  readonly now?: Date;
  /** Besides `kubernetes` (which the namespace controller removes). */
  readonly finalizers?: readonly string[];
  readonly deletedMinutesAgo?: number;
}

export function namespaceFinalizerWorld(o: NamespaceFinalizerWorldOptions): Scenario {
  const now = o.now ?? new Date();
  return scenario(`namespace-finalizer-${o.namespace}`, [
    terminatingNamespace(o.namespace, now, o.deletedMinutesAgo ?? 15, [
      "kubernetes",
      ...(o.finalizers ?? ["example.com/tenant-cleanup"]),
    ]),
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "leftover", namespace: o.namespace },
      data: { a: "1" },
    },
  ]);
}

export interface OperatorFailingWorldOptions {
  readonly namespace: string;
  readonly now?: Date;
  /** The operator's log line about the object (default: the bucket it cannot delete is not empty). */
  readonly error?: string;
  readonly deletedMinutesAgo?: number;
}

/**
 * An operator the finalizer table does not know (`bucket-system/bucket-operator`), running, whose
 * custom resource `Bucket <ns>/assets` keeps its finalizer `storage.example.com/finalizer` because
 * the external resource refuses deletion — said only in the operator's own log.
 */
export function operatorFailingWorld(o: OperatorFailingWorldOptions): Scenario {
  const now = o.now ?? new Date();
  const labels = { "app.kubernetes.io/name": "bucket-operator" };
  const image = "ghcr.io/example/bucket-operator:1.4.0";
  const pod = "bucket-operator-7c9d8f6b5-abcde";
  const error =
    o.error ??
    "failed to delete bucket shop-assets-prod: BucketNotEmpty: The bucket you tried to delete is not empty";
  const objects: ScenarioObject[] = [
    {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "buckets.storage.example.com" },
      spec: {
        group: "storage.example.com",
        scope: "Namespaced",
        names: { kind: "Bucket", listKind: "BucketList", plural: "buckets", singular: "bucket" },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
        ],
      },
    },
    { apiVersion: "v1", kind: "Namespace", metadata: { name: "bucket-system" } },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "bucket-operator", namespace: "bucket-system", labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: "manager", image }] } },
      },
      status: { replicas: 1, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1 },
    },
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: pod,
        namespace: "bucket-system",
        labels: { ...labels, "pod-template-hash": "7c9d8f6b5" },
      },
      spec: { containers: [{ name: "manager", image }] },
      status: {
        phase: "Running",
        conditions: [{ type: "Ready", status: "True" }],
        containerStatuses: [{ name: "manager", ready: true, restartCount: 0 }],
      },
    },
    terminatingNamespace(o.namespace, now, o.deletedMinutesAgo ?? 40),
    {
      apiVersion: "storage.example.com/v1",
      kind: "Bucket",
      metadata: { name: "assets", namespace: o.namespace, finalizers: ["storage.example.com/finalizer"] },
      spec: { bucketName: "shop-assets-prod" },
    },
  ];
  const line = JSON.stringify({
    level: "error",
    ts: at(now, -2 * 60_000),
    msg: "Reconciler error",
    controller: "bucket",
    namespace: o.namespace,
    name: "assets",
    error,
  });
  return {
    name: `operator-failing-${o.namespace}`,
    kube: {
      objects,
      logs: [{ pod: `bucket-system/${pod}`, container: "manager", lines: [line] }],
      failingGroups: [],
    },
  };
}

/** A namespaced CustomResourceDefinition serving one version of `kind` (any field preserved). */
export function namespacedCrd(group: string, version: string, kind: string, plural: string): ScenarioObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
      versions: [
        {
          name: version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        },
      ],
    },
  };
}
