/**
 * The connection pool: one undici dispatcher per distinct set of dispatcher options (cluster CA,
 * client certificate, `insecure-skip-tls-verify`, TLS server name, proxy), kept across requests so
 * that they share keep-alive connections instead of each opening its own (and its own TLS
 * handshake). Every request of the adapter, the namespace watcher and their watches gets its
 * dispatcher here, through `./transport.ts`.
 *
 * The options are client-node's own (`KubeConfig.createDispatcherOptions`, public), computed from
 * the credentials of each request, so a rotated client certificate gets a new pool; the least
 * recently used beyond {@link MAX_POOLED_DISPATCHERS} is forgotten — not closed, as a request may
 * have just been handed it: its idle sockets end on undici's keep-alive timeout.
 */
import { createHash } from "node:crypto";
import type { AgentOptions } from "node:https";
import { HttpMethod, type Cluster, type KubeConfig, RequestContext } from "@kubernetes/client-node";
import { Agent, type Dispatcher, ProxyAgent } from "undici";

/** Distinct TLS identities (cluster CA, client certificate, proxy) whose connection pools are kept. */
export const MAX_POOLED_DISPATCHERS = 4;

export class DispatcherPool {
  private readonly kept = new Map<string, Dispatcher>();

  constructor(private readonly kc: KubeConfig) {}

  /**
   * The dispatcher for a request to `cluster` with these TLS options; `undefined` where
   * client-node would set none (a plain-HTTP cluster without TLS options or proxy: undici's
   * global dispatcher, which pools on its own).
   */
  async dispatcherFor(cluster: Cluster | null, agentOptions: AgentOptions): Promise<Dispatcher | undefined> {
    const options = this.kc.createDispatcherOptions(cluster, agentOptions);
    if (options.type === "none") return undefined;
    const key = createHash("sha256").update(JSON.stringify(options)).digest("base64");
    const kept = this.kept.get(key);
    if (kept !== undefined) {
      this.kept.delete(key);
      this.kept.set(key, kept);
      return kept;
    }
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
    if (made === undefined) return undefined;
    this.kept.set(key, made);
    for (const k of this.kept.keys()) {
      if (this.kept.size <= MAX_POOLED_DISPATCHERS) break;
      this.kept.delete(k);
    }
    return made;
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

const pools = new WeakMap<KubeConfig, DispatcherPool>();

/** The pool of a kubeconfig: every client built from one `KubeConfig` shares its connections. */
export function poolFor(kc: KubeConfig): DispatcherPool {
  let pool = pools.get(kc);
  if (pool === undefined) {
    pool = new DispatcherPool(kc);
    pools.set(kc, pool);
  }
  return pool;
}
