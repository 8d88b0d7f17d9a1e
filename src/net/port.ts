/**
 * The contract of the edge probes (src/net/probe.ts): what one DNS lookup and one HTTP request
 * answer, as data. The waits and the trace are handed an `EdgeProbe`; the pure model reads these
 * shapes without loading the probe.
 */

/** The outcome of resolving a name (A, then AAAA when there is no A record). */
export type ResolveResult =
  /** The name exists; `addresses` is empty when it has neither A nor AAAA records (NODATA). */
  | { readonly kind: "addresses"; readonly addresses: string[] }
  /** The name does not exist (NXDOMAIN): what a deleted load balancer's DNS name answers. */
  | { readonly kind: "nxdomain" }
  /** No answer either way (timeout, SERVFAIL, refused): not evidence of anything. */
  | { readonly kind: "error"; readonly message: string };

/** The outcome of one HTTP request: the status code, or why there was none. */
export type HttpResult = { readonly status: number } | { readonly error: string };

export interface HttpProbeOptions {
  /** `GET` (default) or `HEAD`. Redirects are not followed: a 3xx is reported as it is. */
  readonly method?: "GET" | "HEAD";
  /** Overrides the probe's timeout for this request. */
  readonly timeoutMs?: number;
}

/** The two looks at the edge a wait needs. Injected, so tests never reach the network by accident. */
export interface EdgeProbe {
  resolve(name: string): Promise<ResolveResult>;
  http(url: string, opts?: HttpProbeOptions): Promise<HttpResult>;
}
