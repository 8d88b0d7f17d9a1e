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
import { refusedGroupName } from "./lbc-names.js";
import type { ObjectSnapshot } from "../kube/types.js";
import { EDGE_TAGS } from "./model.js";
import {
  buildDerivedNames,
  type DerivedName,
  externalDnsResources,
  lbNameOfDns,
  normDns,
  objectRef,
  stackKeyOf,
} from "./ownership-names.js";
import { compareText } from "../util/collate.js";

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

/** Does a rule host (`api.example.com`, `*.example.com`, or `*` for any) serve `host`? */
export function hostServed(pattern: string, host: string): boolean {
  const p = normDns(pattern);
  const h = normDns(host);
  if (p === "*" || p === h) return true;
  if (p.startsWith("*.")) {
    const rest = p.slice(1);
    return h.endsWith(rest) && !h.slice(0, -rest.length).includes(".");
  }
  return false;
}

/** A load balancer's established owner, how it was established, and the member whose status names it. */
interface Owned {
  readonly owner: StackOwner;
  readonly how: string;
  readonly member?: ObjectSnapshot;
}

/**
 * What ownership is answered from: the input's owners indexed by stack, the indexes that only some
 * questions need (built on their first use, whatever the fleet's size), and the answers' memos.
 */
interface OwnershipIndex {
  readonly cluster: string | undefined;
  readonly input: OwnershipInput;
  /** The owners the controller builds for: one with a refused group.name owns nothing. */
  readonly owners: readonly ObjectSnapshot[];
  /** The Ingresses and Services of each stack, by stack key. */
  readonly members: ReadonlyMap<string, readonly ObjectSnapshot[]>;
  /** Load balancer names an Ingress or Service chose itself by annotation. */
  readonly chosenNames: ReadonlySet<string>;
  /** Owners by each DNS name their status names. */
  readonly statusIndex: () => ReadonlyMap<string, readonly ObjectSnapshot[]>;
  /** Stacks by each name the controller derives for them. */
  readonly derivedNames: () => ReadonlyMap<string, readonly DerivedName[]>;
  /** Load balancers by name. */
  readonly lbsByName: () => ReadonlyMap<string, readonly LoadBalancerSnapshot[]>;
  /** This cluster's load balancers by the key of the stack established to own them. */
  readonly lbsByStack: () => ReadonlyMap<string, readonly LoadBalancerSnapshot[]>;
  /** Memo of {@link stackOwner}, by stack key. */
  readonly stackOwners: Map<string, StackOwner>;
  /** Memo of {@link ownedBy}, by ARN (`null`: nobody's). */
  readonly owned: Map<string, Owned | null>;
}

/** A value built on its first use, the same one after. */
function once<T extends object>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}

/** Appends a value to its key's list. */
function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The members of a stack that are not being deleted. */
function liveMembers(ix: OwnershipIndex, key: string): ObjectSnapshot[] {
  return (ix.members.get(key) ?? []).filter((o) => o.deletionTimestamp === undefined);
}

/** The owner of a stack key, as a person names it (made once per key). */
function stackOwner(ix: OwnershipIndex, key: string): StackOwner {
  const known = ix.stackOwners.get(key);
  if (known) return known;
  const made = makeStackOwner(ix, key);
  ix.stackOwners.set(key, made);
  return made;
}

/** A stack key's owner: a Service, one Ingress, or an IngressGroup with its first members named. */
function makeStackOwner(ix: OwnershipIndex, key: string): StackOwner {
  const [tagKey = "", ...rest] = key.split("=");
  const value = rest.join("=");
  const live = liveMembers(ix, key);
  const known = live.length > 0 ? live : (ix.members.get(key) ?? []);
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
  const shown = known.slice(0, 3).map(objectRef).join(", ");
  return {
    key,
    label: `IngressGroup ${value}${shown !== "" ? ` (${shown}${known.length > 3 ? `, and ${String(known.length - 3)} more` : ""})` : ""}`,
    namespaces,
  };
}

/** Who a load balancer is established to belong to (see {@link establishOwner}), once per ARN. */
function ownedBy(ix: OwnershipIndex, lb: LoadBalancerSnapshot): Owned | undefined {
  const memo = ix.owned.get(lb.arn);
  if (memo !== undefined) return memo ?? undefined;
  const found = establishOwner(ix, lb);
  ix.owned.set(lb.arn, found ?? null);
  return found;
}

/**
 * Who a load balancer is established to belong to: the stack of the owners whose status names it
 * (one stack, else none), or else the one stack whose derived name it exactly is, its tags agreeing.
 * Never its tags alone. Another cluster's load balancer (by its cluster tag) is nobody's here.
 */
function establishOwner(ix: OwnershipIndex, lb: LoadBalancerSnapshot): Owned | undefined {
  const { cluster } = ix;
  const tagged = lb.tags[EDGE_TAGS.cluster];
  if (tagged !== undefined && cluster !== undefined && tagged !== cluster) return undefined;
  const named = ix.statusIndex().get(normDns(lb.dnsName)) ?? [];
  const keys = [...new Set(named.map(stackKeyOf))];
  if (keys.length > 1) return undefined;
  const first = named[0];
  if (first !== undefined && keys[0] !== undefined) {
    return { owner: stackOwner(ix, keys[0]), how: `${objectRef(first)}'s status names it`, member: first };
  }
  if (cluster === undefined || tagged !== cluster || ix.chosenNames.has(lb.name)) return undefined;
  const hits = ix.derivedNames().get(lb.name) ?? [];
  const hit = hits[0];
  if (hits.length !== 1 || hit === undefined) return undefined;
  const [tagKey = "", ...rest] = hit.key.split("=");
  if (lb.tags[tagKey] !== rest.join("=")) return undefined;
  return {
    owner: stackOwner(ix, hit.key),
    how: `its name is exactly the one cluster ${cluster}'s controller derives for it (${hit.scheme})`,
  };
}

/** A live member of a load balancer's owner (the one whose status names it, when one does). */
function memberOf(ix: OwnershipIndex, lb: LoadBalancerSnapshot): ObjectSnapshot | undefined {
  const owned = ownedBy(ix, lb);
  if (owned === undefined) return undefined;
  return owned.member ?? liveMembers(ix, owned.owner.key)[0] ?? ix.members.get(owned.owner.key)?.[0];
}

/** Owner, cluster and served hosts of a load balancer: an NLB serves any host; an ALB its owner's rules. */
function factsOf(ix: OwnershipIndex, lb: LoadBalancerSnapshot): TargetFacts {
  const owned = ownedBy(ix, lb);
  const owner = owned?.owner;
  const tagged = lb.tags[EDGE_TAGS.cluster];
  let serves: string[] = [];
  if (lb.type === "network") serves = ["*"];
  else if (owner) {
    const hosts = new Set<string>();
    for (const o of liveMembers(ix, owner.key)) {
      for (const h of o.ruleHosts ?? []) hosts.add(normDns(h));
      if (o.servesAnyHost === true) hosts.add("*");
    }
    serves = [...hosts].sort((a, b) => (a === "*" ? -1 : b === "*" ? 1 : compareText(a, b)));
  }
  const how = owned?.how;
  return {
    loadBalancer: lb.name,
    dnsName: lb.dnsName,
    ...(owner ? { owner } : {}),
    ...(how !== undefined ? { ownedHow: how } : {}),
    ...(tagged !== undefined ? { cluster: tagged } : {}),
    serves,
  };
}

/** Whether `facts.serves` covers `host`. */
function servesHost(facts: TargetFacts, host: string): boolean {
  return facts.serves.some((p) => hostServed(p, host));
}

/** Owners by each DNS name their status names. */
function buildStatusIndex(owners: readonly ObjectSnapshot[]): Map<string, ObjectSnapshot[]> {
  const byStatus = new Map<string, ObjectSnapshot[]>();
  for (const o of owners) for (const h of o.loadBalancerHostnames ?? []) pushTo(byStatus, normDns(h), o);
  return byStatus;
}

/** Load balancers by the key of the stack established to own them; nobody's are left out. */
function buildStackIndex(ix: OwnershipIndex): Map<string, LoadBalancerSnapshot[]> {
  const byStack = new Map<string, LoadBalancerSnapshot[]>();
  for (const l of ix.input.loadBalancers) {
    const key = ownedBy(ix, l)?.owner.key;
    if (key !== undefined) pushTo(byStack, key, l);
  }
  return byStack;
}

/**
 * Evidence from a dead load balancer's name (nobody having chosen it by annotation): it is exactly
 * the name this cluster's controller derives for a stack, or a load balancer of that name exists
 * again with its owner established.
 */
function nameEvidence(ix: OwnershipIndex, name: string, dns: string): OwnerEvidence[] {
  const found: OwnerEvidence[] = [];
  // 2. Exactly the name this cluster's controller derives for a stack (not a prefix).
  for (const hit of ix.derivedNames().get(name) ?? []) {
    found.push({
      owner: stackOwner(ix, hit.key),
      evidence: `${name} is exactly the name cluster ${ix.cluster ?? "?"}'s controller derives for it (${hit.scheme})`,
    });
  }
  // 3. A load balancer of that very name exists again, its owner established (not by its tags);
  //    nobody chose the name.
  for (const lb of ix.lbsByName().get(name) ?? []) {
    if (normDns(lb.dnsName) === dns) continue;
    const owned = ownedBy(ix, lb);
    if (owned) {
      found.push({
        owner: owned.owner,
        evidence: `a load balancer named ${name} exists again and is ${owned.owner.label}'s (${owned.how}), and no Ingress or Service chose that name by annotation (the controller gives a stack the same name each time)`,
      });
    }
  }
  return found;
}

/** Evidence from ExternalDNS's ownership record of the DNS record that names a load balancer. */
function externalDnsEvidence(ix: OwnershipIndex, recordName: string): OwnerEvidence[] {
  const found: OwnerEvidence[] = [];
  for (const res of externalDnsResources(ix.input.records, recordName)) {
    const [kind, ns, objName] = res.split("/");
    const o = ix.owners.find(
      (x) => x.kind.toLowerCase() === kind && (x.namespace ?? "default") === ns && x.name === objName,
    );
    if (o) {
      found.push({
        owner: stackOwner(ix, stackKeyOf(o)),
        evidence: `ExternalDNS's ownership record of ${normDns(recordName)} names ${res}`,
      });
    }
  }
  return found;
}

/** Who owned the load balancer a link names, with the evidence of each kind in turn. */
function deadOwners(ix: OwnershipIndex, dnsName: string, recordName?: string): OwnerEvidence[] {
  const dns = normDns(dnsName);
  const name = lbNameOfDns(dns);
  // 1. The controller wrote it into an owner's status.
  const found: OwnerEvidence[] = (ix.statusIndex().get(dns) ?? []).map((o) => ({
    owner: stackOwner(ix, stackKeyOf(o)),
    evidence: `${objectRef(o)}'s status names ${dns}`,
  }));
  if (name !== undefined && !ix.chosenNames.has(name)) found.push(...nameEvidence(ix, name, dns));
  // 4. ExternalDNS's ownership record of the DNS record that names it.
  if (recordName !== undefined) found.push(...externalDnsEvidence(ix, recordName));
  return found;
}

/** An owner's active or provisioning load balancers, other than the one whose DNS name is `except`. */
function liveTargetsOf(ix: OwnershipIndex, owner: StackOwner, except: string): LoadBalancerSnapshot[] {
  return (ix.lbsByStack().get(owner.key) ?? []).filter(
    (l) => normDns(l.dnsName) !== except && (l.state === "active" || l.state === "provisioning"),
  );
}

/** The hosts a target serves, in words. */
function servesList(f: TargetFacts): string {
  return f.serves.length === 0 ? "no host its rules could be read for" : f.serves.join(", ");
}

/** The old owner's one live load balancer that serves `host`, or why there is none (or several). */
function choose(
  ix: OwnershipIndex,
  oldOwner: OwnerEvidence,
  host: string,
  except: string,
  how: string,
): ReplacementAnswer {
  const owner = oldOwner.owner;
  const targets = liveTargetsOf(ix, owner, except).map((l) => factsOf(ix, l));
  if (targets.length === 0) {
    return {
      kind: "none",
      oldOwner,
      why: `it was ${owner.label}'s (${oldOwner.evidence}), which has no load balancer now${liveMembers(ix, owner.key).length === 0 ? ": the owner is not back yet" : ""}`,
    };
  }
  const serving = targets.filter((t) => servesHost(t, host));
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

/** The live load balancer that replaces a dead one for `host`: only when the evidence names one owner. */
function replacementFor(
  ix: OwnershipIndex,
  dnsName: string,
  host: string,
  recordName?: string,
): ReplacementAnswer {
  const evidence = deadOwners(ix, dnsName, recordName);
  const keys = [...new Set(evidence.map((e) => e.owner.key))];
  const dns = normDns(dnsName);
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
  return choose(ix, evidence[0] as OwnerEvidence, host, dns, "its load balancer now is");
}

/** The load balancer an owner's status now names instead of `lb`, when it exists and serves `host`. */
function currentFor(
  ix: OwnershipIndex,
  lb: LoadBalancerSnapshot,
  owner: ObjectSnapshot,
  host: string,
): ReplacementAnswer {
  const now = (owner.loadBalancerHostnames ?? []).map(normDns);
  const current = ix.input.loadBalancers.filter(
    (l) => now.includes(normDns(l.dnsName)) && normDns(l.dnsName) !== normDns(lb.dnsName),
  );
  const oldOwner: OwnerEvidence = {
    owner: stackOwner(ix, stackKeyOf(owner)),
    evidence: `${objectRef(owner)} owned ${lb.name} and its status now names ${now.join(", ")}`,
  };
  if (current.length === 0) {
    return {
      kind: "none",
      oldOwner,
      why: `${objectRef(owner)} now names ${now.join(", ")}, which does not exist`,
    };
  }
  const facts = current.map((l) => factsOf(ix, l)).filter((f) => servesHost(f, host));
  if (facts.length === 0) {
    return {
      kind: "none",
      oldOwner,
      why: `${objectRef(owner)}'s current load balancer does not serve ${host} (${current.map((c) => servesList(factsOf(ix, c))).join("; ")}): it would answer 404`,
    };
  }
  if (facts.length > 1) return { kind: "several", targets: facts, oldOwner };
  const target = facts[0] as TargetFacts;
  return {
    kind: "found",
    target,
    oldOwner,
    evidence: `${objectRef(owner)}'s status now names ${target.loadBalancer}, whose rules serve ${host}`,
  };
}

/** The index of an ownership input: owners by stack now, the rest on first use. */
function indexOwnership(input: OwnershipInput): OwnershipIndex {
  // What the controller refuses to build (an invalid group.name) owns nothing and is no stack's member.
  const owners = input.owners.filter((o) => refusedGroupName(o) === undefined);
  const members = new Map<string, ObjectSnapshot[]>();
  for (const o of owners) {
    if (o.kind !== "Ingress" && o.kind !== "Service") continue;
    pushTo(members, stackKeyOf(o), o);
  }
  const chosenNames = new Set(
    owners.flatMap((o) =>
      CHOSEN_NAME_ANNOTATIONS.map((a) => o.annotations[a]).filter((v): v is string => v !== undefined),
    ),
  );
  const ix: OwnershipIndex = {
    cluster: input.cluster,
    input,
    owners,
    members,
    chosenNames,
    statusIndex: once(() => buildStatusIndex(owners)),
    derivedNames: once(() => buildDerivedNames(input.cluster, members)),
    lbsByName: once(() => {
      const byName = new Map<string, LoadBalancerSnapshot[]>();
      for (const l of input.loadBalancers) pushTo(byName, l.name, l);
      return byName;
    }),
    lbsByStack: once(() => buildStackIndex(ix)),
    stackOwners: new Map(),
    owned: new Map(),
  };
  return ix;
}

/** The ownership questions of a cluster's edge, answered from one snapshot of its owners and AWS. */
export function buildOwnership(input: OwnershipInput): Ownership {
  const ix = indexOwnership(input);
  return {
    ownerOf: (lb) => ownedBy(ix, lb)?.owner,
    memberOf: (lb) => memberOf(ix, lb),
    factsOf: (lb) => factsOf(ix, lb),
    serves: servesHost,
    deadOwners: (dnsName, recordName) => deadOwners(ix, dnsName, recordName),
    replacementFor: (dnsName, host, recordName) => replacementFor(ix, dnsName, host, recordName),
    currentFor: (lb, owner, host) => currentFor(ix, lb, owner, host),
  };
}
