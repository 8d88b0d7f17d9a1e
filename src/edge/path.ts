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
import { buildOwnership, type ReplacementAnswer } from "./ownership.js";

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

export function tracePaths(input: TraceInput): TracedPath[] {
  const lbByDns = new Map(input.loadBalancers.map((l) => [normalizeDns(l.dnsName), l]));
  const distByDomain = new Map(input.distributions.map((d) => [normalizeDns(d.domainName), d]));
  const ownerByHost = new Map<string, ObjectSnapshot>();
  for (const o of input.owners)
    for (const h of o.loadBalancerHostnames ?? []) ownerByHost.set(normalizeDns(h), o);

  // The owner a status names, else the one its exact derived name establishes: never its tags alone.
  const ownerOfLb = (lb: LoadBalancerSnapshot): ObjectSnapshot | undefined =>
    ownerByHost.get(normalizeDns(lb.dnsName)) ?? ownership.memberOf(lb);
  const ref = (o: ObjectSnapshot): string => `${o.kind} ${o.namespace ?? ""}/${o.name}`;
  const ownership = buildOwnership({
    ...(input.cluster !== undefined ? { cluster: input.cluster } : {}),
    owners: input.owners,
    loadBalancers: input.loadBalancers,
    records: input.records,
  });

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

  /** The hops from a DNS name that is an ELB name. */
  function lbHops(
    target: string,
    depth: number,
    label: string,
    host: string,
    recordName?: string,
  ): (PathHop & { depth: number })[] {
    const lb = lbByDns.get(normalizeDns(target));
    if (!lb) {
      return [
        {
          kind: "load-balancer",
          depth,
          label,
          verdict: "stale",
          why: `names ${normalizeDns(target)}, a load balancer that does not exist (its name no longer resolves: NXDOMAIN)`,
          ...asHop(ownership.replacementFor(target, host, recordName)),
        },
      ];
    }
    const owner = ownerOfLb(lb);
    const hops: (PathHop & { depth: number })[] = [];
    if (owner) {
      const now = owner.loadBalancerHostnames?.map(normalizeDns) ?? [];
      if (now.length > 0 && !now.includes(normalizeDns(lb.dnsName))) {
        hops.push({
          kind: "load-balancer",
          depth,
          label,
          verdict: "mismatched",
          why: `names load balancer ${lb.name}, but ${ref(owner)} now uses ${owner.loadBalancerHostnames?.[0] ?? "another"}`,
          ...asHop(ownership.currentFor(lb, owner, host)),
        });
        return hops;
      }
      hops.push({
        kind: "load-balancer",
        depth,
        label,
        verdict: lb.state === "active" ? "ok" : "unknown",
        why:
          lb.state === "active"
            ? `load balancer ${lb.name} (${lb.type}), active`
            : `load balancer ${lb.name} is ${lb.state}`,
        ref: { loadBalancerArn: lb.arn },
      });
      hops.push({
        kind: "owner",
        depth: depth + 1,
        label: ref(owner),
        verdict: owner.deletionTimestamp !== undefined ? "stale" : "ok",
        why:
          owner.deletionTimestamp !== undefined
            ? `${ref(owner)} is being deleted`
            : `served by ${ref(owner)}${lb.tags[EDGE_TAGS.cluster] ? ` (cluster ${lb.tags[EDGE_TAGS.cluster]})` : ""}`,
      });
      return hops;
    }
    hops.push({
      kind: "load-balancer",
      depth,
      label,
      verdict: lb.state === "active" ? "ok" : "unknown",
      why: `load balancer ${lb.name}, ${lb.state}; no Ingress or Service of this cluster owns it`,
      ref: { loadBalancerArn: lb.arn },
    });
    return hops;
  }

  function distributionHops(
    d: DistributionSnapshot,
    depth: number,
    host: string,
  ): (PathHop & { depth: number })[] {
    const hops: (PathHop & { depth: number })[] = [
      {
        kind: "distribution",
        depth,
        label: `CloudFront ${d.id} (${d.domainName})`,
        verdict: d.enabled ? "ok" : "unknown",
        why: `${d.status}${d.enabled ? "" : ", disabled"}; aliases ${d.aliases.join(", ") || "none"}`,
        ref: { distributionId: d.id },
      },
    ];
    const used = new Map<string, string[]>();
    const use = (target: string, what: string): void => {
      const group = d.originGroups.find((g) => g.id === target);
      for (const id of group ? group.members : [target]) used.set(id, [...(used.get(id) ?? []), what]);
    };
    use(d.defaultTarget, "default behaviour");
    for (const b of d.behaviors) use(b.target, b.pathPattern);
    for (const o of d.origins) {
      const behaviours = used.get(o.id) ?? [];
      const label = `origin ${o.id} → ${o.domainName}${behaviours.length > 0 ? ` (${behaviours.join(", ")})` : " (no behaviour uses it)"}`;
      if (isElbDns(o.domainName)) {
        const sub = lbHops(o.domainName, depth + 1, label, host).map((h, i) =>
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
        hops.push(...sub);
      } else {
        const inner = followName(o.domainName, depth + 2, new Set(), host);
        hops.push({
          kind: "origin",
          depth: depth + 1,
          label,
          verdict: inner.length > 0 ? worst(inner.map((h) => h.verdict)) : "unknown",
          why:
            inner.length > 0
              ? `resolves through ${o.domainName}`
              : `${o.domainName} is outside the zones read`,
          ref: { distributionId: d.id, originId: o.id },
        });
        hops.push(...inner);
      }
    }
    return hops;
  }

  /** Follow a DNS name through our zones, CloudFront and ELB. */
  /** Follow a DNS name; `host` is the name clients ask for, which a replacement must serve. */
  function followName(
    name: string,
    depth: number,
    seen: Set<string>,
    host: string,
    recordName?: string,
  ): (PathHop & { depth: number })[] {
    const n = normalizeDns(name);
    if (seen.has(n) || depth > 12) return [];
    seen.add(n);
    if (isElbDns(n)) return lbHops(n, depth, `load balancer ${n}`, host, recordName);
    const dist = distByDomain.get(n);
    if (dist) return distributionHops(dist, depth, host);
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
    const records = input.records.filter((r) => r.name === n && ["A", "AAAA", "CNAME"].includes(r.type));
    const zone = longestZone(n);
    if (records.length === 0) {
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
    const owned = externalDnsOwned(n);
    const hops: (PathHop & { depth: number })[] = [];
    for (const r of records) {
      const target = r.alias?.dnsName ?? r.values[0] ?? "";
      const policy = r.setIdentifier
        ? ` [${r.weight !== undefined ? `weight ${String(r.weight)}` : r.failover ? `failover ${r.failover}` : r.region ? `latency ${r.region}` : "set"} ${r.setIdentifier}]`
        : "";
      const zoneOf = input.zones.find((z) => z.id === r.zoneId);
      const inner = followName(target, depth + 1, seen, host, r.name);
      hops.push({
        kind: "record",
        depth,
        label: `${r.type} ${r.name}${r.alias ? " (alias)" : ""}${policy} → ${normalizeDns(target)}`,
        verdict:
          inner[0]?.verdict === "stale" || inner[0]?.verdict === "mismatched" ? inner[0].verdict : "ok",
        // The record is what a repair changes: it carries its load balancer's replacement.
        ...(inner[0]?.kind === "load-balancer" && inner[0].replacement
          ? { replacement: inner[0].replacement }
          : {}),
        ...(inner[0]?.kind === "load-balancer" && inner[0].candidates
          ? { candidates: inner[0].candidates }
          : {}),
        ...(inner[0]?.kind === "load-balancer" && inner[0].unresolved !== undefined
          ? { unresolved: inner[0].unresolved }
          : {}),
        ...(inner[0]?.kind === "load-balancer" && inner[0].oldOwner ? { oldOwner: inner[0].oldOwner } : {}),
        why: `in ${zoneOf?.private ? "private" : "public"} zone ${zoneOf?.name ?? r.zoneId}${owned ? "; owned by ExternalDNS (it will repair this record)" : ""}`,
        ...(owned ? { externalDns: true } : {}),
        ref: {
          zoneId: r.zoneId,
          name: r.name,
          type: r.type,
          ...(r.setIdentifier ? { setIdentifier: r.setIdentifier } : {}),
        },
      });
      hops.push(...inner);
    }
    return hops;
  }

  function longestZone(n: string): HostedZoneSnapshot | undefined {
    return input.zones
      .filter((z) => n === z.name || n.endsWith(`.${z.name}`))
      .sort((a, b) => b.name.length - a.name.length)[0];
  }

  /** ExternalDNS's TXT ownership record (`"heritage=external-dns,external-dns/owner=…"`), same name or its prefixed forms. */
  function externalDnsOwned(n: string): boolean {
    const [first, ...rest] = n.split(".");
    const parent = rest.join(".");
    const names = new Set([n, `a-${n}`, `cname-${n}`, `aaaa-${n}`, `${first ?? ""}-a.${parent}`]);
    return input.records.some(
      (r) =>
        r.type === "TXT" && names.has(r.name) && r.values.some((v) => v.includes("heritage=external-dns")),
    );
  }

  return input.hostnames.map((h) => {
    const n = normalizeDns(h);
    const hops = followName(h, 0, new Set(), n);
    const all =
      hops.length > 0
        ? hops
        : [
            {
              kind: "record" as const,
              depth: 0,
              label: n,
              verdict: "unknown" as const,
              why: `no zone read serves ${n}`,
            },
          ];
    // Nothing answers for the name at all: no record of ours, no distribution serving it.
    const only = all.length === 1 ? all[0] : undefined;
    const served = input.distributions.some((d) => d.aliases.some((x) => aliasMatches(x, n)));
    const missing =
      !served &&
      only !== undefined &&
      only.kind === "record" &&
      only.label === n &&
      only.verdict === "unknown"
        ? only.why
        : undefined;
    return {
      hostname: n,
      hops: all,
      verdict: worst(all.map((x) => x.verdict)),
      ...(missing !== undefined ? { missing } : {}),
    };
  });
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
