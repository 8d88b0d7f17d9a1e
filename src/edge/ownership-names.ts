/**
 * The names ownership evidence is read from: DNS names compared alike, the load balancer name inside
 * an ELB DNS name, the names the Load Balancer Controller derives for each stack, and ExternalDNS's
 * ownership records. Pure: no I/O.
 */
import type { RecordSetSnapshot } from "../aws/types.js";
import type { ObjectSnapshot } from "../kube/types.js";
import { ingressStack, lbcLoadBalancerName, lbcNlbName } from "./lbc-names.js";

/** Lower case, without `dualstack.` or a trailing dot. */
export function normDns(h: string): string {
  return h
    .trim()
    .toLowerCase()
    .replace(/\.$/, "")
    .replace(/^dualstack\./, "");
}

/** The load balancer name inside an ELB DNS name (`[internal-]<name>-<id>.…`). */
export function lbNameOfDns(h: string): string | undefined {
  const n = normDns(h);
  if (!/\.elb\.([a-z0-9-]+\.)?amazonaws\.com(\.cn)?$/.test(n)) return undefined;
  return /^(?:internal-)?(.+)-[0-9a-f]+$/.exec(n.split(".")[0] ?? "")?.[1];
}

/** `Kind ns/name`, how a person names an Ingress or Service. */
export const objectRef = (o: ObjectSnapshot): string => `${o.kind} ${o.namespace ?? "default"}/${o.name}`;

/** The stack key (`tagKey=value`) an Ingress or Service belongs to. */
export function stackKeyOf(o: ObjectSnapshot): string {
  const s = ingressStack({ ...o, kind: o.kind });
  return `${s.tagKey}=${s.stack}`;
}

/** A name the controller derives for a stack, and the scheme it derives it for. */
export interface DerivedName {
  readonly key: string;
  readonly scheme: string;
}

/** ExternalDNS's ownership TXT records for a record name, in its prefixed forms too. */
export function externalDnsResources(records: readonly RecordSetSnapshot[], recordName: string): string[] {
  const n = normDns(recordName);
  const [first, ...rest] = n.split(".");
  const parent = rest.join(".");
  const names = new Set([n, `a-${n}`, `cname-${n}`, `aaaa-${n}`, `${first ?? ""}-a.${parent}`]);
  return records
    .filter((r) => r.type === "TXT" && names.has(normDns(r.name)))
    .flatMap((r) => r.values)
    .filter((v) => v.includes("heritage=external-dns"))
    .flatMap((v) => {
      const m = /external-dns\/resource=([a-z-]+)\/([^/,"\s]+)\/([^/,"\s]+)/.exec(v);
      return m ? [`${m[1] ?? ""}/${m[2] ?? ""}/${m[3] ?? ""}`] : [];
    });
}

/**
 * Every name the controller derives for the cluster's stacks, both schemes (an Ingress's group or
 * `ns/name`; a Service's UID). None when the cluster is unknown.
 */
export function buildDerivedNames(
  cluster: string | undefined,
  members: ReadonlyMap<string, readonly ObjectSnapshot[]>,
): Map<string, DerivedName[]> {
  const derived = new Map<string, DerivedName[]>();
  if (cluster === undefined) return derived;
  const add = (name: string, key: string, scheme: string): void => {
    const prior = derived.get(name) ?? [];
    if (!prior.some((p) => p.key === key)) derived.set(name, [...prior, { key, scheme }]);
  };
  for (const [key, objs] of members) {
    for (const o of objs) {
      for (const scheme of ["internet-facing", "internal"] as const) {
        if (o.kind === "Service") {
          if (o.uid !== undefined)
            add(
              lbcNlbName(cluster, { namespace: o.namespace ?? "default", name: o.name, uid: o.uid }, scheme),
              key,
              scheme,
            );
        } else add(lbcLoadBalancerName(cluster, { ...ingressStack(o), scheme }), key, scheme);
      }
      // An IngressGroup's members share one name: one member is enough.
      if (o.kind !== "Service") break;
    }
  }
  return derived;
}
