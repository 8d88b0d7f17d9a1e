/**
 * `KubePort` implemented with `@kubernetes/client-node`'s kubeconfig and watches: the wiring. Builds the transport and the
 * request policy (the shared in-flight bound, retries of throttled and failing reads, list paging:
 * `./requests.ts`) from the options, and hands each of the port's methods to the module that owns
 * it: reads of namespaces, objects and workloads (`./reads.ts`), reads for what holds a namespace's
 * deletion (`./cause-reads.ts`), discovery, cached or not (`./discovery.ts`), and the
 * single-attempt writes (`./patches.ts`). Every method returns plain snapshots (`./types.ts`) and
 * throws `UnstuckError`, never `ApiException`.
 *
 * The rest lives beside it: loading the kubeconfig (`./kubeconfig.ts`), authenticating and sending
 * requests (`./transport.ts`), keeping connections (`./pool.ts`), mapping errors (`./errors.ts`)
 * and decoding answers into snapshots (`./decode.ts`). The names this module has always exported
 * are exported from here still.
 */
import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "../log.js";
import { delay } from "../util/concurrency.js";
import {
  getServiceEndpoints,
  getNode,
  listAdmissionWebhooks,
  listApiServices,
  listArgoApplications,
  listPodPlacements,
  serviceExists,
} from "./cause-reads.js";
import { createDeploymentCache, type DeploymentCacheOptions } from "./deployment-cache.js";
import type { DiscoveryCacheOptions } from "./discovery-cache.js";
import { createDiscoveryCache, discoverUncached } from "./discovery.js";
import { mapKubeError } from "./errors.js";
import { loadKubeConfig } from "./kubeconfig.js";
import { createLimiter, DEFAULT_KUBE_CONCURRENCY, type RequestLimiter } from "./limiter.js";
import { annotateNamespace, removeFinalizers, removeNamespaceAnnotation } from "./patches.js";
import type { KubePort } from "./port.js";
import {
  getNamespace,
  getObject,
  listDeployments,
  listEvents,
  listNamespaces,
  listObjects,
  listPods,
  podLog,
} from "./reads.js";
import type { KubeRequests } from "./requests.js";
import { str } from "./decode.js";
import { DEFAULT_KUBE_TIMEOUT_MS, ResourceApi } from "./transport.js";

export { toArgoApplicationSnapshot, toObjectSnapshot } from "./decode.js";
export { mapKubeError } from "./errors.js";
export { loadKubeConfig } from "./kubeconfig.js";
export { DEFAULT_KUBE_TIMEOUT_MS, FIELD_MANAGER_MAX_LENGTH, writeIdentity } from "./transport.js";

export interface KubeAdapterOptions {
  readonly log?: Logger;
  /** Attempts for a throttled (429) or 5xx read; 1 = no retry. */
  readonly maxAttempts?: number;
  /** Page size for list calls (`limit`); `continue` is followed. */
  readonly pageSize?: number;
  /** Concurrency of discovery requests. */
  readonly discoveryConcurrency?: number;
  /** Longest honoured `Retry-After`, in seconds. */
  readonly maxRetryAfterSeconds?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * Longest wait for one HTTP request, body included (default 10 s). An API server that accepts
   * the connection and never answers would otherwise hold a diagnosis or an execution forever.
   */
  readonly requestTimeoutMs?: number;
  /**
   * Most API requests in flight at once across every caller of this adapter (default 64, the
   * diagnosis's own list concurrency), queued FIFO; a 429's `Retry-After` holds new ones back.
   * Watches are not counted. Pass a limiter to share one bound between adapters.
   */
  readonly maxInFlight?: number | RequestLimiter;
  /**
   * Cache discovery (off by default: the CLI discovers once per run anyway). The long-running
   * bot passes `{ watch: true }`: invalidated by watching CRDs and APIServices, `ttlMs` (60 s)
   * while a watch cannot be established. `close()` stops the watches.
   */
  readonly discoveryCache?: DiscoveryCacheOptions;
  /** Keep every Deployment current by a watch (the long-running bot); without it each read lists. */
  readonly deploymentCache?: DeploymentCacheOptions;
}

/**
 * One cheap authenticated request (`GET /version`), for the start-up reachability check: it
 * proves the address, the TLS trust and the credentials without needing any RBAC grant.
 */
export async function kubeVersion(kc: KubeConfig, timeoutMs: number): Promise<string> {
  try {
    return str((await new ResourceApi(kc, timeoutMs).getJson("/version")).gitVersion);
  } catch (err) {
    throw mapKubeError(err, { verb: "get", resource: "/version" }, serverLabel(kc), timeoutMs);
  }
}

/**
 * The API server as errors name it: its address, and the proxy in between when the kubeconfig
 * names one (an unreachable proxy is not an unreachable cluster), without the proxy's credentials.
 */
export function serverLabel(kc: KubeConfig): string {
  const cluster = kc.getCurrentCluster();
  if (!cluster) return "(no cluster in kubeconfig)";
  if (!cluster.proxyUrl) return cluster.server;
  let proxy = "(an unreadable proxy-url)";
  try {
    const u = new URL(cluster.proxyUrl);
    proxy = `${u.protocol}//${u.host}`;
  } catch {
    // named, not quoted: an address that does not parse may still hold a secret
  }
  return `${cluster.server} through the proxy ${proxy}`;
}

/** The transport and request policy of an adapter built from `kc` with `options`. */
function kubeRequests(kc: KubeConfig, options: KubeAdapterOptions): KubeRequests {
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_KUBE_TIMEOUT_MS;
  return {
    server: serverLabel(kc),
    timeoutMs,
    raw: new ResourceApi(kc, timeoutMs),
    limiter:
      typeof options.maxInFlight === "object"
        ? options.maxInFlight
        : createLimiter({ concurrency: options.maxInFlight ?? DEFAULT_KUBE_CONCURRENCY }),
    maxAttempts: options.maxAttempts ?? 4,
    pageSize: options.pageSize ?? 500,
    maxRetryAfterSeconds: options.maxRetryAfterSeconds ?? 10,
    sleep: options.sleep ?? delay,
    log: options.log,
  };
}

/** Build the adapter from a kubeconfig text or a loaded `KubeConfig`. */
export function createKubeAdapter(source: string | KubeConfig, options: KubeAdapterOptions = {}): KubePort {
  const kc = typeof source === "string" ? loadKubeConfig({ text: source }) : source;
  const k = kubeRequests(kc, options);
  const discoverNow = () => discoverUncached(k, options.discoveryConcurrency ?? 16);
  const cache =
    options.discoveryCache === undefined
      ? undefined
      : createDiscoveryCache(k, kc, discoverNow, options.discoveryCache);
  const deployments =
    options.deploymentCache === undefined ? undefined : createDeploymentCache(k, kc, options.deploymentCache);
  return {
    annotateNamespace: (name, key, value, seen, write) => annotateNamespace(k, name, key, value, seen, write),
    listNamespaces: () => listNamespaces(k),
    removeNamespaceAnnotation: (name, key, expected, write) =>
      removeNamespaceAnnotation(k, name, key, expected, write),
    async close() {
      cache?.close();
      deployments?.close();
      return Promise.resolve();
    },
    getNamespace: (name) => getNamespace(k, name),
    discover: () => (cache !== undefined ? cache.get() : discoverNow()),
    listObjects: (type, namespace) => listObjects(k, type, namespace),
    getObject: (type, namespace, name) => getObject(k, type, namespace, name),
    listDeployments: (opts) =>
      deployments !== undefined
        ? deployments.list(opts ?? {}, () => listDeployments(k, opts))
        : listDeployments(k, opts),
    listPods: (namespace, labelSelector) => listPods(k, namespace, labelSelector),
    podLog: (namespace, pod, container, tailLines) => podLog(k, namespace, pod, container, tailLines),
    listEvents: (namespace, involved) => listEvents(k, namespace, involved),
    listApiServices: () => listApiServices(k),
    listArgoApplications: () => listArgoApplications(k),
    listAdmissionWebhooks: () => listAdmissionWebhooks(k),
    serviceExists: (namespace, name) => serviceExists(k, namespace, name),
    getNode: (name) => getNode(k, name),
    listPodPlacements: (namespace) => listPodPlacements(k, namespace),
    getServiceEndpoints: (namespace, service) => getServiceEndpoints(k, namespace, service),
    removeFinalizers: (type, namespace, name, precondition, remove, write) =>
      removeFinalizers(k, type, namespace, name, precondition, remove, write),
  };
}
