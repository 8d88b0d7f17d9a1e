import { commandObserver } from "../src/audit/observe.js";
import { ObservationKind } from "../src/audit/observation.js";
import { ErrorCode, UnstuckError } from "../src/errors.js";
import { assertNamespaceName } from "../src/kube/names.js";
import type { CommandSyntax } from "./grammar.js";
import type { CommandModule } from "./types.js";
import { MIN_REASON_LENGTH } from "../src/approvals/reason.js";
import { requireApprovals } from "./finalize.js";
import { filedResult } from "../src/command-contract.js";

export const orphansSyntax: CommandSyntax = {
  path: ["orphans"],
  summary:
    "Did a forced action leave AWS orphans? Load balancers, target groups and security groups the Load Balancer Controller tagged for this cluster that nothing owns any more, and ELB interfaces of deleted load balancers. Never lists a resource in use.",
  positionals: [
    {
      name: "namespace",
      description: "Only this namespace's stacks (default: the whole cluster)",
      optional: true,
    },
  ],
  flags: [
    {
      name: "delete",
      kind: "boolean",
      description:
        "Ask a second person to approve deleting the orphans that can go now (Slack only; re-checked before each delete)",
    },
    {
      name: "reason",
      kind: "string",
      restOfLine: true,
      valueName: "text",
      description: "Why delete them now (with --delete)",
    },
  ],
  examples: [
    "orphans myapp",
    "orphans",
    'orphans myapp --delete --reason "left by the forced removal; stack re-created"',
  ],
};

interface OrphansInput {
  readonly namespace?: string;
  /** `--delete --reason`: request the clean-up. */
  readonly deleteReason?: string;
}

export const orphansCommand: CommandModule<OrphansInput> = {
  syntax: orphansSyntax,
  build: (args) => {
    const ns = args.positionals[0];
    const reason = args.flags.reason;
    if (args.flags.delete === true) {
      if (typeof reason !== "string" || reason.trim().length < MIN_REASON_LENGTH) {
        throw new UnstuckError(
          ErrorCode.BadInput,
          `Say why in at least ${String(MIN_REASON_LENGTH)} characters: --delete --reason "<why they can go now>".`,
        );
      }
    } else if (reason !== undefined) {
      throw new UnstuckError(ErrorCode.BadInput, "--reason goes with --delete (a clean-up request).");
    }
    return {
      ...(ns !== undefined ? { namespace: assertNamespaceName(ns) } : {}),
      ...(args.flags.delete === true && typeof reason === "string" ? { deleteReason: reason.trim() } : {}),
    };
  },
  async run(input, ctx) {
    if (!ctx.services.aws) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        "Orphans live in AWS: set AWS_REGION (and credentials) for the bot; without a region it only looks at the cluster.",
      );
    }
    if (input.deleteReason !== undefined && ctx.actor.surface !== "slack") {
      throw new UnstuckError(
        ErrorCode.Forbidden,
        "A clean-up is requested and approved in Slack, where identities are verified; here, leave out --delete to see the orphans.",
        { action: "orphans --delete" },
      );
    }
    const approvals =
      input.deleteReason !== undefined ? requireApprovals(ctx.services, "orphans --delete") : undefined;
    const requester = { userId: ctx.actor.userId, teamId: ctx.actor.teamId };
    if (approvals) await approvals.workflow.precheck(requester, ctx.actor.channelId ?? "");
    const { collectOrphans } = await import("../src/orphans/collect.js");
    const report = await collectOrphans(ctx.services.aws.port, ctx.services.kube, {
      ...(ctx.services.aws.cluster !== undefined ? { cluster: ctx.services.aws.cluster } : {}),
      ...(input.namespace !== undefined ? { namespace: input.namespace } : {}),
    });
    // ELB's interfaces are ELB's to release (and outside the bot's tag-bound IAM): listed, never requested.
    const removable = report.orphans.filter(
      (o): o is typeof o & { type: "LoadBalancer" | "TargetGroup" | "SecurityGroup" } =>
        o.removableNow && o.type !== "NetworkInterface",
    );
    await commandObserver(ctx.services, ctx.actor, "orphans")(
      ObservationKind.OrphanCheck,
      input.namespace !== undefined ? `namespace ${input.namespace}` : `cluster ${report.cluster}`,
      orphanSummary(report),
    );
    if (!approvals || input.deleteReason === undefined || removable.length === 0) {
      return { type: "orphans", report };
    }
    const draft = await approvals.workflow.planOrphanDeletion({
      action: {
        type: "delete-orphans",
        cluster: report.cluster,
        ...(input.namespace !== undefined ? { namespace: input.namespace } : {}),
        resources: removable.map((o) => ({
          type: o.type,
          id: o.id,
          ...(o.name !== undefined ? { name: o.name } : {}),
        })),
      },
      reason: input.deleteReason,
      evidence: removable
        .map((o) => `${o.type} ${o.name ?? o.id}: ${o.why}${o.cost ? ` (${o.cost})` : ""}`)
        .slice(0, 20),
      cleanupPlan: [
        "the executor re-reads the cluster and AWS first: anything owned or used again is left alone",
        ...report.orphans
          .filter((o) => !o.removableNow || o.type === "NetworkInterface")
          .map((o) => `not in this request (not removable yet): ${o.type} ${o.name ?? o.id}: ${o.why}`),
      ].slice(0, 20),
      requester,
      channelId: ctx.actor.channelId ?? "",
    });
    return filedResult(await approvals.workflow.submit(draft, requester, ctx.actor.channelId ?? ""));
  },
};

/** `2 orphans (SecurityGroup sg-1, NetworkInterface eni-2), 14 resources in use`: one line for the timeline. */
export function orphanSummary(report: {
  readonly orphans: readonly { readonly type: string; readonly id: string }[];
  readonly liveCount: number;
  readonly inProgress: readonly unknown[];
}): string {
  const n = report.orphans.length;
  const listed = report.orphans
    .slice(0, 5)
    .map((o) => `${o.type} ${o.id}`)
    .join(", ");
  const more = n > 5 ? `, and ${String(n - 5)} more` : "";
  const head = n === 0 ? "no orphans" : `${String(n)} orphan${n === 1 ? "" : "s"} (${listed}${more})`;
  const deleting =
    report.inProgress.length > 0 ? `, ${String(report.inProgress.length)} still being deleted` : "";
  return `${head}${deleting}, ${String(report.liveCount)} resources in use`;
}
