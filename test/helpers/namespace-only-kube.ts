/**
 * A `KubePort` where only `getNamespace` answers (with `getNamespace`); every other call rejects
 * naming the method, so a test that reaches further into the cluster than it means to fails.
 */
import type { KubePort } from "../../src/kube/port.js";
import type { NamespaceSnapshot } from "../../src/kube/types.js";

export function namespaceOnlyKube(
  getNamespace: (name: string) => Promise<NamespaceSnapshot | null>,
): KubePort {
  const unexpected = (method: string) => () => Promise.reject(new Error(`unexpected kube call ${method}`));
  return {
    getNamespace,
    discover: unexpected("discover"),
    listObjects: unexpected("listObjects"),
    getObject: unexpected("getObject"),
    listDeployments: unexpected("listDeployments"),
    listPods: unexpected("listPods"),
    podLog: unexpected("podLog"),
    listEvents: unexpected("listEvents"),
    listApiServices: unexpected("listApiServices"),
    listArgoApplications: unexpected("listArgoApplications"),
    getServiceEndpoints: unexpected("getServiceEndpoints"),
    listAdmissionWebhooks: unexpected("listAdmissionWebhooks"),
    serviceExists: unexpected("serviceExists"),
    getNode: unexpected("getNode"),
    listPodPlacements: unexpected("listPodPlacements"),
    removeFinalizers: unexpected("removeFinalizers"),
    annotateNamespace: unexpected("annotateNamespace"),
    listNamespaces: unexpected("listNamespaces"),
    removeNamespaceAnnotation: unexpected("removeNamespaceAnnotation"),
    close: () => Promise.resolve(),
  };
}
