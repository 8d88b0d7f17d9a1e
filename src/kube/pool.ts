/**
 * The connection pools: one per distinct set of connection options (cluster CA, client
 * certificate, `insecure-skip-tls-verify`, TLS server name, proxy), kept across requests so that
 * they share keep-alive connections instead of each opening its own (and its own TLS handshake).
 * Every request of the adapter, the namespace watcher and their watches gets its connection here,
 * through `./transport.ts`.
 *
 * Two kinds, from one set of options:
 * - {@link ConnectionPool.connectionFor}, the adapter's requests: a direct connection is Node's own
 *   keep-alive `http`/`https` agent; through a proxy (HTTP or SOCKS) it is undici's dispatcher, as
 *   client-node builds it. A terminal that talks to its cluster directly never evaluates undici
 *   (its load was a fifth of a cold CLI's start-up), and Node's HTTP parser is native.
 * - {@link ConnectionPool.dispatcherFor}, client-node's `Watch` (undici fetch): undici's dispatcher.
 *
 * The options are client-node's own (`KubeConfig.createDispatcherOptions`, public), computed from
 * the credentials of each request, so a rotated client certificate gets a new pool; the least
 * recently used beyond {@link MAX_POOLED_DISPATCHERS} is forgotten — not closed, as a request may
 * have just been handed it: its idle sockets end on their idle timeout. A pool is found by comparing
 * the options whole (`isDeepStrictEqual`): kept beside the pool built from them, which holds them
 * anyway, they are never copied into a string key, and no hash is taken (a terminal's `ns` never
 * loads Node's crypto).
 */
import { Agent as HttpAgent } from "node:http";
import type { Agent as HttpsAgent, AgentOptions } from "node:https";
import { createRequire } from "node:module";
import { isDeepStrictEqual } from "node:util";
import { HttpMethod, type Cluster, type KubeConfig, RequestContext } from "@kubernetes/client-node";
import { Agent, type Dispatcher, ProxyAgent } from "undici";

/** Distinct TLS identities (cluster CA, client certificate, proxy) whose connection pools are kept. */
export const MAX_POOLED_DISPATCHERS = 4;

/**
 * How long an idle connection is kept: undici's default, well under the idle timeouts of the API
 * server and of the load balancers in front of it, so a kept connection is not closed by the far
 * side as it is reused.
 */
export const IDLE_CONNECTION_MS = 4_000;

/** How the adapter's request goes out: Node's own client on a kept agent, or undici's dispatcher. */
export type Connection =
  | { readonly via: "node"; readonly agent: HttpAgent | HttpsAgent }
  | { readonly via: "undici"; readonly dispatcher: Dispatcher };

type Options = ReturnType<KubeConfig["createDispatcherOptions"]>;

/** `node:https` when the first https cluster is asked for: a plain-HTTP one never loads TLS. */
const load = createRequire(import.meta.url);

/** Least recently used first; the oldest beyond {@link MAX_POOLED_DISPATCHERS} forgotten. */
class Kept<K, T> {
  private readonly kept: { readonly key: K; readonly value: T }[] = [];

  get(key: K): T | undefined {
    const at = this.kept.findIndex((e) => isDeepStrictEqual(e.key, key));
    if (at < 0) return undefined;
    const [found] = this.kept.splice(at, 1);
    if (found === undefined) return undefined;
    this.kept.push(found);
    return found.value;
  }

  set(key: K, value: T): T {
    this.kept.push({ key, value });
    if (this.kept.length > MAX_POOLED_DISPATCHERS)
      this.kept.splice(0, this.kept.length - MAX_POOLED_DISPATCHERS);
    return value;
  }
}

export class ConnectionPool {
  private readonly agents = new Kept<
    { readonly https: boolean; readonly options: Options },
    HttpAgent | HttpsAgent
  >();
  private readonly dispatchers = new Kept<Options, Dispatcher>();

  constructor(private readonly kc: KubeConfig) {}

  /** The connection of an adapter request to `cluster` with these TLS options. */
  async connectionFor(cluster: Cluster | null, agentOptions: AgentOptions): Promise<Connection> {
    const options = this.kc.createDispatcherOptions(cluster, agentOptions);
    if (options.type === "proxy" || options.type === "socks") {
      const dispatcher = await this.dispatcherOf(cluster, options);
      if (dispatcher !== undefined) return { via: "undici", dispatcher };
    }
    const https = (cluster?.server ?? "").startsWith("https:");
    const key = { https, options };
    const agent =
      this.agents.get(key) ??
      this.agents.set(
        key,
        https
          ? new (load("node:https") as typeof import("node:https")).Agent({
              ...(options.type === "agent" ? options.connect : {}),
              keepAlive: true,
              timeout: IDLE_CONNECTION_MS,
            })
          : new HttpAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS }),
      );
    return { via: "node", agent };
  }

  /**
   * undici's dispatcher for a request to `cluster` with these TLS options (a watch's);
   * `undefined` where client-node would set none (a plain-HTTP cluster without TLS options or
   * proxy: undici's global dispatcher, which pools on its own).
   */
  async dispatcherFor(cluster: Cluster | null, agentOptions: AgentOptions): Promise<Dispatcher | undefined> {
    return this.dispatcherOf(cluster, this.kc.createDispatcherOptions(cluster, agentOptions));
  }

  private async dispatcherOf(cluster: Cluster | null, options: Options): Promise<Dispatcher | undefined> {
    if (options.type === "none") return undefined;
    const kept = this.dispatchers.get(options);
    if (kept !== undefined) return kept;
    // Built as client-node 2 builds them (its `createDispatcher`), but once per key.
    let made: Dispatcher | undefined;
    switch (options.type) {
      case "agent":
        made = new Agent({ connect: options.connect });
        break;
      case "proxy":
        made = new ProxyAgent({ uri: options.uri, requestTls: options.requestTls, connect: options.connect });
        break;
      case "socks":
        made = await this.libraryDispatcher(cluster);
        break;
    }
    return made === undefined ? undefined : this.dispatchers.set(options, made);
  }

  /**
   * The SOCKS connector is private to client-node: that dispatcher is the one the library sets on
   * a request it authenticates (its public `applySecurityAuthentication`), asked for once per key.
   */
  private async libraryDispatcher(cluster: Cluster | null): Promise<Dispatcher | undefined> {
    const scratch = new RequestContext(cluster?.server ?? "http://localhost", HttpMethod.GET);
    await this.kc.applySecurityAuthentication(scratch);
    return scratch.getDispatcher();
  }
}

const pools = new WeakMap<KubeConfig, ConnectionPool>();

/** The pool of a kubeconfig: every client built from one `KubeConfig` shares its connections. */
export function poolFor(kc: KubeConfig): ConnectionPool {
  let pool = pools.get(kc);
  if (pool === undefined) {
    pool = new ConnectionPool(kc);
    pools.set(kc, pool);
  }
  return pool;
}
