import { ErrorCode, UnstuckError } from "../src/errors.js";
import { assertHostname } from "../src/edge/hostname.js";
import { assertNamespaceName } from "../src/kube/names.js";
import type { Filed } from "../src/approvals/workflow.js";
import { filedResult } from "../src/command-contract.js";
import type { RepointPlan } from "../src/edge/repoint.js";
import type { RepairOptions, RepairSubject } from "../src/traffic/repoint.js";
import type { TraceResult } from "../src/edge/trace-result.js";
import { MIN_REASON_LENGTH } from "../src/approvals/reason.js";
import { requireApprovals } from "./finalize.js";
import type { CommandSyntax } from "./grammar.js";
import { awsOf, clusterOf, planRepair } from "./trace.js";
import type { CommandModule, CommandResult, CommandServices, CommandContext } from "./types.js";

const reasonFlag = {
  name: "reason",
  kind: "string",
  restOfLine: true,
  valueName: "text",
  description: "Why this repair (what is stale, why this target); without it, only the plan is shown",
} as const;

export const repointSyntax: CommandSyntax = {
  path: ["repoint"],
  summary:
    "Repair a broken traffic path through the two-person approval: every stale Route 53 alias and CloudFront origin of the hostname, repointed to the load balancer that replaces it. Without --reason, shows the plan.",
  positionals: [{ name: "hostname", description: "DNS name whose path is broken, e.g. test.example.com" }],
  flags: [
    {
      name: "to",
      kind: "string",
      valueName: "load-balancer-name",
      description:
        "The load balancer to point at, when the trace cannot establish one; it must serve the hostname",
    },
    {
      name: "other-namespace",
      kind: "boolean",
      description:
        "With --to: the target belongs to another namespace than the old target's owner, and that is intended",
    },
    reasonFlag,
  ],
  examples: [
    "repoint test.example.com",
    'repoint test.example.com --to k8s-myapp-myappwor-0123456789 --reason "origin names the deleted worker ALB; 502 since 08:52"',
  ],
};

export const repointNsSyntax: CommandSyntax = {
  path: ["repoint", "ns"],
  aliases: [["repoint", "namespace"]],
  summary:
    "Repair every stale alias and origin that reaches a namespace's load balancers (the bot's own path check after a forced removal offers the same as a button).",
  positionals: [{ name: "namespace", description: "Namespace name" }],
  flags: [reasonFlag],
  examples: ['repoint ns myapp --reason "ALBs re-created after the forced removal; 502 on test.example.com"'],
};

/** ELB names: 1–32 letters, digits and '-'. */
const LB_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,30}[A-Za-z0-9])?$/;

interface RepointInput {
  readonly subject: RepairSubject;
  readonly to?: string;
  readonly otherNamespace?: boolean;
  readonly reason?: string;
}

/** What planRepair is told besides the subject: `--to`, `--other-namespace`, the cluster. */
function repairOptions(
  input: { readonly to?: string; readonly otherNamespace?: boolean },
  services: CommandServices,
): RepairOptions {
  return {
    ...(input.to !== undefined ? { choose: input.to } : {}),
    ...(input.otherNamespace === true ? { allowOtherNamespace: true } : {}),
    ...clusterOf(services),
  };
}

function reasonOf(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  const reason = typeof raw === "string" ? raw.trim() : "";
  if (reason.length < MIN_REASON_LENGTH) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      `Say why in at least ${String(MIN_REASON_LENGTH)} characters: --reason "<what is stale, why this target>".`,
    );
  }
  return reason;
}

/** Plan from a fresh trace; in Slack with a reason, the plan becomes an approval request. */
async function runRepoint(input: RepointInput, ctx: CommandContext): Promise<CommandResult> {
  const services: CommandServices = ctx.services;
  const aws = awsOf(services);
  if (input.reason !== undefined && ctx.actor.surface !== "slack") {
    throw new UnstuckError(
      ErrorCode.Forbidden,
      "A repair is requested and approved in Slack, where the requester's and approvers' identities are verified; here, leave out --reason to see the plan.",
      { action: "repoint" },
    );
  }
  // Before the namespace is back there is nothing to repoint to: say so plainly, not as a partial read.
  if ("namespace" in input.subject && (await services.kube.getNamespace(input.subject.namespace)) === null) {
    const ns = input.subject.namespace;
    throw new UnstuckError(
      ErrorCode.NotFound,
      `Namespace ${ns} does not exist yet, so nothing can be repointed: its load balancers come back once it is re-created (Argo CD, or kubectl apply). Meanwhile \`trace ns ${ns}\` shows the broken paths; once ${ns} is back, the bot's re-check in the removal's thread offers the repair.`,
      { namespace: ns },
    );
  }
  if (input.reason === undefined) {
    const { trace, plan } = await planRepair(
      aws,
      services.kube,
      input.subject,
      services.now,
      repairOptions(input, services),
    );
    return { type: "trace", trace, repair: plan };
  }
  const made = await requestRepairWithPlan(services, requireApprovals(services, "repoint"), {
    subject: input.subject,
    ...(input.to !== undefined ? { to: input.to } : {}),
    ...(input.otherNamespace === true ? { otherNamespace: true } : {}),
    reason: input.reason,
    requester: { userId: ctx.actor.userId, teamId: ctx.actor.teamId },
    channelId: ctx.actor.channelId ?? "",
  });
  return made.filed !== undefined
    ? filedResult(made.filed)
    : { type: "trace", trace: made.trace, repair: made.plan };
}

/**
 * Trace and plan afresh, then submit the request — the one path the slash command and the *Fix the
 * path* button share. With nothing to change, returns the trace and plan (its questions) instead.
 */
export async function requestRepairWithPlan(
  services: CommandServices,
  approvals: NonNullable<CommandServices["approvals"]>,
  input: {
    readonly subject: RepairSubject;
    readonly to?: string;
    readonly otherNamespace?: boolean;
    readonly reason: string;
    readonly requester: { readonly userId: string; readonly teamId: string };
    readonly channelId: string;
  },
): Promise<{ filed?: Filed; trace: TraceResult; plan: RepointPlan }> {
  await approvals.workflow.precheck(input.requester, input.channelId);
  const { trace, plan } = await planRepair(
    awsOf(services),
    services.kube,
    input.subject,
    services.now,
    repairOptions(input, services),
  );
  if (plan.action === undefined) return { trace, plan };
  const draft = await approvals.workflow.planRepoint({
    action: plan.action,
    reason: input.reason,
    ...requestWords(plan.action, trace, plan),
    requester: input.requester,
    channelId: input.channelId,
  });
  return { filed: await approvals.workflow.submit(draft, input.requester, input.channelId), trace, plan };
}

/** Plan the repair of `subject` afresh, as a request would, without requesting anything. */
export async function planRepairOf(services: CommandServices, subject: RepairSubject): Promise<RepointPlan> {
  const { plan } = await planRepair(
    awsOf(services),
    services.kube,
    subject,
    services.now,
    repairOptions({}, services),
  );
  return plan;
}

/** A hostname as the plan and the trace name it: lower case, no trailing dot. */
function hostKey(h: string): string {
  return h.replace(/\.$/, "").toLowerCase();
}

/** "1 call", "3 calls". */
function plural(n: number, noun: string): string {
  return `${String(n)} ${noun}${n === 1 ? "" : "s"}`;
}

/**
 * The request's evidence and clean-up plan: evidence only for the hostnames the plan changes; every
 * other broken hostname in one line, with where to see it.
 */
function requestWords(
  action: NonNullable<RepointPlan["action"]>,
  trace: TraceResult,
  plan: RepointPlan,
): { evidence: string[]; cleanupPlan: string[] } {
  const changed = new Set(
    action.steps.flatMap((s) =>
      s.kind === "route53" ? s.changes.map((c) => hostKey(c.record.name)) : s.hostnames.map(hostKey),
    ),
  );
  const broken = trace.paths.filter((p) => p.verdict === "stale" || p.verdict === "mismatched");
  const mine = broken.filter((p) => changed.has(hostKey(p.hostname)));
  const others = broken.filter((p) => !changed.has(hostKey(p.hostname)));
  const seeTrace =
    "namespace" in trace.subject
      ? `trace ns ${trace.subject.namespace}`
      : `trace ${others[0]?.hostname ?? ""}`;
  const hosts = [...changed].sort();
  const gone = mine.every((p) => p.hops.every((h) => h.verdict !== "mismatched"));
  // The first item is the request card's "why": the cause in one sentence.
  const evidence = [
    `${hosts.join(", ")} ${hosts.length === 1 ? "points" : "point"} at ${gone ? "a load balancer that no longer exists" : "a load balancer that does not serve it"}.`,
    ...mine.flatMap((p) =>
      p.hops
        .filter((h) => h.verdict === "stale" || h.verdict === "mismatched")
        .map((h) => `${p.hostname}: ${h.label} — ${h.why}`),
    ),
  ].slice(0, 20);
  // What the change leaves for a person: the hostnames it does not repair, and what the old load
  // balancers left in AWS.
  const cleanupPlan: string[] = [];
  if (others.length > 0)
    cleanupPlan.push(
      `${plural(others.length, "other hostname")} ${others.length === 1 ? "stays" : "stay"} broken, not changed by this plan (${others
        .slice(0, 3)
        .map((p) => p.hostname)
        .join(
          ", ",
        )}${others.length > 3 ? `, and ${String(others.length - 3)} more` : ""}): see \`${seeTrace}\``,
    );
  else if (plan.questions.length > 0)
    cleanupPlan.push(
      `${plural(plan.questions.length, "link")} the plan could not repair ${plan.questions.length === 1 ? "stays" : "stay"} for a person: see \`${seeTrace}\``,
    );
  if ("namespace" in trace.subject)
    cleanupPlan.push(
      `what the old load balancers left in AWS (target groups, security groups, network interfaces): \`orphans ${trace.subject.namespace}\``,
    );
  return { evidence, cleanupPlan };
}

export const repointCommand: CommandModule<RepointInput> = {
  syntax: repointSyntax,
  build(args) {
    const to = args.flags.to;
    if (to !== undefined && (typeof to !== "string" || !LB_NAME.test(to))) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        `--to takes a load balancer name (1–32 letters, digits and '-'), e.g. k8s-myapp-myappwor-0123456789.`,
      );
    }
    const reason = reasonOf(args.flags.reason);
    const otherNamespace = args.flags["other-namespace"] === true;
    if (otherNamespace && typeof to !== "string") {
      throw new UnstuckError(
        ErrorCode.BadInput,
        "--other-namespace only qualifies a target named with --to <load-balancer-name>.",
      );
    }
    return {
      subject: { hostnames: [assertHostname(args.positionals[0] ?? "")] },
      ...(typeof to === "string" ? { to } : {}),
      ...(otherNamespace ? { otherNamespace } : {}),
      ...(reason !== undefined ? { reason } : {}),
    };
  },
  run: runRepoint,
};

export const repointNsCommand: CommandModule<RepointInput> = {
  syntax: repointNsSyntax,
  build(args) {
    const reason = reasonOf(args.flags.reason);
    return {
      subject: { namespace: assertNamespaceName(args.positionals[0] ?? "") },
      ...(reason !== undefined ? { reason } : {}),
    };
  },
  run: runRepoint,
};
