/**
 * What the public DNS says about a name, computed from the simulated AWS account: the records of its
 * hosted zones (alias targets followed to the load balancer or distribution they name), and the
 * names AWS itself answers for (`*.elb.amazonaws.com` while the load balancer exists,
 * `*.cloudfront.net` while the distribution exists). The DNS server and the HTTP front both ask
 * this one module, so what `dig` shows and what an HTTP client reaches can never disagree.
 */
import { createHash } from "node:crypto";
import { fqdn, type AwsWorld, type Distribution, type HostedZone, type LoadBalancer } from "../aws/world.js";

/** One answer record. `data` is the text form: an address, a domain name, or SOA/TXT text. */
export interface DnsRecord {
  readonly name: string;
  readonly type: string;
  readonly ttl: number;
  readonly data: string;
}

/** The outcome of one lookup, with the zone that is authoritative for it (for the SOA). */
export type Lookup =
  | { readonly rcode: "NOERROR"; readonly answers: DnsRecord[]; readonly zone?: HostedZone }
  | { readonly rcode: "NXDOMAIN"; readonly zone?: HostedZone };

/** Where a name leads in the simulated world (the HTTP front's view of one DNS hop). */
export type Target =
  | { readonly kind: "loadBalancer"; readonly loadBalancer: LoadBalancer }
  | { readonly kind: "distribution"; readonly distribution: Distribution }
  | { readonly kind: "none" };

/** TTL Route 53 gives alias answers (it uses the target's: ELB and CloudFront both answer 60). */
const ALIAS_TTL = 60;

/** Strips the trailing dot and the `dualstack.` prefix Route 53 alias targets usually carry. */
function bare(name: string): string {
  return fqdn(name)
    .slice(0, -1)
    .replace(/^dualstack\./, "");
}

function hex(n: number): string {
  return n.toString(16);
}

function bytes(seed: string, n: number): number[] {
  return [...createHash("sha256").update(seed).digest().subarray(0, n)];
}

/**
 * Stable fake addresses of a load balancer: one per availability zone (at least two), derived from its
 * DNS name so a re-created ALB (new DNS name) gets new addresses, as on AWS.
 */
export function loadBalancerAddresses(lb: LoadBalancer, family: 4 | 6): string[] {
  const count = Math.max(2, lb.availabilityZones.length);
  return Array.from({ length: count }, (_, i) => {
    const [a = 0, b = 0, c = 0, d = 0] = bytes(`${lb.dnsName}#${i}`, 4);
    // 3.34.0.0/15 and 2406:da12::/32 are where ap-northeast-2 ALBs live; fake hosts inside them.
    return family === 4
      ? `3.${34 + (a & 1)}.${b}.${Math.max(1, c)}`
      : `2406:da12:${hex((a << 8) | b)}:${hex(c)}::${hex(Math.max(1, d))}`;
  });
}

/** Stable fake CloudFront edge addresses of a distribution. */
export function distributionAddresses(d: Distribution, family: 4 | 6): string[] {
  return Array.from({ length: 4 }, (_, i) => {
    const [a = 0, b = 0, c = 0] = bytes(`${d.domainName}#${i}`, 3);
    return family === 4
      ? `18.65.${a}.${Math.max(1, b)}`
      : `2600:9000:${hex(0x2000 | a)}:${hex(b)}::${hex(Math.max(1, c))}`;
  });
}

/** The load balancer whose DNS name this is (case-insensitive, `dualstack.` allowed), if it exists. */
export function findLoadBalancer(world: AwsWorld, name: string): LoadBalancer | undefined {
  const wanted = bare(name);
  return [...world.loadBalancers.values()].find((lb) => bare(lb.dnsName) === wanted);
}

/** The distribution whose `*.cloudfront.net` name this is, if it exists. */
export function findDistribution(world: AwsWorld, name: string): Distribution | undefined {
  const wanted = bare(name);
  return [...world.distributions.values()].find((d) => bare(d.domainName) === wanted);
}

/** The public hosted zone with the longest name that contains `name`. */
export function zoneFor(world: AwsWorld, name: string): HostedZone | undefined {
  const n = fqdn(name);
  let best: HostedZone | undefined;
  for (const z of world.hostedZones.values()) {
    if (z.privateZone) continue;
    if ((n === z.name || n.endsWith(`.${z.name}`)) && (!best || z.name.length > best.name.length)) best = z;
  }
  return best;
}

/** Where an alias or CNAME target leads (AWS-owned names only). */
export function targetOf(world: AwsWorld, name: string): Target {
  const lb = findLoadBalancer(world, name);
  if (lb) return { kind: "loadBalancer", loadBalancer: lb };
  const d = findDistribution(world, name);
  if (d) return { kind: "distribution", distribution: d };
  return { kind: "none" };
}

function addressesOf(target: Target, family: 4 | 6): string[] {
  if (target.kind === "loadBalancer") {
    // An ALB answers AAAA only when it is dualstack.
    if (family === 6 && target.loadBalancer.ipAddressType !== "dualstack") return [];
    return loadBalancerAddresses(target.loadBalancer, family);
  }
  if (target.kind === "distribution") return distributionAddresses(target.distribution, family);
  return [];
}

/** Answers `type` for `name` the way a recursive resolver in front of this account would. */
export function lookup(world: AwsWorld, name: string, type: string, depth = 0): Lookup {
  const qname = fqdn(name);
  const zone = zoneFor(world, qname);
  if (!zone) {
    // Not in a hosted zone: only the names AWS itself serves exist.
    const target = targetOf(world, qname);
    if (target.kind === "none") return { rcode: "NXDOMAIN" };
    const family = type === "AAAA" ? 6 : type === "A" ? 4 : undefined;
    const answers =
      family === undefined
        ? []
        : addressesOf(target, family).map((data) => ({ name: qname, type, ttl: ALIAS_TTL, data }));
    return { rcode: "NOERROR", answers };
  }

  const atName = zone.records.filter((r) => fqdn(r.name) === qname);
  if (atName.length === 0) return { rcode: "NXDOMAIN", zone };

  const cname = atName.find((r) => r.type === "CNAME");
  if (cname && type !== "CNAME") {
    // A CNAME answers every type: the CNAME itself, then whatever its target resolves to.
    const answers: DnsRecord[] = [];
    const targetName = cname.aliasTarget?.dnsName ?? cname.values?.[0] ?? "";
    answers.push({ name: qname, type: "CNAME", ttl: cname.ttl ?? ALIAS_TTL, data: fqdn(targetName) });
    if (depth < 8) {
      const next = lookup(world, targetName, type, depth + 1);
      if (next.rcode === "NXDOMAIN") return { rcode: "NXDOMAIN", zone };
      answers.push(...next.answers);
    }
    return { rcode: "NOERROR", answers, zone };
  }

  const answers: DnsRecord[] = [];
  for (const r of atName.filter((x) => x.type === type)) {
    if (r.aliasTarget) {
      const target = targetOf(world, r.aliasTarget.dnsName);
      // An alias whose load balancer or distribution is gone has nothing to answer with: the
      // client sees NXDOMAIN, the state the incident's old ALB names were in.
      if (target.kind === "none") {
        if (r.type === "A" || r.type === "AAAA") return { rcode: "NXDOMAIN", zone };
        continue;
      }
      const family = r.type === "AAAA" ? 6 : 4;
      for (const data of addressesOf(target, family))
        answers.push({ name: qname, type, ttl: ALIAS_TTL, data });
    } else {
      for (const data of r.values ?? [])
        answers.push({ name: qname, type, ttl: r.ttl ?? 300, data: type === "TXT" ? unquote(data) : data });
    }
  }
  return { rcode: "NOERROR", answers, zone };
}

/** Route 53 stores TXT values quoted; the wire carries the bare string. */
function unquote(v: string): string {
  return v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1) : v;
}

/**
 * Follows a host name the way a browser's connection would: its record in the zones, through
 * CNAMEs and aliases, to the load balancer or distribution it reaches (or none: NXDOMAIN).
 */
export function reach(world: AwsWorld, host: string): Target {
  let name = fqdn(host);
  for (let depth = 0; depth < 8; depth++) {
    const zone = zoneFor(world, name);
    if (!zone) return targetOf(world, name);
    const atName = zone.records.filter((r) => fqdn(r.name) === name);
    const cname = atName.find((r) => r.type === "CNAME");
    if (cname) {
      name = fqdn(cname.aliasTarget?.dnsName ?? cname.values?.[0] ?? "");
      continue;
    }
    const a = atName.find((r) => r.type === "A") ?? atName.find((r) => r.type === "AAAA");
    if (!a) return { kind: "none" };
    if (a.aliasTarget) {
      name = fqdn(a.aliasTarget.dnsName);
      continue;
    }
    // Literal addresses: the fake address of something in the world, else nothing we can serve.
    return byAddress(world, a.values ?? []);
  }
  return { kind: "none" };
}

function byAddress(world: AwsWorld, addresses: string[]): Target {
  for (const lb of world.loadBalancers.values()) {
    const mine = [...loadBalancerAddresses(lb, 4), ...loadBalancerAddresses(lb, 6)];
    if (addresses.some((a) => mine.includes(a))) return { kind: "loadBalancer", loadBalancer: lb };
  }
  for (const d of world.distributions.values()) {
    const mine = [...distributionAddresses(d, 4), ...distributionAddresses(d, 6)];
    if (addresses.some((a) => mine.includes(a))) return { kind: "distribution", distribution: d };
  }
  return { kind: "none" };
}
