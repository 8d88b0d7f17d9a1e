/**
 * The repair plan of a traced path (pure; no I/O): every stale or mismatched link that has exactly
 * one replacement (established by ownership evidence: `ownership.ts`) becomes an exact API call — Route 53 DELETE (the record as read) + CREATE (the same
 * record naming the replacement) in one batch per zone, a CloudFront origin `DomainName` change bound
 * to the ETag read when planning. A link with several candidate load balancers is never guessed: it
 * becomes a question naming them. A record ExternalDNS owns is left to ExternalDNS (it would undo a
 * hand edit and repairs the record itself); CloudFront origins nobody repairs, so they are planned.
 */
import type { RecordChange } from "../aws/port.js";
import type {
  DistributionSnapshot,
  HostedZoneSnapshot,
  LoadBalancerSnapshot,
  RecordSetSnapshot,
} from "../aws/types.js";
import type { RepointPathAction } from "../requests/model.js";
import type {
  CloudFrontOriginStep,
  RepointStep,
  RepointTarget,
  Route53RepointStep,
} from "./repoint-steps.js";
import type { ObjectSnapshot } from "../kube/types.js";
import { plural } from "../util/format.js";
import { buildOwnership, type Ownership, type TargetFacts } from "./ownership.js";
import { normalizeDns, type PathHop, type TracedPath } from "./path.js";

export interface RepointPlanInput {
  readonly paths: readonly TracedPath[];
  readonly zones: readonly HostedZoneSnapshot[];
  readonly records: readonly RecordSetSnapshot[];
  readonly distributions: readonly DistributionSnapshot[];
  readonly loadBalancers: readonly LoadBalancerSnapshot[];
  /** ETag of each distribution the plan changes, read when planning (`GetDistributionConfig`). */
  readonly etags: ReadonlyMap<string, string>;
  /**
   * The operator's choice (`repoint <host> --to <lb>`): the load balancer name to use instead of the
   * stale one, for every link of the traced hostnames. Refused when it does not serve a hostname, or
   * belongs to another namespace than the old target's owner without `allowOtherNamespace`.
   */
  readonly choose?: string;
  /** `--other-namespace`: the requester says a target of another namespace is intended. */
  readonly allowOtherNamespace?: boolean;
  /** The cluster's Ingresses and Services, and its name: whose each target is, which hosts it serves. */
  readonly owners?: readonly ObjectSnapshot[];
  readonly cluster?: string;
}

export interface RepointPlan {
  /** The action to approve; `undefined` when there is nothing to change. */
  readonly action?: RepointPathAction;
  /**
   * Why nothing was planned although a target was named or found: a `--to` that fails a check (no
   * such load balancer, serves another host, another namespace), a target whose rules do not route
   * the host. Said first: it is the answer to the request.
   */
  readonly refused: readonly string[];
  /** Links that need a person: several candidates, no replacement yet, a record ExternalDNS owns. */
  readonly questions: readonly string[];
  /** Links that are fine or not ours to change, for the record. */
  readonly notes: readonly string[];
}

type Hop = PathHop & { readonly depth: number };

function keyOf(r: RecordSetSnapshot): string {
  return `${r.zoneId}|${r.name}|${r.type}|${r.setIdentifier ?? ""}`;
}

/** The new alias/CNAME target, keeping the `dualstack.` form when the record used it. */
function retarget(old: string, replacement: string): string {
  const dual = /^dualstack\./i.test(old) && !/^dualstack\./i.test(replacement);
  return `${dual ? "dualstack." : ""}${replacement}`;
}

/** The load balancer the requester named with `--to`, and what is established of it. */
interface Chosen {
  readonly lb: LoadBalancerSnapshot;
  readonly facts: TargetFacts;
}

/** A Route 53 record as read and the same record naming its replacement. */
interface RecordEdit {
  readonly zoneId: string;
  readonly from: RecordSetSnapshot;
  readonly to: RecordSetSnapshot;
}

/** What a plan reads and what it accumulates while the links of the traced paths are walked. */
interface PlanContext {
  readonly input: RepointPlanInput;
  readonly byName: ReadonlyMap<string, LoadBalancerSnapshot>;
  readonly ownership: Ownership;
  readonly chosen: Chosen | undefined;
  readonly questions: string[];
  readonly notes: string[];
  readonly refusals: string[];
  readonly risks: string[];
  readonly targets: Map<string, RepointTarget>;
  readonly recordEdits: Map<string, RecordEdit>;
  readonly originEdits: Map<string, CloudFrontOriginStep>;
  /** `host: hop label` of every link already planned or answered. */
  readonly seen: Set<string>;
  /** Hostnames some step repairs. */
  readonly touched: Set<string>;
}

/** Record the target a link moves to, with its owner and how it was established. */
function useTarget(
  ctx: PlanContext,
  host: string,
  t: Omit<RepointTarget, "hostnames" | "established"> & { established: string },
): void {
  const prior = ctx.targets.get(t.loadBalancer);
  ctx.targets.set(t.loadBalancer, {
    ...t,
    established: prior?.established ?? t.established,
    hostnames: [...new Set([...(prior?.hostnames ?? []), host])],
  });
}

/**
 * The requester's `--to` as a link's replacement, checked: refused when its owner's rules do not
 * serve the host, or when it belongs to another namespace than the old target's owner without
 * `--other-namespace`; a risk is recorded when the namespace differs or the old owner is unknown.
 */
function chosenReplacement(
  ctx: PlanContext,
  chosen: Chosen,
  hop: Hop,
  host: string,
): { dnsName: string; loadBalancer: string } | undefined {
  const { lb, facts } = chosen;
  const where = `--to ${lb.name} is refused for ${host}`;
  if (!ctx.ownership.serves(facts, host)) {
    ctx.refusals.push(
      `${where}: ${facts.owner ? `the rules of its owner ${facts.owner.label} serve ${facts.serves.join(", ") || "no host"}` : "no Ingress or Service of this cluster owns it, so nothing says it serves that host"} — it would answer 404 for ${host}.`,
    );
    return undefined;
  }
  const old = hop.oldOwner;
  const ns = facts.owner?.namespaces ?? [];
  const label = facts.owner
    ? `${facts.owner.label} (namespace ${ns.join(", ") || "unknown"})`
    : `${lb.name}, which no Ingress or Service of this cluster owns`;
  if (old !== undefined && !ns.some((n) => old.namespaces.includes(n))) {
    if (ctx.input.allowOtherNamespace !== true) {
      ctx.refusals.push(
        `${where}: it belongs to ${label}, not to namespace ${old.namespaces.join(", ")} of ${old.label}, which owned the old target (${old.evidence}). If that is intended, say so with --other-namespace.`,
      );
      return undefined;
    }
    ctx.risks.push(
      `${host} moves to ${label} — another namespace than ${old.label}, which owned the old target; named explicitly with --to ${lb.name} --other-namespace.`,
    );
  } else if (old === undefined) {
    ctx.risks.push(
      `Whose load balancer ${host} named could not be established; ${label} was named by the requester with --to ${lb.name}.`,
    );
  }
  useTarget(ctx, host, {
    loadBalancer: lb.name,
    dnsName: lb.dnsName,
    ...(facts.owner ? { owner: facts.owner.label, namespaces: facts.owner.namespaces } : {}),
    ...(facts.cluster !== undefined ? { cluster: facts.cluster } : {}),
    serves: facts.serves,
    established: `named by the requester with --to${old ? `; the old target was ${old.label}'s (${old.evidence})` : ""}`,
  });
  return { dnsName: lb.dnsName, loadBalancer: lb.name };
}

/** The replacement of a link: its own (from evidence) or the requester's `--to`, checked. */
function replacementOf(
  ctx: PlanContext,
  hop: Hop,
  host: string,
): { dnsName: string; loadBalancer: string } | undefined {
  if (ctx.chosen) return chosenReplacement(ctx, ctx.chosen, hop, host);
  const r = hop.replacement;
  if (r === undefined) return undefined;
  useTarget(ctx, host, {
    loadBalancer: r.loadBalancer,
    dnsName: r.dnsName,
    ...(r.owner !== undefined ? { owner: r.owner } : {}),
    ...(r.namespaces !== undefined ? { namespaces: r.namespaces } : {}),
    ...(r.cluster !== undefined ? { cluster: r.cluster } : {}),
    serves: r.serves ?? [],
    established: r.evidence ?? "the owner's current load balancer",
  });
  return r;
}

/** The question a link with no replacement asks: name one of several candidates, or why there is none. */
function noReplacementQuestion(where: string, hop: Hop, host: string): string {
  if (hop.candidates && hop.candidates.length > 0) {
    return `${where} — ${plural(hop.candidates.length, "load balancer", "load balancers")} of ${hop.oldOwner?.label ?? "its owner"} ${hop.candidates.length === 1 ? "serves" : "serve"} ${host}: ${hop.candidates.join("; ")}. Not guessed: name one with \`repoint ${host} --to <load-balancer-name>\`.`;
  }
  return `${where} — no replacement: ${hop.unresolved ?? "no load balancer replaces it yet"}.`;
}

/** Plan one stale or mismatched record or origin link of a path: an edit, a question, or a note. */
function planHop(ctx: PlanContext, host: string, hop: Hop): void {
  if (hop.verdict !== "stale" && hop.verdict !== "mismatched") return;
  if (hop.kind !== "record" && hop.kind !== "origin") return;
  const where = `${host}: ${hop.label}`;
  if (ctx.seen.has(where)) return;
  ctx.seen.add(where);
  if (hop.kind === "record" && hop.externalDns && !ctx.chosen) {
    ctx.notes.push(`${where} — owned by ExternalDNS, which repairs it by itself; not planned.`);
    return;
  }
  const replacement = replacementOf(ctx, hop, host);
  if (!replacement) {
    if (!ctx.chosen) ctx.questions.push(noReplacementQuestion(where, hop, host));
    return;
  }
  const repair = { where, host, to: replacement };
  if (hop.kind === "record") planRecordEdit(ctx, hop, repair);
  else planOriginEdit(ctx, hop, repair);
}

/** A link being repaired: how questions name it, the host it serves, and the load balancer it moves to. */
interface Repair {
  readonly where: string;
  readonly host: string;
  readonly to: { readonly dnsName: string; readonly loadBalancer: string };
}

/** The record a hop names, as read, rewritten to name the replacement (alias zone id from the new load balancer). */
function planRecordEdit(ctx: PlanContext, hop: Hop, repair: Repair): void {
  const ref = hop.ref ?? {};
  const from = ctx.input.records.find(
    (r) =>
      r.zoneId === ref["zoneId"] &&
      r.name === ref["name"] &&
      r.type === ref["type"] &&
      (r.setIdentifier ?? "") === (ref["setIdentifier"] ?? ""),
  );
  if (!from) {
    ctx.questions.push(`${repair.where} — the record was not read, so no exact change can be planned.`);
    return;
  }
  const lb = ctx.byName.get(repair.to.loadBalancer);
  const to: RecordSetSnapshot = from.alias
    ? {
        ...from,
        alias: {
          ...from.alias,
          dnsName: retarget(from.alias.dnsName, repair.to.dnsName),
          hostedZoneId: lb?.canonicalHostedZoneId ?? from.alias.hostedZoneId,
        },
      }
    : { ...from, values: [retarget(from.values[0] ?? "", repair.to.dnsName)] };
  ctx.recordEdits.set(keyOf(from), { zoneId: from.zoneId, from, to });
  ctx.touched.add(repair.host);
}

/** A CloudFront origin naming a load balancer directly: its `DomainName` change, bound to the ETag read. */
function planOriginEdit(ctx: PlanContext, hop: Hop, repair: Repair): void {
  const distributionId = hop.ref?.["distributionId"];
  const originId = hop.ref?.["originId"];
  const d = ctx.input.distributions.find((x) => x.id === distributionId);
  const origin = d?.origins.find((o) => o.id === originId);
  if (!d || !origin || originId === undefined) {
    ctx.questions.push(`${repair.where} — the distribution was not read, so no exact change can be planned.`);
    return;
  }
  const etag = ctx.input.etags.get(d.id);
  if (etag === undefined) {
    ctx.questions.push(
      `${repair.where} — the config of ${d.id} could not be read (no ETag), so it cannot be changed safely.`,
    );
    return;
  }
  const key = `${d.id}|${originId}`;
  const prior = ctx.originEdits.get(key);
  ctx.originEdits.set(key, {
    kind: "cloudfront-origin",
    distributionId: d.id,
    originId,
    from: origin.domainName,
    to: retarget(origin.domainName, repair.to.dnsName),
    etag,
    hostnames: [...new Set([...(prior?.hostnames ?? []), repair.host])],
  });
  ctx.touched.add(repair.host);
}

/** The record edits grouped into one Route 53 change batch per zone (DELETE as read, then CREATE). */
function route53Steps(
  zonesRead: readonly HostedZoneSnapshot[],
  edits: Iterable<RecordEdit>,
): Route53RepointStep[] {
  const zones = new Map<string, Route53RepointStep>();
  for (const { zoneId, from, to } of edits) {
    const zone = zonesRead.find((z) => z.id === zoneId);
    const step = zones.get(zoneId) ?? {
      kind: "route53" as const,
      zoneId,
      zoneName: zone?.name ?? zoneId,
      changes: [] as RecordChange[],
      edits: [] as Route53RepointStep["edits"],
    };
    zones.set(zoneId, {
      ...step,
      changes: [...step.changes, { action: "DELETE", record: from }, { action: "CREATE", record: to }],
      edits: [
        ...step.edits,
        {
          name: from.name,
          type: from.type,
          from: normalizeDns(from.alias?.dnsName ?? from.values[0] ?? ""),
          to: normalizeDns(to.alias?.dnsName ?? to.values[0] ?? ""),
        },
      ],
    });
  }
  return [...zones.values()];
}

/** The targets some step actually points at (a target of a link that was not planned is left out). */
function targetsUsed(targets: Iterable<RepointTarget>, steps: readonly RepointStep[]): RepointTarget[] {
  return [...targets].filter((t) =>
    steps.some((st) =>
      st.kind === "route53"
        ? st.edits.some((e) => normalizeDns(e.to) === normalizeDns(t.dnsName))
        : normalizeDns(st.to) === normalizeDns(t.dnsName),
    ),
  );
}

/** The planning context of an input whose `--to` (if any) names a load balancer that exists. */
function planContext(
  input: RepointPlanInput,
  byName: ReadonlyMap<string, LoadBalancerSnapshot>,
): PlanContext {
  const ownership = buildOwnership({
    ...(input.cluster !== undefined ? { cluster: input.cluster } : {}),
    owners: input.owners ?? [],
    loadBalancers: input.loadBalancers,
    records: input.records,
  });
  const lb = input.choose !== undefined ? byName.get(input.choose) : undefined;
  return {
    input,
    byName,
    ownership,
    chosen: lb ? { lb, facts: ownership.factsOf(lb) } : undefined,
    questions: [],
    notes: [],
    refusals: [],
    risks: [],
    targets: new Map(),
    recordEdits: new Map(),
    originEdits: new Map(),
    seen: new Set(),
    touched: new Set(),
  };
}

/** Plan the repair of traced paths: exact Route 53 and CloudFront changes, questions, notes, or refusals. */
export function planRepoint(input: RepointPlanInput): RepointPlan {
  const byName = new Map(input.loadBalancers.map((l) => [l.name, l]));
  if (input.choose !== undefined && !byName.has(input.choose)) {
    return {
      refused: [`No load balancer is named ${input.choose} in this account and region; nothing was planned.`],
      questions: [],
      notes: [],
    };
  }
  const ctx = planContext(input, byName);
  for (const path of input.paths) for (const hop of path.hops) planHop(ctx, path.hostname, hop);
  const { questions, notes, risks } = ctx;
  // A `--to` that fails a check refuses the whole plan: half a repair onto a chosen target is worse.
  if (ctx.refusals.length > 0) return { refused: [...new Set(ctx.refusals)], questions, notes };
  // Route 53 first: the names people type; then the origins CloudFront fetches from.
  const steps = [...route53Steps(input.zones, ctx.recordEdits.values()), ...ctx.originEdits.values()];
  if (steps.length === 0) return { refused: [], questions, notes };
  return {
    action: {
      type: "repoint-path",
      hostnames: [...ctx.touched],
      steps,
      targets: targetsUsed(ctx.targets.values(), steps),
      ...(risks.length > 0 ? { risks: [...new Set(risks)] } : {}),
    },
    refused: [],
    questions,
    notes,
  };
}
