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
import type { CloudFrontOriginStep, RepointTarget, Route53RepointStep } from "./repoint-steps.js";
import type { ObjectSnapshot } from "../kube/types.js";
import { plural } from "../util/format.js";
import { buildOwnership } from "./ownership.js";
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

export function planRepoint(input: RepointPlanInput): RepointPlan {
  const questions: string[] = [];
  const notes: string[] = [];
  const refusals: string[] = [];
  const risks: string[] = [];
  const targets = new Map<string, RepointTarget>();
  const byName = new Map(input.loadBalancers.map((l) => [l.name, l]));
  const chosen = input.choose !== undefined ? byName.get(input.choose) : undefined;
  if (input.choose !== undefined && chosen === undefined) {
    return {
      refused: [`No load balancer is named ${input.choose} in this account and region; nothing was planned.`],
      questions,
      notes,
    };
  }
  const ownership = buildOwnership({
    ...(input.cluster !== undefined ? { cluster: input.cluster } : {}),
    owners: input.owners ?? [],
    loadBalancers: input.loadBalancers,
    records: input.records,
  });
  const chosenFacts = chosen ? ownership.factsOf(chosen) : undefined;

  /** Record the target a link moves to, with its owner and how it was established. */
  const useTarget = (
    host: string,
    t: Omit<RepointTarget, "hostnames" | "established"> & { established: string },
  ): void => {
    const prior = targets.get(t.loadBalancer);
    targets.set(t.loadBalancer, {
      ...t,
      established: prior?.established ?? t.established,
      hostnames: [...new Set([...(prior?.hostnames ?? []), host])],
    });
  };

  /** The replacement of a link: its own (from evidence) or the requester's `--to`, checked. */
  const replacementOf = (hop: Hop, host: string): { dnsName: string; loadBalancer: string } | undefined => {
    if (chosen && chosenFacts) {
      const where = `--to ${chosen.name} is refused for ${host}`;
      if (!ownership.serves(chosenFacts, host)) {
        refusals.push(
          `${where}: ${chosenFacts.owner ? `the rules of its owner ${chosenFacts.owner.label} serve ${chosenFacts.serves.join(", ") || "no host"}` : "no Ingress or Service of this cluster owns it, so nothing says it serves that host"} — it would answer 404 for ${host}.`,
        );
        return undefined;
      }
      const old = hop.oldOwner;
      const ns = chosenFacts.owner?.namespaces ?? [];
      const label = chosenFacts.owner
        ? `${chosenFacts.owner.label} (namespace ${ns.join(", ") || "unknown"})`
        : `${chosen.name}, which no Ingress or Service of this cluster owns`;
      if (old !== undefined && !ns.some((n) => old.namespaces.includes(n))) {
        if (input.allowOtherNamespace !== true) {
          refusals.push(
            `${where}: it belongs to ${label}, not to namespace ${old.namespaces.join(", ")} of ${old.label}, which owned the old target (${old.evidence}). If that is intended, say so with --other-namespace.`,
          );
          return undefined;
        }
        risks.push(
          `${host} moves to ${label} — another namespace than ${old.label}, which owned the old target; named explicitly with --to ${chosen.name} --other-namespace.`,
        );
      } else if (old === undefined) {
        risks.push(
          `Whose load balancer ${host} named could not be established; ${label} was named by the requester with --to ${chosen.name}.`,
        );
      }
      useTarget(host, {
        loadBalancer: chosen.name,
        dnsName: chosen.dnsName,
        ...(chosenFacts.owner
          ? { owner: chosenFacts.owner.label, namespaces: chosenFacts.owner.namespaces }
          : {}),
        ...(chosenFacts.cluster !== undefined ? { cluster: chosenFacts.cluster } : {}),
        serves: chosenFacts.serves,
        established: `named by the requester with --to${old ? `; the old target was ${old.label}'s (${old.evidence})` : ""}`,
      });
      return { dnsName: chosen.dnsName, loadBalancer: chosen.name };
    }
    const r = hop.replacement;
    if (r === undefined) return undefined;
    useTarget(host, {
      loadBalancer: r.loadBalancer,
      dnsName: r.dnsName,
      ...(r.owner !== undefined ? { owner: r.owner } : {}),
      ...(r.namespaces !== undefined ? { namespaces: r.namespaces } : {}),
      ...(r.cluster !== undefined ? { cluster: r.cluster } : {}),
      serves: r.serves ?? [],
      established: r.evidence ?? "the owner's current load balancer",
    });
    return r;
  };

  const recordEdits = new Map<string, { zoneId: string; from: RecordSetSnapshot; to: RecordSetSnapshot }>();
  const originEdits = new Map<string, CloudFrontOriginStep>();
  const seen = new Set<string>();
  const touched = new Set<string>();

  for (const path of input.paths) {
    for (const hop of path.hops) {
      if (hop.verdict !== "stale" && hop.verdict !== "mismatched") continue;
      if (hop.kind !== "record" && hop.kind !== "origin") continue;
      const where = `${path.hostname}: ${hop.label}`;
      if (seen.has(where)) continue;
      seen.add(where);
      if (hop.kind === "record" && hop.externalDns && !chosen) {
        notes.push(`${where} — owned by ExternalDNS, which repairs it by itself; not planned.`);
        continue;
      }
      const replacement = replacementOf(hop, path.hostname);
      if (!replacement) {
        if (chosen) continue;
        if (hop.candidates && hop.candidates.length > 0) {
          questions.push(
            `${where} — ${plural(hop.candidates.length, "load balancer", "load balancers")} of ${hop.oldOwner?.label ?? "its owner"} ${hop.candidates.length === 1 ? "serves" : "serve"} ${path.hostname}: ${hop.candidates.join("; ")}. Not guessed: name one with \`repoint ${path.hostname} --to <load-balancer-name>\`.`,
          );
        } else {
          questions.push(
            `${where} — no replacement: ${hop.unresolved ?? "no load balancer replaces it yet"}.`,
          );
        }
        continue;
      }
      if (hop.kind === "record") {
        const ref = hop.ref ?? {};
        const from = input.records.find(
          (r) =>
            r.zoneId === ref["zoneId"] &&
            r.name === ref["name"] &&
            r.type === ref["type"] &&
            (r.setIdentifier ?? "") === (ref["setIdentifier"] ?? ""),
        );
        if (!from) {
          questions.push(`${where} — the record was not read, so no exact change can be planned.`);
          continue;
        }
        const lb = byName.get(replacement.loadBalancer);
        const to: RecordSetSnapshot = from.alias
          ? {
              ...from,
              alias: {
                ...from.alias,
                dnsName: retarget(from.alias.dnsName, replacement.dnsName),
                hostedZoneId: lb?.canonicalHostedZoneId ?? from.alias.hostedZoneId,
              },
            }
          : { ...from, values: [retarget(from.values[0] ?? "", replacement.dnsName)] };
        recordEdits.set(keyOf(from), { zoneId: from.zoneId, from, to });
        touched.add(path.hostname);
        continue;
      }
      // A CloudFront origin naming a load balancer directly.
      const distributionId = hop.ref?.["distributionId"];
      const originId = hop.ref?.["originId"];
      const d = input.distributions.find((x) => x.id === distributionId);
      const origin = d?.origins.find((o) => o.id === originId);
      if (!d || !origin || originId === undefined) {
        questions.push(`${where} — the distribution was not read, so no exact change can be planned.`);
        continue;
      }
      const etag = input.etags.get(d.id);
      if (etag === undefined) {
        questions.push(
          `${where} — the config of ${d.id} could not be read (no ETag), so it cannot be changed safely.`,
        );
        continue;
      }
      const key = `${d.id}|${originId}`;
      const prior = originEdits.get(key);
      originEdits.set(key, {
        kind: "cloudfront-origin",
        distributionId: d.id,
        originId,
        from: origin.domainName,
        to: retarget(origin.domainName, replacement.dnsName),
        etag,
        hostnames: [...new Set([...(prior?.hostnames ?? []), path.hostname])],
      });
      touched.add(path.hostname);
    }
  }

  const zones = new Map<string, Route53RepointStep>();
  for (const { zoneId, from, to } of recordEdits.values()) {
    const zone = input.zones.find((z) => z.id === zoneId);
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
  // Route 53 first: the names people type; then the origins CloudFront fetches from.
  // A `--to` that fails a check refuses the whole plan: half a repair onto a chosen target is worse.
  if (refusals.length > 0) return { refused: [...new Set(refusals)], questions, notes };
  const steps = [...zones.values(), ...originEdits.values()];
  if (steps.length === 0) return { refused: [], questions, notes };
  return {
    action: {
      type: "repoint-path",
      hostnames: [...touched],
      steps,
      targets: [...targets.values()].filter((t) =>
        steps.some((st) =>
          st.kind === "route53"
            ? st.edits.some((e) => normalizeDns(e.to) === normalizeDns(t.dnsName))
            : normalizeDns(st.to) === normalizeDns(t.dnsName),
        ),
      ),
      ...(risks.length > 0 ? { risks: [...new Set(risks)] } : {}),
    },
    refused: [],
    questions,
    notes,
  };
}
