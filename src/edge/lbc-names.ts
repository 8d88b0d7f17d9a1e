/**
 * How the AWS Load Balancer Controller names and tags what it creates (v2.x/v3.x,
 * `pkg/ingress/model_build_load_balancer.go`), so the bot can find a stack's AWS resources with
 * exact names and server-side tag filters instead of listing a whole account.
 */
import { createHash } from "node:crypto";
import type { ObjectSnapshot } from "../kube/types.js";

const INVALID_NAME_CHARS = /[^a-zA-Z0-9]/g;

export const LBC_TAGS = {
  cluster: "elbv2.k8s.aws/cluster",
  ingressStack: "ingress.k8s.aws/stack",
  ingressResource: "ingress.k8s.aws/resource",
  serviceStack: "service.k8s.aws/stack",
  resource: "elbv2.k8s.aws/resource",
} as const;

export interface IngressStack {
  /** The stack tag's value: the IngressGroup name, or `namespace/name`. */
  readonly stack: string;
  /** Which tag carries it: `ingress.k8s.aws/stack` for Ingresses, `service.k8s.aws/stack` for Services (NLB). */
  readonly tagKey: string;
  readonly explicitGroup: boolean;
  readonly scheme: "internet-facing" | "internal";
}

/** An IngressGroup name as the controller accepts it (a DNS label: lower case, digits, `-` and `.`). */
const GROUP_NAME = /^([a-z0-9][-a-z0-9.]*)?[a-z0-9]$/;

/**
 * Why the controller refuses an Ingress's `group.name` (it then builds nothing for the Ingress), or
 * undefined when the name is valid or absent.
 */
export function refusedGroupName(
  o: Pick<ObjectSnapshot, "annotations"> & { kind?: string },
): string | undefined {
  if (o.kind === "Service") return undefined;
  const group = o.annotations["alb.ingress.kubernetes.io/group.name"];
  if (group === undefined) return undefined;
  if (group.length > 63) return `its group.name is longer than 63 characters`;
  if (!GROUP_NAME.test(group))
    return `its group.name ${JSON.stringify(group.slice(0, 80))} is not a valid group name`;
  return undefined;
}

/**
 * The stack an object belongs to: a Service (NLB) is its own stack under `service.k8s.aws/stack`;
 * an Ingress belongs to its IngressGroup, else to the implicit one-Ingress group.
 */
export function ingressStack(
  o: Pick<ObjectSnapshot, "namespace" | "name" | "annotations"> & { kind?: string },
): IngressStack {
  const own = `${o.namespace ?? "default"}/${o.name}`;
  if (o.kind === "Service") {
    const scheme =
      o.annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"] === "internet-facing"
        ? "internet-facing"
        : "internal";
    return { stack: own, tagKey: LBC_TAGS.serviceStack, explicitGroup: false, scheme };
  }
  const group = o.annotations["alb.ingress.kubernetes.io/group.name"];
  const scheme =
    o.annotations["alb.ingress.kubernetes.io/scheme"] === "internet-facing" ? "internet-facing" : "internal";
  return group
    ? { stack: group, tagKey: LBC_TAGS.ingressStack, explicitGroup: true, scheme }
    : { stack: own, tagKey: LBC_TAGS.ingressStack, explicitGroup: false, scheme };
}

/** One part of a controller-given name: the value without what names cannot hold, cut to `length`. */
export function lbcNameSegment(value: string, length: number): string {
  return value.replace(INVALID_NAME_CHARS, "").slice(0, length);
}

/** The load balancer name the controller derives: `k8s-<ns:8>-<name:8>-<hash:10>` or `k8s-<group:17>-<hash:10>`. */
export function lbcLoadBalancerName(
  cluster: string,
  stack: Pick<IngressStack, "stack" | "explicitGroup" | "scheme">,
): string {
  const hash = createHash("sha256").update(cluster).update(stack.stack).update(stack.scheme).digest("hex");
  if (stack.explicitGroup) return `k8s-${lbcNameSegment(stack.stack, 17)}-${hash.slice(0, 10)}`;
  const [ns = "", name = ""] = stack.stack.split("/");
  return `k8s-${lbcNameSegment(ns, 8)}-${lbcNameSegment(name, 8)}-${hash.slice(0, 10)}`;
}

/**
 * The NLB name the controller derives for a Service: `k8s-<ns:8>-<name:8>-<hash:10>`, the hash over
 * the cluster, the Service's UID and the scheme (so a re-created Service gets another name).
 */
export function lbcNlbName(
  cluster: string,
  service: { readonly namespace: string; readonly name: string; readonly uid: string },
  scheme: "internet-facing" | "internal",
): string {
  const hash = createHash("sha256").update(cluster).update(service.uid).update(scheme).digest("hex");
  return `k8s-${lbcNameSegment(service.namespace, 8)}-${lbcNameSegment(service.name, 8)}-${hash.slice(0, 10)}`;
}

/**
 * The load balancer name inside an ELB DNS name: ALB `[internal-]<name>-<digits>.<region>.elb.amazonaws.com`,
 * NLB `[internal-]<name>-<hex>.elb.<region>.amazonaws.com`.
 */
export function loadBalancerNameFromHostname(hostname: string): string | undefined {
  const label = hostname
    .toLowerCase()
    .replace(/^dualstack\./, "")
    .split(".")[0];
  if (!label || !hostname.toLowerCase().includes(".elb.")) return undefined;
  // ALB: `<name>-<decimal id>`; NLB: `<name>-<hex id>`. The id is always the last label part.
  const m = /^(?:internal-)?(.+)-[0-9a-f]+$/.exec(label);
  return m?.[1];
}

/** `--cluster-name` from a controller's args. */
export function clusterNameFromArgs(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? "";
    if (a.startsWith("--cluster-name=")) return a.slice("--cluster-name=".length);
    if (a === "--cluster-name") return args[i + 1];
  }
  return undefined;
}
