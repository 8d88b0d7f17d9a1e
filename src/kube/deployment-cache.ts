/**
 * Every Deployment of the cluster, kept by the long-running bot as a controller's informer keeps
 * it: listed once (paged), then kept current by a watch from the list's revision. An unknown
 * finalizer's controller is guessed from every Deployment; in a cluster of thousands that list is
 * several sequential pages on every diagnosis, and here it is none.
 *
 * The cache answers only while its watch is connected: before the first list, while a watch
 * reconnects, backs off or is forbidden, every read goes to the API server as the CLI's does. A
 * label selector the cache cannot read (anything but `k`, `!k`, `k=v`, `k==v`, `k!=v`,
 * `k in (…)`, `k notin (…)`) goes to the API server too. What is kept is the snapshot a diagnosis
 * reads (names, labels, images, arguments, replica counts), not the whole object.
 */
import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "../log.js";
import { obj, str, toDeploymentSnapshot } from "./decode.js";
import type { CallContext } from "./errors.js";
import { listAll, type KubeRequests } from "./requests.js";
import type { DeploymentSnapshot } from "./types.js";
import { ACCEPT_JSON, openWatch } from "./transport.js";
import { type OpenWatch, type WatchEvent, WatchLoop } from "./watch-loop.js";

export interface DeploymentCacheOptions {
  /** `timeoutSeconds` of one watch request (default 300). */
  readonly watchTimeoutSeconds?: number;
  /** Reconnect backoff after an error: first and longest pause (default 500 ms and 30 s). */
  readonly backoffMs?: { readonly initial?: number; readonly max?: number };
}

export interface DeploymentListOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
}

export interface DeploymentCacheIo {
  /** Every Deployment now, and the list's resourceVersion (to watch from). */
  list(): Promise<{ readonly items: readonly DeploymentSnapshot[]; readonly resourceVersion: string }>;
  /** A watch of every Deployment, with bookmarks. */
  readonly watch: OpenWatch;
  readonly log?: Logger;
}

type Labels = Readonly<Record<string, string>>;

/** One requirement of a label selector, as the API server reads it. */
function requirement(text: string): ((labels: Labels) => boolean) | undefined {
  const t = text.trim();
  const set = /^([^\s!=(),]+)\s+(in|notin)\s+\(([^()]*)\)$/.exec(t);
  if (set) {
    const [, key = "", op, list = ""] = set;
    const values = new Set(list.split(",").map((v) => v.trim()));
    return op === "in"
      ? (l) => key in l && values.has(l[key] ?? "")
      : (l) => !(key in l) || !values.has(l[key] ?? "");
  }
  const cmp = /^([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/.exec(t);
  if (cmp) {
    const [, key = "", op, value = ""] = cmp;
    return op === "!=" ? (l) => l[key] !== value : (l) => key in l && l[key] === value;
  }
  const exists = /^(!?)([^\s!=(),]+)$/.exec(t);
  if (exists) {
    const [, not, key = ""] = exists;
    return not === "!" ? (l) => !(key in l) : (l) => key in l;
  }
  return undefined;
}

/** A label selector as a predicate, or `undefined` when it is not one this cache reads. */
export function labelSelectorMatcher(selector: string): ((labels: Labels) => boolean) | undefined {
  // Requirements are comma-separated; commas inside `in (…)` belong to their set.
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      parts.push(selector.slice(start, i));
      start = i + 1;
    }
    if (depth < 0 || depth > 1) return undefined;
  }
  parts.push(selector.slice(start));
  if (parts.every((p) => p.trim() === "")) return () => true;
  const tests = parts.map(requirement);
  if (tests.some((t) => t === undefined)) return undefined;
  return (labels) => tests.every((t) => t?.(labels) === true);
}

const keyOf = (d: { readonly namespace: string; readonly name: string }): string =>
  `${d.namespace}/${d.name}`;

export class DeploymentCache {
  private readonly byKey = new Map<string, DeploymentSnapshot>();
  /** Every Deployment in the API server's order, rebuilt after a change; handed out as is. */
  private all: readonly DeploymentSnapshot[] | undefined;
  private connected = false;
  private readonly loop: WatchLoop;

  public constructor(io: DeploymentCacheIo, options: DeploymentCacheOptions = {}) {
    this.loop = new WatchLoop(
      {
        list: async () => {
          const { items, resourceVersion } = await io.list();
          this.byKey.clear();
          for (const d of items) this.byKey.set(keyOf(d), d);
          this.all = undefined;
          return resourceVersion;
        },
        watch: io.watch,
        changed: (e) => this.apply(e),
        connected: (up) => {
          this.connected = up;
        },
      },
      {
        name: "deployment cache",
        resource: "deployments",
        fallback: "every diagnosis lists Deployments from the API server instead",
        timeoutSeconds: options.watchTimeoutSeconds ?? 300,
        slowPauseMs: 60_000,
        backoffMs: { initial: options.backoffMs?.initial ?? 500, max: options.backoffMs?.max ?? 30_000 },
        ...(io.log !== undefined ? { log: io.log } : {}),
      },
    );
  }

  /**
   * The Deployments `options` names, from the cache while its watch is connected, else from
   * `live` (the API server). The first call starts the list and the watch.
   */
  public list(
    options: DeploymentListOptions,
    live: () => Promise<readonly DeploymentSnapshot[]>,
  ): Promise<readonly DeploymentSnapshot[]> {
    this.loop.start();
    const match =
      options.labelSelector === undefined ? () => true : labelSelectorMatcher(options.labelSelector);
    if (!this.connected || match === undefined) return live();
    // By `namespace/name`, as the API server orders a list (its storage keys end so).
    const all = (this.all ??= Object.freeze(
      [...this.byKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, d]) => d),
    ));
    if (options.namespace === undefined && options.labelSelector === undefined) return Promise.resolve(all);
    return Promise.resolve(
      all.filter(
        (d) => (options.namespace === undefined || d.namespace === options.namespace) && match(d.labels),
      ),
    );
  }

  /** Stop the watch; later reads go to the API server. */
  public close(): void {
    this.loop.close();
    this.byKey.clear();
    this.all = undefined;
  }

  private apply(e: WatchEvent): void {
    const d = toDeploymentSnapshot(e.object);
    if (e.type === "DELETED") this.byKey.delete(keyOf(d));
    else this.byKey.set(keyOf(d), d);
    this.all = undefined;
  }
}

/** The cache over the adapter's requests (limiter, retries, errors) and the kubeconfig's watch. */
export function createDeploymentCache(
  k: KubeRequests,
  kc: KubeConfig,
  options: DeploymentCacheOptions,
): DeploymentCache {
  const path = "/apis/apps/v1/deployments";
  const ctx: CallContext = { verb: "list", resource: "deployments", group: "apps" };
  const io: DeploymentCacheIo = {
    async list() {
      let resourceVersion = "";
      const items = await listAll(k, ctx, async (cont, limit) => {
        const page = await k.raw.getJson(path, {
          limit: limit !== undefined ? String(limit) : undefined,
          continue: cont,
        });
        // Every page of one list is served at the first page's revision.
        if (cont === undefined) resourceVersion = str(obj(page.metadata).resourceVersion);
        const pageItems = Array.isArray(page.items) ? page.items : [];
        return {
          items: pageItems.map((i) => toDeploymentSnapshot(obj(i))),
          cont: str(obj(page.metadata).continue) || undefined,
        };
      });
      return { items, resourceVersion };
    },
    watch: openWatch(kc, ACCEPT_JSON, path),
    ...(k.log !== undefined ? { log: k.log } : {}),
  };
  return new DeploymentCache(io, options);
}
