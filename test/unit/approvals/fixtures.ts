import type { ApprovalAction, ObjectTarget } from "../../../src/requests/model.js";
import { buildFinalizerPatch } from "../../../src/kube/finalizer-patch.js";

/** The seed incident's stuck Ingress, as an approval request addresses it. */
export const WORKER_INGRESS: ObjectTarget = {
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  resource: "ingresses",
  group: "networking.k8s.io",
  version: "v1",
  namespace: "myapp",
  name: "myapp-worker-ingress",
};

const seedPrecondition = { resourceVersion: "4711", finalizers: ["ingress.k8s.aws/resources"] };

/** One action of every kind: the record is typed over the union, so a new kind must add one. */
export const ONE_OF_EACH: { readonly [T in ApprovalAction["type"]]: Extract<ApprovalAction, { type: T }> } = {
  "remove-finalizer": {
    type: "remove-finalizer",
    target: WORKER_INGRESS,
    precondition: seedPrecondition,
    remove: ["ingress.k8s.aws/resources"],
    patch: buildFinalizerPatch(seedPrecondition, ["ingress.k8s.aws/resources"]),
  },
  "open-deletion-guard": {
    type: "open-deletion-guard",
    namespace: "myapp",
    windowSeconds: 3600,
    precondition: { uid: "u-1", resourceVersion: "7" },
    preflight: { verdict: "safe", summary: "nothing reaches it" },
  },
  "delete-orphans": {
    type: "delete-orphans",
    cluster: "prod-eks",
    namespace: "myapp",
    resources: [{ type: "SecurityGroup", id: "sg-0f1e2d3c4b5a69788", name: "k8s-traffic" }],
  },
  "repoint-path": {
    type: "repoint-path",
    hostnames: ["test.example.com"],
    steps: [
      {
        kind: "cloudfront-origin",
        distributionId: "E1",
        originId: "o1",
        from: "old.elb.amazonaws.com",
        to: "new.elb.amazonaws.com",
        etag: "ETAG",
        hostnames: ["test.example.com"],
      },
    ],
  },
};
