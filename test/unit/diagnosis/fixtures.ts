import type {
  DeploymentSnapshot,
  NamespaceSnapshot,
  ObjectSnapshot,
  ResourceType,
} from "../../../src/kube/types.js";

export const ingressType: ResourceType = {
  group: "networking.k8s.io",
  version: "v1",
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  resource: "ingresses",
  namespaced: true,
  verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
};

export const podType: ResourceType = {
  group: "",
  version: "v1",
  apiVersion: "v1",
  kind: "Pod",
  resource: "pods",
  namespaced: true,
  verbs: ["get", "list", "delete"],
};

export function terminatingNs(
  name: string,
  deletedAt: Date,
  extra: Partial<NamespaceSnapshot> = {},
): NamespaceSnapshot {
  return {
    name,
    phase: "Terminating",
    deletionTimestamp: deletedAt.toISOString(),
    specFinalizers: ["kubernetes"],
    finalizers: [],
    conditions: [],
    labels: {},
    annotations: {},
    ...extra,
  };
}

export function obj(type: ResourceType, name: string, extra: Partial<ObjectSnapshot> = {}): ObjectSnapshot {
  return {
    apiVersion: type.apiVersion,
    kind: type.kind,
    resource: type.resource,
    namespace: "myapp",
    name,
    resourceVersion: "100",
    finalizers: [],
    labels: {},
    annotations: {},
    ownerReferences: [],
    ...extra,
  };
}

export function lbcDeployment(name: string, ready = 2, replicas = 2): DeploymentSnapshot {
  return {
    namespace: "kube-system",
    name,
    labels: { "app.kubernetes.io/name": "aws-load-balancer-controller", "app.kubernetes.io/instance": name },
    selector: {
      "app.kubernetes.io/name": "aws-load-balancer-controller",
      "app.kubernetes.io/instance": name,
    },
    replicas,
    readyReplicas: ready,
    availableReplicas: ready,
    images: ["public.ecr.aws/eks/aws-load-balancer-controller:v2.7.1"],
    args: ["--cluster-name=prod-eks"],
  };
}

/** An object the namespace controller has deleted and its finalizers still hold. */
export function held(
  type: ResourceType,
  name: string,
  finalizers: readonly string[],
  extra: Partial<ObjectSnapshot> = {},
): ObjectSnapshot {
  return obj(type, name, { deletionTimestamp: "2026-02-12T08:40:00Z", finalizers, ...extra });
}
