/**
 * How the AWS Load Balancer Controller names what it creates, re-implemented from its source
 * (kubernetes-sigs/aws-load-balancer-controller) and deliberately NOT shared with the product: if
 * the bot's own naming rule drifts from the controller's, the simulator must disagree with it.
 *
 * Every name is `k8s-…-<first 10 hex of a sha256>`, with `[[:^alnum:]]` stripped from the readable
 * parts and Go's `%.Ns` truncation. The hash inputs are written one after the other, no separator:
 *
 * - ALB (`pkg/ingress/model_build_load_balancer.go` buildLoadBalancerName): cluster, group id
 *   string (`ns/name` for an implicit group, the group name for an explicit one), scheme;
 *   `k8s-<ns:8>-<name:8>-<hash>` or `k8s-<group:17>-<hash>`.
 * - Ingress managed SG (`pkg/ingress/model_build_managed_sg.go`): cluster, group id (no scheme).
 * - Ingress target group (`pkg/ingress/model_build_target_group.go` buildTargetGroupName):
 *   cluster, group id, Ingress namespace, Ingress name, Service UID, service port as written
 *   (`80` or `http`), target group port, target type, protocol, protocol version; readable part
 *   from the Service's namespace and name.
 * - NLB (`pkg/service/model_build_load_balancer.go`): cluster, Service UID, scheme — the UID, so a
 *   re-created Service gets a different NLB name.
 * - Service managed SG (`pkg/service/model_build_managed_sg.go`): cluster, name, namespace, UID.
 * - Service target group (`pkg/service/model_build_target_group.go`): cluster, Service UID,
 *   target group port, service port as written, target type, protocol, health check protocol,
 *   health check interval.
 * - Shared backend SG (`pkg/networking/backend_sg_provider.go` getBackendSGName): cluster only;
 *   `k8s-traffic-<cluster:232>-<hash>`.
 */
import { createHash } from "node:crypto";

const INVALID = /[^a-zA-Z0-9]/g;

/** `[[:^alnum:]]` removed, then Go's `%.<n>s`. */
export function sanitized(s: string, n: number): string {
  return s.replace(INVALID, "").slice(0, n);
}

/** The first 10 hex digits of sha256 over the parts, written without separators (as `uuidHash.Write`). */
export function hash10(...parts: readonly string[]): string {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest("hex").slice(0, 10);
}

/** An IngressGroup id: an explicit group has an empty namespace (`pkg/ingress/group.go`). */
export interface GroupId {
  readonly namespace: string;
  readonly name: string;
}

export const isExplicit = (g: GroupId): boolean => g.namespace === "";

/** `GroupID.String()`: the group name, or `namespace/name`. */
export const groupIdString = (g: GroupId): string => (isExplicit(g) ? g.name : `${g.namespace}/${g.name}`);

/** The finalizer a member of the group carries. */
export const groupFinalizer = (g: GroupId): string =>
  isExplicit(g) ? `group.ingress.k8s.aws/${g.name}` : "ingress.k8s.aws/resources";

function readable(g: GroupId): string {
  return isExplicit(g) ? sanitized(g.name, 17) : `${sanitized(g.namespace, 8)}-${sanitized(g.name, 8)}`;
}

export function albName(cluster: string, group: GroupId, scheme: string): string {
  return `k8s-${readable(group)}-${hash10(cluster, groupIdString(group), scheme)}`;
}

export function ingressManagedSgName(cluster: string, group: GroupId): string {
  return `k8s-${readable(group)}-${hash10(cluster, groupIdString(group))}`;
}

export function ingressTargetGroupName(input: {
  readonly cluster: string;
  readonly group: GroupId;
  readonly ingress: { readonly namespace: string; readonly name: string };
  readonly service: { readonly namespace: string; readonly name: string; readonly uid: string };
  /** The Ingress backend's port as written: a number, or a port name. */
  readonly servicePort: string;
  readonly targetGroupPort: number;
  readonly targetType: string;
  readonly protocol: string;
  readonly protocolVersion: string;
}): string {
  const h = hash10(
    input.cluster,
    groupIdString(input.group),
    input.ingress.namespace,
    input.ingress.name,
    input.service.uid,
    input.servicePort,
    String(input.targetGroupPort),
    input.targetType,
    input.protocol,
    input.protocolVersion,
  );
  return `k8s-${sanitized(input.service.namespace, 8)}-${sanitized(input.service.name, 8)}-${h}`;
}

export function nlbName(
  cluster: string,
  service: { readonly namespace: string; readonly name: string; readonly uid: string },
  scheme: string,
): string {
  return `k8s-${sanitized(service.namespace, 8)}-${sanitized(service.name, 8)}-${hash10(cluster, service.uid, scheme)}`;
}

export function serviceManagedSgName(
  cluster: string,
  service: { readonly namespace: string; readonly name: string; readonly uid: string },
): string {
  const h = hash10(cluster, service.name, service.namespace, service.uid);
  return `k8s-${sanitized(service.namespace, 8)}-${sanitized(service.name, 8)}-${h}`;
}

export function serviceTargetGroupName(input: {
  readonly cluster: string;
  readonly service: { readonly namespace: string; readonly name: string; readonly uid: string };
  readonly targetGroupPort: number;
  /** The Service port as `intstr` writes it (the port number). */
  readonly servicePort: string;
  readonly targetType: string;
  readonly protocol: string;
  readonly healthCheckProtocol: string;
  readonly healthCheckInterval: number;
}): string {
  const h = hash10(
    input.cluster,
    input.service.uid,
    String(input.targetGroupPort),
    input.servicePort,
    input.targetType,
    input.protocol,
    input.healthCheckProtocol,
    String(input.healthCheckInterval),
  );
  return `k8s-${sanitized(input.service.namespace, 8)}-${sanitized(input.service.name, 8)}-${h}`;
}

export function backendSgName(cluster: string): string {
  return `k8s-traffic-${sanitized(cluster, 232)}-${hash10(cluster)}`;
}
