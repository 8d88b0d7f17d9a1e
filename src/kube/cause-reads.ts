/**
 * The adapter's reads for what can hold a namespace's deletion: APIServices, Argo CD
 * Applications, admission webhooks, a Service and its endpoints, a Node and the pods placed on
 * nodes. Each lists a raw path ({@link listPath}) — a list of one name where a `get` would do, as
 * `list` is what the read role grants — and decodes it into the port's snapshots.
 */
import { ErrorCode, UnstuckError } from "../errors.js";
import {
  countEndpoints,
  countSliceEndpoints,
  obj,
  str,
  toApiServiceSnapshot,
  toArgoApplicationSnapshot,
} from "./decode.js";
import { toAdmissionWebhooks, toNodeSnapshot, toPodPlacement } from "./decode-causes.js";
import type { CallContext } from "./errors.js";
import type { AdmissionWebhookSnapshot, NodeSnapshot, PodPlacementSnapshot } from "./port.js";
import { callKube, type KubeRequests, listPath, namespacePath, orNull } from "./requests.js";
import type { ApiServiceSnapshot, ArgoApplicationSnapshot, ServiceEndpointsSnapshot } from "./types.js";

/** Every APIService, with its status conditions. */
export async function listApiServices(k: KubeRequests): Promise<ApiServiceSnapshot[]> {
  const ctx: CallContext = { verb: "list", resource: "apiservices", group: "apiregistration.k8s.io" };
  const items = await listPath(k, ctx, "/apis/apiregistration.k8s.io/v1/apiservices");
  return items.map(toApiServiceSnapshot);
}

/** Argo CD Applications in all namespaces, with what each manages. */
export async function listArgoApplications(k: KubeRequests): Promise<ArgoApplicationSnapshot[]> {
  const ctx: CallContext = { verb: "list", resource: "applications", group: "argoproj.io" };
  const items = await listPath(k, ctx, "/apis/argoproj.io/v1alpha1/applications");
  return items.map(toArgoApplicationSnapshot);
}

/** Every webhook of every Validating- and MutatingWebhookConfiguration. */
export async function listAdmissionWebhooks(k: KubeRequests): Promise<AdmissionWebhookSnapshot[]> {
  const group = "admissionregistration.k8s.io";
  const kinds = [
    ["validatingwebhookconfigurations", "ValidatingWebhookConfiguration"],
    ["mutatingwebhookconfigurations", "MutatingWebhookConfiguration"],
  ] as const;
  const lists = await Promise.all(
    kinds.map(async ([resource, kind]) =>
      (await listPath(k, { verb: "list", resource, group }, `/apis/${group}/v1/${resource}`)).flatMap((c) =>
        toAdmissionWebhooks(c, kind),
      ),
    ),
  );
  return lists.flat();
}

/** Whether a Service exists (a list of that one name, so only `list services` is needed). */
export async function serviceExists(k: KubeRequests, namespace: string, name: string): Promise<boolean> {
  const ctx: CallContext = { verb: "list", resource: "services", namespace };
  const items = await listPath(k, ctx, `${namespacePath(namespace)}/services`, {
    fieldSelector: `metadata.name=${name}`,
  });
  return items.length > 0;
}

/** One Node by name, `null` when it does not exist. */
export async function getNode(k: KubeRequests, name: string): Promise<NodeSnapshot | null> {
  // A list of that one name: `list` is what the read role grants (never `get` over every type).
  const ctx: CallContext = { verb: "list", resource: "nodes", name };
  const items = await listPath(k, ctx, "/api/v1/nodes", { fieldSelector: `metadata.name=${name}` });
  const node = items.find((n) => str(obj(n.metadata).name) === name);
  return node ? toNodeSnapshot(node) : null;
}

/** The pods of a namespace with their node and claims. */
export async function listPodPlacements(k: KubeRequests, namespace: string): Promise<PodPlacementSnapshot[]> {
  const ctx: CallContext = { verb: "list", resource: "pods", namespace };
  const items = await listPath(k, ctx, `${namespacePath(namespace)}/pods`);
  return items.map(toPodPlacement);
}

/**
 * Ready and not-ready endpoints of one Service: its EndpointSlices, or the core Endpoints object
 * when slices cannot be read.
 */
export async function getServiceEndpoints(
  k: KubeRequests,
  namespace: string,
  service: string,
): Promise<ServiceEndpointsSnapshot> {
  const sliceCtx: CallContext = {
    verb: "list",
    resource: "endpointslices",
    group: "discovery.k8s.io",
    namespace,
  };
  try {
    const slices = await listPath(
      k,
      sliceCtx,
      `/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/endpointslices`,
      { labelSelector: `kubernetes.io/service-name=${service}` },
    );
    return { namespace, service, ...countSliceEndpoints(slices), source: "endpointslices" };
  } catch (err) {
    // Without EndpointSlice access (RBAC, or a server without discovery.k8s.io) the core
    // Endpoints object tells the same story; any other failure is reported as it is.
    const fallback =
      err instanceof UnstuckError && (err.code === ErrorCode.Forbidden || err.code === ErrorCode.NotFound);
    if (!fallback) throw err;
  }
  const ctx: CallContext = { verb: "get", resource: "endpoints", namespace, name: service };
  const ep = await orNull(
    callKube(k, ctx, () =>
      k.raw.getJson(`${namespacePath(namespace)}/endpoints/${encodeURIComponent(service)}`),
    ),
  );
  return { namespace, service, ...countEndpoints(ep), source: "endpoints" };
}
