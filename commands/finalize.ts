import type { Filed, FinalizerRemovalInput } from "../src/approvals/workflow.js";
import { filedResult } from "../src/command-contract.js";
import { planFinalizerRemoval, resolveResourceType } from "../src/diagnosis/removal-plan.js";
import { MIN_REASON_LENGTH } from "../src/approvals/reason.js";
import { ErrorCode, UnstuckError } from "../src/errors.js";
import { assertNamespaceName, assertObjectName } from "../src/kube/names.js";
import type { CommandSyntax } from "./grammar.js";
import type { CommandModule, CommandServices } from "./types.js";

export const finalizeSyntax: CommandSyntax = {
  path: ["finalize"],
  summary:
    "Ask a second person to approve removing a finalizer that blocks deletion. The request is bound to the object's current state and executed once, after approval.",
  positionals: [{ name: "kind/name", description: "The blocking object, e.g. ingress/myapp-worker-ingress" }],
  flags: [
    {
      name: "namespace",
      short: "n",
      kind: "string",
      valueName: "namespace",
      description: "Namespace of the object",
      required: true,
    },
    {
      name: "finalizer",
      kind: "string",
      valueName: "finalizer",
      description: "Remove only this finalizer (default: all)",
    },
    {
      name: "reason",
      kind: "string",
      restOfLine: true,
      valueName: "text",
      description: "Why recovery comes first (a sentence)",
      required: true,
    },
  ],
  examples: [
    'finalize ingress/myapp-worker-ingress -n myapp --reason "cause confirmed: SG held by an ENI; recovery first"',
  ],
};

export interface FinalizeInput {
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
  readonly finalizer?: string;
  readonly reason: string;
}

export const finalizeCommand: CommandModule<FinalizeInput> = {
  syntax: finalizeSyntax,
  build(args) {
    const target = args.positionals[0] ?? "";
    const slash = target.indexOf("/");
    if (slash <= 0 || slash === target.length - 1) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        `Name the object as <kind>/<name>, e.g. ingress/myapp-worker-ingress (got "${target}").`,
      );
    }
    const namespace = args.flags.namespace;
    if (typeof namespace !== "string")
      throw new UnstuckError(ErrorCode.BadInput, "Say which namespace: -n <namespace>.");
    const reason = args.flags.reason;
    if (typeof reason !== "string" || reason.trim().length < MIN_REASON_LENGTH) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        'Say why recovery comes first: --reason "<cause confirmed, clean-up plan>".',
      );
    }
    const finalizer = args.flags.finalizer;
    return {
      kind: target.slice(0, slash),
      name: assertObjectName(target.slice(slash + 1)),
      namespace: assertNamespaceName(namespace),
      ...(typeof finalizer === "string" ? { finalizer } : {}),
      reason: reason.trim(),
    };
  },
  async run(input, ctx) {
    if (ctx.actor.surface !== "slack") {
      throw new UnstuckError(
        ErrorCode.Forbidden,
        "Finalizer removal is requested and approved in Slack, where the requester's and approvers' identities are verified.",
        { action: "finalize" },
      );
    }
    const approvals = requireApprovals(ctx.services, "finalize");
    const requester = { userId: ctx.actor.userId, teamId: ctx.actor.teamId };
    // Refuse by policy (channel, approvers) before any cluster or AWS read.
    await approvals.workflow.precheck(requester, ctx.actor.channelId ?? "");
    const type = resolveResourceType((await ctx.services.kube.discover()).resources, input.kind);
    const filed = await requestRemovalWithPlan(ctx.services, approvals, {
      type,
      namespace: input.namespace,
      name: input.name,
      ...(input.finalizer ? { finalizer: input.finalizer } : {}),
      reason: input.reason,
      requester,
      channelId: ctx.actor.channelId ?? "",
    });
    return filedResult(filed);
  },
};

/**
 * Build the plan (evidence, clean-up) and submit the request — the one path the slash command and
 * the diagnosis button's modal share.
 */
export async function requestRemovalWithPlan(
  services: CommandServices,
  approvals: NonNullable<CommandServices["approvals"]>,
  input: Omit<FinalizerRemovalInput, "evidence" | "cleanupPlan">,
): Promise<Filed> {
  await approvals.workflow.precheck(input.requester, input.channelId);
  const plan = await planFinalizerRemoval(
    services.kube,
    {
      type: input.type,
      namespace: input.namespace,
      name: input.name,
      ...(input.finalizer ? { finalizer: input.finalizer } : {}),
    },
    diagnoseOptions(services),
  );
  const draft = await approvals.workflow.planFinalizerRemoval({
    ...input,
    evidence: plan.evidence,
    cleanupPlan: plan.cleanupPlan,
  });
  return approvals.workflow.submit(draft, input.requester, input.channelId);
}

/** Options every diagnosis run by a command shares. */
export function diagnoseOptions(services: CommandServices): Parameters<typeof planFinalizerRemoval>[2] {
  return {
    now: services.now,
    ...(services.blockedAfterSeconds !== undefined
      ? { blockedAfterSeconds: services.blockedAfterSeconds }
      : {}),
    ...(services.aws ? { aws: services.aws } : {}),
    ...(services.diagnosisDeadlineMs !== undefined ? { deadlineMs: services.diagnosisDeadlineMs } : {}),
  };
}

export function requireApprovals(
  services: CommandServices,
  command: string,
): NonNullable<CommandServices["approvals"]> {
  if (!services.approvals) {
    throw new UnstuckError(
      ErrorCode.Config,
      `\`${command}\` needs the bot's approval engine (Redis, REDIS_URL); it is not available here.`,
      { variable: "REDIS_URL" },
    );
  }
  return services.approvals;
}
