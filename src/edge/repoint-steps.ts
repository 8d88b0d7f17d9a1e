/**
 * The steps of a traffic-path repair as the planner (src/edge/repoint.ts) makes them: the exact
 * Route 53 change batches and CloudFront origin edits, and the load balancers they point at. The
 * planner owns them; the request model carries them inside a repoint action.
 */
import type { RecordChange } from "../aws/port.js";

/**
 * One Route 53 change batch of a repoint plan: for each stale record, DELETE with its exact current
 * values and CREATE of the same record naming the new target. Route 53 applies a batch atomically and
 * fails it whole when a DELETE no longer matches, so a concurrent edit is refused, never overwritten.
 */
export interface Route53RepointStep {
  readonly kind: "route53";
  readonly zoneId: string;
  readonly zoneName: string;
  readonly changes: readonly RecordChange[];
  /** One line per record: name, type, old → new target (for the request and the audit log). */
  readonly edits: readonly {
    readonly name: string;
    readonly type: string;
    readonly from: string;
    readonly to: string;
  }[];
}

/**
 * A CloudFront origin's `DomainName` changed from `from` to `to`, sent with `If-Match: etag` (the ETag
 * read when the plan was made): a distribution edited since then is refused by CloudFront (412).
 */
export interface CloudFrontOriginStep {
  readonly kind: "cloudfront-origin";
  readonly distributionId: string;
  readonly originId: string;
  readonly from: string;
  readonly to: string;
  readonly etag: string;
  /** Hostnames served through this origin. */
  readonly hostnames: readonly string[];
}

export type RepointStep = Route53RepointStep | CloudFrontOriginStep;

/**
 * A load balancer a repair points at, with what approvers must see of it: whose it is (from the
 * controller's tags), which cluster tagged it, the hosts its owner's rules serve, and how it was
 * established as the replacement.
 */
export interface RepointTarget {
  readonly loadBalancer: string;
  readonly dnsName: string;
  /** `Ingress ns/name`, `IngressGroup …`, `Service ns/name`; absent when this cluster's controller did not tag it. */
  readonly owner?: string;
  readonly namespaces?: readonly string[];
  readonly cluster?: string;
  /** Hosts its owner's rules serve (`*`: any host). */
  readonly serves: readonly string[];
  /** The evidence it replaces the old target, or that the requester named it with `--to`. */
  readonly established: string;
  /** The hostnames whose links it takes over. */
  readonly hostnames: readonly string[];
}
