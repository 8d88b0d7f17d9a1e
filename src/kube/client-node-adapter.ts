/**
 * `KubePort` implemented with `@kubernetes/client-node`. I/O and error mapping only: every
 * method returns plain snapshots (`./types.ts`) and throws `UnstuckError`, never `ApiException`.
 */
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  createConfiguration,
  CustomObjectsApi,
  HttpMethod,
  KubeConfig,
  KubernetesObjectApi,
  type RequestContext,
  type ResponseContext,
  ServerConfiguration,
  VersionApi,
  Watch,
} from "@kubernetes/client-node";
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import { request as undiciRequest, type Dispatcher } from "undici";
import { existsSync } from "node:fs";
import { delimiter } from "node:path";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { Logger } from "../log.js";
import { delay, mapLimit } from "../util/concurrency.js";
import { DiscoveryCache, type DiscoveryCacheOptions } from "./discovery-cache.js";
import { buildAnnotationPatch } from "./annotation-patch.js";
import { buildAnnotationRemovalIf } from "./annotation-removal.js";
import { buildFinalizerPatch } from "./finalizer-patch.js";
import { createLimiter, DEFAULT_KUBE_CONCURRENCY, type RequestLimiter } from "./limiter.js";
import type { KubePort, WriteContext } from "./port.js";
import type {
  ApiServiceSnapshot,
  ArgoApplicationSnapshot,
  Condition,
  DeploymentSnapshot,
  DiscoveryFailure,
  DiscoverySnapshot,
  EventSnapshot,
  NamespaceSnapshot,
  ObjectSnapshot,
  PodSnapshot,
  ResourceType,
} from "./types.js";

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

/** Default per-request deadline: generous for a healthy API server, short enough to answer in Slack. */
export const DEFAULT_KUBE_TIMEOUT_MS = 10_000;

/** What a call was doing, so that a 403 can say exactly which permission is missing. */
interface CallContext {
  readonly verb: string;
  readonly resource: string;
  readonly group?: string;
  readonly namespace?: string;
  readonly name?: string;
}

type Json = Record<string, unknown>;

/** Paged attempts at one list before the unpaged fallback (see `listAll`). */
const PAGED_LIST_ATTEMPTS = 2;

/**
 * Standard loading: an explicit kubeconfig path, else `KUBECONFIG`/`~/.kube/config`/in-cluster
 * (the caller passes what `config.ts` read — this module reads no environment itself beyond
 * what `loadFromDefault` does).
 */
export function loadKubeConfig(source?: { path?: string; text?: string }): KubeConfig {
  const kc = new KubeConfig();
  const from =
    source?.path ?? (source?.text !== undefined ? "the given kubeconfig" : "KUBECONFIG / ~/.kube/config");
  try {
    if (source?.text !== undefined) kc.loadFromString(source.text);
    else if (source?.path !== undefined) loadFiles(kc, source.path);
    else kc.loadFromDefault();
  } catch (err) {
    throw new UnstuckError(
      ErrorCode.Config,
      `Cannot read the Kubernetes configuration from ${from}: ${err instanceof Error ? err.message : String(err)}`,
      { variable: "KUBECONFIG" },
    );
  }
  const cluster = kc.getCurrentCluster();
  // With nothing to load, client-node falls back to a placeholder cluster on localhost.
  if (!cluster || (cluster.name === "cluster" && /^https?:\/\/localhost(:8080)?\/?$/.test(cluster.server))) {
    throw new UnstuckError(
      ErrorCode.Config,
      source?.path !== undefined || source?.text !== undefined
        ? `The Kubernetes configuration from ${from} has no usable current context (check current-context and its cluster).`
        : "No Kubernetes configuration found: set KUBECONFIG (or --kubeconfig), or run the bot in a cluster with a service account.",
      { variable: "KUBECONFIG" },
    );
  }
  return poolDispatchers(kc);
}

/** Distinct TLS identities (cluster CA, client certificate, proxy) whose connection pools are kept. */
const MAX_POOLED_DISPATCHERS = 4;
const pooled = new WeakSet<KubeConfig>();

/**
 * Keep connections alive across requests. client-node 2.0.1's `applySecurityAuthentication` builds
 * a new undici `Agent` for every request whose cluster has any TLS option (a CA, a client
 * certificate, `insecure-skip-tls-verify`) — every real cluster: each request then opens its own
 * connection (and TLS handshake), and each agent lingers with its socket until collected. This
 * keeps one agent per distinct set of dispatcher options (as `createDispatcherOptions` computes
 * them from the credentials of that request, so a rotated client certificate gets a new pool),
 * the least recently used forgotten beyond {@link MAX_POOLED_DISPATCHERS} — not closed, as a request
 * may have just been handed it: its idle sockets end on undici's keep-alive timeout, as every
 * per-request agent's did. Idempotent; a library version without the private `createDispatcher`
 * is left as it is.
 */
export function poolDispatchers(kc: KubeConfig): KubeConfig {
  if (pooled.has(kc)) return kc;
  pooled.add(kc);
  type Pooled = object | undefined;
  const target = kc as unknown as { createDispatcher?: (cluster: unknown, options: unknown) => Pooled };
  const create = target.createDispatcher;
  if (typeof create !== "function") return kc;
  const pool = new Map<string, NonNullable<Pooled>>();
  target.createDispatcher = function (this: KubeConfig, cluster: unknown, agentOptions: unknown): Pooled {
    const key = createHash("sha256")
      .update(
        JSON.stringify(
          kc.createDispatcherOptions(
            cluster as Parameters<KubeConfig["createDispatcherOptions"]>[0],
            agentOptions as Parameters<KubeConfig["createDispatcherOptions"]>[1],
          ),
        ),
      )
      .digest("base64");
    const kept = pool.get(key);
    if (kept !== undefined) {
      pool.delete(key);
      pool.set(key, kept);
      return kept;
    }
    const made = create.call(this, cluster, agentOptions);
    if (made === undefined) return made;
    pool.set(key, made);
    for (const k of pool.keys()) {
      if (pool.size <= MAX_POOLED_DISPATCHERS) break;
      pool.delete(k);
    }
    return made;
  };
  return kc;
}

/**
 * A KUBECONFIG value may list several files (`a:b`), merged in order as kubectl does; files in the
 * list that do not exist are skipped, unless none exists.
 */
function loadFiles(kc: KubeConfig, value: string): void {
  const files = value.split(delimiter).filter((f) => f.length > 0);
  const present = files.length > 1 ? files.filter((f) => existsSync(f)) : files;
  const [first, ...rest] = present.length > 0 ? present : files;
  kc.loadFromFile(first ?? value);
  for (const f of rest) {
    const more = new KubeConfig();
    more.loadFromFile(f);
    kc.mergeConfig(more, true);
  }
}

const ACCEPT_JSON = "application/json";

const gunzipAsync = promisify(gunzip);

/** Largest decompressed answer read (a list page of 500 full objects is a few MiB). */
const MAX_BODY_BYTES = 512 * 1024 * 1024;

/**
 * How long a request already sent may still finish once its caller gave it up: a healthy server's
 * answer is read to the end, so undici keeps the connection (an abort destroys the socket, and the
 * next diagnosis would pay a TLS handshake per list); a server that hangs is cut off after it.
 */
const GIVE_UP_GRACE_MS = 2_000;
const graceSignals = new WeakMap<AbortSignal, AbortSignal>();

/** `signal`, delayed by {@link GIVE_UP_GRACE_MS}: one derived signal (and one listener) per caller signal. */
function cutOffAfterGrace(signal: AbortSignal): AbortSignal {
  const known = graceSignals.get(signal);
  if (known !== undefined) return known;
  const cut = new AbortController();
  const start = (): void => {
    setTimeout(() => cut.abort(signal.reason), GIVE_UP_GRACE_MS).unref();
  };
  if (signal.aborted) start();
  else signal.addEventListener("abort", start, { once: true });
  graceSignals.set(signal, cut.signal);
  return cut.signal;
}

/** What the API server's audit log records as the bot's client for its reads. */
const USER_AGENT = "unstuck (@kubernetes/client-node; undici)";

/**
 * Metadata-only lists, as the namespace controller asks for them: finalizers, owner references
 * and deletion timestamps without spec, data or status, so the bot never holds a Secret's data
 * or a ConfigMap's payload. Plain JSON follows as the fallback for a server without it.
 */
const ACCEPT_METADATA_LIST =
  "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/** Metadata-only watch events (a watch transforms each object, not a list). */
const ACCEPT_METADATA_WATCH = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

/**
 * Aggregated discovery (kube-apiserver ≥ 1.26), in kubectl's order: every group-version's
 * resources in one document from `/api` and one from `/apis`; an older server answers the
 * plain APIVersions / APIGroupList and the bot discovers group by group.
 */
const ACCEPT_DISCOVERY =
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," +
  "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList," +
  "application/json";

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
 * Generic object access by resource path. Reads parse the body themselves ({@link getJson}): the
 * library's own processing hands any body with `apiVersion` and `kind` to its `KubernetesObject`
 * model, which re-reads `metadata` as an ObjectMeta — a list's `metadata.continue` was dropped and
 * every list ended after its first page. Errors stay the library's `ApiException`.
 */
class ResourceApi extends KubernetesObjectApi {
  /** Bound on one request (set by {@link createKubeAdapter}; the generated APIs get it from middleware). */
  public timeoutMs = DEFAULT_KUBE_TIMEOUT_MS;

  /**
   * The response body exactly as the server sent it (lists keep `metadata.continue`). `accept`
   * asks for another representation (metadata-only lists, aggregated discovery); callers read
   * the body's `kind` to see which one the server chose.
   *
   * The request is built and authenticated by the library (`applySecurityAuthentication`: the
   * kubeconfig's token, exec plugin, client certificate, CA and proxy, with the pooled dispatcher)
   * and sent with undici's `request` rather than the library's `fetch`: a diagnosis is ~170 of these
   * at once, and fetch's WHATWG streams and header objects were the largest share of the client's
   * own CPU time per diagnosis. A non-2xx answer is the library's `ApiException`, as before.
   */
  public async getJson(
    path: string,
    query: Record<string, string | undefined> = {},
    accept: string = ACCEPT_JSON,
    /** The caller giving the read up (its own bound is {@link timeoutMs}). */
    signal?: AbortSignal,
  ): Promise<Json> {
    const ctx = this.configuration.baseServer.makeRequestContext(path, HttpMethod.GET);
    ctx.setHeaderParam("Accept", accept);
    setQuery(ctx, query);
    await this.configuration.authMethods.default?.applySecurityAuthentication(ctx);
    // As fetch's Headers would: surrounding whitespace dropped (a token file read with its newline is
    // still the token; undici's request refuses such a value where fetch trimmed it).
    // gzip offered as client-go offers it: kube-apiserver compresses answers of 128 KiB and more
    // (big lists, the aggregated discovery of a CRD-heavy cluster) — what a terminal far from its
    // cluster waits on.
    const headers: Record<string, string> = { "user-agent": USER_AGENT, "accept-encoding": "gzip" };
    for (const [k, v] of Object.entries(ctx.getHeaders()))
      headers[k] = v.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
    const res = await undiciRequest(ctx.getUrl(), {
      method: "GET",
      headers,
      signal:
        signal !== undefined
          ? AbortSignal.any([AbortSignal.timeout(this.timeoutMs), cutOffAfterGrace(signal)])
          : AbortSignal.timeout(this.timeoutMs),
      ...(ctx.getDispatcher() !== undefined ? { dispatcher: ctx.getDispatcher() as Dispatcher } : {}),
    });
    const ok = res.statusCode >= 200 && res.statusCode <= 299;
    const encoding = String(res.headers["content-encoding"] ?? "")
      .trim()
      .toLowerCase();
    let text: string;
    if (encoding === "" || encoding === "identity") {
      text = await res.body.text();
    } else {
      const bytes = Buffer.from(await res.body.arrayBuffer());
      try {
        if (encoding !== "gzip" && encoding !== "x-gzip") throw new Error(`not asked for: ${encoding}`);
        text =
          bytes.length === 0
            ? ""
            : (await gunzipAsync(bytes, { maxOutputLength: MAX_BODY_BYTES })).toString("utf8");
      } catch (err) {
        const why = `a body with Content-Encoding ${encoding} that could not be decoded (${err instanceof Error ? err.message : String(err)})`;
        // An error answer keeps its status (a proxy's 503 with a broken body is still retried, a 403
        // still names RBAC); a success that cannot be read is a failure of its own.
        if (!ok)
          throw new ApiException(res.statusCode, "Unsuccessful HTTP Request", why, flatHeaders(res.headers));
        throw new UnstuckError(ErrorCode.Upstream, `The Kubernetes API answered ${path} with ${why}.`, {
          status: res.statusCode,
        });
      }
    }
    if (ok) return JSON.parse(text) as Json;
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: the text is the message
    }
    throw new ApiException(res.statusCode, "Unsuccessful HTTP Request", body, flatHeaders(res.headers));
  }

  /** A JSON patch, sent under the field manager and User-Agent of the request it carries out. */
  public async jsonPatch(path: string, ops: readonly Json[], write?: WriteContext): Promise<Json> {
    const ctx = this.configuration.baseServer.makeRequestContext(path, HttpMethod.PATCH);
    const named = writeIdentity(write);
    ctx.setHeaderParam("Accept", "application/json");
    ctx.setHeaderParam("Content-Type", "application/json-patch+json");
    ctx.setHeaderParam("User-Agent", named.userAgent);
    ctx.setQueryParam("fieldManager", named.fieldManager);
    ctx.setBody(JSON.stringify(ops));
    return (await this.requestPromise(ctx, "any")) as unknown as Json;
  }
}

/** Kubernetes refuses a field manager longer than this (or with a character that is not printable). */
export const FIELD_MANAGER_MAX_LENGTH = 128;

/**
 * The field manager and User-Agent of a write: `unstuck-<request id>` and a User-Agent naming the
 * request, so the API server's audit log (which records both) ties the write to its approval;
 * `unstuck` and the adapter's own User-Agent for a write made for no request. Anything but letters,
 * digits, `.`, `_` and `-` is dropped from the id, and the manager is cut to Kubernetes' 128 characters.
 */
export function writeIdentity(write?: WriteContext): { fieldManager: string; userAgent: string } {
  const id = (write?.requestId ?? "").replace(/[^A-Za-z0-9._-]/g, "").slice(0, FIELD_MANAGER_MAX_LENGTH - 8);
  if (id === "") return { fieldManager: "unstuck", userAgent: USER_AGENT };
  return {
    fieldManager: `unstuck-${id}`,
    userAgent: `unstuck (approval request ${id}; @kubernetes/client-node)`,
  };
}

/** undici's response headers (a repeated header is an array) as one string each, as fetch gives them. */
function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers))
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
  return out;
}

function setQuery(ctx: RequestContext, query: Record<string, string | undefined>): void {
  for (const [k, v] of Object.entries(query)) if (v !== undefined) ctx.setQueryParam(k, v);
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/**
 * `kc.makeApiClient` with one addition: every request carries an `AbortSignal` that fires after
 * `timeoutMs`. client-node 2 sends through undici's fetch, which honours the signal for the
 * connection, the headers and the body alike, so a server that stalls mid-body is cut off too
 * (the raw reads, sent with undici's request, carry the same signal: {@link ResourceApi.getJson}).
 */
function makeClient<T>(
  kc: KubeConfig,
  api: new (config: ReturnType<typeof createConfiguration>) => T,
  timeoutMs: number,
): T {
  const cluster = kc.getCurrentCluster();
  if (!cluster)
    throw new UnstuckError(ErrorCode.Config, "No active cluster in the Kubernetes configuration.");
  return new api(
    createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: kc },
      promiseMiddleware: [
        {
          pre: (ctx: RequestContext) => {
            ctx.setSignal(AbortSignal.timeout(timeoutMs));
            return Promise.resolve(ctx);
          },
          post: (res: ResponseContext) => Promise.resolve(res),
        },
      ],
    }),
  );
}

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

/** Build the adapter from a kubeconfig text or a loaded `KubeConfig`. */
export function createKubeAdapter(source: string | KubeConfig, options: KubeAdapterOptions = {}): KubePort {
  const kc = poolDispatchers(typeof source === "string" ? loadKubeConfig({ text: source }) : source);
  const server = kc.getCurrentCluster()?.server ?? "(no cluster in kubeconfig)";
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_KUBE_TIMEOUT_MS;
  const core = makeClient(kc, CoreV1Api, timeoutMs);
  const apps = makeClient(kc, AppsV1Api, timeoutMs);
  const custom = makeClient(kc, CustomObjectsApi, timeoutMs);
  const raw = makeClient(kc, ResourceApi, timeoutMs);
  raw.timeoutMs = timeoutMs;
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
      try {
        return await limiter.run(op, { retry: attempt > 1 });
      } catch (err) {
        const mapped = mapKubeError(err, ctx, server, timeoutMs);
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

  /**
   * Every page of a list (`limit` = the page size, then each `continue` token until none).
   * A token that expires between pages (410 Expired: etcd compacted the list's revision) restarts
   * the list from the beginning, as the API server's message says — the 410 also offers a token
   * that continues at a newer revision, but that list would be inconsistent. A second expiry falls
   * back to one unpaged list, as client-go's pager does, so a busy cluster cannot keep us looping.
   */
  /** Every item of a list path read as raw JSON (every page; unpaged after repeated 410s). */
  async function listPath(
    ctx: CallContext,
    path: string,
    query: Record<string, string | undefined> = {},
  ): Promise<Json[]> {
    const items = await listAll(ctx, async (cont, limit) => {
      const list = await raw.getJson(path, {
        ...query,
        limit: limit !== undefined ? String(limit) : undefined,
        continue: cont,
      });
      return {
        items: (list.items as unknown[] | undefined) ?? [],
        cont: str(obj(list.metadata).continue) || undefined,
      };
    });
    return items as Json[];
  }

  async function listAll(
    ctx: CallContext,
    page: (
      cont: string | undefined,
      limit: number | undefined,
    ) => Promise<{ items: unknown[]; cont: string | undefined }>,
  ): Promise<unknown[]> {
    for (let attempt = 1; ; attempt++) {
      const limit = attempt <= PAGED_LIST_ATTEMPTS ? pageSize : undefined;
      const items: unknown[] = [];
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
      resources.push(...toResourceTypes("", "v1", coreList.resources as unknown as Json[]));
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
      if (r.ok)
        resources.push(...toResourceTypes(t.group, t.version, r.value.resources as unknown as Json[]));
      else
        failures.push({
          groupVersion: `${t.group}/${t.version}`,
          message: r.error instanceof Error ? r.error.message : String(r.error),
        });
    });
    return { resources, failures } satisfies DiscoverySnapshot;
  }

  /**
   * Watches for the discovery cache: client-node's `Watch` (undici fetch, the kubeconfig's TLS
   * dispatcher and credentials, one JSON event per line), asking for metadata-only objects. Not
   * limited: a watch holds its connection for minutes and is not a request the API server queues.
   * client-node 2 builds the watch request through `applySecurityAuthentication` and sends the
   * context's headers, so the Accept header is set there, after the credentials.
   */
  const watchConfig = Object.create(kc) as KubeConfig;
  watchConfig.applySecurityAuthentication = async (context: RequestContext) => {
    await kc.applySecurityAuthentication(context);
    context.setHeaderParam("Accept", ACCEPT_METADATA_WATCH);
  };
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
              const controller = await new Watch(watchConfig).watch(
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
                (err: unknown) =>
                  onEnd(
                    (err as { name?: unknown } | null)?.name === "TimeoutError"
                      ? undefined
                      : (err ?? undefined),
                  ),
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
      const ops = buildAnnotationPatch(seen, key, value) as unknown as Json[];
      try {
        // One attempt, like the finalizer patch: after an ambiguous failure the caller re-reads.
        let ns: Json;
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
        const page = Array.isArray(list.items) ? (list.items as unknown[]) : [];
        return {
          // Metadata only, whichever form the server answered in.
          items: page.map((o) => ({ metadata: obj(obj(o).metadata) })),
          cont: optStr(obj(list.metadata).continue),
        };
      });
      return items.map((o) => toNamespaceSnapshot(o as Json));
    },

    async removeNamespaceAnnotation(name, key, expected, write) {
      const ctx: CallContext = { verb: "patch", resource: "namespaces", name };
      const ops = buildAnnotationRemovalIf(key, expected) as unknown as Json[];
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
      return ns ? toNamespaceSnapshot(ns as unknown as Json) : null;
    },

    async discover() {
      return cache !== undefined ? cache.get() : discoverUncached();
    },

    async listObjects(type, namespace, opts = {}) {
      const ctx: CallContext = { verb: "list", resource: type.resource, group: type.group, namespace };
      const full = FULL_OBJECT_TYPES.has(`${type.group}/${type.resource}`);
      const { signal } = opts;
      const given = (err: unknown): never => {
        // Given up, not timed out: said as such (nobody waits for this answer any more).
        if (signal?.aborted === true)
          throw new UnstuckError(ErrorCode.Upstream, `Given up: ${describeTarget(ctx)}.`, {
            verb: "list",
            resource: type.group ? `${type.resource}.${type.group}` : type.resource,
            cancelled: true,
          });
        throw err;
      };
      const items = await listAll(ctx, async (cont, limit) => {
        // Given up (before its turn in the shared bound, or between pages): nothing more is sent.
        signal?.throwIfAborted();
        const list = await raw.getJson(
          resourcePath(type, namespace),
          { limit: limit !== undefined ? String(limit) : undefined, continue: cont },
          full ? ACCEPT_JSON : ACCEPT_METADATA_LIST,
          signal,
        );
        const meta = obj(list.metadata);
        const page = Array.isArray(list.items) ? (list.items as unknown[]) : [];
        return {
          // Metadata is all the snapshot takes from these types, whichever form the server chose;
          // a server that ignored the request still leaves no spec or data held past this page.
          items: full ? page : page.map((o) => ({ metadata: obj(obj(o).metadata) })),
          cont: optStr(meta.continue),
        };
      }).catch(given);
      // A PartialObjectMetadata item says `meta.k8s.io/v1`; the snapshot names the listed type.
      return items.map((o) => toObjectSnapshot(o as Json, type));
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
      return items.map((d) => toDeploymentSnapshot(d as Json));
    },

    async listPods(namespace, labelSelector) {
      const ctx: CallContext = { verb: "list", resource: "pods", namespace };
      const items = await listAll(ctx, async (cont, limit) => {
        const list = await core.listNamespacedPod({ namespace, labelSelector, limit, _continue: cont });
        return { items: list.items, cont: list.metadata?._continue || undefined };
      });
      return items.map((p) => toPodSnapshot(p as Json));
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
      return items.map((e) => toEventSnapshot(e as Json));
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
      const ops = buildFinalizerPatch(precondition, remove) as unknown as Json[];
      try {
        // One attempt, never `call`'s retries: after a 5xx or a reset the write may have been
        // applied, and only the executor, re-reading the object, may decide what to do next.
        let obj: Json;
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

// ---------------------------------------------------------------------------------------------
// Error mapping

function bodyMessage(body: unknown): string | undefined {
  if (typeof body === "string") {
    try {
      return bodyMessage(JSON.parse(body) as unknown);
    } catch {
      return body.length > 0 ? body.slice(0, 500) : undefined;
    }
  }
  if (body && typeof body === "object" && "message" in body) {
    const status = body as Json;
    const message = typeof status.message === "string" ? status.message : JSON.stringify(status.message);
    // A generic 422 ("the server rejected our request…") carries the real reason in its causes,
    // e.g. a JSON-patch `test` that failed.
    const causes = (
      Array.isArray(obj(status.details).causes) ? (obj(status.details).causes as unknown[]) : []
    )
      .map((c) => obj(c).message)
      .filter((m): m is string => typeof m === "string" && m !== message);
    return causes.length > 0 ? `${message}: ${causes.join("; ")}` : message;
  }
  return undefined;
}

/** Socket-level failures: the API server (or the way to it) is not answering. */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "ETIMEDOUT",
  "ECONNRESET",
  "EHOSTUNREACH",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CLOSED",
]);

/** fetch and request reject with `AbortError`/`TimeoutError` when the request's signal fires (our deadline). */
function isAbort(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  const type = (err as { type?: unknown } | null)?.type;
  return name === "AbortError" || name === "TimeoutError" || type === "aborted";
}

function headerValue(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== "object") return undefined;
  for (const [k, v] of Object.entries(headers as Json)) if (k.toLowerCase() === name) return String(v);
  return undefined;
}

function describeTarget(ctx: CallContext): string {
  const res = ctx.group ? `${ctx.resource}.${ctx.group}` : ctx.resource;
  return `${ctx.verb} ${res}${ctx.namespace ? ` in namespace "${ctx.namespace}"` : ""}`;
}

/** Map a client error to a coded, user-facing error. Exported for tests. */
/**
 * A 409, or a 422 from a failed `test` operation of a JSON patch: the object moved on since it was
 * read (approved). Any other refusal (an admission webhook, validation) is what it says.
 */
function isPreconditionRefusal(err: unknown): err is UnstuckError {
  if (!(err instanceof UnstuckError)) return false;
  if (err.details.status === 409) return true;
  return (
    err.details.status === 422 && /testing value .* failed|test failed|test operation/i.test(err.message)
  );
}

export function mapKubeError(
  err: unknown,
  ctx: CallContext,
  server: string,
  timeoutMs: number = DEFAULT_KUBE_TIMEOUT_MS,
): UnstuckError {
  if (err instanceof UnstuckError) return err;
  const details = {
    verb: ctx.verb,
    resource: ctx.group ? `${ctx.resource}.${ctx.group}` : ctx.resource,
    ...(ctx.namespace !== undefined ? { namespace: ctx.namespace } : {}),
    ...(ctx.name !== undefined ? { name: ctx.name } : {}),
  };
  if (isAbort(err)) {
    // Not retried by `call`: for a write the outcome is unknown (the server may have applied it),
    // and for a read the caller's own deadline is the better judge of whether to try again.
    return new UnstuckError(
      ErrorCode.Upstream,
      `The Kubernetes API server at ${server} did not answer in time (${describeTarget(ctx)}: no answer within ${formatSeconds(timeoutMs)}).`,
      { ...details, timedOut: true, timeoutMs },
      { cause: err },
    );
  }
  if (err instanceof ApiException) {
    const status = err.code;
    const message = bodyMessage(err.body) ?? `HTTP ${status}`;
    switch (status) {
      case 401:
        return new UnstuckError(
          ErrorCode.Unauthorized,
          `The Kubernetes API rejected the bot's credentials: ${message}`,
          {
            ...details,
            status,
          },
        );
      case 403:
        return new UnstuckError(
          ErrorCode.Forbidden,
          `Missing RBAC permission: the bot cannot ${describeTarget(ctx)}. Grant verb "${ctx.verb}" on ` +
            `"${details.resource}" to the bot's service account (API server said: ${message})`,
          { ...details, status },
        );
      case 404:
        return new UnstuckError(ErrorCode.NotFound, message, { ...details, status });
      case 409:
        return new UnstuckError(ErrorCode.Conflict, message, { ...details, status });
      case 422:
        return new UnstuckError(ErrorCode.BadInput, message, { ...details, status });
      case 429: {
        const ra = Number(headerValue(err.headers, "retry-after"));
        return new UnstuckError(
          ErrorCode.Throttled,
          `The Kubernetes API is throttling requests: ${message}`,
          {
            ...details,
            status,
            ...(Number.isFinite(ra) ? { retryAfterSeconds: ra } : {}),
          },
        );
      }
      default:
        return new UnstuckError(
          ErrorCode.Upstream,
          `The Kubernetes API failed to ${describeTarget(ctx)} (HTTP ${status}): ${message}`,
          { ...details, status },
        );
    }
  }
  // undici's fetch (client-node 2's generated APIs) rejects with `TypeError: fetch failed`, the
  // socket error as its cause; undici's request (the adapter's reads) rejects with that error itself
  // (`UND_ERR_SOCKET` "other side closed", `UND_ERR_CONNECT_TIMEOUT`, …). Both are the same outage.
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  const code = (err as { code?: unknown } | null)?.code ?? cause?.code;
  const text = err instanceof Error ? err.message : String(err);
  if (typeof code === "string" && UNREACHABLE_CODES.has(code)) {
    return new UnstuckError(
      ErrorCode.Unreachable,
      `Cannot reach the Kubernetes API server at ${server} (${code.startsWith("UND_ERR_") ? `${code}: ${text}` : code}).`,
      details,
    );
  }
  if (/ECONNREFUSED|ENOTFOUND|ETIMEDOUT|socket hang up|fetch failed|network/i.test(text)) {
    return new UnstuckError(
      ErrorCode.Unreachable,
      `Cannot reach the Kubernetes API server at ${server}: ${text}`,
      details,
    );
  }
  return new UnstuckError(
    ErrorCode.Upstream,
    `Kubernetes request failed (${describeTarget(ctx)}): ${text}`,
    details,
    {
      cause: err,
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Snapshot conversion (client-node may hand back Date objects for timestamps)

function str(v: unknown): string {
  if (v instanceof Date) return v.toISOString().replace(".000Z", "Z");
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return v === undefined || v === null ? "" : JSON.stringify(v);
}

function optStr(v: unknown): string | undefined {
  const s = str(v);
  return s === "" ? undefined : s;
}

function obj(v: unknown): Json {
  return v && typeof v === "object" ? (v as Json) : {};
}

function strMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(obj(v))) out[k] = str(val);
  return out;
}

function strList(v: unknown): string[] {
  return Array.isArray(v) ? v.map(str) : [];
}

function toConditions(v: unknown): Condition[] {
  if (!Array.isArray(v)) return [];
  return v.map((c) => {
    const o = obj(c);
    const reason = optStr(o.reason);
    const message = optStr(o.message);
    const lastTransitionTime = optStr(o.lastTransitionTime);
    return {
      type: str(o.type),
      status: str(o.status),
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
      ...(lastTransitionTime ? { lastTransitionTime } : {}),
    };
  });
}

function toNamespaceSnapshot(ns: Json): NamespaceSnapshot {
  const meta = obj(ns.metadata);
  const deletionTimestamp = optStr(meta.deletionTimestamp);
  const creationTimestamp = optStr(meta.creationTimestamp);
  const uid = optStr(meta.uid);
  const resourceVersion = optStr(meta.resourceVersion);
  return {
    name: str(meta.name),
    ...(uid ? { uid } : {}),
    ...(resourceVersion ? { resourceVersion } : {}),
    phase: str(obj(ns.status).phase) || (deletionTimestamp ? "Terminating" : "Active"),
    ...(creationTimestamp ? { creationTimestamp } : {}),
    ...(deletionTimestamp ? { deletionTimestamp } : {}),
    specFinalizers: strList(obj(ns.spec).finalizers),
    finalizers: strList(meta.finalizers),
    conditions: toConditions(obj(ns.status).conditions),
    labels: strMap(meta.labels),
    annotations: strMap(meta.annotations),
  };
}

function toResourceTypes(group: string, version: string, list: readonly Json[]): ResourceType[] {
  return list
    .filter((r) => !str(r.name).includes("/"))
    .map((r) => ({
      group,
      version,
      apiVersion: group === "" ? version : `${group}/${version}`,
      kind: str(r.kind),
      resource: str(r.name),
      namespaced: r.namespaced === true,
      verbs: strList(r.verbs),
    }));
}

/** An `apidiscovery.k8s.io` `APIGroupDiscoveryList` (v2, or v2beta1 from a 1.26–1.29 server). */
function isAggregatedDiscovery(doc: Json): boolean {
  return (
    doc.kind === "APIGroupDiscoveryList" &&
    typeof doc.apiVersion === "string" &&
    doc.apiVersion.startsWith("apidiscovery.k8s.io/")
  );
}

/**
 * Resources of each group's preferred version (the first one listed that is not stale, as
 * client-go reads it), and every `Stale` group-version as a failure: kube-aggregator marks an
 * aggregated API stale when its APIService is not available, where legacy discovery answers 503.
 */
function readAggregatedDiscovery(doc: Json, resources: ResourceType[], failures: DiscoveryFailure[]): void {
  for (const item of Array.isArray(doc.items) ? doc.items.map(obj) : []) {
    const group = str(obj(item.metadata).name);
    let preferred = false;
    for (const v of Array.isArray(item.versions) ? item.versions.map(obj) : []) {
      const version = str(v.version);
      const groupVersion = group === "" ? version : `${group}/${version}`;
      if (v.freshness === "Stale") {
        failures.push({
          groupVersion,
          message: `The API server reports discovery of ${groupVersion} as stale: the aggregated API serving it is not available.`,
        });
        continue;
      }
      if (preferred) continue;
      preferred = true;
      for (const r of Array.isArray(v.resources) ? v.resources.map(obj) : []) {
        const kind = optStr(obj(r.responseKind).kind);
        if (kind === undefined) continue;
        resources.push({
          group,
          version,
          apiVersion: groupVersion,
          kind,
          resource: str(r.resource),
          namespaced: r.scope === "Namespaced",
          verbs: strList(r.verbs),
        });
      }
    }
  }
}

/** Exported for the pure tests of other modules that need realistic snapshots. */
export function toObjectSnapshot(o: Json, type: ResourceType): ObjectSnapshot {
  const meta = obj(o.metadata);
  const spec = obj(o.spec);
  const annotations = strMap(meta.annotations);
  const ingressClassName =
    optStr(spec.ingressClassName) ?? annotations["kubernetes.io/ingress.class"] ?? undefined;
  const lbIngress = obj(obj(o.status).loadBalancer).ingress;
  const hostnames = Array.isArray(lbIngress)
    ? lbIngress.map((i) => optStr(obj(i).hostname)).filter((h): h is string => h !== undefined)
    : [];
  const namespace = optStr(meta.namespace);
  const uid = optStr(meta.uid);
  const resourceVersion = optStr(meta.resourceVersion);
  const creationTimestamp = optStr(meta.creationTimestamp);
  const deletionTimestamp = optStr(meta.deletionTimestamp);
  const ruleHosts =
    type.kind === "Ingress" && Array.isArray(spec.rules)
      ? spec.rules.map((r) => optStr(obj(r).host)).filter((h): h is string => h !== undefined)
      : [];
  const servesAnyHost =
    type.kind === "Ingress" &&
    ((Array.isArray(spec.rules) && spec.rules.some((r) => optStr(obj(r).host) === undefined)) ||
      (spec.defaultBackend !== undefined && spec.defaultBackend !== null));
  return {
    apiVersion: optStr(o.apiVersion) ?? type.apiVersion,
    kind: optStr(o.kind) ?? type.kind,
    resource: type.resource,
    ...(namespace ? { namespace } : {}),
    name: str(meta.name),
    ...(uid ? { uid } : {}),
    ...(resourceVersion ? { resourceVersion } : {}),
    ...(creationTimestamp ? { creationTimestamp } : {}),
    ...(deletionTimestamp ? { deletionTimestamp } : {}),
    finalizers: strList(meta.finalizers),
    labels: strMap(meta.labels),
    annotations,
    ownerReferences: (Array.isArray(meta.ownerReferences) ? meta.ownerReferences : []).map((r) => {
      const ref = obj(r);
      const refUid = optStr(ref.uid);
      return {
        apiVersion: str(ref.apiVersion),
        kind: str(ref.kind),
        name: str(ref.name),
        ...(refUid ? { uid: refUid } : {}),
      };
    }),
    ...(ingressClassName ? { ingressClassName } : {}),
    ...(hostnames.length > 0 ? { loadBalancerHostnames: hostnames } : {}),
    ...(ruleHosts.length > 0 ? { ruleHosts } : {}),
    ...(servesAnyHost ? { servesAnyHost } : {}),
    ...(optStr(spec.type) && type.kind === "Service" ? { serviceType: optStr(spec.type) } : {}),
    ...(optStr(spec.loadBalancerClass) ? { loadBalancerClass: optStr(spec.loadBalancerClass) } : {}),
    ...(optStr(spec.targetGroupARN) ? { targetGroupArn: optStr(spec.targetGroupARN) } : {}),
  };
}

function toDeploymentSnapshot(d: Json): DeploymentSnapshot {
  const meta = obj(d.metadata);
  const spec = obj(d.spec);
  const status = obj(d.status);
  const containers = obj(obj(spec.template).spec).containers;
  const list = Array.isArray(containers) ? containers.map(obj) : [];
  return {
    namespace: str(meta.namespace),
    name: str(meta.name),
    labels: strMap(meta.labels),
    selector: strMap(obj(spec.selector).matchLabels),
    replicas: Number(spec.replicas ?? 1),
    readyReplicas: Number(status.readyReplicas ?? 0),
    availableReplicas: Number(status.availableReplicas ?? 0),
    images: list.map((c) => str(c.image)),
    args: list.flatMap((c) => [...strList(c.command), ...strList(c.args)]),
  };
}

function toPodSnapshot(p: Json): PodSnapshot {
  const meta = obj(p.metadata);
  const status = obj(p.status);
  const containers = obj(p.spec).containers;
  const conditions = toConditions(status.conditions);
  const startTime = optStr(status.startTime);
  return {
    namespace: str(meta.namespace),
    name: str(meta.name),
    labels: strMap(meta.labels),
    phase: str(status.phase),
    containers: (Array.isArray(containers) ? containers : []).map((c) => str(obj(c).name)),
    ready: conditions.some((c) => c.type === "Ready" && c.status === "True"),
    ...(startTime ? { startTime } : {}),
  };
}

function toEventSnapshot(e: Json): EventSnapshot {
  const meta = obj(e.metadata);
  const inv = obj(e.involvedObject);
  const source = obj(e.source);
  const lastTimestamp = optStr(e.lastTimestamp) ?? optStr(e.eventTime) ?? optStr(meta.creationTimestamp);
  const involvedNamespace = optStr(inv.namespace);
  const src = optStr(source.component) ?? optStr(e.reportingComponent);
  return {
    namespace: str(meta.namespace),
    type: str(e.type),
    reason: str(e.reason),
    message: str(e.message),
    count: Number(e.count ?? 1),
    involvedKind: str(inv.kind),
    involvedName: str(inv.name),
    ...(involvedNamespace ? { involvedNamespace } : {}),
    ...(lastTimestamp ? { lastTimestamp } : {}),
    ...(src ? { source: src } : {}),
  };
}

function toApiServiceSnapshot(a: Json): ApiServiceSnapshot {
  const meta = obj(a.metadata);
  const spec = obj(a.spec);
  const svc = spec.service === null || spec.service === undefined ? undefined : obj(spec.service);
  const port = svc?.port === undefined ? undefined : Number(svc.port);
  return {
    name: str(meta.name),
    group: str(spec.group),
    version: str(spec.version),
    ...(svc
      ? {
          service: {
            namespace: str(svc.namespace),
            name: str(svc.name),
            ...(port !== undefined && Number.isFinite(port) ? { port } : {}),
          },
        }
      : {}),
    conditions: toConditions(obj(a.status).conditions),
  };
}

/**
 * Distinct addresses across a Service's EndpointSlices (an address may appear in two slices while
 * they are rebalanced). `conditions.ready` unset means ready, as the EndpointSlice API defines it.
 */
function countSliceEndpoints(slices: readonly Json[]): { ready: number; notReady: number } {
  const ready = new Set<string>();
  const notReady = new Set<string>();
  for (const s of slices) {
    const endpoints = Array.isArray(s.endpoints) ? s.endpoints.map(obj) : [];
    for (const e of endpoints) {
      const isReady = obj(e.conditions).ready !== false;
      for (const addr of strList(e.addresses)) (isReady ? ready : notReady).add(addr);
    }
  }
  for (const a of ready) notReady.delete(a);
  return { ready: ready.size, notReady: notReady.size };
}

function countEndpoints(ep: Json | null): { ready: number; notReady: number } {
  const subsets = Array.isArray(ep?.subsets) ? ep.subsets.map(obj) : [];
  const ips = (list: unknown) => (Array.isArray(list) ? list.map((a) => str(obj(a).ip)) : []);
  return {
    ready: new Set(subsets.flatMap((s) => ips(s.addresses))).size,
    notReady: new Set(subsets.flatMap((s) => ips(s.notReadyAddresses))).size,
  };
}

/** An Argo CD Application as the ownership check reads it. */
export function toArgoApplicationSnapshot(a: Json): ArgoApplicationSnapshot {
  const meta = obj(a.metadata);
  const spec = obj(a.spec);
  const status = obj(a.status);
  const automated = spec.syncPolicy !== undefined ? obj(obj(spec.syncPolicy).automated) : undefined;
  const destNs = optStr(obj(spec.destination).namespace);
  return {
    namespace: str(meta.namespace),
    name: str(meta.name),
    ...(destNs ? { destinationNamespace: destNs } : {}),
    resources: (Array.isArray(status.resources) ? status.resources : []).map((r) => {
      const x = obj(r);
      const ns = optStr(x.namespace);
      return { group: str(x.group), kind: str(x.kind), ...(ns ? { namespace: ns } : {}), name: str(x.name) };
    }),
    conditions: (Array.isArray(status.conditions) ? status.conditions : []).map((c) => {
      const x = obj(c);
      const message = optStr(x.message);
      return { type: str(x.type), ...(message ? { message } : {}) };
    }),
    automated: automated !== undefined && obj(obj(spec.syncPolicy)).automated !== undefined,
    prune: automated?.prune === true,
    selfHeal: automated?.selfHeal === true,
  };
}
