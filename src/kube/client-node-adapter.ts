/**
 * `KubePort` implemented with `@kubernetes/client-node`: the wiring. Owns what the port's methods
 * do — which requests, the shared in-flight bound, retries of throttled and failing reads, list
 * paging, discovery (aggregated or group by group, cached or not), the single-attempt writes — and
 * returns plain snapshots (`./types.ts`), throwing `UnstuckError`, never `ApiException`.
 *
 * The rest lives beside it: loading the kubeconfig (`./kubeconfig.ts`), authenticating and sending
 * requests (`./transport.ts`), keeping connections (`./pool.ts`), mapping errors (`./errors.ts`)
 * and decoding answers into snapshots (`./decode.ts`). The names this module has always exported
 * are exported from here still.
 */
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
  VersionApi,
  Watch,
} from "@kubernetes/client-node";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { Logger } from "../log.js";
import { delay, mapLimit } from "../util/concurrency.js";
import { buildAnnotationPatch } from "./annotation-patch.js";
import { buildAnnotationRemovalIf } from "./annotation-removal.js";
import {
  countEndpoints,
  countSliceEndpoints,
  isAggregatedDiscovery,
  type Json,
  jsonArray,
  obj,
  optStr,
  readAggregatedDiscovery,
  str,
  toApiServiceSnapshot,
  toArgoApplicationSnapshot,
  toDeploymentSnapshot,
  toEventSnapshot,
  toNamespaceSnapshot,
  toObjectSnapshot,
  toPodSnapshot,
  toResourceTypes,
} from "./decode.js";
import { DiscoveryCache, type DiscoveryCacheOptions } from "./discovery-cache.js";
import { toAdmissionWebhooks, toNodeSnapshot, toPodPlacement } from "./decode-causes.js";
import { type CallContext, describeTarget, isPreconditionRefusal, mapKubeError } from "./errors.js";
import { buildFinalizerPatch } from "./finalizer-patch.js";
import { loadKubeConfig } from "./kubeconfig.js";
import { metricSink } from "../ops/metric-sink.js";
import { createLimiter, DEFAULT_KUBE_CONCURRENCY, type RequestLimiter } from "./limiter.js";
import type { KubePort } from "./port.js";
import {
  ACCEPT_DISCOVERY,
  ACCEPT_JSON,
  ACCEPT_METADATA_LIST,
  ACCEPT_METADATA_WATCH,
  DEFAULT_KUBE_TIMEOUT_MS,
  makeClient,
  ResourceApi,
  watchConfig,
} from "./transport.js";
import type { DiscoveryFailure, DiscoverySnapshot, ResourceType } from "./types.js";

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
}

/** Paged attempts at one list before the unpaged fallback (see `listAll`). */
const PAGED_LIST_ATTEMPTS = 2;

/**
 * Types whose snapshot reads more than metadata (see `toObjectSnapshot`): an Ingress's class and
 * load-balancer status, a Service's type, class and status, a TargetGroupBinding's ARN. Keyed
 * `group/resource`; every other type is listed metadata-only.
 */
const FULL_OBJECT_TYPES: ReadonlySet<string> = new Set([
  "networking.k8s.io/ingresses",
  "/services",
  "elbv2.k8s.aws/targetgroupbindings",
]);

/**
 * One cheap authenticated request (`GET /version`), for the start-up reachability check: it
 * proves the address, the TLS trust and the credentials without needing any RBAC grant.
 */
export async function kubeVersion(kc: KubeConfig, timeoutMs: number): Promise<string> {
  const server = kc.getCurrentCluster()?.server ?? "(no cluster in kubeconfig)";
  try {
    const v = await makeClient(kc, VersionApi, timeoutMs).getCode();
    return v.gitVersion;
  } catch (err) {
    throw mapKubeError(err, { verb: "get", resource: "/version" }, server, timeoutMs);
  }
}

/** One request for `/metrics` (a request that never left, refused by the limiter, is not one). */
function countRequest(ctx: CallContext, code: string, sent: number | undefined): void {
  if (sent !== undefined) metricSink()?.kubeCall(ctx.verb, code, (performance.now() - sent) / 1000);
}

/** Build the adapter from a kubeconfig text or a loaded `KubeConfig`. */
export function createKubeAdapter(source: string | KubeConfig, options: KubeAdapterOptions = {}): KubePort {
  const kc = typeof source === "string" ? loadKubeConfig({ text: source }) : source;
  const server = kc.getCurrentCluster()?.server ?? "(no cluster in kubeconfig)";
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_KUBE_TIMEOUT_MS;
  const core = makeClient(kc, CoreV1Api, timeoutMs);
  const apps = makeClient(kc, AppsV1Api, timeoutMs);
  const custom = makeClient(kc, CustomObjectsApi, timeoutMs);
  const raw = new ResourceApi(kc, timeoutMs);
  const maxAttempts = options.maxAttempts ?? 4;
  const pageSize = options.pageSize ?? 500;
  const sleep = options.sleep ?? delay;
  const maxRetryAfter = options.maxRetryAfterSeconds ?? 10;
  const limiter =
    typeof options.maxInFlight === "object"
      ? options.maxInFlight
      : createLimiter({ concurrency: options.maxInFlight ?? DEFAULT_KUBE_CONCURRENCY });

  /**
   * One request at a time through the shared limiter; retry 429 (honouring Retry-After, which
   * also holds back every new request) and transient 5xx; map everything else to UnstuckError.
   * A retry waits out its pause without a slot, then goes ahead of requests not yet started.
   */
  async function call<T>(ctx: CallContext, op: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let sent: number | undefined;
      const timed = (): Promise<T> => {
        sent = performance.now();
        return op();
      };
      try {
        const result = await limiter.run(timed, { retry: attempt > 1 });
        countRequest(ctx, "OK", sent);
        return result;
      } catch (err) {
        const mapped = mapKubeError(err, ctx, server, timeoutMs);
        countRequest(
          ctx,
          mapped.details.status !== undefined ? String(mapped.details.status) : mapped.code,
          sent,
        );
        const retryable =
          mapped.code === ErrorCode.Throttled ||
          mapped.details.status === 503 ||
          mapped.details.status === 500;
        if (!retryable || attempt >= maxAttempts) throw mapped;
        const retryAfter = mapped.details.retryAfterSeconds;
        const waitMs =
          retryAfter !== undefined ? Math.min(retryAfter, maxRetryAfter) * 1000 : 100 * 2 ** (attempt - 1);
        if (mapped.code === ErrorCode.Throttled) limiter.holdFor(waitMs);
        options.log?.debug({ ...ctx, attempt, waitMs, code: mapped.code }, "retrying kube request");
        await sleep(waitMs);
      }
    }
  }

  /** `null` for 404. */
  async function orNull<T>(p: Promise<T>): Promise<T | null> {
    try {
      return await p;
    } catch (err) {
      if (err instanceof UnstuckError && err.code === ErrorCode.NotFound) return null;
      throw err;
    }
  }

  function resourcePath(type: ResourceType, namespace?: string, name?: string): string {
    const base = type.group === "" ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
    const ns =
      type.namespaced && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : "";
    const item = name !== undefined ? `/${encodeURIComponent(name)}` : "";
    return `${base}${ns}/${type.resource}${item}`;
  }

  /** Every item of a list path read as raw JSON (every page; unpaged after repeated 410s). */
  async function listPath(
    ctx: CallContext,
    path: string,
    query: Record<string, string | undefined> = {},
  ): Promise<Json[]> {
    return listAll(ctx, async (cont, limit) => {
      const list = await raw.getJson(path, {
        ...query,
        limit: limit !== undefined ? String(limit) : undefined,
        continue: cont,
      });
      return {
        items: jsonArray(list.items),
        cont: str(obj(list.metadata).continue) || undefined,
      };
    });
  }

  /**
   * Every page of a list (`limit` = the page size, then each `continue` token until none).
   * A token that expires between pages (410 Expired: etcd compacted the list's revision) restarts
   * the list from the beginning, as the API server's message says — the 410 also offers a token
   * that continues at a newer revision, but that list would be inconsistent. A second expiry falls
   * back to one unpaged list, as client-go's pager does, so a busy cluster cannot keep us looping.
   */
  async function listAll<T>(
    ctx: CallContext,
    page: (
      cont: string | undefined,
      limit: number | undefined,
    ) => Promise<{ items: readonly T[]; cont: string | undefined }>,
  ): Promise<T[]> {
    for (let attempt = 1; ; attempt++) {
      const limit = attempt <= PAGED_LIST_ATTEMPTS ? pageSize : undefined;
      const items: T[] = [];
      const tokens = new Set<string>();
      let cont: string | undefined;
      try {
        do {
          const res = await call(ctx, () => page(cont, limit));
          items.push(...res.items);
          cont = res.cont;
          if (cont !== undefined) {
            // A server that hands back a token twice would otherwise be followed forever.
            if (tokens.has(cont)) {
              throw new UnstuckError(
                ErrorCode.Upstream,
                `The Kubernetes API repeated a continue token while the bot tried to ${describeTarget(ctx)}; the list is incomplete.`,
                { verb: ctx.verb, resource: ctx.group ? `${ctx.resource}.${ctx.group}` : ctx.resource },
              );
            }
            tokens.add(cont);
          }
        } while (cont !== undefined);
        return items;
      } catch (err) {
        const expired = err instanceof UnstuckError && err.details.status === 410 && cont !== undefined;
        if (!expired || limit === undefined) throw err;
        options.log?.debug(
          { ...ctx, attempt, items: items.length },
          "list continue token expired; restarting",
        );
      }
    }
  }

  /** Discovery without the cache: aggregated when served, else group by group. */
  async function discoverUncached(): Promise<DiscoverySnapshot> {
    const resources: ResourceType[] = [];
    const failures: DiscoveryFailure[] = [];
    // Both documents at once: with aggregated discovery they are the whole of discovery.
    const [coreDoc, groupsDoc] = await Promise.all(
      ["/api", "/apis"].map((path) =>
        call({ verb: "get", resource: `${path} (discovery)` }, () => raw.getJson(path, {}, ACCEPT_DISCOVERY)),
      ),
    );
    if (coreDoc !== undefined && isAggregatedDiscovery(coreDoc)) {
      readAggregatedDiscovery(coreDoc, resources, failures);
    } else {
      // An APIVersions answer: the server predates aggregated discovery (or turned it off).
      const coreList = await call({ verb: "get", resource: "/api/v1 (discovery)" }, () =>
        core.getAPIResources(),
      );
      resources.push(...toResourceTypes("", "v1", coreList.resources));
    }
    if (groupsDoc !== undefined && isAggregatedDiscovery(groupsDoc)) {
      readAggregatedDiscovery(groupsDoc, resources, failures);
      return { resources, failures } satisfies DiscoverySnapshot;
    }
    // An APIGroupList: one request per group for its preferred version's resources.
    const targets = (Array.isArray(groupsDoc?.groups) ? groupsDoc.groups : []).map((x) => {
      const g = obj(x);
      const first = Array.isArray(g.versions) ? obj(g.versions[0]).version : undefined;
      return {
        group: str(g.name),
        version: optStr(obj(g.preferredVersion).version) ?? optStr(first) ?? "v1",
      };
    });
    const results = await mapLimit(targets, options.discoveryConcurrency ?? 16, (t) =>
      call({ verb: "get", resource: `/apis/${t.group}/${t.version} (discovery)` }, () =>
        custom.getAPIResources({ group: t.group, version: t.version }),
      ),
    );
    results.forEach((r, i) => {
      const t = targets[i];
      if (!t) return;
      if (r.ok) resources.push(...toResourceTypes(t.group, t.version, r.value.resources));
      else
        failures.push({
          groupVersion: `${t.group}/${t.version}`,
          message: r.error instanceof Error ? r.error.message : String(r.error),
        });
    });
    return { resources, failures } satisfies DiscoverySnapshot;
  }

  /**
   * Watches for the discovery cache: client-node's `Watch` (undici fetch, the kubeconfig's pooled
   * dispatcher and credentials, one JSON event per line), asking for metadata-only objects. Not
   * limited: a watch holds its connection for minutes and is not a request the API server queues.
   */
  const metadataWatch = watchConfig(kc, ACCEPT_METADATA_WATCH);
  const cache =
    options.discoveryCache === undefined
      ? undefined
      : new DiscoveryCache(
          {
            load: discoverUncached,
            async listResourceVersion(target) {
              const ctx: CallContext = { verb: "list", resource: target.resource, group: target.group };
              const list = await call(ctx, () =>
                raw.getJson(target.path, { limit: "1" }, ACCEPT_METADATA_LIST),
              );
              return str(obj(list.metadata).resourceVersion);
            },
            async watch(target, resourceVersion, timeoutSeconds, onEvent, onEnd) {
              const controller = await new Watch(metadataWatch).watch(
                target.path,
                {
                  allowWatchBookmarks: true,
                  timeoutSeconds,
                  ...(resourceVersion !== "" ? { resourceVersion } : {}),
                },
                (type: string, object: unknown) => onEvent({ type, object: obj(object) }),
                // client-node 2 aborts a watch after 30 s without data (TimeoutError): on a quiet
                // cluster that is the normal end of a watch, resumed from its resourceVersion at
                // once (the 30 s already waited rules out a tight loop), not a failure to back off.
                (err: unknown) => onEnd(obj(err).name === "TimeoutError" ? undefined : (err ?? undefined)),
              );
              return () => controller.abort();
            },
            ...(options.log !== undefined ? { log: options.log } : {}),
          },
          options.discoveryCache,
        );

  const port: KubePort = {
    async annotateNamespace(name, key, value, seen, write) {
      const ctx: CallContext = { verb: "patch", resource: "namespaces", name };
      const ops = buildAnnotationPatch(seen, key, value);
      try {
        // One attempt, like the finalizer patch: after an ambiguous failure the caller re-reads.
        let ns: KubernetesObject;
        try {
          ns = await limiter.run(() =>
            raw.jsonPatch(`/api/v1/namespaces/${encodeURIComponent(name)}`, ops, write),
          );
        } catch (err) {
          throw mapKubeError(err, ctx, server);
        }
        return toNamespaceSnapshot(ns);
      } catch (err) {
        if (isPreconditionRefusal(err)) {
          throw new UnstuckError(
            ErrorCode.Stale,
            `Namespace ${name} changed since it was read; the API server refused the patch: ${err.message}`,
            { ...err.details },
            { cause: err },
          );
        }
        throw err;
      }
    },

    async listNamespaces() {
      const ctx: CallContext = { verb: "list", resource: "namespaces" };
      const items = await listAll(ctx, async (cont, limit) => {
        const list = await raw.getJson(
          "/api/v1/namespaces",
          { limit: limit !== undefined ? String(limit) : undefined, continue: cont },
          ACCEPT_METADATA_LIST,
        );
        const page = jsonArray(list.items);
        return {
          // Metadata only, whichever form the server answered in.
          items: page.map((o) => ({ metadata: obj(obj(o).metadata) })),
          cont: optStr(obj(list.metadata).continue),
        };
      });
      return items.map(toNamespaceSnapshot);
    },

    async removeNamespaceAnnotation(name, key, expected, write) {
      const ctx: CallContext = { verb: "patch", resource: "namespaces", name };
      const ops = buildAnnotationRemovalIf(key, expected);
      try {
        // One attempt: the caller (a periodic loop, a retried job) reads again before another.
        await limiter.run(() => raw.jsonPatch(`/api/v1/namespaces/${encodeURIComponent(name)}`, ops, write));
        return "removed";
      } catch (err) {
        const mapped = mapKubeError(err, ctx, server);
        if (mapped.code === ErrorCode.NotFound) return "gone";
        const failure: Error = mapped;
        // A `test` that failed: the namespace or the value is not the one read.
        if (isPreconditionRefusal(failure)) return "changed";
        throw failure;
      }
    },

    async close() {
      cache?.close();
      return Promise.resolve();
    },

    async getNamespace(name) {
      const ns = await orNull(
        call({ verb: "get", resource: "namespaces", name }, () => core.readNamespace({ name })),
      );
      return ns ? toNamespaceSnapshot(ns) : null;
    },

    async discover() {
      return cache !== undefined ? cache.get() : discoverUncached();
    },

    async listObjects(type, namespace) {
      const ctx: CallContext = { verb: "list", resource: type.resource, group: type.group, namespace };
      const full = FULL_OBJECT_TYPES.has(`${type.group}/${type.resource}`);
      const items = await listAll(ctx, async (cont, limit) => {
        const list = await raw.getJson(
          resourcePath(type, namespace),
          { limit: limit !== undefined ? String(limit) : undefined, continue: cont },
          full ? ACCEPT_JSON : ACCEPT_METADATA_LIST,
        );
        const meta = obj(list.metadata);
        const page = jsonArray(list.items);
        return {
          // Metadata is all the snapshot takes from these types, whichever form the server chose;
          // a server that ignored the request still leaves no spec or data held past this page.
          items: full ? page : page.map((o) => ({ metadata: obj(obj(o).metadata) })),
          cont: optStr(meta.continue),
        };
      });
      // A PartialObjectMetadata item says `meta.k8s.io/v1`; the snapshot names the listed type.
      return items.map((o) => toObjectSnapshot(o, type));
    },

    async getObject(type, namespace, name) {
      const ctx: CallContext = { verb: "get", resource: type.resource, group: type.group, namespace, name };
      const obj = await orNull(call(ctx, () => raw.getJson(resourcePath(type, namespace, name))));
      return obj ? toObjectSnapshot(obj, type) : null;
    },

    async listDeployments(opts = {}) {
      const ctx: CallContext = {
        verb: "list",
        resource: "deployments",
        group: "apps",
        ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}),
      };
      const items = await listAll(ctx, async (cont, limit) => {
        const base = { labelSelector: opts.labelSelector, limit, _continue: cont };
        const list =
          opts.namespace !== undefined
            ? await apps.listNamespacedDeployment({ ...base, namespace: opts.namespace })
            : await apps.listDeploymentForAllNamespaces(base);
        return { items: list.items, cont: list.metadata?._continue || undefined };
      });
      return items.map(toDeploymentSnapshot);
    },

    async listPods(namespace, labelSelector) {
      const ctx: CallContext = { verb: "list", resource: "pods", namespace };
      const items = await listAll(ctx, async (cont, limit) => {
        const list = await core.listNamespacedPod({ namespace, labelSelector, limit, _continue: cont });
        return { items: list.items, cont: list.metadata?._continue || undefined };
      });
      return items.map(toPodSnapshot);
    },

    async podLog(namespace, pod, container, tailLines) {
      const ctx: CallContext = { verb: "get", resource: "pods/log", namespace, name: pod };
      const text = await call(ctx, () =>
        core.readNamespacedPodLog({ name: pod, namespace, container, tailLines }),
      );
      return text.split("\n").filter((l) => l.length > 0);
    },

    async listEvents(namespace, involved) {
      const ctx: CallContext = { verb: "list", resource: "events", namespace };
      const fieldSelector = involved
        ? `involvedObject.kind=${involved.kind},involvedObject.name=${involved.name}`
        : undefined;
      const items = await listAll(ctx, async (cont, limit) => {
        const list = await core.listNamespacedEvent({ namespace, fieldSelector, limit, _continue: cont });
        return { items: list.items, cont: list.metadata?._continue || undefined };
      });
      return items.map(toEventSnapshot);
    },

    async listApiServices() {
      const ctx: CallContext = { verb: "list", resource: "apiservices", group: "apiregistration.k8s.io" };
      const items = await listPath(ctx, "/apis/apiregistration.k8s.io/v1/apiservices");
      return items.map(toApiServiceSnapshot);
    },

    async listArgoApplications() {
      const ctx: CallContext = { verb: "list", resource: "applications", group: "argoproj.io" };
      const items = await listPath(ctx, "/apis/argoproj.io/v1alpha1/applications");
      return items.map(toArgoApplicationSnapshot);
    },

    async listAdmissionWebhooks() {
      const group = "admissionregistration.k8s.io";
      const kinds = [
        ["validatingwebhookconfigurations", "ValidatingWebhookConfiguration"],
        ["mutatingwebhookconfigurations", "MutatingWebhookConfiguration"],
      ] as const;
      const lists = await Promise.all(
        kinds.map(async ([resource, kind]) =>
          (await listPath({ verb: "list", resource, group }, `/apis/${group}/v1/${resource}`)).flatMap((c) =>
            toAdmissionWebhooks(c, kind),
          ),
        ),
      );
      return lists.flat();
    },

    async serviceExists(namespace, name) {
      const ctx: CallContext = { verb: "list", resource: "services", namespace };
      const items = await listPath(ctx, `/api/v1/namespaces/${encodeURIComponent(namespace)}/services`, {
        fieldSelector: `metadata.name=${name}`,
      });
      return items.length > 0;
    },

    async getNode(name) {
      // A list of that one name: `list` is what the read role grants (never `get` over every type).
      const ctx: CallContext = { verb: "list", resource: "nodes", name };
      const items = await listPath(ctx, "/api/v1/nodes", { fieldSelector: `metadata.name=${name}` });
      const node = items.find((n) => str(obj(n.metadata).name) === name);
      return node ? toNodeSnapshot(node) : null;
    },

    async listPodPlacements(namespace) {
      const ctx: CallContext = { verb: "list", resource: "pods", namespace };
      const items = await listPath(ctx, `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`);
      return items.map(toPodPlacement);
    },

    async getServiceEndpoints(namespace, service) {
      const sliceCtx: CallContext = {
        verb: "list",
        resource: "endpointslices",
        group: "discovery.k8s.io",
        namespace,
      };
      try {
        const slices = await listPath(
          sliceCtx,
          `/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/endpointslices`,
          { labelSelector: `kubernetes.io/service-name=${service}` },
        );
        return { namespace, service, ...countSliceEndpoints(slices), source: "endpointslices" };
      } catch (err) {
        // Without EndpointSlice access (RBAC, or a server without discovery.k8s.io) the core
        // Endpoints object tells the same story; any other failure is reported as it is.
        const fallback =
          err instanceof UnstuckError &&
          (err.code === ErrorCode.Forbidden || err.code === ErrorCode.NotFound);
        if (!fallback) throw err;
      }
      const ctx: CallContext = { verb: "get", resource: "endpoints", namespace, name: service };
      const ep = await orNull(
        call(ctx, () =>
          raw.getJson(
            `/api/v1/namespaces/${encodeURIComponent(namespace)}/endpoints/${encodeURIComponent(service)}`,
          ),
        ),
      );
      return { namespace, service, ...countEndpoints(ep), source: "endpoints" };
    },

    async removeFinalizers(type, namespace, name, precondition, remove, write) {
      const ctx: CallContext = { verb: "patch", resource: type.resource, group: type.group, namespace, name };
      // The same patch the approval request showed; its `test` operations make the API server
      // itself refuse it if the object moved on since that state: no read-check-write race.
      const ops = buildFinalizerPatch(precondition, remove);
      try {
        // One attempt, never `call`'s retries: after a 5xx or a reset the write may have been
        // applied, and only the executor, re-reading the object, may decide what to do next.
        let obj: KubernetesObject;
        try {
          obj = await limiter.run(() => raw.jsonPatch(resourcePath(type, namespace, name), ops, write));
        } catch (err) {
          throw mapKubeError(err, ctx, server);
        }
        return toObjectSnapshot(obj, type);
      } catch (err) {
        if (isPreconditionRefusal(err)) {
          throw new UnstuckError(
            ErrorCode.Stale,
            `${type.kind} ${namespace}/${name} changed after approval; the API server refused the patch: ${err.message}`,
            { ...err.details },
            { cause: err },
          );
        }
        throw err;
      }
    },
  };
  return port;
}
