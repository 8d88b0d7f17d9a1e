/**
 * The controller's model builders: from an IngressGroup's members, or from one Service, to the
 * AWS stack they describe (load balancer, security groups, target groups, listeners and rules).
 * Pure — no AWS or kube writes — and failing with the controller's own error texts
 * (`pkg/ingress/model_builder.go`, `group_loader.go`, `pkg/service/model_builder.go`), so a group
 * whose one member is wrong fails as a whole, before anything changes.
 */
import type { KubeObject } from "../kube/index.js";
import {
  albName,
  groupIdString,
  ingressManagedSgName,
  ingressTargetGroupName,
  isExplicit,
  nlbName,
  serviceManagedSgName,
  serviceTargetGroupName,
  type GroupId,
} from "./names.js";

export const TAGS = {
  cluster: "elbv2.k8s.aws/cluster",
  ingressStack: "ingress.k8s.aws/stack",
  ingressResource: "ingress.k8s.aws/resource",
  serviceStack: "service.k8s.aws/stack",
  serviceResource: "service.k8s.aws/resource",
  backend: "elbv2.k8s.aws/resource",
} as const;

const A = {
  scheme: "alb.ingress.kubernetes.io/scheme",
  listenPorts: "alb.ingress.kubernetes.io/listen-ports",
  certificateArn: "alb.ingress.kubernetes.io/certificate-arn",
  securityGroups: "alb.ingress.kubernetes.io/security-groups",
  manageBackendRules: "alb.ingress.kubernetes.io/manage-backend-security-group-rules",
  targetType: "alb.ingress.kubernetes.io/target-type",
  backendProtocol: "alb.ingress.kubernetes.io/backend-protocol",
  backendProtocolVersion: "alb.ingress.kubernetes.io/backend-protocol-version",
  inboundCidrs: "alb.ingress.kubernetes.io/inbound-cidrs",
  groupName: "alb.ingress.kubernetes.io/group.name",
  groupOrder: "alb.ingress.kubernetes.io/group.order",
} as const;

const S = {
  type: "service.beta.kubernetes.io/aws-load-balancer-type",
  targetType: "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type",
  scheme: "service.beta.kubernetes.io/aws-load-balancer-scheme",
  securityGroups: "service.beta.kubernetes.io/aws-load-balancer-security-groups",
  manageBackendRules: "service.beta.kubernetes.io/aws-load-balancer-manage-backend-security-group-rules",
} as const;

/** `spec.loadBalancerClass` the controller serves for Services. */
export const NLB_CLASS = "service.k8s.aws/nlb";

export type Scheme = "internet-facing" | "internal";

export interface TargetGroupModel {
  /** The `…/resource` tag: how the controller recognises its target group across reconciles. */
  readonly resId: string;
  readonly name: string;
  readonly port: number;
  readonly protocol: string;
  readonly targetType: "ip" | "instance";
}

export interface ListenerModel {
  readonly port: number;
  readonly protocol: string;
  readonly certificates: readonly string[];
  /** Forward target when set, else the fixed 404 response. */
  readonly defaultTgResId?: string;
  /** Each rule's paths and, when the Ingress rule names one, its host (a `host-header` condition). */
  readonly rules: readonly {
    readonly paths: readonly string[];
    readonly hosts: readonly string[];
    readonly tgResId: string;
  }[];
}

/** One stack as the controller would deploy it; `lb` undefined means "delete everything". */
export interface StackModel {
  readonly controller: "ingress" | "service";
  readonly stack: string;
  readonly stackTag: string;
  readonly resourceTag: string;
  readonly lb?: { readonly name: string; readonly type: "application" | "network"; readonly scheme: Scheme };
  readonly managedSg?: {
    readonly name: string;
    readonly permissions: readonly { protocol: string; port: number; cidr: string }[];
  };
  readonly userSgs: readonly string[];
  readonly usesBackendSg: boolean;
  readonly targetGroups: readonly TargetGroupModel[];
  readonly listeners: readonly ListenerModel[];
}

/** What a model builder needs from the cluster besides the objects themselves. */
export interface ModelContext {
  readonly cluster: string;
  readonly vpcCidr: string;
  readonly service: (namespace: string, name: string) => KubeObject | undefined;
}

export function annotations(o: KubeObject): Record<string, string> {
  return o.metadata?.annotations ?? {};
}

function nn(o: KubeObject): string {
  return `${o.metadata?.namespace ?? "default"}/${o.metadata?.name ?? ""}`;
}

/** Go's `%v` of a `sets.String`: `map[a:{} b:{}]`, keys sorted. */
function goSet(values: Iterable<string>): string {
  return `map[${[...new Set(values)]
    .sort()
    .map((v) => `${v}:{}`)
    .join(" ")}]`;
}

const list = (raw: string | undefined): string[] =>
  (raw ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");

/** `validateGroupName`: the explicit group an Ingress names, if valid. */
export function explicitGroupOf(ing: KubeObject): string | undefined {
  const name = annotations(ing)[A.groupName];
  if (name === undefined) return undefined;
  return /^([a-z0-9][-a-z0-9.]*)?[a-z0-9]$/.test(name) && name.length <= 63 ? name : undefined;
}

export function groupIdOf(ing: KubeObject): GroupId {
  const explicit = explicitGroupOf(ing);
  return explicit !== undefined
    ? { namespace: "", name: explicit }
    : { namespace: ing.metadata?.namespace ?? "default", name: ing.metadata?.name ?? "" };
}

/** `sortGroupMembers`: by `group.order` (default 0, within [-1000, 1000]), then by `namespace/name`. */
export function sortMembers(members: readonly KubeObject[]): KubeObject[] {
  const withOrder = members.map((m) => {
    const raw = annotations(m)[A.groupOrder];
    let order = 0;
    if (raw !== undefined) {
      if (!/^-?\d+$/.test(raw.trim())) {
        throw new Error(
          `failed to load Ingress group order for ingress: ${nn(m)}: failed to parse int32 annotation, ${A.groupOrder}: ${raw}`,
        );
      }
      order = Number(raw);
      if (order < -1000 || order > 1000) {
        throw new Error(
          `explicit Ingress group order must be within [-1000:1000], Ingress: ${nn(m)}, order: ${order}`,
        );
      }
    }
    return { m, order };
  });
  withOrder.sort((a, b) => a.order - b.order || (nn(a.m) < nn(b.m) ? -1 : nn(a.m) > nn(b.m) ? 1 : 0));
  return withOrder.map((x) => x.m);
}

function listenPorts(ing: KubeObject): { protocol: string; port: number }[] {
  const a = annotations(ing);
  const raw = a[A.listenPorts];
  if (raw === undefined) {
    // `computeIngressListenPorts`: HTTPS 443 when certificates are given, else HTTP 80.
    return list(a[A.certificateArn]).length > 0
      ? [{ protocol: "HTTPS", port: 443 }]
      : [{ protocol: "HTTP", port: 80 }];
  }
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (!Array.isArray(parsed)) throw new Error("not a list");
    return parsed.flatMap((e) =>
      Object.entries(e as Record<string, unknown>).map(([protocol, port]) => {
        if (typeof port !== "number" || (protocol !== "HTTP" && protocol !== "HTTPS")) throw new Error("bad");
        return { protocol, port };
      }),
    );
  } catch {
    throw new Error(`ingress: ${nn(ing)}: failed to parse json annotation, ${A.listenPorts}: ${raw}`);
  }
}

interface Backend {
  service?: { name?: string; port?: { number?: number; name?: string } };
}

function pathPatterns(path: string | undefined, pathType: string | undefined): string[] {
  const p = path === undefined || path === "" ? "/" : path;
  if (pathType === "Exact") return [p];
  if (pathType === "Prefix") return p === "/" ? ["/*"] : [p.replace(/\/$/, ""), `${p.replace(/\/$/, "")}/*`];
  return [p];
}

function servicePortOf(
  svc: KubeObject | undefined,
  port: { number?: number; name?: string },
): { port: number; targetPort?: number; nodePort?: number } {
  type Port = { name?: string; port?: number; targetPort?: number | string; nodePort?: number };
  const ports = (svc as { spec?: { ports?: Port[] } } | undefined)?.spec?.ports ?? [];
  const found = ports.find((p) =>
    port.number !== undefined ? p.port === port.number : p.name === port.name,
  );
  const number = found?.port ?? port.number ?? 80;
  return {
    port: number,
    ...(typeof found?.targetPort === "number" ? { targetPort: found.targetPort } : {}),
    ...(found?.nodePort !== undefined ? { nodePort: found.nodePort } : {}),
  };
}

/**
 * The model of one IngressGroup from its active members (already sorted). No members: the
 * deletion model. Errors name the member the way the controller does (`ingress: ns/name: …`).
 */
export function buildIngressModel(
  group: GroupId,
  members: readonly KubeObject[],
  ctx: ModelContext,
): StackModel {
  const stack = groupIdString(group);
  const base = {
    controller: "ingress" as const,
    stack,
    stackTag: TAGS.ingressStack,
    resourceTag: TAGS.ingressResource,
  };
  if (members.length === 0) {
    return { ...base, userSgs: [], usesBackendSg: false, targetGroups: [], listeners: [] };
  }

  const schemes = members.map((m) => annotations(m)[A.scheme]).filter((s) => s !== undefined);
  if (new Set(schemes).size > 1) throw new Error(`conflicting scheme: ${goSet(schemes)}`);
  const rawScheme = schemes[0] ?? "internal";
  if (rawScheme !== "internet-facing" && rawScheme !== "internal")
    throw new Error(`unknown scheme: ${rawScheme}`);
  const scheme: Scheme = rawScheme;

  const userSgs = [...new Set(members.flatMap((m) => list(annotations(m)[A.securityGroups])))];
  const manageBackend = members.some((m) => annotations(m)[A.manageBackendRules] === "true");
  const usesBackendSg = userSgs.length === 0 || manageBackend;

  const targetGroups = new Map<string, TargetGroupModel>();
  const byPort = new Map<
    number,
    {
      protocol: string;
      certificates: string[];
      defaultTgResId?: string;
      rules: { paths: string[]; hosts: string[]; tgResId: string }[];
    }
  >();
  const cidrs = new Set<string>();

  const tgFor = (ing: KubeObject, backend: Backend): string => {
    const a = annotations(ing);
    const ns = ing.metadata?.namespace ?? "default";
    const svcName = backend.service?.name ?? "";
    const port = backend.service?.port ?? {};
    const portStr = port.number !== undefined ? String(port.number) : (port.name ?? "");
    const resId = `${nn(ing)}-${svcName}:${portStr}`;
    if (targetGroups.has(resId)) return resId;
    const svc = ctx.service(ns, svcName);
    const sp = servicePortOf(svc, port);
    // The controller's --default-target-type is `instance`.
    const targetType = a[A.targetType] === "ip" ? "ip" : "instance";
    const tgPort = targetType === "ip" ? (sp.targetPort ?? sp.port) : (sp.nodePort ?? sp.port);
    const protocol = a[A.backendProtocol] ?? "HTTP";
    const name = ingressTargetGroupName({
      cluster: ctx.cluster,
      group,
      ingress: { namespace: ns, name: ing.metadata?.name ?? "" },
      service: { namespace: ns, name: svcName, uid: svc?.metadata?.uid ?? "" },
      servicePort: portStr,
      targetGroupPort: tgPort,
      targetType,
      protocol,
      protocolVersion: a[A.backendProtocolVersion] ?? "HTTP1",
    });
    targetGroups.set(resId, { resId, name, port: tgPort, protocol, targetType });
    return resId;
  };

  for (const m of members) {
    const a = annotations(m);
    const spec = (
      m as {
        spec?: {
          defaultBackend?: Backend;
          rules?: {
            host?: string;
            http?: { paths?: { path?: string; pathType?: string; backend?: Backend }[] };
          }[];
        };
      }
    ).spec;
    for (const c of list(a[A.inboundCidrs])) cidrs.add(c);
    for (const lp of listenPorts(m)) {
      const cur = byPort.get(lp.port) ?? { protocol: lp.protocol, certificates: [], rules: [] };
      if (cur.protocol !== lp.protocol) {
        throw new Error(`conflicting protocol for port ${lp.port}: ${goSet([cur.protocol, lp.protocol])}`);
      }
      if (lp.protocol === "HTTPS") {
        for (const c of list(a[A.certificateArn]))
          if (!cur.certificates.includes(c)) cur.certificates.push(c);
      }
      if (spec?.defaultBackend?.service !== undefined && cur.defaultTgResId === undefined) {
        cur.defaultTgResId = tgFor(m, spec.defaultBackend);
      }
      for (const rule of spec?.rules ?? []) {
        for (const p of rule.http?.paths ?? []) {
          if (p.backend?.service === undefined) continue;
          cur.rules.push({
            paths: pathPatterns(p.path, p.pathType),
            hosts: rule.host !== undefined && rule.host !== "" ? [rule.host] : [],
            tgResId: tgFor(m, p.backend),
          });
        }
      }
      byPort.set(lp.port, cur);
    }
  }

  const listeners: ListenerModel[] = [...byPort.entries()]
    .sort(([a], [b]) => a - b)
    .map(([port, l]) => ({
      port,
      protocol: l.protocol,
      certificates: l.certificates,
      ...(l.defaultTgResId !== undefined ? { defaultTgResId: l.defaultTgResId } : {}),
      rules: l.rules,
    }));
  const sources = cidrs.size > 0 ? [...cidrs] : ["0.0.0.0/0"];
  return {
    ...base,
    lb: { name: albName(ctx.cluster, group, scheme), type: "application", scheme },
    ...(userSgs.length === 0
      ? {
          managedSg: {
            name: ingressManagedSgName(ctx.cluster, group),
            permissions: listeners.flatMap((l) =>
              sources.map((cidr) => ({ protocol: "tcp", port: l.port, cidr })),
            ),
          },
        }
      : {}),
    userSgs,
    usesBackendSg,
    targetGroups: [...targetGroups.values()],
    listeners,
  };
}

/** Whether the controller serves this Service (a live one; a deleting one is known by its finalizer). */
export function isNlbService(svc: KubeObject): boolean {
  const spec = (svc as { spec?: { type?: string; loadBalancerClass?: string } }).spec;
  if (spec?.type !== "LoadBalancer") return false;
  if (spec.loadBalancerClass !== undefined) return spec.loadBalancerClass === NLB_CLASS;
  const a = annotations(svc);
  return (
    a[S.type] === "nlb-ip" ||
    (a[S.type] === "external" && (a[S.targetType] === "ip" || a[S.targetType] === "instance"))
  );
}

/** The model of one Service's NLB stack (`deleting`: the deletion model). */
export function buildServiceModel(svc: KubeObject, deleting: boolean, ctx: ModelContext): StackModel {
  const ns = svc.metadata?.namespace ?? "default";
  const name = svc.metadata?.name ?? "";
  const uid = svc.metadata?.uid ?? "";
  const base = {
    controller: "service" as const,
    stack: `${ns}/${name}`,
    stackTag: TAGS.serviceStack,
    resourceTag: TAGS.serviceResource,
  };
  if (deleting) return { ...base, userSgs: [], usesBackendSg: false, targetGroups: [], listeners: [] };
  const a = annotations(svc);
  const rawScheme = a[S.scheme] ?? "internal";
  if (rawScheme !== "internet-facing" && rawScheme !== "internal")
    throw new Error(`unknown scheme: ${rawScheme}`);
  const scheme: Scheme = rawScheme;
  const targetType = a[S.type] === "nlb-ip" || a[S.targetType] === "ip" ? "ip" : "instance";
  type Port = { port: number; protocol?: string; targetPort?: number | string; nodePort?: number };
  const ports = (svc as { spec?: { ports?: Port[] } }).spec?.ports ?? [];
  const userSgs = list(a[S.securityGroups]);
  const usesBackendSg = userSgs.length === 0 || a[S.manageBackendRules] === "true";
  const targetGroups: TargetGroupModel[] = [];
  const listeners: ListenerModel[] = [];
  for (const p of ports) {
    const protocol = (p.protocol ?? "TCP").toUpperCase();
    const tgPort =
      targetType === "ip"
        ? typeof p.targetPort === "number"
          ? p.targetPort
          : p.port
        : (p.nodePort ?? p.port);
    const resId = `${ns}/${name}:${p.port}`;
    targetGroups.push({
      resId,
      name: serviceTargetGroupName({
        cluster: ctx.cluster,
        service: { namespace: ns, name, uid },
        targetGroupPort: tgPort,
        servicePort: String(p.port),
        targetType,
        protocol,
        healthCheckProtocol: "TCP",
        healthCheckInterval: 10,
      }),
      port: tgPort,
      protocol,
      targetType,
    });
    listeners.push({ port: p.port, protocol, certificates: [], defaultTgResId: resId, rules: [] });
  }
  const cidr = scheme === "internet-facing" ? "0.0.0.0/0" : ctx.vpcCidr;
  return {
    ...base,
    lb: { name: nlbName(ctx.cluster, { namespace: ns, name, uid }, scheme), type: "network", scheme },
    ...(userSgs.length === 0
      ? {
          managedSg: {
            name: serviceManagedSgName(ctx.cluster, { namespace: ns, name, uid }),
            permissions: listeners.map((l) => ({ protocol: l.protocol.toLowerCase(), port: l.port, cidr })),
          },
        }
      : {}),
    userSgs,
    usesBackendSg,
    targetGroups,
    listeners,
  };
}

export { isExplicit };
