/**
 * Who owns a load balancer, which hosts it serves, and — for a link that names a load balancer that
 * no longer exists — who owned that one: the evidence a repair is chosen on. Pure: built from
 * snapshots, no I/O.
 *
 * A name is never evidence by itself. A tenant can give its own Ingress a load balancer whose name
 * shares a prefix with another team's (`k8s-<ns:8>-<name:8>-`), or claim any host in its rules. What
 * counts:
 *
 * - tags are not evidence either: anyone with ELB rights in the account can tag a load balancer
 *   `elbv2.k8s.aws/cluster` and `ingress.k8s.aws/stack=<another team's stack>`. The owner of a live
 *   load balancer is the Ingress or Service whose status (written by the controller) names its DNS
 *   name, or — when no status names it — the stack whose name this cluster's controller derives is
 *   exactly its name, its tags agreeing;
 * - an Ingress whose `group.name` the controller refuses (not a DNS label) belongs to no stack: the
 *   controller builds nothing for it, so it can own nothing;
 * - the owner of a dead load balancer is established by one of: an Ingress/Service whose status
 *   names its DNS name; its name being exactly the one this cluster's controller derives for a stack
 *   (sha256 of cluster, stack and scheme — not a prefix); a load balancer of the same name existing
 *   again whose owner is established as above, when nobody in the cluster chose that name by
 *   annotation; ExternalDNS's ownership record of the DNS record that names it. Evidence naming two
 *   owners is no evidence;
 * - a replacement must be a live load balancer of the same owner that serves the hostname: its
 *   owner's rules name the host (exactly or by a wildcard), or a rule names no host (any host), or it
 *   is an NLB (TCP: no Host header is looked at). Behind CloudFront the viewer's hostname is checked:
 *   an origin that should serve it forwards the viewer's `Host`.
 */
import type { LoadBalancerSnapshot, RecordSetSnapshot } from "../aws/types.js";
import { ingressStack, lbcLoadBalancerName, lbcNlbName, refusedGroupName } from "./lbc-names.js";
import type { ObjectSnapshot } from "../kube/types.js";
import { EDGE_TAGS } from "./model.js";

/** The annotations with which an Ingress or Service chooses its load balancer's name itself. */
const CHOSEN_NAME_ANNOTATIONS = [
  "alb.ingress.kubernetes.io/load-balancer-name",
  "service.beta.kubernetes.io/aws-load-balancer-name",
] as const;

/** A stack of the controller: one Ingress, an IngressGroup, or one Service. */
export interface StackOwner {
  /** `tagKey=value`, as the controller tags the stack's resources. */
  readonly key: string;
  /** How a person names it: `Ingress myapp/api`, `IngressGroup shared (Ingress a/x, Ingress b/y)`, `Service ns/name`. */
  readonly label: string;
  /** The namespaces of its members (an IngressGroup may span several). */
  readonly namespaces: readonly string[];
}

/** What an approver must see of a load balancer a repair points at. */
export interface TargetFacts {
  readonly loadBalancer: string;
  readonly dnsName: string;
  /** Its owner as established (a status naming it, or its exact derived name); never from tags alone. */
  readonly owner?: StackOwner;
  /** How the owner was established, in words (`Ingress a/b's status names it`). */
  readonly ownedHow?: string;
  /** The `elbv2.k8s.aws/cluster` tag, when any. */
  readonly cluster?: string;
  /** The hosts its owner's rules serve; `*` for any host. Empty when no live owner's rules were read. */
  readonly serves: readonly string[];
}

export interface OwnerEvidence {
  readonly owner: StackOwner;
  readonly evidence: string;
}

/** The answer for a link naming a load balancer that is gone (or that its owner no longer uses). */
export type ReplacementAnswer =
  | {
      readonly kind: "found";
      readonly target: TargetFacts;
      /** How the replacement was established, in words. */
      readonly evidence: string;
      readonly oldOwner: OwnerEvidence;
    }
  | { readonly kind: "several"; readonly targets: readonly TargetFacts[]; readonly oldOwner: OwnerEvidence }
  | { readonly kind: "none"; readonly why: string; readonly oldOwner?: OwnerEvidence };

export interface OwnershipInput {
  /** The cluster whose controller's tags count (`elbv2.k8s.aws/cluster`); unknown: any cluster tag. */
  readonly cluster?: string;
  /** Every Ingress and LoadBalancer Service of the cluster, deleting ones included. */
  readonly owners: readonly ObjectSnapshot[];
  readonly loadBalancers: readonly LoadBalancerSnapshot[];
  /** Records read (ExternalDNS's TXT ownership records among them). */
  readonly records: readonly RecordSetSnapshot[];
}

export interface Ownership {
  /** A load balancer's owner as established (a status naming it, or its exact derived name), if any. */
  ownerOf(lb: LoadBalancerSnapshot): StackOwner | undefined;
  /** A live member of that owner (the one whose status names the load balancer, when one does). */
  memberOf(lb: LoadBalancerSnapshot): ObjectSnapshot | undefined;
  /** Owner, cluster and served hosts of a load balancer. */
  factsOf(lb: LoadBalancerSnapshot): TargetFacts;
  /** Whether `facts.serves` covers `host`. */
  serves(facts: TargetFacts, host: string): boolean;
  /** Who owned the load balancer a link names, with the evidence (several when evidence disagrees). */
  deadOwners(dnsName: string, recordName?: string): OwnerEvidence[];
  /** The live load balancer that replaces a dead one for `host`, or why there is none. */
  replacementFor(dnsName: string, host: string, recordName?: string): ReplacementAnswer;
  /** The live load balancer an owner now uses instead of `lb` (a mismatched link), or why there is none. */
  currentFor(lb: LoadBalancerSnapshot, owner: ObjectSnapshot, host: string): ReplacementAnswer;
}

/** Lower case, without `dualstack.` or a trailing dot. */
function norm(h: string): string {
  return h
    .trim()
    .toLowerCase()
    .replace(/\.$/, "")
    .replace(/^dualstack\./, "");
}

/** The load balancer name inside an ELB DNS name (`[internal-]<name>-<id>.…`). */
function nameOfDns(h: string): string | undefined {
  const n = norm(h);
  if (!/\.elb\.([a-z0-9-]+\.)?amazonaws\.com(\.cn)?$/.test(n)) return undefined;
  return /^(?:internal-)?(.+)-[0-9a-f]+$/.exec(n.split(".")[0] ?? "")?.[1];
}

/** Does a rule host (`api.example.com`, `*.example.com`, or `*` for any) serve `host`? */
export function hostServed(pattern: string, host: string): boolean {
  const p = norm(pattern);
  const h = norm(host);
  if (p === "*" || p === h) return true;
  if (p.startsWith("*.")) {
    const rest = p.slice(1);
    return h.endsWith(rest) && !h.slice(0, -rest.length).includes(".");
  }
  return false;
}

const ref = (o: ObjectSnapshot): string => `${o.kind} ${o.namespace ?? "default"}/${o.name}`;

/** The stack key (`tagKey=value`) an Ingress or Service belongs to. */
function stackKeyOf(o: ObjectSnapshot): string {
  const s = ingressStack({ ...o, kind: o.kind });
  return `${s.tagKey}=${s.stack}`;
}

export function buildOwnership(input: OwnershipInput): Ownership {
  const { cluster } = input;
  const members = new Map<string, ObjectSnapshot[]>();
  // What the controller refuses to build (an invalid group.name) owns nothing and is no stack's member.
  const owners = input.owners.filter((o) => refusedGroupName(o) === undefined);
  for (const o of owners) {
    if (o.kind !== "Ingress" && o.kind !== "Service") continue;
    const key = stackKeyOf(o);
    const list = members.get(key);
    if (list) list.push(o);
    else members.set(key, [o]);
  }
  const live = (key: string): ObjectSnapshot[] =>
    (members.get(key) ?? []).filter((o) => o.deletionTimestamp === undefined);
  const chosenNames = new Set(
    owners.flatMap((o) =>
      CHOSEN_NAME_ANNOTATIONS.map((a) => o.annotations[a]).filter((v): v is string => v !== undefined),
    ),
  );

  const ownerMemo = new Map<string, StackOwner>();
  function stackOwner(key: string): StackOwner {
    const known = ownerMemo.get(key);
    if (known) return known;
    const made = makeStackOwner(key);
    ownerMemo.set(key, made);
    return made;
  }

  function makeStackOwner(key: string): StackOwner {
    const [tagKey = "", ...rest] = key.split("=");
    const value = rest.join("=");
    const known = live(key).length > 0 ? live(key) : (members.get(key) ?? []);
    const namespaces = [
      ...new Set(
        known.length > 0
          ? known.map((o) => o.namespace ?? "default")
          : value.includes("/")
            ? [value.split("/")[0] ?? ""]
            : [],
      ),
    ];
    if (tagKey === EDGE_TAGS.serviceStack) return { key, label: `Service ${value}`, namespaces };
    if (
      value.includes("/") &&
      known.every((o) => o.annotations["alb.ingress.kubernetes.io/group.name"] === undefined)
    )
      return { key, label: `Ingress ${value}`, namespaces };
    const shown = known.slice(0, 3).map(ref).join(", ");
    return {
      key,
      label: `IngressGroup ${value}${shown !== "" ? ` (${shown}${known.length > 3 ? `, and ${String(known.length - 3)} more` : ""})` : ""}`,
      namespaces,
    };
  }

  /**
   * Who a load balancer is established to belong to: the stack of the owners whose status names it
   * (one stack, else none), or else the one stack whose derived name it exactly is, its tags agreeing.
   * Never its tags alone. Another cluster's load balancer (by its cluster tag) is nobody's here.
   */
  const ownedMemo = new Map<string, { owner: StackOwner; how: string; member?: ObjectSnapshot } | null>();
  function ownedBy(
    lb: LoadBalancerSnapshot,
  ): { owner: StackOwner; how: string; member?: ObjectSnapshot } | undefined {
    const memo = ownedMemo.get(lb.arn);
    if (memo !== undefined) return memo ?? undefined;
    const found = establishOwner(lb);
    ownedMemo.set(lb.arn, found ?? null);
    return found;
  }
  function establishOwner(
    lb: LoadBalancerSnapshot,
  ): { owner: StackOwner; how: string; member?: ObjectSnapshot } | undefined {
    const tagged = lb.tags[EDGE_TAGS.cluster];
    if (tagged !== undefined && cluster !== undefined && tagged !== cluster) return undefined;
    const named = statusIndex().get(norm(lb.dnsName)) ?? [];
    const keys = [...new Set(named.map(stackKeyOf))];
    if (keys.length > 1) return undefined;
    const first = named[0];
    if (first !== undefined && keys[0] !== undefined) {
      return { owner: stackOwner(keys[0]), how: `${ref(first)}'s status names it`, member: first };
    }
    if (cluster === undefined || tagged !== cluster || chosenNames.has(lb.name)) return undefined;
    const hits = derivedNames().get(lb.name) ?? [];
    const hit = hits[0];
    if (hits.length !== 1 || hit === undefined) return undefined;
    const [tagKey = "", ...rest] = hit.key.split("=");
    if (lb.tags[tagKey] !== rest.join("=")) return undefined;
    return {
      owner: stackOwner(hit.key),
      how: `its name is exactly the one cluster ${cluster}'s controller derives for it (${hit.scheme})`,
    };
  }
  function ownerOf(lb: LoadBalancerSnapshot): StackOwner | undefined {
    return ownedBy(lb)?.owner;
  }

  function factsOf(lb: LoadBalancerSnapshot): TargetFacts {
    const owner = ownerOf(lb);
    const tagged = lb.tags[EDGE_TAGS.cluster];
    let serves: string[] = [];
    if (lb.type === "network") serves = ["*"];
    else if (owner) {
      const hosts = new Set<string>();
      for (const o of live(owner.key)) {
        for (const h of o.ruleHosts ?? []) hosts.add(norm(h));
        if (o.servesAnyHost === true) hosts.add("*");
      }
      serves = [...hosts].sort((a, b) => (a === "*" ? -1 : b === "*" ? 1 : a.localeCompare(b)));
    }
    const how = ownedBy(lb)?.how;
    return {
      loadBalancer: lb.name,
      dnsName: lb.dnsName,
      ...(owner ? { owner } : {}),
      ...(how !== undefined ? { ownedHow: how } : {}),
      ...(tagged !== undefined ? { cluster: tagged } : {}),
      serves,
    };
  }

  const serves = (facts: TargetFacts, host: string): boolean => facts.serves.some((p) => hostServed(p, host));

  /** ExternalDNS's ownership TXT records for a record name, in its prefixed forms too. */
  function externalDnsResources(recordName: string): string[] {
    const n = norm(recordName);
    const [first, ...rest] = n.split(".");
    const parent = rest.join(".");
    const names = new Set([n, `a-${n}`, `cname-${n}`, `aaaa-${n}`, `${first ?? ""}-a.${parent}`]);
    return input.records
      .filter((r) => r.type === "TXT" && names.has(norm(r.name)))
      .flatMap((r) => r.values)
      .filter((v) => v.includes("heritage=external-dns"))
      .flatMap((v) => {
        const m = /external-dns\/resource=([a-z-]+)\/([^/,"\s]+)\/([^/,"\s]+)/.exec(v);
        return m ? [`${m[1] ?? ""}/${m[2] ?? ""}/${m[3] ?? ""}`] : [];
      });
  }

  /**
   * Every name the controller derives for the cluster's stacks, both schemes (an Ingress's group or
   * `ns/name`; a Service's UID): built once, on the first dead target, whatever the fleet's size.
   */
  let derived: Map<string, { key: string; scheme: string }[]> | undefined;
  function derivedNames(): Map<string, { key: string; scheme: string }[]> {
    if (derived) return derived;
    derived = new Map();
    if (cluster === undefined) return derived;
    const add = (name: string, key: string, scheme: string): void => {
      const prior = derived?.get(name) ?? [];
      if (!prior.some((p) => p.key === key)) derived?.set(name, [...prior, { key, scheme }]);
    };
    for (const [key, objs] of members) {
      for (const o of objs) {
        for (const scheme of ["internet-facing", "internal"] as const) {
          if (o.kind === "Service") {
            if (o.uid !== undefined)
              add(
                lbcNlbName(
                  cluster,
                  { namespace: o.namespace ?? "default", name: o.name, uid: o.uid },
                  scheme,
                ),
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

  /** Owners by each DNS name their status names, and load balancers by name: built once. */
  let byStatus: Map<string, ObjectSnapshot[]> | undefined;
  function statusIndex(): Map<string, ObjectSnapshot[]> {
    if (byStatus) return byStatus;
    byStatus = new Map();
    for (const o of owners)
      for (const h of o.loadBalancerHostnames ?? []) {
        const list = byStatus.get(norm(h));
        if (list) list.push(o);
        else byStatus.set(norm(h), [o]);
      }
    return byStatus;
  }
  let byName: Map<string, LoadBalancerSnapshot[]> | undefined;
  function lbsByName(): Map<string, LoadBalancerSnapshot[]> {
    if (byName) return byName;
    byName = new Map();
    for (const l of input.loadBalancers) {
      const list = byName.get(l.name);
      if (list) list.push(l);
      else byName.set(l.name, [l]);
    }
    return byName;
  }

  function deadOwners(dnsName: string, recordName?: string): OwnerEvidence[] {
    const dns = norm(dnsName);
    const name = nameOfDns(dns);
    const found: OwnerEvidence[] = [];
    // 1. The controller wrote it into an owner's status.
    for (const o of statusIndex().get(dns) ?? []) {
      found.push({ owner: stackOwner(stackKeyOf(o)), evidence: `${ref(o)}'s status names ${dns}` });
    }
    if (name !== undefined && !chosenNames.has(name)) {
      // 2. Exactly the name this cluster's controller derives for a stack (not a prefix).
      for (const hit of derivedNames().get(name) ?? []) {
        found.push({
          owner: stackOwner(hit.key),
          evidence: `${name} is exactly the name cluster ${cluster ?? "?"}'s controller derives for it (${hit.scheme})`,
        });
      }
      // 3. A load balancer of that very name exists again, its owner established (not by its tags);
      //    nobody chose the name.
      for (const lb of lbsByName().get(name) ?? []) {
        if (norm(lb.dnsName) === dns) continue;
        const owned = ownedBy(lb);
        if (owned) {
          found.push({
            owner: owned.owner,
            evidence: `a load balancer named ${name} exists again and is ${owned.owner.label}'s (${owned.how}), and no Ingress or Service chose that name by annotation (the controller gives a stack the same name each time)`,
          });
        }
      }
    }
    // 4. ExternalDNS's ownership record of the DNS record that names it.
    if (recordName !== undefined) {
      for (const res of externalDnsResources(recordName)) {
        const [kind, ns, objName] = res.split("/");
        const o = owners.find(
          (x) => x.kind.toLowerCase() === kind && (x.namespace ?? "default") === ns && x.name === objName,
        );
        if (o) {
          found.push({
            owner: stackOwner(stackKeyOf(o)),
            evidence: `ExternalDNS's ownership record of ${norm(recordName)} names ${res}`,
          });
        }
      }
    }
    return found;
  }

  /** This cluster's load balancers by the stack key they are tagged for (built once). */
  let byStack: Map<string, LoadBalancerSnapshot[]> | undefined;
  function liveTargetsOf(owner: StackOwner, except: string): LoadBalancerSnapshot[] {
    if (!byStack) {
      byStack = new Map();
      for (const l of input.loadBalancers) {
        const key = ownerOf(l)?.key;
        if (key === undefined) continue;
        const list = byStack.get(key);
        if (list) list.push(l);
        else byStack.set(key, [l]);
      }
    }
    return (byStack.get(owner.key) ?? []).filter(
      (l) => norm(l.dnsName) !== except && (l.state === "active" || l.state === "provisioning"),
    );
  }

  function servesList(f: TargetFacts): string {
    return f.serves.length === 0 ? "no host its rules could be read for" : f.serves.join(", ");
  }

  function choose(oldOwner: OwnerEvidence, host: string, except: string, how: string): ReplacementAnswer {
    const owner = oldOwner.owner;
    const targets = liveTargetsOf(owner, except).map(factsOf);
    if (targets.length === 0) {
      return {
        kind: "none",
        oldOwner,
        why: `it was ${owner.label}'s (${oldOwner.evidence}), which has no load balancer now${live(owner.key).length === 0 ? ": the owner is not back yet" : ""}`,
      };
    }
    const serving = targets.filter((t) => serves(t, host));
    if (serving.length === 0) {
      return {
        kind: "none",
        oldOwner,
        why: `it was ${owner.label}'s (${oldOwner.evidence}), but ${targets.map((t) => t.loadBalancer).join(", ")} of that owner ${targets.length === 1 ? "does" : "do"} not serve ${host} (${targets.map(servesList).join("; ")}): it would answer 404`,
      };
    }
    if (serving.length > 1) return { kind: "several", targets: serving, oldOwner };
    const target = serving[0] as TargetFacts;
    return {
      kind: "found",
      target,
      oldOwner,
      evidence: `the old target was ${owner.label}'s: ${oldOwner.evidence}; ${how} ${target.loadBalancer} (${target.ownedHow ?? "its owner established"}), whose rules serve ${host}`,
    };
  }

  return {
    ownerOf,
    memberOf(lb) {
      const owned = ownedBy(lb);
      if (owned === undefined) return undefined;
      return owned.member ?? live(owned.owner.key)[0] ?? members.get(owned.owner.key)?.[0];
    },
    factsOf,
    serves,
    deadOwners,
    replacementFor(dnsName, host, recordName) {
      const evidence = deadOwners(dnsName, recordName);
      const keys = [...new Set(evidence.map((e) => e.owner.key))];
      const dns = norm(dnsName);
      if (keys.length === 0) {
        return {
          kind: "none",
          why: `whose it was cannot be established — no owner's status, name derived for a stack, re-created load balancer of that name${recordName !== undefined ? " or ExternalDNS record" : ""} names one, and a similar name is not evidence; name the target with --to if you know it`,
        };
      }
      if (keys.length > 1) {
        return {
          kind: "none",
          why: `the evidence names ${String(keys.length)} owners for it (${evidence.map((e) => `${e.owner.label}: ${e.evidence}`).join("; ")}): not guessed`,
        };
      }
      return choose(evidence[0] as OwnerEvidence, host, dns, "its load balancer now is");
    },
    currentFor(lb, owner, host) {
      const now = (owner.loadBalancerHostnames ?? []).map(norm);
      const current = input.loadBalancers.filter(
        (l) => now.includes(norm(l.dnsName)) && norm(l.dnsName) !== norm(lb.dnsName),
      );
      const oldOwner: OwnerEvidence = {
        owner: stackOwner(stackKeyOf(owner)),
        evidence: `${ref(owner)} owned ${lb.name} and its status now names ${now.join(", ")}`,
      };
      if (current.length === 0) {
        return {
          kind: "none",
          oldOwner,
          why: `${ref(owner)} now names ${now.join(", ")}, which does not exist`,
        };
      }
      const facts = current.map(factsOf).filter((f) => serves(f, host));
      if (facts.length === 0) {
        return {
          kind: "none",
          oldOwner,
          why: `${ref(owner)}'s current load balancer does not serve ${host} (${current.map((c) => servesList(factsOf(c))).join("; ")}): it would answer 404`,
        };
      }
      if (facts.length > 1) return { kind: "several", targets: facts, oldOwner };
      const target = facts[0] as TargetFacts;
      return {
        kind: "found",
        target,
        oldOwner,
        evidence: `${ref(owner)}'s status now names ${target.loadBalancer}, whose rules serve ${host}`,
      };
    },
  };
}
