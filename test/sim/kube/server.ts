/**
 * The HTTP face of the simulator: routing of the Kubernetes REST paths, discovery, OpenAPI,
 * content negotiation (JSON or Table), watches, pod logs, and the fault/RBAC layer that sits in
 * front of resource requests only (discovery, /version and /openapi are never faulted, so a
 * fault test exercises the bot's handling of API calls, not kubectl's discovery retries).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { posix } from "node:path";
import { gzipSync } from "node:zlib";
import { setTimeout as delay } from "node:timers/promises";
import { parse as parseYaml } from "yaml";

import { aggregatedDiscovery, apiVersionOf, resourceList, typeKey, type ResourceDef } from "./registry.js";
import { isRecord, type KubeObject } from "./object.js";
import { compileSelectors, supportedFieldSelectors } from "./selectors.js";
import { jsonPatch, mergePatch, strategicMergePatch } from "./patch.js";
import {
  KubeApiError,
  badRequest,
  internalError,
  invalid,
  methodNotSupported,
  rbacForbidden,
  statusBody,
  tooManyRequests,
  type FieldError,
} from "./status.js";
import { openApiGroupVersion, openApiIndex } from "./openapi.js";
import { toTable } from "./table.js";
import type { DeleteOptions, PropagationPolicy, SimStore, StoreEvent } from "./store.js";
import type { LogStore } from "./logs.js";
import type { RbacRequest } from "./rbac.js";

/** One RBAC denial rule; omitted fields match anything. */
export interface ForbidRule {
  verb: string;
  resource: string;
  group?: string;
  namespace?: string;
  /** Only this user (default: every user). */
  user?: string;
}

/**
 * Faults injected in front of resource requests. `setFaults` replaces the whole set.
 */
export interface KubeFaults {
  /** Added to every request, discovery included (ms). */
  latencyMs?: number;
  /** Fraction (0–1) of resource requests answered 500 InternalError. */
  errorRate?: number;
  /**
   * The next `count` resource requests (or a `rate` fraction of them) are answered 429 with
   * `Retry-After: retryAfterSeconds` (default 1).
   */
  throttle?: { count?: number; retryAfterSeconds?: number; rate?: number };
  /** Group-versions whose discovery answers 503, e.g. `metrics.k8s.io/v1beta1`. */
  failingGroups?: string[];
  /** RBAC denials: matching requests get the real 403 Forbidden Status. */
  forbid?: ForbidRule[];
  /**
   * Lost response after apply: the next `count` (default 1) matching requests (default method
   * PATCH) are applied as usual, then the answer is replaced by a 500 InternalError (`mode`
   * "500", the default) or the connection is dropped (`mode` "reset"). A request the server
   * refuses (4xx) is answered normally: only applied writes lose their answer. With `apply`
   * false the request is answered 500 without being applied (an ambiguous failure whose write
   * did not happen).
   */
  lostResponse?: {
    method?: string;
    pathPrefix?: string;
    count?: number;
    mode?: "500" | "reset";
    apply?: boolean;
  };
  /**
   * Requests accepted and never answered (until the client gives up or the server stops): an API
   * server behind a stuck load balancer or an overloaded etcd. Every request matches when no
   * field is set; discovery and `/version` hang too when their paths match. `path` is one exact
   * path (a list, not the objects under it).
   */
  hang?: { pathPrefix?: string; path?: string; method?: string };
}

/** How many requests each `lostResponse` fault (by identity) has taken so far. */
const lostResponsesTaken = new WeakMap<object, number>();

/** Whether this request's answer is to be lost (consumes one unit of the fault's budget). */
function takeLostResponse(faults: KubeFaults, method: string, path: string): "500" | "reset" | undefined {
  const f = faults.lostResponse;
  if (f === undefined) return undefined;
  if ((f.method ?? "PATCH").toUpperCase() !== method.toUpperCase()) return undefined;
  if (f.pathPrefix !== undefined && !path.startsWith(f.pathPrefix)) return undefined;
  const taken = lostResponsesTaken.get(f) ?? 0;
  if (taken >= (f.count ?? 1)) return undefined;
  lostResponsesTaken.set(f, taken + 1);
  return f.mode ?? "500";
}

/** Whether a request falls under the `hang` fault. */
function hangs(faults: KubeFaults, method: string, path: string): boolean {
  const h = faults.hang;
  if (h === undefined) return false;
  if (h.method !== undefined && h.method.toUpperCase() !== method.toUpperCase()) return false;
  if (h.path !== undefined && path !== h.path) return false;
  return h.pathPrefix === undefined || path.startsWith(h.pathPrefix);
}

/** One served request, for tests and benchmarks that count calls. */
export interface RequestRecord {
  method: string;
  path: string;
  query: string;
  status: number;
  user: string;
  /** The request's `Accept` header ("" when none): which representation the client asked for. */
  accept: string;
  /** The request's `User-Agent` header ("" when none), as kube-apiserver's audit log records it. */
  userAgent: string;
  /** The answer's `Content-Type` ("" when none was sent). */
  contentType: string;
  /**
   * Which representation the server chose (`PartialObjectMetadataList`, `Table`,
   * `APIGroupDiscoveryList`, …; "" for the plain object): what the server's handler knows and a
   * client reads from the body's `kind`, since the header says only `application/json`.
   */
  served: string;
  /** When the request arrived and when its answer was finished (`performance.now()`, ms). */
  startedAt: number;
  finishedAt: number;
}

export interface ServerContext {
  store: SimStore;
  logs: LogStore;
  faults: () => KubeFaults;
  /** Consumes one unit of the throttle budget; true when this request is to be throttled. */
  takeThrottle: () => boolean;
  record: (r: RequestRecord) => void;
  userForToken: (token: string | undefined) => string | undefined;
  now: () => Date;
  hostPort: () => string;
  /** Open watch responses, ended on stop. */
  watches: Set<ServerResponse>;
  /** Period of `BOOKMARK` events on a watch that asked for them (`allowWatchBookmarks=true`). */
  bookmarkIntervalMs: number;
  /** With RBAC on: whether it allows a resource request (undefined: every request is allowed). */
  authorize?: (r: RbacRequest) => boolean;
}

const VERSION_INFO = {
  major: "1",
  minor: "32",
  emulationMajor: "1",
  emulationMinor: "32",
  minCompatibilityMajor: "1",
  minCompatibilityMinor: "31",
  gitVersion: "v1.32.3-sim",
  gitCommit: "0000000000000000000000000000000000000000",
  gitTreeState: "clean",
  buildDate: "2025-03-01T00:00:00Z",
  goVersion: "go1.23.6",
  compiler: "gc",
  platform: "linux/amd64",
};

/**
 * kube-apiserver's response compression (APIResponseCompression, on by default): a body of 128 KiB
 * or more goes out gzip-encoded when the request's Accept-Encoding offers gzip, with
 * `Content-Encoding: gzip` and `Vary: Accept-Encoding`; smaller ones as they are.
 */
const GZIP_THRESHOLD_BYTES = 128 * 1024;

function endBody(res: ServerResponse, code: number, text: string): void {
  const accepts = (res.req.headers["accept-encoding"] ?? "")
    .split(",")
    // The exact token, as kube-apiserver matches it (`gzip;q=0` and `*` are not an offer of gzip).
    .some((e) => e.trim().toLowerCase() === "gzip");
  if (accepts && Buffer.byteLength(text) >= GZIP_THRESHOLD_BYTES) {
    res.setHeader("Content-Encoding", "gzip");
    res.setHeader("Vary", "Accept-Encoding");
    res.writeHead(code);
    res.end(gzipSync(text, { level: 1 }));
    return;
  }
  res.writeHead(code);
  res.end(text);
}

function send(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  // Set, not passed to writeHead, so that the request log can read the Content-Type back.
  const all: Record<string, string> = {
    "Content-Type": typeof body === "string" ? "text/plain; charset=utf-8" : "application/json",
    "Cache-Control": "no-cache, private",
    ...headers,
  };
  for (const [k, v] of Object.entries(all)) res.setHeader(k, v);
  endBody(res, code, text);
}

/** A JSON answer already serialized (lists assembled from their items' kept text). */
function sendJsonText(
  res: ServerResponse,
  code: number,
  text: string,
  contentType = "application/json",
): void {
  res.setHeader("Content-Type", contentType);
  res.setHeader("Cache-Control", "no-cache, private");
  endBody(res, code, text);
}

function sendError(res: ServerResponse, err: KubeApiError, headers: Record<string, string> = {}): void {
  send(res, err.code, err.toStatus(), headers);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function parseBody(text: string, contentType: string | undefined): unknown {
  if (text.trim() === "") return undefined;
  if (contentType?.includes("protobuf") === true || contentType?.includes("cbor") === true) {
    // Typed clients (e.g. `kubectl create namespace`) send protobuf; this server speaks JSON/YAML only.
    throw new KubeApiError(
      415,
      "UnsupportedMediaType",
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`,
    );
  }
  try {
    if (contentType?.includes("yaml") === true) return parseYaml(text) as unknown;
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw badRequest(
      `couldn't get version/kind; json parse error: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}

interface ResourceRoute {
  def: ResourceDef;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

/** The RBAC verb of a request. */
function verbOf(method: string, route: ResourceRoute, watch: boolean): string {
  const item = route.name !== undefined;
  switch (method) {
    case "GET":
      return watch ? "watch" : item ? "get" : "list";
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return item ? "delete" : "deletecollection";
    default:
      return method.toLowerCase();
  }
}

function matchRule(rule: ForbidRule, user: string, verb: string, route: ResourceRoute): boolean {
  const res =
    route.subresource !== undefined ? `${route.def.resource}/${route.subresource}` : route.def.resource;
  return (
    (rule.verb === "*" || rule.verb === verb) &&
    (rule.resource === "*" || rule.resource === res) &&
    (rule.group === undefined || rule.group === "*" || rule.group === route.def.group) &&
    (rule.namespace === undefined || rule.namespace === route.namespace) &&
    (rule.user === undefined || rule.user === user)
  );
}

/**
 * Continue tokens as kube-apiserver's storage layer writes them: unpadded base64url of
 * `{"v":"meta.k8s.io/v1","rv":<revision>,"start":"<last key served>\u0000"}`, the key relative to
 * the listed collection's etcd prefix (`name` in one namespace, `namespace/name` across them).
 * Clients must treat it as opaque; the simulator only needs the same shape and the same errors.
 */
const CONTINUE_VERSION = "meta.k8s.io/v1";

/** The real 410 message for a continue token whose revision has been compacted. */
const INCONSISTENT_CONTINUE =
  "The provided continue parameter is too old to display a consistent list result. You can start a new " +
  "list without the continue parameter, or use the continue token in this response to retrieve the " +
  "remainder of the results. Continuing with the provided token results in an inconsistent list - " +
  "objects that were created, modified, or deleted between the time the first chunk was returned and " +
  "now may show up in the list.";

function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: CONTINUE_VERSION, rv, start }), "utf8").toString("base64url");
}

/** Decode as `storage.DecodeContinue` does; every failure is the real 400 "invalid continue token". */
function decodeContinue(token: string): { rv: number; start: string } {
  const invalid = (why: string) => badRequest(`invalid continue token: continue key is not valid${why}`);
  // Go's RawURLEncoding refuses padding and any byte outside the URL alphabet (Node ignores them).
  const bad = token.search(/[^A-Za-z0-9_-]/);
  if (bad >= 0 || token.length % 4 === 1) {
    throw invalid(`: illegal base64 data at input byte ${bad >= 0 ? bad : token.length - 1}`);
  }
  const text = Buffer.from(token, "base64url").toString("utf8");
  let c: unknown;
  try {
    c = JSON.parse(text);
  } catch {
    const first = text.trimStart()[0];
    throw invalid(
      first === undefined || first === "{"
        ? ": unexpected end of JSON input"
        : `: invalid character '${first}' looking for beginning of value`,
    );
  }
  const v = isRecord(c) ? c : {};
  if (v.v !== CONTINUE_VERSION) {
    throw invalid(`: server does not recognize this encoded version ${typeof v.v === "string" ? v.v : ""}`);
  }
  const rv = typeof v.rv === "number" && Number.isInteger(v.rv) ? v.rv : 0;
  if (rv === 0) throw invalid(`: incorrect encoded start resourceVersion (version ${CONTINUE_VERSION})`);
  const start = typeof v.start === "string" ? v.start : "";
  if (start === "") throw invalid(`: encoded start key empty (version ${CONTINUE_VERSION})`);
  // The API server refuses a start key that would leave the listed prefix (path traversal).
  const key = start.startsWith("/") ? start : `/${start}`;
  if (posix.normalize(key).replace(/(.)\/$/, "$1") !== key) throw invalid(`: ${start}`);
  return { rv, start: key.slice(1) };
}

/** An object's key relative to the listed collection, in the store's (etcd's) key order. */
function listKey(def: ResourceDef, namespace: string | undefined, o: KubeObject): string {
  const name = o.metadata?.name ?? "";
  return namespace !== undefined || !def.namespaced ? name : `${o.metadata?.namespace ?? ""}/${name}`;
}

/** List items of built-in types carry no kind/apiVersion on the wire; custom ones do. */
function listItem(d: ResourceDef, o: KubeObject): KubeObject {
  if (d.custom) return o;
  const c = { ...o };
  delete c.apiVersion;
  delete c.kind;
  return c;
}

/**
 * The representations a path can answer with besides plain JSON: `meta.k8s.io` transforms of
 * resources (Table, PartialObjectMetadata[List]) and aggregated discovery documents.
 */
type Transform =
  | "Table"
  | "PartialObjectMetadata"
  | "PartialObjectMetadataList"
  | "APIGroupDiscoveryList/v2"
  | "APIGroupDiscoveryList/v2beta1";

const RESOURCE_TRANSFORMS: readonly Transform[] = [
  "Table",
  "PartialObjectMetadata",
  "PartialObjectMetadataList",
];
const DISCOVERY_TRANSFORMS: readonly Transform[] = [
  "APIGroupDiscoveryList/v2",
  "APIGroupDiscoveryList/v2beta1",
];

/** The media types the real server names in a 406 (JSON is all the simulator writes). */
const NOT_ACCEPTABLE =
  "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf";

/**
 * Content negotiation as kube-apiserver does it: the first `Accept` clause the endpoint can serve
 * wins (clauses are tried in order; `q=0` refuses). A clause without `as=` is plain JSON; one with
 * an `as=`/`g=`/`v=` the endpoint does not serve is skipped, and when nothing is left the answer is
 * 406 NotAcceptable. `undefined` = plain JSON.
 */
function negotiate(req: IncomingMessage, offered: readonly Transform[]): Transform | undefined {
  const header = req.headers.accept ?? "";
  if (header.trim() === "") return undefined;
  for (const clause of header.split(",")) {
    const [type = "", ...rest] = clause.split(";").map((x) => x.trim());
    const params = new Map<string, string>();
    for (const kv of rest) {
      const i = kv.indexOf("=");
      if (i > 0) params.set(kv.slice(0, i).trim().toLowerCase(), kv.slice(i + 1).trim());
    }
    if (params.get("q") === "0" || type === "") continue;
    const as = params.get("as");
    if (as === undefined) return undefined;
    if (!["application/json", "application/*", "*/*"].includes(type.toLowerCase())) continue;
    const g = params.get("g");
    const v = params.get("v");
    const t: Transform | undefined =
      g === "meta.k8s.io" && (v === "v1" || v === "v1beta1") && RESOURCE_TRANSFORMS.includes(as as Transform)
        ? (as as Transform)
        : g === "apidiscovery.k8s.io" && as === "APIGroupDiscoveryList" && (v === "v2" || v === "v2beta1")
          ? (`APIGroupDiscoveryList/${v}` as const)
          : undefined;
    if (t !== undefined && offered.includes(t)) return t;
  }
  throw new KubeApiError(406, "NotAcceptable", NOT_ACCEPTABLE);
}

/**
 * The `Content-Type` the real server writes for a transformed answer: only aggregated discovery
 * names what it is in the header; a Table or PartialObjectMetadata(List) is plain
 * `application/json` (the handlers write it without the list's kind), and says what it is in its
 * body's `kind`.
 */
function transformContentType(t: Transform): string {
  if (t.startsWith("APIGroupDiscoveryList/")) {
    return `application/json;g=apidiscovery.k8s.io;v=${t.slice(t.indexOf("/") + 1)};as=APIGroupDiscoveryList`;
  }
  return "application/json";
}

/** What each answer was served as, for the request log (`RequestRecord.served`). */
const servedAs = new WeakMap<ServerResponse, string>();

/** Notes the representation an answer is served as, and gives its `Content-Type`. */
function serveAs(res: ServerResponse, t: Transform): string {
  servedAs.set(res, t.startsWith("APIGroupDiscoveryList/") ? "APIGroupDiscoveryList" : t);
  return transformContentType(t);
}

/** What the real server's `meta.IsListType` check answers for a transform of the wrong arity. */
function wrongArity(t: Transform, def: ResourceDef, list: boolean): KubeApiError {
  const go = def.custom
    ? `*unstructured.Unstructured${list ? "List" : ""}`
    : `*${def.group === "" ? "core" : (def.group.split(".")[0] ?? def.group)}.${def.kind}${list ? "List" : ""}`;
  return new KubeApiError(
    406,
    "NotAcceptable",
    list
      ? `you requested ${t}, but the requested object is a list (${go})`
      : `you requested ${t}, but the requested object is not a list (${go})`,
  );
}

/** An object's metadata alone, as `PartialObjectMetadata` (nothing of spec, data or status). */
function partialObject(o: KubeObject): Record<string, unknown> {
  return { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: o.metadata };
}

export function createHandler(ctx: ServerContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://sim");
    let user = "system:anonymous";
    const started = {
      path: url.pathname,
      query: url.search,
      method: req.method ?? "GET",
      accept: req.headers.accept ?? "",
      userAgent: req.headers["user-agent"] ?? "",
      startedAt: performance.now(),
    };
    // Recorded once its answer is finished, or when the client goes away from an answer already
    // started (a watch it stops): the audit log's ResponseStarted stage holds those too.
    let recorded = false;
    const recordServed = () => {
      if (recorded) return;
      recorded = true;
      const contentType = res.getHeader("content-type");
      ctx.record({
        ...started,
        finishedAt: performance.now(),
        status: res.statusCode,
        user,
        contentType: typeof contentType === "string" ? contentType : "",
        served: servedAs.get(res) ?? "",
      });
    };
    res.on("finish", recordServed);
    res.on("close", () => {
      if (res.headersSent) recordServed();
    });
    void (async () => {
      try {
        const faults = ctx.faults();
        if (faults.latencyMs !== undefined && faults.latencyMs > 0) await delay(faults.latencyMs);
        const auth = req.headers.authorization;
        const token = auth?.startsWith("Bearer ") === true ? auth.slice(7).trim() : undefined;
        const who = ctx.userForToken(token);
        if (who === undefined) {
          send(res, 401, statusBody(401, "Unauthorized", "Unauthorized"));
          return;
        }
        user = who;
        if (hangs(faults, req.method ?? "GET", url.pathname)) {
          // Held like a watch, so that stopping the simulator ends it.
          ctx.watches.add(res);
          res.on("close", () => ctx.watches.delete(res));
          return;
        }
        const lost = takeLostResponse(faults, req.method ?? "GET", url.pathname);
        if (lost !== undefined && faults.lostResponse?.apply === false) {
          sendError(res, internalError("etcdserver: request timed out (injected: not applied)"));
          return;
        }
        if (lost !== undefined) {
          // Let the write happen, then lose its answer: a 2xx becomes a 500 or a dropped connection.
          const writeHead = res.writeHead.bind(res) as (
            code: number,
            headers?: Record<string, string>,
          ) => unknown;
          const end = res.end.bind(res) as (chunk?: unknown) => unknown;
          let swallowed = false;
          res.writeHead = ((code: number, headers?: Record<string, string>) => {
            if (code < 200 || code >= 300) return writeHead(code, headers);
            swallowed = true;
            if (lost === "reset") {
              recorded = true;
              ctx.record({
                ...started,
                finishedAt: performance.now(),
                status: 0,
                user,
                contentType: "",
                served: "",
              });
              res.socket?.destroy();
              return res;
            }
            // The lost answer's own encoding goes with it: the 500 is plain JSON.
            res.removeHeader("Content-Encoding");
            res.removeHeader("Vary");
            return writeHead(500, {
              "Content-Type": "application/json",
              "Cache-Control": "no-cache, private",
            });
          }) as typeof res.writeHead;
          res.end = ((chunk?: unknown) => {
            if (!swallowed) return end(chunk);
            if (lost === "reset") return res;
            return end(
              JSON.stringify(
                internalError("etcdserver: leader changed (injected: applied, answer lost)").toStatus(),
              ),
            );
          }) as typeof res.end;
        }
        await route(ctx, req, res, url, user);
      } catch (err) {
        if (res.headersSent) {
          res.end();
          return;
        }
        if (err instanceof KubeApiError) {
          const headers: Record<string, string> = {};
          if (err.code === 429) headers["Retry-After"] = String(err.details?.retryAfterSeconds ?? 1);
          sendError(res, err, headers);
        } else sendError(res, internalError(err instanceof Error ? err.message : String(err)));
      }
    })();
  };
}

async function route(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  user: string,
): Promise<void> {
  const path = url.pathname.replace(/\/+$/, "") || "/";
  const parts = path.split("/").filter((p) => p !== "");
  const registry = ctx.store.registry;
  const faults = ctx.faults();
  const failing = new Set(faults.failingGroups ?? []);

  if (path === "/version") return send(res, 200, VERSION_INFO);
  if (path === "/healthz" || path === "/livez" || path === "/readyz") return send(res, 200, "ok");
  if (path === "/api" || path === "/apis") {
    const t = negotiate(req, DISCOVERY_TRANSFORMS);
    if (t !== undefined) {
      const doc = aggregatedDiscovery(registry.all(), registry.groupVersions(), failing, path === "/api");
      doc.apiVersion = `apidiscovery.k8s.io/${t.slice(t.indexOf("/") + 1)}`;
      return send(res, 200, doc, { "Content-Type": serveAs(res, t) });
    }
  }
  if (path === "/api") {
    return send(res, 200, {
      kind: "APIVersions",
      versions: ["v1"],
      serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: ctx.hostPort() }],
    });
  }
  if (path === "/apis") return send(res, 200, apiGroupList(ctx, failing));
  if (path === "/openapi/v3") return send(res, 200, openApiIndex(registry.groupVersions(), registry.all()));
  if (parts[0] === "openapi" && parts[1] === "v3") {
    const gv =
      parts[2] === "api"
        ? { group: "", version: parts[3] ?? "" }
        : { group: parts[3] ?? "", version: parts[4] ?? "" };
    if (!registry.serves(gv.group, gv.version)) {
      return send(res, 404, "404 page not found\n");
    }
    return send(res, 200, openApiGroupVersion(registry.all(), gv.group, gv.version));
  }

  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === "api" && parts.length >= 2) {
    group = "";
    version = parts[1] ?? "";
    rest = parts.slice(2);
  } else if (parts[0] === "apis" && parts.length >= 2) {
    group = parts[1] ?? "";
    if (parts.length === 2) {
      const g = apiGroupList(ctx, failing).groups.find((x) => x.name === group);
      return g === undefined
        ? send(res, 404, "404 page not found\n")
        : send(res, 200, { kind: "APIGroup", apiVersion: "v1", ...g });
    }
    version = parts[2] ?? "";
    rest = parts.slice(3);
  } else {
    return send(res, 404, "404 page not found\n");
  }
  const gv = group === "" ? version : `${group}/${version}`;
  // An unavailable aggregated API: kube-aggregator answers every path under it with a plain 503.
  if (failing.has(gv)) return send(res, 503, "service unavailable\n");
  if (!registry.serves(group, version)) {
    return send(res, 404, "404 page not found\n");
  }
  if (rest.length === 0) return send(res, 200, resourceList(registry.all(), group, version));

  const r = resolveRoute(ctx, group, version, rest);
  if (r === undefined)
    return send(
      res,
      404,
      statusBody(404, "NotFound", "the server could not find the requested resource", {}),
    );
  const watch = url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1";
  const method = req.method ?? "GET";
  const verb = verbOf(method, r, watch);

  const denied =
    ctx.authorize !== undefined &&
    !ctx.authorize({
      user,
      verb,
      group: r.def.group,
      resource: r.def.resource,
      subresource: r.subresource,
      namespace: r.namespace,
      name: r.name,
    });
  const rule = (faults.forbid ?? []).find((fr) => matchRule(fr, user, verb, r));
  if (denied || rule !== undefined) {
    throw rbacForbidden({
      user,
      verb,
      def: r.def,
      subresource: r.subresource,
      namespace: r.namespace,
      name: r.name,
    });
  }
  if (ctx.takeThrottle()) throw tooManyRequests(faults.throttle?.retryAfterSeconds ?? 1);
  if (faults.errorRate !== undefined && faults.errorRate > 0 && Math.random() < faults.errorRate) {
    throw internalError("injected fault: etcdserver: request timed out");
  }

  const body = ["POST", "PUT", "PATCH", "DELETE"].includes(method)
    ? parseBody(await readBody(req), req.headers["content-type"])
    : undefined;
  const q = url.searchParams;
  const dryRun = q.getAll("dryRun").includes("All");
  const { def, namespace, name, subresource } = r;
  checkFieldManager(verb, q.get("fieldManager"));

  if (subresource === "log") {
    if (method !== "GET" || name === undefined) throw methodNotSupported(def, method);
    return sendLog(ctx, res, def, namespace ?? "", name, q);
  }
  if (subresource === "scale") return handleScale(ctx, req, res, r, body);
  if (subresource !== undefined && !def.subresources.includes(subresource)) {
    return send(
      res,
      404,
      statusBody(404, "NotFound", "the server could not find the requested resource", {}),
    );
  }

  switch (verb) {
    case "get": {
      const t = negotiate(req, RESOURCE_TRANSFORMS);
      const o = ctx.store.getIn(def, namespace, name ?? "");
      if (t === "PartialObjectMetadataList") throw wrongArity(t, def, false);
      if (t === "PartialObjectMetadata") {
        return send(res, 200, partialObject(o), { "Content-Type": serveAs(res, t) });
      }
      if (t === "Table") {
        return send(
          res,
          200,
          toTable(
            def,
            [o],
            { resourceVersion: ctx.store.resourceVersion },
            q.get("includeObject") ?? undefined,
            ctx.now(),
          ),
          { "Content-Type": serveAs(res, t) },
        );
      }
      return send(res, 200, o);
    }
    case "list":
      return sendList(ctx, req, res, def, namespace, q);
    case "watch":
      return startWatch(ctx, req, res, def, namespace, name, q);
    case "create": {
      if (subresource !== undefined) throw methodNotSupported(def, "create");
      if (!isRecord(body)) throw badRequest("the body of the request was in an unknown format");
      const created = ctx.store.createIn(def, namespace, body, { dryRun });
      return send(res, 201, created);
    }
    case "update": {
      if (!isRecord(body)) throw badRequest("the body of the request was in an unknown format");
      if (subresource === "finalize" || subresource === "status" || subresource === undefined) {
        const updated = ctx.store.updateIn(def, namespace, name ?? "", body, {
          dryRun,
          subresource,
        });
        return send(res, 200, updated);
      }
      throw methodNotSupported(def, "update");
    }
    case "patch": {
      const updated = applyPatch(ctx, req, r, body, dryRun);
      return send(res, updated.created ? 201 : 200, updated.object);
    }
    case "delete": {
      const opts = deleteOptions(body, q, dryRun);
      const before = ctx.store.getIn(def, namespace, name ?? "");
      const after = ctx.store.deleteIn(def, namespace, name ?? "", opts);
      const gone = !existsNow(ctx, def, namespace, name ?? "", before.metadata?.uid);
      if (gone && !def.custom && def.resource !== "pods") {
        return send(res, 200, {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Success",
          details: {
            name,
            ...(def.group !== "" ? { group: def.group } : {}),
            kind: def.resource,
            uid: before.metadata?.uid,
          },
        });
      }
      return send(res, 200, after);
    }
    case "deletecollection": {
      const opts = deleteOptions(body, q, dryRun);
      const match = compileSelectors(
        q.get("labelSelector") ?? undefined,
        q.get("fieldSelector") ?? undefined,
        supportedFieldSelectors(def.group, def.resource),
      );
      const items = ctx.store.listIn(def, namespace).filter(match);
      const out = items.map((o) =>
        ctx.store.deleteIn(def, o.metadata?.namespace, o.metadata?.name ?? "", opts),
      );
      return send(res, 200, {
        kind: def.listKind,
        apiVersion: apiVersionOf(def),
        metadata: { resourceVersion: ctx.store.resourceVersion },
        items: out.map((o) => listItem(def, o)),
      });
    }
    default:
      throw methodNotSupported(def, method);
  }
}

function existsNow(
  ctx: ServerContext,
  def: ResourceDef,
  ns: string | undefined,
  name: string,
  uid: string | undefined,
): boolean {
  try {
    return ctx.store.getIn(def, ns, name).metadata?.uid === uid;
  } catch {
    return false;
  }
}

function apiGroupList(ctx: ServerContext, failing: Set<string>) {
  const groups = new Map<string, string[]>();
  for (const { group, version } of ctx.store.registry.groupVersions()) {
    if (group === "") continue;
    groups.set(group, [...(groups.get(group) ?? []), version]);
  }
  // A broken APIService still appears in /apis, as a broken metrics-server does.
  for (const gv of failing) {
    const [g, v] = gv.split("/");
    if (g === undefined || v === undefined) continue;
    if (!(groups.get(g) ?? []).includes(v)) groups.set(g, [...(groups.get(g) ?? []), v]);
  }
  return {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: [...groups].map(([name, versions]) => ({
      name,
      versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })),
      preferredVersion: { groupVersion: `${name}/${versions[0] ?? ""}`, version: versions[0] ?? "" },
    })),
  };
}

function resolveRoute(
  ctx: ServerContext,
  group: string,
  version: string,
  rest: string[],
): ResourceRoute | undefined {
  const reg = ctx.store.registry;
  if (rest[0] === "namespaces" && rest.length >= 3) {
    const def = reg.find(group, version, rest[2] ?? "");
    if (def?.namespaced === true) {
      if (rest.length > 5) return undefined;
      return { def, namespace: rest[1], name: rest[3], subresource: rest[4] };
    }
  }
  const def = reg.find(group, version, rest[0] ?? "");
  if (def === undefined || rest.length > 3) return undefined;
  // A namespaced type may be listed or watched across namespaces, never addressed by name.
  if (def.namespaced && rest.length > 1) return undefined;
  return { def, namespace: undefined, name: rest[1], subresource: rest[2] };
}

/**
 * The write handlers' `ValidateFieldManager`: at most 128 bytes, printable characters only, refused
 * as an invalid `CreateOptions`/`UpdateOptions`/`PatchOptions` before the object is looked at.
 */
function checkFieldManager(verb: string, fieldManager: string | null): void {
  const kind =
    verb === "create"
      ? "CreateOptions"
      : verb === "update"
        ? "UpdateOptions"
        : verb === "patch"
          ? "PatchOptions"
          : undefined;
  if (kind === undefined || fieldManager === null) return;
  const errors: FieldError[] = [];
  if (Buffer.byteLength(fieldManager) > 128)
    errors.push({ field: "fieldManager", type: "TooLong", detail: "may not be more than 128 bytes" });
  // Go ranges over the string's runes, giving each one's byte offset.
  let at = 0;
  for (const ch of fieldManager) {
    if (/\p{C}/u.test(ch))
      errors.push({
        field: "fieldManager",
        type: "Invalid",
        value: fieldManager,
        detail: `invalid character U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")} (at position ${String(at)})`,
      });
    at += Buffer.byteLength(ch);
  }
  if (errors.length > 0) throw invalid({ group: "meta.k8s.io", kind }, "", errors);
}

function deleteOptions(body: unknown, q: URLSearchParams, dryRun: boolean): DeleteOptions {
  const b = isRecord(body) ? body : {};
  const policy = (b.propagationPolicy ?? q.get("propagationPolicy") ?? undefined) as
    PropagationPolicy | undefined;
  if (policy !== undefined && !["Foreground", "Background", "Orphan"].includes(policy)) {
    throw badRequest(
      `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`,
    );
  }
  const orphan =
    b.orphanDependents ?? (q.has("orphanDependents") ? q.get("orphanDependents") === "true" : undefined);
  const pre = isRecord(b.preconditions) ? (b.preconditions as DeleteOptions["preconditions"]) : undefined;
  const graceRaw = b.gracePeriodSeconds ?? q.get("gracePeriodSeconds") ?? undefined;
  const grace = graceRaw === undefined || graceRaw === null ? undefined : Number(graceRaw);
  return {
    ...(grace !== undefined && Number.isFinite(grace) ? { gracePeriodSeconds: grace } : {}),
    ...(policy !== undefined ? { propagationPolicy: policy } : {}),
    ...(typeof orphan === "boolean" ? { orphanDependents: orphan } : {}),
    ...(pre !== undefined ? { preconditions: pre } : {}),
    dryRun: dryRun || (Array.isArray(b.dryRun) && b.dryRun.includes("All")),
  };
}

function sendList(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  def: ResourceDef,
  namespace: string | undefined,
  q: URLSearchParams,
): void {
  // Negotiated before any work, as the real server refuses an unservable Accept up front.
  const transform = negotiate(req, RESOURCE_TRANSFORMS);
  if (transform === "PartialObjectMetadata") throw wrongArity(transform, def, true);
  const labelSelector = q.get("labelSelector") ?? "";
  const fieldSelector = q.get("fieldSelector") ?? "";
  const match = compileSelectors(
    labelSelector,
    fieldSelector,
    supportedFieldSelectors(def.group, def.resource),
  );
  const ns = def.namespaced && namespace !== undefined && namespace !== "" ? namespace : undefined;
  const limitParam = Number(q.get("limit") ?? "0");
  const limit = Number.isInteger(limitParam) && limitParam > 0 ? limitParam : 0;
  const token = q.get("continue") ?? "";
  let all: readonly KubeObject[];
  let rv: string;
  let fresh = true;
  let from = 0;
  if (token === "") {
    all = ctx.store.listStored(def, ns);
    rv = ctx.store.resourceVersion;
  } else {
    const rvParam = q.get("resourceVersion");
    if (rvParam !== null && rvParam !== "" && rvParam !== "0") {
      throw badRequest("specifying resource version is not allowed when using continue");
    }
    const c = decodeContinue(token);
    const kept = c.rv > 0 ? ctx.store.listAt(def, ns, String(c.rv)) : undefined;
    if (c.rv > 0 && kept === undefined) {
      // The revision is gone (compacted): the real Status, with a token that continues at the
      // latest revision for a client that accepts an inconsistent list.
      const body = statusBody(410, "Expired", INCONSISTENT_CONTINUE);
      body.metadata = { continue: encodeContinue(-1, c.start) };
      return send(res, 410, body);
    }
    // rv -1 (the token a 410 offers) continues at the latest revision.
    fresh = kept === undefined;
    all = kept ?? ctx.store.listStored(def, ns);
    rv = kept !== undefined ? String(c.rv) : ctx.store.resourceVersion;
    // First key at or after the token's start key (keys are unique and sorted).
    let lo = 0;
    let hi = all.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const o = all[mid];
      if (o !== undefined && listKey(def, ns, o) < c.start) lo = mid + 1;
      else hi = mid;
    }
    from = lo;
  }
  // Stored objects, not copies: only read here, and serialized from their kept text.
  const items: KubeObject[] = [];
  let next = from;
  for (; next < all.length && (limit === 0 || items.length < limit); next++) {
    const o = all[next];
    if (o !== undefined && match(o)) items.push(o);
  }
  const meta: Record<string, unknown> = { resourceVersion: rv };
  const last = items[items.length - 1];
  if (limit > 0 && next < all.length && last !== undefined) {
    meta.continue = encodeContinue(Number(rv), `${listKey(def, ns, last)}\u0000`);
    // Like etcd's count, only meaningful when nothing is filtered out.
    if (labelSelector === "" && fieldSelector === "") meta.remainingItemCount = all.length - next;
    // Later pages are served from this revision, as etcd serves them from the first page's.
    if (fresh) ctx.store.keepListAt(def, ns, rv, all);
  }
  if (transform === "Table") {
    const copies = items.map((o) => ctx.store.present(def, o));
    return send(res, 200, toTable(def, copies, meta, q.get("includeObject") ?? undefined, ctx.now()), {
      "Content-Type": serveAs(res, "Table"),
    });
  }
  // The same text JSON.stringify would write for the whole list, assembled from each item's.
  const form = transform === "PartialObjectMetadataList" ? "partial" : "item";
  const parts = items.map((o) => ctx.store.serialized(def, o, form));
  if (transform === "PartialObjectMetadataList") {
    // Metadata only, paging intact: what the namespace controller and `kubectl get -o name` read.
    return sendJsonText(
      res,
      200,
      `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":${JSON.stringify(meta)},"items":[${parts.join(",")}]}`,
      serveAs(res, transform),
    );
  }
  sendJsonText(
    res,
    200,
    `{"kind":${JSON.stringify(def.listKind)},"apiVersion":${JSON.stringify(apiVersionOf(def))},"metadata":${JSON.stringify(meta)},"items":[${parts.join(",")}]}`,
  );
}

/**
 * A watch as the real API server streams it: one JSON event per line over a chunked response
 * (`ADDED`/`MODIFIED`/`DELETED`, `BOOKMARK` every {@link ServerContext.bookmarkIntervalMs} when
 * `allowWatchBookmarks=true`), from `resourceVersion` (unset or "0": the current objects as
 * synthetic `ADDED` events first) — or, for a revision older than the last compaction, a single
 * `ERROR` event carrying the 410 `Expired` Status, after which the client must re-list.
 * `Accept: …;as=PartialObjectMetadata;g=meta.k8s.io;v=v1` streams metadata-only objects.
 */
function startWatch(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  def: ResourceDef,
  namespace: string | undefined,
  name: string | undefined,
  q: URLSearchParams,
): void {
  const transform = negotiate(req, RESOURCE_TRANSFORMS);
  if (transform === "PartialObjectMetadataList") throw wrongArity(transform, def, false);
  const metadataOnly = transform === "PartialObjectMetadata";
  const match = compileSelectors(
    q.get("labelSelector") ?? undefined,
    q.get("fieldSelector") ?? undefined,
    supportedFieldSelectors(def.group, def.resource),
  );
  const relevant = (o: KubeObject) =>
    (namespace === undefined || o.metadata?.namespace === namespace) &&
    (name === undefined || o.metadata?.name === name) &&
    match(o);
  // Set, not passed to writeHead, so that the request log can read the Content-Type back.
  res.setHeader("Content-Type", metadataOnly ? serveAs(res, "PartialObjectMetadata") : "application/json");
  res.setHeader("Transfer-Encoding", "chunked");
  res.setHeader("Cache-Control", "no-cache, private");
  res.writeHead(200);
  // Clients wait for the response headers before reading events; send them now.
  res.flushHeaders();
  ctx.watches.add(res);
  const write = (type: string, object: KubeObject) =>
    res.write(`${JSON.stringify({ type, object: metadataOnly ? partialObject(object) : object })}\n`);
  const rvParam = q.get("resourceVersion");
  if (rvParam === null || rvParam === "" || rvParam === "0") {
    for (const o of ctx.store.listIn(def, namespace)) if (relevant(o)) write("ADDED", o);
  } else {
    const past = ctx.store.eventsSince(Number(rvParam));
    if (past === undefined) {
      res.write(
        `${JSON.stringify({
          type: "ERROR",
          object: statusBody(
            410,
            "Expired",
            `too old resource version: ${rvParam} (${ctx.store.resourceVersion})`,
          ),
        })}\n`,
      );
      res.end();
      ctx.watches.delete(res);
      return;
    }
    for (const e of past)
      if (typeKey(e.def) === typeKey(def) && relevant(e.object))
        write(e.type, ctx.store.present(def, e.object));
  }
  const unsubscribe = ctx.store.onChange((e: StoreEvent) => {
    if (typeKey(e.def) !== typeKey(def) || !relevant(e.object)) return;
    write(e.type, ctx.store.present(def, e.object));
  });
  // A bookmark carries only the revision the client has seen everything up to.
  const bookmarks =
    q.get("allowWatchBookmarks") === "true" || q.get("allowWatchBookmarks") === "1"
      ? setInterval(
          () =>
            write("BOOKMARK", {
              apiVersion: apiVersionOf(def),
              kind: def.kind,
              metadata: { resourceVersion: ctx.store.resourceVersion },
            }),
          ctx.bookmarkIntervalMs,
        )
      : undefined;
  bookmarks?.unref();
  const timeout = Number(q.get("timeoutSeconds") ?? "0");
  const timer = timeout > 0 ? setTimeout(() => res.end(), timeout * 1000) : undefined;
  timer?.unref();
  const close = () => {
    unsubscribe();
    if (timer !== undefined) clearTimeout(timer);
    if (bookmarks !== undefined) clearInterval(bookmarks);
    ctx.watches.delete(res);
  };
  res.on("close", close);
}

function applyPatch(
  ctx: ServerContext,
  req: IncomingMessage,
  r: ResourceRoute,
  body: unknown,
  dryRun: boolean,
): { object: KubeObject; created: boolean } {
  const { def, namespace, name, subresource } = r;
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim() ?? "";
  if (subresource === "finalize") throw methodNotSupported(def, "patch");
  if (type === "application/apply-patch+yaml") {
    // Server-side apply, simplified: the applied configuration is merged into the live object.
    let cur: KubeObject | undefined;
    try {
      cur = ctx.store.getIn(def, namespace, name ?? "");
    } catch (e) {
      if (!(e instanceof KubeApiError && e.code === 404)) throw e;
    }
    if (cur === undefined) {
      const created = ctx.store.createIn(
        def,
        namespace,
        { ...(body as KubeObject), metadata: { ...(body as KubeObject).metadata, name } },
        { dryRun },
      );
      return { object: created, created: true };
    }
    const merged = mergePatch(cur, body) as KubeObject;
    return {
      object: ctx.store.updateIn(def, namespace, name ?? "", merged, { dryRun, subresource }),
      created: false,
    };
  }
  const cur = ctx.store.getIn(def, namespace, name ?? "");
  let patched: unknown;
  switch (type) {
    case "application/merge-patch+json":
      if (!isRecord(body)) throw badRequest("the body of the request was in an unknown format");
      patched = mergePatch(cur, body);
      break;
    case "application/json-patch+json":
      patched = jsonPatch(cur, body);
      break;
    case "application/strategic-merge-patch+json":
      if (def.custom) {
        throw new KubeApiError(
          415,
          "UnsupportedMediaType",
          "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        );
      }
      if (!isRecord(body)) throw badRequest("the body of the request was in an unknown format");
      patched = strategicMergePatch(cur, body);
      break;
    default:
      throw new KubeApiError(
        415,
        "UnsupportedMediaType",
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml${def.custom ? "" : ", application/strategic-merge-patch+json"}`,
      );
  }
  if (!isRecord(patched)) throw badRequest("the patched object is not an object");
  return {
    object: ctx.store.updateIn(def, namespace, name ?? "", patched, { dryRun, subresource }),
    created: false,
  };
}

function handleScale(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  r: ResourceRoute,
  body: unknown,
): void {
  const { def, namespace, name } = r;
  const cur = ctx.store.getIn(def, namespace, name ?? "");
  const scaleOf = (o: KubeObject) => {
    const spec = isRecord(o.spec) ? o.spec : {};
    const status = isRecord(o.status) ? o.status : {};
    const sel =
      isRecord(spec.selector) && isRecord(spec.selector.matchLabels) ? spec.selector.matchLabels : {};
    return {
      kind: "Scale",
      apiVersion: "autoscaling/v1",
      metadata: {
        name,
        namespace,
        uid: o.metadata?.uid,
        resourceVersion: o.metadata?.resourceVersion,
        creationTimestamp: o.metadata?.creationTimestamp,
      },
      spec: { replicas: typeof spec.replicas === "number" ? spec.replicas : 1 },
      status: {
        replicas: typeof status.replicas === "number" ? status.replicas : 0,
        selector: Object.entries(sel)
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(","),
      },
    };
  };
  if (req.method === "GET") return send(res, 200, scaleOf(cur));
  let scale: unknown = scaleOf(cur);
  if (req.method === "PUT") scale = body;
  else if (req.method === "PATCH") {
    const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim();
    scale = type === "application/json-patch+json" ? jsonPatch(scale, body) : mergePatch(scale, body);
  } else throw methodNotSupported(def, req.method ?? "");
  const replicas = isRecord(scale) && isRecord(scale.spec) ? scale.spec.replicas : undefined;
  if (typeof replicas !== "number") throw badRequest("spec.replicas is required");
  const rv = isRecord(scale) && isRecord(scale.metadata) ? scale.metadata.resourceVersion : undefined;
  const spec = isRecord(cur.spec) ? cur.spec : {};
  const next = {
    ...cur,
    metadata: { ...cur.metadata, ...(typeof rv === "string" ? { resourceVersion: rv } : {}) },
    spec: { ...spec, replicas },
  };
  send(res, 200, scaleOf(ctx.store.updateIn(def, namespace, name ?? "", next)));
}

function sendLog(
  ctx: ServerContext,
  res: ServerResponse,
  def: ResourceDef,
  namespace: string,
  name: string,
  q: URLSearchParams,
): void {
  const pod = ctx.store.getIn(def, namespace, name);
  const spec = isRecord(pod.spec) ? pod.spec : {};
  const names = [
    ...(Array.isArray(spec.containers) ? spec.containers : []),
    ...(Array.isArray(spec.initContainers) ? spec.initContainers : []),
  ]
    .map((c) => (isRecord(c) && typeof c.name === "string" ? c.name : ""))
    .filter((n) => n !== "");
  const mainNames = (Array.isArray(spec.containers) ? spec.containers : [])
    .map((c) => (isRecord(c) && typeof c.name === "string" ? c.name : ""))
    .filter((n) => n !== "");
  let container = q.get("container") ?? undefined;
  if (container === undefined || container === "") {
    if (mainNames.length !== 1) {
      throw badRequest(
        `a container name must be specified for pod ${name}, choose one of: [${mainNames.join(" ")}]`,
      );
    }
    container = mainNames[0] ?? "";
  }
  if (!names.includes(container)) throw badRequest(`container ${container} is not valid for pod ${name}`);
  const num = (k: string) => {
    const v = q.get(k);
    return v === null || v === "" ? undefined : Number(v);
  };
  const sinceTime = q.get("sinceTime");
  const text = ctx.logs.read(namespace, name, container, {
    tailLines: num("tailLines"),
    sinceSeconds: num("sinceSeconds"),
    sinceTime: sinceTime !== null && sinceTime !== "" ? new Date(sinceTime) : undefined,
    timestamps: q.get("timestamps") === "true",
    limitBytes: num("limitBytes"),
  });
  send(res, 200, text);
}
