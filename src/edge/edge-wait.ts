/**
 * What an edge wait waits for and what one look at it saw, as plain data: the waits (src/jobs) look
 * and decide, the probes (src/net) answer, and the words for people (src/render/edge-wait-text.ts)
 * are rendered from the same shapes.
 */

import type { HttpResult, ResolveResult } from "../net/port.js";

export type EdgeWaitTarget =
  | { readonly kind: "cloudfront-deployed"; readonly distributionId: string }
  | { readonly kind: "route53-insync"; readonly changeId: string; readonly zoneName?: string }
  /** An old load balancer name that must stop resolving. */
  | { readonly kind: "dns-nxdomain"; readonly name: string }
  /** A URL that must answer 2xx, e.g. `https://test.example.com/readyz`. */
  | { readonly kind: "http-ok"; readonly url: string };

export type EdgeWaitKind = EdgeWaitTarget["kind"];

/**
 * What one look at a target saw: what the waits on the same target share; each wait words it itself.
 */
export type Look =
  | { readonly kind: "cloudfront-deployed"; readonly status: string }
  | { readonly kind: "route53-insync"; readonly status: string }
  | { readonly kind: "dns-nxdomain"; readonly answer: ResolveResult }
  | { readonly kind: "http-ok"; readonly answer: HttpResult };

/** Whether a look shows the target reached: Deployed, INSYNC, NXDOMAIN, a 2xx. */
export function lookIsDone(look: Look): boolean {
  switch (look.kind) {
    case "cloudfront-deployed":
      return look.status === "Deployed";
    case "route53-insync":
      return look.status === "INSYNC";
    case "dns-nxdomain":
      return look.answer.kind === "nxdomain";
    case "http-ok":
      return "status" in look.answer && look.answer.status >= 200 && look.answer.status < 300;
  }
}

/** A Route 53 change id without its `/change/` prefix. */
export function changeIdOf(changeId: string): string {
  return changeId.replace(/^\/?change\//, "");
}
