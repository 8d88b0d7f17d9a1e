/**
 * The traffic path, the upper half of the edge model: hostnames (Route 53) → CloudFront
 * distributions → origins → load balancers → the Ingress/Service that owns each now. Pure: built
 * from snapshots, no I/O. Each link is judged:
 *
 * - `ok`: it names a load balancer that exists and is the one its owner uses now;
 * - `stale`: it names a load balancer that does not exist (its DNS name no longer resolves);
 * - `mismatched`: the load balancer exists, but its Ingress/Service now uses another one;
 * - `unknown`: it could not be judged (say why).
 *
 * A stale or mismatched link carries its replacement when exactly one candidate exists, and says
 * so when there are several (a plan never guesses). CloudFront origins are never fixed by anyone
 * else; Route 53 records owned by ExternalDNS are marked so (ExternalDNS repairs them).
 */
import type {
  DistributionSnapshot,
  HostedZoneSnapshot,
  LoadBalancerSnapshot,
  RecordSetSnapshot,
} from "../aws/types.js";
import type { ObjectSnapshot } from "../kube/types.js";
import { EDGE_TAGS } from "./model.js";
import { buildOwnership, type Ownership, type ReplacementAnswer } from "./ownership.js";

export type LinkVerdict = "ok" | "stale" | "mismatched" | "unknown";

/** Lower case, without `dualstack.` or a trailing dot: how two DNS names are compared. */
export function normalizeDns(h: string): string {
  return h
    .trim()
    .toLowerCase()
    .replace(/\.$/, "")
    .replace(/^dualstack\./, "");
}

/** Whether a DNS name is an Elastic Load Balancing name. */
export function isElbDns(h: string): boolean {
  return /\.elb\.([a-z0-9-]+\.)?amazonaws\.com(\.cn)?$/.test(normalizeDns(h));
}

/** The load balancer name inside an ELB DNS name (`[internal-]<name>-<id>.…`). */
export function elbNameOf(h: string): string | undefined {
  if (!isElbDns(h)) return undefined;
  const label = normalizeDns(h).split(".")[0] ?? "";
  return /^(?:internal-)?(.+)-[0-9a-f]+$/.exec(label)?.[1];
}

/** `k8s-<ns>-<name>-<hash>` → `k8s-<ns>-<name>-`: what stays when the controller re-creates a stack under a new hash. */
export function controllerNamePrefix(name: string): string | undefined {
  const m = /^(k8s-.+-)[0-9a-f]{10}$/.exec(name);
  return m?.[1];
}

export interface PathHop {
  readonly kind: "record" | "distribution" | "origin" | "load-balancer" | "owner";
  /** What a person reads: `A test.example.com (alias)`, `origin myapp-worker-alb → k8s-…elb…`. */
  readonly label: string;
  readonly verdict: LinkVerdict;
  readonly why: string;
  /** For a stale or mismatched link to a load balancer: the one it should name instead, and why. */
  readonly replacement?: HopReplacement;
  /** Several load balancers of the old target's owner serve the host: the plan must ask, not guess. */
  readonly candidates?: readonly string[];
  /** A stale or mismatched link with no replacement: why (owner unknown, not back, not serving the host). */
  readonly unresolved?: string;
  /** Who owned the load balancer a stale link names, when established, and how. */
  readonly oldOwner?: {
    readonly label: string;
    readonly namespaces: readonly string[];
    readonly evidence: string;
  };
  /** Route 53 record owned by ExternalDNS (it will fix it by itself). */
  readonly externalDns?: boolean;
  /** A lint, not a fault: e.g. an origin that names a generated load balancer DNS name. */
  readonly warning?: string;
  /** Ids to act on (zone id + record, distribution id + origin id). */
  readonly ref?: Readonly<Record<string, string>>;
}

/** A replacement load balancer with what an approver must see of it. */
export interface HopReplacement {
  readonly dnsName: string;
  readonly loadBalancer: string;
  /** Its owner (`Ingress ns/name`, `IngressGroup …`, `Service ns/name`), from the controller's tags. */
  readonly owner?: string;
  readonly namespaces?: readonly string[];
  readonly cluster?: string;
  /** The hosts its owner's rules serve (`*`: any). */
  readonly serves?: readonly string[];
  /** How it was established. */
  readonly evidence?: string;
}

export interface TracedPath {
  /** The name a client asks for. */
  readonly hostname: string;
  /** Hops in order, from the name to the owner (branching hops are flattened with their depth). */
  readonly hops: readonly (PathHop & { readonly depth: number })[];
  /** The worst verdict on the path. */
  readonly verdict: LinkVerdict;
  /**
   * The name has no record in the zones read and no distribution answers for it: why, in words
   * (`no A/AAAA/CNAME record named … in zone …`). Absent when the name resolves somewhere.
   */
  readonly missing?: string;
}

export interface TraceInput {
  readonly cluster?: string;
  readonly hostnames: readonly string[];
  readonly zones: readonly HostedZoneSnapshot[];
  /** Records of the zones (at least those named by `hostnames`, and TXT ownership records). */
  readonly records: readonly RecordSetSnapshot[];
  readonly distributions: readonly DistributionSnapshot[];
  readonly loadBalancers: readonly LoadBalancerSnapshot[];
  /** Ingresses and Services of the cluster with their current load-balancer hostnames. */
  readonly owners: readonly ObjectSnapshot[];
}

const ORDER: Record<LinkVerdict, number> = { ok: 0, unknown: 1, mismatched: 2, stale: 3 };
const worst = (vs: readonly LinkVerdict[]): LinkVerdict =>
  vs.reduce<LinkVerdict>((w, v) => (ORDER[v] > ORDER[w] ? v : w), "ok");

/** Does a CloudFront alternate domain name (possibly `*.example.com`) serve `host`? */
export function aliasMatches(alias: string, host: string): boolean {
  const a = alias.toLowerCase();
  const h = normalizeDns(host);
  if (a === h) return true;
  if (a.startsWith("*.")) {
    const rest = a.slice(1);
    return h.endsWith(rest) && !h.slice(0, -rest.length).includes(".");
  }
  return false;
}

/** A hop with its depth on the path (branches are flattened). */
type DepthHop = PathHop & { depth: number };

/** The snapshots of a trace, indexed once: what every step of the walk looks things up in. */
interface TraceContext {
  readonly input: TraceInput;
  readonly lbByDns: ReadonlyMap<string, LoadBalancerSnapshot>;
  readonly distByDomain: ReadonlyMap<string, DistributionSnapshot>;
  /** The Ingress or Service whose status names each load-balancer hostname. */
  readonly ownerByHost: ReadonlyMap<string, ObjectSnapshot>;
  readonly ownership: Ownership;
}

/** Index a trace's snapshots and build the ownership evidence its judgements rest on. */
function traceContext(input: TraceInput): TraceContext {
  const ownerByHost = new Map<string, ObjectSnapshot>();
  for (const o of input.owners)
    for (const h of o.loadBalancerHostnames ?? []) ownerByHost.set(normalizeDns(h), o);
  return {
    input,
    lbByDns: new Map(input.loadBalancers.map((l) => [normalizeDns(l.dnsName), l])),
    distByDomain: new Map(input.distributions.map((d) => [normalizeDns(d.domainName), d])),
    ownerByHost,
    ownership: buildOwnership({
      ...(input.cluster !== undefined ? { cluster: input.cluster } : {}),
      owners: input.owners,
      loadBalancers: input.loadBalancers,
      records: input.records,
    }),
  };
}

/** How a hop names an Ingress or Service: `Ingress ns/name`. */
const ref = (o: ObjectSnapshot): string => `${o.kind} ${o.namespace ?? ""}/${o.name}`;

/** The owner a status names, else the one its exact derived name establishes: never its tags alone. */
function ownerOfLb(ctx: TraceContext, lb: LoadBalancerSnapshot): ObjectSnapshot | undefined {
  return ctx.ownerByHost.get(normalizeDns(lb.dnsName)) ?? ctx.ownership.memberOf(lb);
}

/** A replacement answer as hop fields. */
function asHop(
  answer: ReplacementAnswer,
): Pick<PathHop, "replacement" | "candidates" | "unresolved" | "oldOwner"> {
  const oldOwner =
    answer.oldOwner !== undefined
      ? {
          oldOwner: {
            label: answer.oldOwner.owner.label,
            namespaces: answer.oldOwner.owner.namespaces,
            evidence: answer.oldOwner.evidence,
          },
        }
      : {};
  if (answer.kind === "found") {
    const t = answer.target;
    return {
      ...oldOwner,
      replacement: {
        dnsName: t.dnsName,
        loadBalancer: t.loadBalancer,
        ...(t.owner ? { owner: t.owner.label, namespaces: t.owner.namespaces } : {}),
        ...(t.cluster !== undefined ? { cluster: t.cluster } : {}),
        serves: t.serves,
        evidence: answer.evidence,
      },
    };
  }
  if (answer.kind === "several") {
    return {
      ...oldOwner,
      candidates: answer.targets.map(
        (t) => `${t.loadBalancer} (${t.owner?.label ?? "no owner"}, serves ${t.serves.join(", ")})`,
      ),
    };
  }
  return { ...oldOwner, unresolved: answer.why };
}

/** Where a link to a load balancer is drawn: its depth, its label, the host clients ask for. */
interface LinkAt {
  readonly depth: number;
  readonly label: string;
  readonly host: string;
}

/** The hops from a DNS name that is an ELB name. */
function lbHops(ctx: TraceContext, target: string, at: LinkAt, recordName?: string): DepthHop[] {
  const { depth, label, host } = at;
  const lb = ctx.lbByDns.get(normalizeDns(target));
  if (!lb) {
    return [
      {
        kind: "load-balancer",
        depth,
        label,
        verdict: "stale",
        why: `names ${normalizeDns(target)}, a load balancer that does not exist (its name no longer resolves: NXDOMAIN)`,
        ...asHop(ctx.ownership.replacementFor(target, host, recordName)),
      },
    ];
  }
  const owner = ownerOfLb(ctx, lb);
  if (owner) return ownedLbHops(ctx, lb, owner, at);
  return [
    {
      kind: "load-balancer",
      depth,
      label,
      verdict: lb.state === "active" ? "ok" : "unknown",
      why: `load balancer ${lb.name}, ${lb.state}; no Ingress or Service of this cluster owns it`,
      ref: { loadBalancerArn: lb.arn },
    },
  ];
}

/**
 * The hops of a load balancer an Ingress or Service owns: mismatched when its owner now uses another
 * one, else the load balancer and its owner (stale while the owner is being deleted).
 */
function ownedLbHops(
  ctx: TraceContext,
  lb: LoadBalancerSnapshot,
  owner: ObjectSnapshot,
  at: LinkAt,
): DepthHop[] {
  const { depth, label, host } = at;
  const now = owner.loadBalancerHostnames?.map(normalizeDns) ?? [];
  if (now.length > 0 && !now.includes(normalizeDns(lb.dnsName))) {
    return [
      {
        kind: "load-balancer",
        depth,
        label,
        verdict: "mismatched",
        why: `names load balancer ${lb.name}, but ${ref(owner)} now uses ${owner.loadBalancerHostnames?.[0] ?? "another"}`,
        ...asHop(ctx.ownership.currentFor(lb, owner, host)),
      },
    ];
  }
  return [
    {
      kind: "load-balancer",
      depth,
      label,
      verdict: lb.state === "active" ? "ok" : "unknown",
      why:
        lb.state === "active"
          ? `load balancer ${lb.name} (${lb.type}), active`
          : `load balancer ${lb.name} is ${lb.state}`,
      ref: { loadBalancerArn: lb.arn },
    },
    {
      kind: "owner",
      depth: depth + 1,
      label: ref(owner),
      verdict: owner.deletionTimestamp !== undefined ? "stale" : "ok",
      why:
        owner.deletionTimestamp !== undefined
          ? `${ref(owner)} is being deleted`
          : `served by ${ref(owner)}${lb.tags[EDGE_TAGS.cluster] ? ` (cluster ${lb.tags[EDGE_TAGS.cluster]})` : ""}`,
    },
  ];
}

/** Which behaviours use each origin of a distribution (an origin group counts for its members). */
function behavioursByOrigin(d: DistributionSnapshot): Map<string, string[]> {
  const used = new Map<string, string[]>();
  const use = (target: string, what: string): void => {
    const group = d.originGroups.find((g) => g.id === target);
    for (const id of group ? group.members : [target]) used.set(id, [...(used.get(id) ?? []), what]);
  };
  use(d.defaultTarget, "default behaviour");
  for (const b of d.behaviors) use(b.target, b.pathPattern);
  return used;
}

/** The hops of a distribution: the distribution itself, then each origin and what it leads to. */
function distributionHops(
  ctx: TraceContext,
  d: DistributionSnapshot,
  depth: number,
  host: string,
): DepthHop[] {
  const hops: DepthHop[] = [
    {
      kind: "distribution",
      depth,
      label: `CloudFront ${d.id} (${d.domainName})`,
      verdict: d.enabled ? "ok" : "unknown",
      why: `${d.status}${d.enabled ? "" : ", disabled"}; aliases ${d.aliases.join(", ") || "none"}`,
      ref: { distributionId: d.id },
    },
  ];
  const used = behavioursByOrigin(d);
  for (const o of d.origins) {
    const behaviours = used.get(o.id) ?? [];
    const label = `origin ${o.id} → ${o.domainName}${behaviours.length > 0 ? ` (${behaviours.join(", ")})` : " (no behaviour uses it)"}`;
    hops.push(...originHops(ctx, d, o, { depth: depth + 1, label, host }));
  }
  return hops;
}

/**
 * The hops of one origin: an origin naming a load balancer is that load balancer's link (with a
 * warning, since nobody repairs it); any other origin is followed as a DNS name.
 */
function originHops(
  ctx: TraceContext,
  d: DistributionSnapshot,
  o: DistributionSnapshot["origins"][number],
  at: LinkAt,
): DepthHop[] {
  if (isElbDns(o.domainName)) {
    return lbHops(ctx, o.domainName, at).map((h, i) =>
      i === 0
        ? {
            ...h,
            kind: "origin" as const,
            ref: { ...(h.ref ?? {}), distributionId: d.id, originId: o.id },
            // Nobody repairs a CloudFront origin: ExternalDNS only covers Route 53.
            warning:
              "fragile: the origin names a load balancer's generated DNS name, which changes whenever the controller re-creates it — point it at a stable Route 53 name that aliases the load balancer",
          }
        : h,
    );
  }
  const inner = followName(ctx, o.domainName, at.depth + 1, new Set(), at.host);
  return [
    {
      kind: "origin",
      depth: at.depth,
      label: at.label,
      verdict: inner.length > 0 ? worst(inner.map((h) => h.verdict)) : "unknown",
      why:
        inner.length > 0 ? `resolves through ${o.domainName}` : `${o.domainName} is outside the zones read`,
      ref: { distributionId: d.id, originId: o.id },
    },
    ...inner,
  ];
}

/** Follow a DNS name through our zones, CloudFront and ELB; `host` is the name clients ask for, which a replacement must serve. */
function followName(
  ctx: TraceContext,
  name: string,
  depth: number,
  seen: Set<string>,
  host: string,
  recordName?: string,
): DepthHop[] {
  const n = normalizeDns(name);
  if (seen.has(n) || depth > 12) return [];
  seen.add(n);
  if (isElbDns(n)) return lbHops(ctx, n, { depth, label: `load balancer ${n}`, host }, recordName);
  const dist = ctx.distByDomain.get(n);
  if (dist) return distributionHops(ctx, dist, depth, host);
  // A distribution's name that none read answers to (unreadable, or another account's): not judged.
  if (n.endsWith(".cloudfront.net")) {
    return [
      {
        kind: "distribution",
        depth,
        label: `CloudFront ${n}`,
        verdict: "unknown",
        why: "not among the distributions read",
      },
    ];
  }
  const records = ctx.input.records.filter((r) => r.name === n && ["A", "AAAA", "CNAME"].includes(r.type));
  if (records.length === 0) return noRecordHops(ctx.input, n, depth);
  const owned = externalDnsOwned(ctx.input.records, n);
  const hops: DepthHop[] = [];
  for (const r of records) hops.push(...recordHops(ctx, r, { depth, seen, host, owned }));
  return hops;
}

/** A name with no A/AAAA/CNAME record of ours: unknown, and said why (nothing when no zone or distribution serves it). */
function noRecordHops(input: TraceInput, n: string, depth: number): DepthHop[] {
  const zone = longestZone(input.zones, n);
  // Names served by a distribution but with no record of ours: CloudFront still answers for them.
  const served = input.distributions.filter((d) => d.aliases.some((a) => aliasMatches(a, n)));
  if (zone === undefined && served.length === 0) return [];
  return [
    {
      kind: "record",
      depth,
      label: n,
      verdict: "unknown",
      why: zone
        ? `no A/AAAA/CNAME record named ${n} in zone ${zone.name} (${zone.id})`
        : `no zone read serves ${n}`,
    },
  ];
}

/** A record's routing policy as a label suffix (` [weight 10 blue]`), empty for a simple record. */
function policyOf(r: RecordSetSnapshot): string {
  if (!r.setIdentifier) return "";
  const kind =
    r.weight !== undefined
      ? `weight ${String(r.weight)}`
      : r.failover
        ? `failover ${r.failover}`
        : r.region
          ? `latency ${r.region}`
          : "set";
  return ` [${kind} ${r.setIdentifier}]`;
}

/** The repair fields of the load-balancer hop a record leads to: the record is what a repair changes. */
function carriedRepair(
  next: DepthHop | undefined,
): Pick<PathHop, "replacement" | "candidates" | "unresolved" | "oldOwner"> {
  if (next?.kind !== "load-balancer") return {};
  return {
    ...(next.replacement ? { replacement: next.replacement } : {}),
    ...(next.candidates ? { candidates: next.candidates } : {}),
    ...(next.unresolved !== undefined ? { unresolved: next.unresolved } : {}),
    ...(next.oldOwner ? { oldOwner: next.oldOwner } : {}),
  };
}

/** Where a record is walked from: its depth, the names already followed, the host, whether ExternalDNS owns it. */
interface RecordAt {
  readonly depth: number;
  readonly seen: Set<string>;
  readonly host: string;
  readonly owned: boolean;
}

/** One record's hop, judged by the first hop of its target, followed by its target's hops. */
function recordHops(ctx: TraceContext, r: RecordSetSnapshot, at: RecordAt): DepthHop[] {
  const { depth, owned } = at;
  const target = r.alias?.dnsName ?? r.values[0] ?? "";
  const zoneOf = ctx.input.zones.find((z) => z.id === r.zoneId);
  const inner = followName(ctx, target, depth + 1, at.seen, at.host, r.name);
  return [
    {
      kind: "record",
      depth,
      label: `${r.type} ${r.name}${r.alias ? " (alias)" : ""}${policyOf(r)} → ${normalizeDns(target)}`,
      verdict: inner[0]?.verdict === "stale" || inner[0]?.verdict === "mismatched" ? inner[0].verdict : "ok",
      ...carriedRepair(inner[0]),
      why: `in ${zoneOf?.private ? "private" : "public"} zone ${zoneOf?.name ?? r.zoneId}${owned ? "; owned by ExternalDNS (it will repair this record)" : ""}`,
      ...(owned ? { externalDns: true } : {}),
      ref: {
        zoneId: r.zoneId,
        name: r.name,
        type: r.type,
        ...(r.setIdentifier ? { setIdentifier: r.setIdentifier } : {}),
      },
    },
    ...inner,
  ];
}

/** The most specific zone read that holds a name. */
function longestZone(zones: readonly HostedZoneSnapshot[], n: string): HostedZoneSnapshot | undefined {
  return zones
    .filter((z) => n === z.name || n.endsWith(`.${z.name}`))
    .sort((a, b) => b.name.length - a.name.length)[0];
}

/** ExternalDNS's TXT ownership record (`"heritage=external-dns,external-dns/owner=…"`), same name or its prefixed forms. */
function externalDnsOwned(records: readonly RecordSetSnapshot[], n: string): boolean {
  const [first, ...rest] = n.split(".");
  const parent = rest.join(".");
  const names = new Set([n, `a-${n}`, `cname-${n}`, `aaaa-${n}`, `${first ?? ""}-a.${parent}`]);
  return records.some(
    (r) => r.type === "TXT" && names.has(r.name) && r.values.some((v) => v.includes("heritage=external-dns")),
  );
}

/** One hostname's path, its worst verdict, and why it is missing when nothing answers for it. */
function tracedPath(ctx: TraceContext, h: string): TracedPath {
  const n = normalizeDns(h);
  const hops = followName(ctx, h, 0, new Set(), n);
  const all: DepthHop[] =
    hops.length > 0
      ? hops
      : [{ kind: "record", depth: 0, label: n, verdict: "unknown", why: `no zone read serves ${n}` }];
  // Nothing answers for the name at all: no record of ours, no distribution serving it.
  const only = all.length === 1 ? all[0] : undefined;
  const served = ctx.input.distributions.some((d) => d.aliases.some((x) => aliasMatches(x, n)));
  const missing =
    !served && only !== undefined && only.kind === "record" && only.label === n && only.verdict === "unknown"
      ? only.why
      : undefined;
  return {
    hostname: n,
    hops: all,
    verdict: worst(all.map((x) => x.verdict)),
    ...(missing !== undefined ? { missing } : {}),
  };
}

/** Trace each hostname from its records through CloudFront and load balancers to the owner, judging every link. */
export function tracePaths(input: TraceInput): TracedPath[] {
  const ctx = traceContext(input);
  return input.hostnames.map((h) => tracedPath(ctx, h));
}

/**
 * Every hostname that reaches the given load balancers, or names a load balancer of the same
 * controller stack that no longer exists: what `trace ns` starts from.
 */
export function hostnamesReaching(
  input: Omit<TraceInput, "hostnames">,
  targets: { readonly dnsNames: readonly string[]; readonly namePrefixes: readonly string[] },
): string[] {
  const wanted = new Set(targets.dnsNames.map(normalizeDns));
  const matches = (dns: string): boolean => {
    const n = normalizeDns(dns);
    if (wanted.has(n)) return true;
    const name = elbNameOf(n);
    return name !== undefined && targets.namePrefixes.some((p) => name.startsWith(p));
  };
  const out = new Set<string>();
  const distHits = input.distributions.filter((d) => d.origins.some((o) => matches(o.domainName)));
  const distDomains = new Set(distHits.map((d) => normalizeDns(d.domainName)));
  for (const r of input.records) {
    if (!["A", "AAAA", "CNAME"].includes(r.type)) continue;
    const target = normalizeDns(r.alias?.dnsName ?? r.values[0] ?? "");
    if (matches(target) || distDomains.has(target)) out.add(r.name);
  }
  for (const d of distHits) for (const a of d.aliases) if (!a.startsWith("*.")) out.add(a);
  return [...out].sort();
}
