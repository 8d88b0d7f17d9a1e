import type { ObjectTarget } from "../../../src/approvals/types.js";

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
