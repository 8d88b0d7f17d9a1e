/**
 * What the outside world sees of the edge: a DNS lookup through `node:dns` (configurable
 * resolvers) and one HTTP request, both time-boxed. Answers are data, never thrown: a name that
 * does not exist is `nxdomain`, a connection that fails is `{ error }`, so a wait can say what it
 * saw and keep waiting.
 *
 * Production resolves with the machine's resolvers and connects where the URL's host resolves. A
 * test (or a check from inside a network that cannot reach the public name) sends every HTTP probe
 * to `httpVia` instead, with the URL's host in the `Host` header: the simulated world's HTTP front
 * routes by `Host` exactly this way.
 */
import type { Resolver } from "node:dns/promises";
import { request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import type { EdgeProbe, HttpResult } from "./port.js";

/**
 * `node:dns/promises` and `node:https` (TLS) when a probe is first made: every process builds the
 * probe, and most never probe (a terminal's `ns`).
 */
const load = createRequire(import.meta.url);

export interface EdgeProbeOptions {
  /**
   * DNS servers to ask, as `host` or `host:port` (e.g. `127.0.0.1:5353`, the simulated world's
   * `world.dns.address`). Default: the machine's resolvers.
   */
  readonly resolvers?: readonly string[];
  /** Bound on one lookup attempt and on one HTTP request (default 5 s). */
  readonly timeoutMs?: number;
  /**
   * Send every HTTP probe to this base URL (e.g. the simulated HTTP front, `world.httpFront.url`)
   * with the probed URL's path and query, and its host in the `Host` header, instead of
   * connecting where that host resolves. Unset in production.
   */
  readonly httpVia?: string;
}

export const DEFAULT_PROBE_TIMEOUT_MS = 5000;

function errorCode(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null || !("code" in err)) return undefined;
  const code = err.code;
  return typeof code === "string" ? code : undefined;
}

function errorText(err: unknown): string {
  const code = errorCode(err);
  const message = err instanceof Error ? err.message : String(err);
  const text = code !== undefined && !message.includes(code) ? `${code}: ${message}` : message;
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}

/** c-ares: ENOTFOUND is NXDOMAIN, ENODATA is a name that exists without records of the type. */
async function lookup(
  resolver: Resolver,
  name: string,
  family: 4 | 6,
): Promise<string[] | "nxdomain" | "nodata" | { error: string }> {
  try {
    return family === 4 ? await resolver.resolve4(name) : await resolver.resolve6(name);
  } catch (err) {
    const code = errorCode(err);
    if (code === "ENOTFOUND") return "nxdomain";
    if (code === "ENODATA") return "nodata";
    return { error: errorText(err) };
  }
}

/** Builds the probe. Construct once per process; it holds no connections between calls. */
export function createEdgeProbe(options: EdgeProbeOptions = {}): EdgeProbe {
  const timeoutMs = options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  let made: Resolver | undefined;
  const resolver = (): Resolver => {
    if (made !== undefined) return made;
    const dns = load("node:dns/promises") as typeof import("node:dns/promises");
    made = new dns.Resolver({ timeout: timeoutMs, tries: 2 });
    if (options.resolvers !== undefined && options.resolvers.length > 0)
      made.setServers([...options.resolvers]);
    return made;
  };
  const via = options.httpVia !== undefined ? new URL(options.httpVia) : undefined;

  return {
    async resolve(name) {
      const bare = name.trim().replace(/\.$/, "");
      const v4 = await lookup(resolver(), bare, 4);
      if (Array.isArray(v4)) return { kind: "addresses", addresses: v4 };
      if (v4 === "nxdomain") return { kind: "nxdomain" };
      if (v4 !== "nodata") return { kind: "error", message: v4.error };
      // The name exists; an IPv6-only name still resolves.
      const v6 = await lookup(resolver(), bare, 6);
      if (Array.isArray(v6)) return { kind: "addresses", addresses: v6 };
      if (v6 === "nxdomain") return { kind: "nxdomain" };
      if (v6 === "nodata") return { kind: "addresses", addresses: [] };
      return { kind: "error", message: v6.error };
    },

    http(url, opts = {}) {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        return Promise.resolve({ error: `not a URL: ${url}` });
      }
      if (target.protocol !== "http:" && target.protocol !== "https:") {
        return Promise.resolve({ error: `not an http(s) URL: ${url}` });
      }
      const limit = opts.timeoutMs ?? timeoutMs;
      const connectTo = via ? new URL(`${target.pathname}${target.search}`, via) : target;
      const send =
        connectTo.protocol === "https:"
          ? (load("node:https") as typeof import("node:https")).request
          : httpRequest;
      return new Promise<HttpResult>((resolve) => {
        let req: ClientRequest;
        try {
          req = send(
            connectTo,
            {
              method: opts.method ?? "GET",
              // A probe is one fresh connection: no pooled socket outlives it.
              agent: false,
              signal: AbortSignal.timeout(limit),
              headers: {
                "User-Agent": "unstuck-edge-probe",
                ...(via ? { Host: target.host } : {}),
              },
              // Through `httpVia`, TLS still names the probed host (SNI and certificate check).
              ...(via && connectTo.protocol === "https:" ? { servername: target.hostname } : {}),
            },
            (res: IncomingMessage) => {
              // Only the status matters; drain the body so the socket closes.
              res.resume();
              res.on("error", () => undefined);
              resolve({ status: res.statusCode ?? 0 });
            },
          );
        } catch (err) {
          resolve({ error: errorText(err) });
          return;
        }
        req.on("error", (err) => {
          const timedOut = err.name === "AbortError" || err.name === "TimeoutError";
          resolve({ error: timedOut ? `no answer within ${limit} ms` : errorText(err) });
        });
        req.end();
      });
    },
  };
}
