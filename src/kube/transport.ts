/**
 * Transport: how a request reaches the API server. Owns authentication (the kubeconfig's token,
 * exec plugin, client certificate, CA, TLS server name and proxy, applied to every request), the
 * per-request deadline, the requests themselves — reads, plain-text logs and JSON patches, sent
 * by `./wire.ts` (gzip, the caller's give-up signal) — the identity a write carries, and the
 * configuration of watches. Connections come from `./pool.ts`; mapping failures to
 * `UnstuckError` is `./errors.ts`'s.
 *
 * What of client-node is used: `KubeConfig` (loading, credentials, TLS material), `Watch` and
 * `ApiException`, all public API; never its generated API clients (see {@link ResourceApi}) and
 * nothing patched. Its `applySecurityAuthentication` builds a new undici `Agent` for every request
 * to a cluster with any TLS option — every real cluster — so each request would open its own
 * connection and TLS handshake; `applyToHTTPSOptions` resolves the credentials,
 * `createDispatcherOptions` says which connection they need, the connection itself is ours
 * (`./pool.ts`), and {@link KubeAuth} applies both to a request: ours (Node's own client, or undici
 * through a proxy), and a watch's (undici's fetch) through a `KubeConfig` subclass overriding the
 * public `applySecurityAuthentication`.
 */
import type { AgentOptions, RequestOptions } from "node:https";
import { promisify } from "node:util";
import { gunzip, gunzipSync, type ZlibOptions } from "node:zlib";
import {
  ApiException,
  type Cluster,
  KubeConfig,
  type RequestContext,
  type User,
  Watch,
} from "@kubernetes/client-node";
import type { Dispatcher } from "undici";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { Json } from "./decode.js";
import { poolFor, type Connection, type ConnectionPool } from "./pool.js";
import { exchange, MAX_BODY_BYTES, type Answer } from "./wire.js";
import type { WriteContext } from "./port.js";
import type { OpenWatch } from "./watch-loop.js";

/** Default per-request deadline: generous for a healthy API server, short enough to answer in Slack. */
export const DEFAULT_KUBE_TIMEOUT_MS = 10_000;

export const ACCEPT_JSON = "application/json";

/**
 * Metadata-only lists, as the namespace controller asks for them: finalizers, owner references
 * and deletion timestamps without spec, data or status, so the bot never holds a Secret's data
 * or a ConfigMap's payload. Plain JSON follows as the fallback for a server without it.
 */
export const ACCEPT_METADATA_LIST =
  "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/** Metadata-only watch events (a watch transforms each object, not a list). */
export const ACCEPT_METADATA_WATCH =
  "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

/**
 * Aggregated discovery (kube-apiserver ≥ 1.26), in kubectl's order: every group-version's
 * resources in one document from `/api` and one from `/apis`; an older server answers the
 * plain APIVersions / APIGroupList and the bot discovers group by group.
 */
export const ACCEPT_DISCOVERY =
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," +
  "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList," +
  "application/json";

/** What the API server's audit log records as the bot's client for its reads. */
const USER_AGENT = "unstuck (@kubernetes/client-node; undici)";

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

/** What a watch's credentials are set on: client-node's `RequestContext`. */
export interface AuthTarget {
  setHeaderParam(key: string, value: string): void;
  setDispatcher(dispatcher: Dispatcher): void;
}

/**
 * A kubeconfig's credentials on a request, as client-node's own `applySecurityAuthentication`
 * sets them (Basic auth, then the token or exec plugin's headers, `Impersonate-User`), with a
 * pooled connection for the request's TLS options instead of a new one per request.
 */
export class KubeAuth {
  constructor(
    private readonly kc: KubeConfig,
    private readonly pool: ConnectionPool,
  ) {}

  /** The headers and pooled connection of one of the adapter's requests. */
  async connect(): Promise<{ headers: Record<string, string>; connection: Connection }> {
    const { cluster, headers, tls } = await this.credentials();
    return { headers, connection: await this.pool.connectionFor(cluster, tls) };
  }

  /** Sets the credentials' headers and undici dispatcher on a watch's `context`. */
  async authenticate(context: AuthTarget): Promise<void> {
    const { cluster, headers, tls } = await this.credentials();
    for (const [key, value] of Object.entries(headers)) context.setHeaderParam(key, value);
    const dispatcher = await this.pool.dispatcherFor(cluster, tls);
    if (dispatcher !== undefined) context.setDispatcher(dispatcher);
  }

  /** The credentials being read, shared by every request that asks meanwhile. */
  private reading: Promise<Credentials> | undefined;

  /**
   * The credentials of a request. Requests that ask while they are read share that read: an exec
   * plugin (`aws eks get-token`, a second of its own start-up) runs once for a burst of requests,
   * not once for each of those a cold command sends at once.
   */
  private credentials(): Promise<Credentials> {
    return (this.reading ??= this.readCredentials().finally(() => {
      this.reading = undefined;
    }));
  }

  private async readCredentials(): Promise<Credentials> {
    const cluster = this.kc.getCurrentCluster();
    const user = this.kc.getCurrentUser();
    // Public: the credentials and TLS material as https options (it also keeps one unused
    // `https.Agent` per cluster and user in the KubeConfig's own cache; it never connects).
    const options: RequestOptions = {};
    try {
      await this.kc.applyToHTTPSOptions(options);
    } catch (err) {
      throw credentialsError(user, err);
    }
    const headers: Record<string, string> = {};
    if (user?.username)
      headers.Authorization = `Basic ${Buffer.from(`${user.username}:${String(user.password)}`).toString("base64")}`;
    for (const [key, value] of Object.entries(options.headers ?? {})) headers[key] = String(value);
    return { cluster, headers, tls: tlsOptions(options) };
  }
}

/**
 * The kubeconfig's user had no credentials to give: an exec plugin that failed (`aws eks get-token`
 * with an expired SSO session) or could not be started, an auth provider that refused. Named with
 * the plugin and what it said, so the operator knows to log in again rather than look at the cluster.
 */
function credentialsError(user: User | null, err: unknown): UnstuckError {
  // Both are untyped in client-node (its `User`): read as the shapes it runs.
  const exec = user?.exec as { command?: unknown } | undefined;
  const provider = user?.authProvider as { config?: { exec?: { command?: unknown } } } | undefined;
  const command = exec?.command ?? provider?.config?.exec?.command;
  const said = (err instanceof Error ? err.message : String(err)).trim() || "it said nothing";
  const what =
    typeof command === "string" && command !== ""
      ? `its credentials plugin \`${command}\` failed`
      : "its credentials could not be read";
  return new UnstuckError(
    ErrorCode.Upstream,
    `The kubeconfig's user ${user?.name ?? "(none)"}: ${what}: ${said}`,
    {},
    { cause: err },
  );
}

interface Credentials {
  readonly cluster: Cluster | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly tls: AgentOptions;
}

/** The TLS options of a request, copied from its https options as client-node copies them. */
function tlsOptions(options: RequestOptions): AgentOptions {
  const agentOptions: AgentOptions = {
    ca: options.ca,
    cert: options.cert,
    key: options.key,
    pfx: options.pfx,
    passphrase: options.passphrase,
  };
  if (options.rejectUnauthorized !== undefined) agentOptions.rejectUnauthorized = options.rejectUnauthorized;
  if (options.servername !== undefined) agentOptions.servername = options.servername;
  return agentOptions;
}

const auths = new WeakMap<KubeConfig, KubeAuth>();

/** The authentication of a kubeconfig's requests (one per `KubeConfig`, so one connection pool). */
export function kubeAuth(kc: KubeConfig): KubeAuth {
  let auth = auths.get(kc);
  if (auth === undefined) {
    auth = new KubeAuth(kc, poolFor(kc));
    auths.set(kc, auth);
  }
  return auth;
}

/**
 * What client-node's `Watch` is given: it reads the current cluster and authenticates its request
 * through `applySecurityAuthentication`, then sends the request's headers — so `accept` is set there,
 * after the credentials, and the User-Agent every other request of ours carries (the API server's
 * audit log names a watch's client by it; fetch's own is `undici`).
 */
class WatchConfig extends KubeConfig {
  constructor(
    private readonly source: KubeConfig,
    private readonly accept: string,
  ) {
    super();
  }

  override getCurrentCluster(): Cluster | null {
    return this.source.getCurrentCluster();
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await kubeAuth(this.source).authenticate(context);
    context.setHeaderParam("Accept", this.accept);
    context.setHeaderParam("User-Agent", USER_AGENT);
  }
}

/** A `KubeConfig` for client-node's `Watch`: `kc`'s cluster and pooled credentials, asking for `accept`. */
export function watchConfig(kc: KubeConfig, accept: string): KubeConfig {
  return new WatchConfig(kc, accept);
}

/**
 * A watch of `path` (with bookmarks) through client-node's `Watch`, with `kc`'s credentials and
 * `accept` (see {@link watchConfig}), each event's object as a record.
 */
export function openWatch(kc: KubeConfig, accept: string, path: string): OpenWatch {
  const config = watchConfig(kc, accept);
  return async (resourceVersion, timeoutSeconds, onEvent, onEnd) => {
    const controller = await new Watch(config).watch(
      path,
      { allowWatchBookmarks: true, timeoutSeconds, ...(resourceVersion !== "" ? { resourceVersion } : {}) },
      (type: string, object: unknown) =>
        onEvent({
          type,
          object: object !== null && typeof object === "object" ? (object as Record<string, unknown>) : {},
        }),
      // client-node 2 aborts a watch after 30 s without data (TimeoutError): on a quiet cluster
      // that is the normal end of a watch, resumed from its resourceVersion at once (the 30 s
      // already waited rules out a tight loop), not a failure to back off.
      (err: unknown) =>
        onEnd((err as { name?: unknown } | null)?.name === "TimeoutError" ? undefined : (err ?? undefined)),
    );
    return () => controller.abort();
  };
}

/** `zlib`'s gunzip as a promise, made when the first compressed answer arrives (zlib loads then; see deploy/build.ts). */
let gunzipped: ((body: Buffer, options: ZlibOptions) => Promise<Buffer>) | undefined;
const gunzipAsync = (body: Buffer, options: ZlibOptions): Promise<Buffer> =>
  (gunzipped ??= promisify(gunzip))(body, options);

/**
 * The largest compressed body gunzipped in place rather than in libuv's thread pool. A list page
 * (500 objects, tens of KiB compressed) takes about a millisecond, less than parsing its JSON,
 * which is in place anyway; in the pool its completion waited its turn behind every other answer
 * of a diagnosis's 130 lists, and the list's next page was asked for only then (~130 ms later on
 * a busy cold CLI). A bigger body still goes to the pool, so the event loop is not held long.
 */
const IN_PLACE_GUNZIP_BYTES = 1024 * 1024;

/** Response headers (a repeated header is an array) as one string each, as fetch gives them. */
function flatHeaders(headers: Answer["headers"]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers))
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
  return out;
}

/** A request as {@link ResourceApi.send} takes it. */
interface Outgoing {
  readonly method: "GET" | "PATCH";
  readonly path: string;
  readonly query?: Record<string, string | undefined>;
  readonly accept: string;
  readonly userAgent?: string;
  readonly contentType?: string;
  readonly body?: string;
}

/**
 * Object access by resource path, with the kubeconfig's server and pooled credentials: every read
 * and write the adapter makes. A request is authenticated by {@link KubeAuth} (the pooled
 * connection) and sent by `./wire.ts`; the answer is read here, not by the library's
 * generated clients — their model classes (~1,000 modules) and serializer were the larger part of
 * a cold CLI's start-up and of a diagnosis's CPU, and their list processing once dropped a list's
 * `metadata.continue`. A non-2xx answer rejects with the library's `ApiException`, the status, the
 * body (parsed when it is JSON) and the headers, as its own requests reject; `./errors.ts` maps it.
 */
export class ResourceApi {
  private readonly server: string;
  private readonly auth: KubeAuth;

  constructor(
    kc: KubeConfig,
    /** Bound on one request, body included: a server that stalls mid-body is cut off too. */
    private readonly timeoutMs: number = DEFAULT_KUBE_TIMEOUT_MS,
  ) {
    const cluster = kc.getCurrentCluster();
    if (!cluster)
      throw new UnstuckError(ErrorCode.Config, "No active cluster in the Kubernetes configuration.");
    this.server = cluster.server.replace(/\/+$/, "");
    this.auth = kubeAuth(kc);
  }

  /**
   * The response body exactly as the server sent it (lists keep `metadata.continue`). `accept`
   * asks for another representation (metadata-only lists, aggregated discovery); callers read
   * the body's `kind` to see which one the server chose.
   */
  public async getJson(
    path: string,
    query: Record<string, string | undefined> = {},
    accept: string = ACCEPT_JSON,
  ): Promise<Json> {
    return JSON.parse(await this.send({ method: "GET", path, query, accept })) as Json;
  }

  /** A plain-text answer (a container's log). */
  public async getText(path: string, query: Record<string, string | undefined> = {}): Promise<string> {
    return this.send({ method: "GET", path, query, accept: "text/plain, */*" });
  }

  /** A JSON patch, sent under the field manager and User-Agent of the request it carries out. */
  public async jsonPatch(path: string, ops: readonly object[], write?: WriteContext): Promise<Json> {
    const named = writeIdentity(write);
    const text = await this.send({
      method: "PATCH",
      path,
      query: { fieldManager: named.fieldManager },
      accept: ACCEPT_JSON,
      userAgent: named.userAgent,
      contentType: "application/json-patch+json",
      body: JSON.stringify(ops),
    });
    return JSON.parse(text) as Json;
  }

  /**
   * One request; its 2xx body as text. A diagnosis is ~170 of these at once: Node's own client (or
   * undici's `request` through a proxy, `./wire.ts`) rather than `fetch`, whose WHATWG streams and
   * header objects were the largest share of the client's own CPU per diagnosis.
   */
  private async send(req: Outgoing): Promise<string> {
    const url = new URL(this.server + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const { headers: auth, connection } = await this.auth.connect();
    // gzip offered as client-go offers it: kube-apiserver compresses answers of 128 KiB and more
    // (big lists, the aggregated discovery of a CRD-heavy cluster) — what a terminal far from its
    // cluster waits on.
    const headers: Record<string, string> = {
      "user-agent": req.userAgent ?? USER_AGENT,
      "accept-encoding": "gzip",
      accept: req.accept,
      ...(req.contentType !== undefined ? { "content-type": req.contentType } : {}),
    };
    // As fetch's Headers would: surrounding whitespace dropped (a token file read with its newline is
    // still the token; Node's and undici's clients refuse such a value where fetch trimmed it).
    for (const [k, v] of Object.entries(auth)) headers[k] = v.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
    const res = await exchange(connection, {
      url,
      method: req.method,
      headers,
      signal: AbortSignal.timeout(this.timeoutMs),
      ...(req.body !== undefined ? { body: req.body } : {}),
    });
    const ok = res.statusCode >= 200 && res.statusCode <= 299;
    const text = await bodyText(res, ok, req.path);
    if (ok) return text;
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: the text is the message
    }
    throw new ApiException(res.statusCode, "Unsuccessful HTTP Request", body, flatHeaders(res.headers));
  }
}

/** An answer's body as text, gunzipped when the server compressed it (bounded by {@link MAX_BODY_BYTES}). */
async function bodyText(res: Answer, ok: boolean, path: string): Promise<string> {
  const encoding = String(res.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  if (encoding === "" || encoding === "identity") return res.body.toString("utf8");
  try {
    if (encoding !== "gzip" && encoding !== "x-gzip") throw new Error(`not asked for: ${encoding}`);
    return res.body.length === 0
      ? ""
      : (res.body.length <= IN_PLACE_GUNZIP_BYTES
          ? gunzipSync(res.body, { maxOutputLength: MAX_BODY_BYTES })
          : await gunzipAsync(res.body, { maxOutputLength: MAX_BODY_BYTES })
        ).toString("utf8");
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
