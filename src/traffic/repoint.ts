/**
 * Plans the repair of a traffic path: a fresh trace (hostnames, or every hostname reaching a
 * namespace), the ETag of each distribution whose origin would change, and the pure plan
 * (`edge/repoint.ts`). Read-only: the plan becomes a change only through the two-person approval.
 */
import type { RepairPlanAwsReads } from "../aws/port.js";
import type { Identity } from "../requests/model.js";
import type { RepointTarget } from "../edge/repoint-steps.js";
import type { ListenerRuleSnapshot, LoadBalancerSnapshot } from "../aws/types.js";
import { hostServed } from "../edge/ownership.js";
import { planRepoint, type RepointPlan } from "../edge/repoint.js";
import { toUserError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import {
  deniedRead,
  traceHostnamesWithReads,
  traceNamespaceWithReads,
  type TraceWithReads,
} from "./trace.js";
import type { DeniedRead, TraceResult } from "../edge/trace-result.js";

export interface PathRepair {
  readonly trace: TraceResult;
  readonly plan: RepointPlan;
}

export type RepairSubject = { readonly hostnames: readonly string[] } | { readonly namespace: string };

/** What the repair button or form asks for. */
export interface RepairFormInput {
  readonly subject: RepairSubject;
  readonly reason: string;
  readonly requester: Identity;
  readonly channelId: string;
}

/** Whether a repair button can still do anything: a fresh plan has a change to ask for, or why not. */
export type RepairCheck =
  { readonly repairable: true } | { readonly repairable: false; readonly why: string };

export interface RepairOptions {
  /** `--to`: the load balancer the requester names (checked: it must serve each hostname). */
  readonly choose?: string;
  /** `--other-namespace`: a `--to` target of another namespace than the old target's owner is intended. */
  readonly allowOtherNamespace?: boolean;
  /** The cluster name the controller tags with, when configured. */
  readonly cluster?: string;
}

export async function planPathRepair(
  aws: RepairPlanAwsReads,
  kube: KubePort | undefined,
  subject: RepairSubject,
  now: () => Date,
  options: RepairOptions = {},
): Promise<PathRepair> {
  let traced: TraceWithReads;
  const traceOptions = options.cluster !== undefined ? { cluster: options.cluster } : {};
  if ("namespace" in subject) {
    if (!kube) throw new Error("planPathRepair: a namespace needs the cluster connection");
    traced = await traceNamespaceWithReads(aws, kube, subject.namespace, now, traceOptions);
  } else {
    traced = await traceHostnamesWithReads(aws, kube, subject.hostnames, now, traceOptions);
  }
  // The ETag of each distribution a stale origin belongs to: the change is sent with it (If-Match).
  const ids = new Set<string>();
  for (const p of traced.trace.paths)
    for (const h of p.hops)
      if (h.kind === "origin" && (h.verdict === "stale" || h.verdict === "mismatched")) {
        const id = h.ref?.["distributionId"];
        if (id !== undefined) ids.add(id);
      }
  const etags = new Map<string, string>();
  const warnings = [...traced.trace.warnings];
  const denied: DeniedRead[] = [...(traced.trace.denied ?? [])];
  const refused = (what: string, err: unknown): void => {
    const d = deniedRead(what, err);
    if (d !== undefined) denied.push(d);
  };
  await Promise.all(
    [...ids].map(async (id) => {
      try {
        etags.set(id, (await aws.distributionConfig(id)).etag);
      } catch (err) {
        warnings.push(`Could not read the config of distribution ${id}: ${toUserError(err).message}`);
        refused(`the config of distribution ${id}`, err);
      }
    }),
  );
  const planned = planRepoint({
    paths: traced.trace.paths,
    zones: traced.zones,
    records: traced.records,
    distributions: traced.distributions,
    loadBalancers: traced.loadBalancers,
    owners: traced.owners,
    ...(traced.cluster !== undefined ? { cluster: traced.cluster } : {}),
    etags,
    ...(options.choose !== undefined ? { choose: options.choose } : {}),
    ...(options.allowOtherNamespace === true ? { allowOtherNamespace: true } : {}),
  });
  const plan = await checkTargetsInAws(aws, planned, traced.loadBalancers, warnings, refused);
  return { trace: { ...traced.trace, warnings, ...(denied.length > 0 ? { denied } : {}) }, plan };
}

/** Does a listener rule set route `host` to a target group (a rule without a host matches any)? */
function rulesServe(rules: readonly ListenerRuleSnapshot[], host: string): boolean {
  return rules.some(
    (r) => r.forwards && (r.isDefault || r.hosts.length === 0 || r.hosts.some((h) => hostServed(h, host))),
  );
}

/**
 * The owner's rules say what a target should serve; its listener rules in AWS say what it serves
 * now. An ALB target whose rules in AWS route none of its hostnames (the controller has not
 * reconciled yet, or failed) would answer 404: the plan is refused with the reason. Each target's
 * evidence gains what AWS says. Rules that cannot be read are a warning; the owner's rules stand.
 */
async function checkTargetsInAws(
  aws: RepairPlanAwsReads,
  plan: RepointPlan,
  loadBalancers: readonly LoadBalancerSnapshot[],
  warnings: string[],
  refused: (what: string, err: unknown) => void,
): Promise<RepointPlan> {
  const action = plan.action;
  if (action?.targets === undefined || action.targets.length === 0) return plan;
  const refusals: string[] = [];
  const targets: RepointTarget[] = await Promise.all(
    action.targets.map(async (t) => {
      const lb = loadBalancers.find((l) => l.name === t.loadBalancer);
      if (!lb || lb.type === "network") return t;
      let rules: ListenerRuleSnapshot[];
      try {
        rules = await aws.listenerRulesOf(lb.arn);
      } catch (err) {
        warnings.push(
          `Could not read the listener rules of ${lb.name}: ${toUserError(err).message}; the hosts it serves are taken from its owner's rules.`,
        );
        refused(`the listener rules of ${lb.name}`, err);
        return t;
      }
      const unserved = t.hostnames.filter((h) => !rulesServe(rules, h));
      if (unserved.length > 0) {
        const hosts = [...new Set(rules.flatMap((r) => r.hosts))];
        refusals.push(
          `${lb.name}'s listener rules in AWS do not route ${unserved.join(", ")} (rule hosts: ${hosts.join(", ") || "none"}; the default action ${rules.some((r) => r.isDefault && r.forwards) ? "forwards" : "answers 404"}): it would answer 404. The controller may not have applied its owner's rules yet — trace again once it has.`,
        );
        return t;
      }
      return {
        ...t,
        established: `${t.established}; its listener rules in AWS route ${t.hostnames.join(", ")}`,
      };
    }),
  );
  if (refusals.length > 0) return { refused: refusals, questions: plan.questions, notes: plan.notes };
  return { ...plan, action: { ...action, targets } };
}
