import { ErrorCode, UnstuckError } from "../src/errors.js";
import { assertNamespaceName } from "../src/kube/names.js";
import type { PreflightReport } from "../src/preflight/analyze.js";
import { MIN_REASON_LENGTH } from "../src/approvals/reason.js";
import { requireApprovals } from "./finalize.js";
import { filedResult } from "../src/command-contract.js";
import type { CommandSyntax } from "./grammar.js";
import type { CommandModule } from "./types.js";

export const approveDeleteSyntax: CommandSyntax = {
  path: ["approve-delete", "ns"],
  aliases: [["approve-delete", "namespace"]],
  summary:
    "Ask a second person to open the namespace-deletion guard: the preflight (owners, finalizers, what breaks) is attached; once approved, the bot sets unstuck.dev/deletion-approved on the namespace and takes it off again when the window ends.",
  positionals: [{ name: "namespace", description: "Namespace name" }],
  flags: [
    {
      name: "reason",
      kind: "string",
      restOfLine: true,
      valueName: "text",
      required: true,
      description: "Why this namespace goes now (who owns it, what replaces it)",
    },
  ],
  examples: [
    'approve-delete ns myapp --reason "duplicate of the platform app; its Argo CD Application is gone"',
  ],
};

export interface ApproveDeleteInput {
  readonly namespace: string;
  readonly reason: string;
}

/** The preflight as evidence lines for approvers: the verdict and its reasons first, then what breaks. */
export function preflightEvidence(report: PreflightReport): string[] {
  return [
    `preflight: ${report.verdict.toUpperCase()}`,
    ...report.reasons,
    ...report.hostnames.map((h) => h.effect),
    ...report.awsDeleted.map((a) => `deleted with it: ${a.type} ${a.name ?? a.id}`),
    ...report.warnings.map((w) => `not checked: ${w}`),
  ].slice(0, 20);
}

export const approveDeleteCommand: CommandModule<ApproveDeleteInput> = {
  syntax: approveDeleteSyntax,
  build(args) {
    const namespace = assertNamespaceName(args.positionals[0] ?? "");
    const reason = typeof args.flags.reason === "string" ? args.flags.reason.trim() : "";
    if (reason.length < MIN_REASON_LENGTH) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        `Say why in at least ${String(MIN_REASON_LENGTH)} characters: --reason "<why ${namespace} goes now, who owns it>".`,
      );
    }
    return { namespace, reason };
  },
  async run(input, ctx) {
    if (ctx.actor.surface !== "slack") {
      throw new UnstuckError(
        ErrorCode.Forbidden,
        `A namespace deletion is requested and approved in Slack, where identities are verified; here, \`preflight delete ns ${input.namespace}\` shows its blast radius.`,
        { action: "approve-delete" },
      );
    }
    const approvals = requireApprovals(ctx.services, "approve-delete");
    const requester = { userId: ctx.actor.userId, teamId: ctx.actor.teamId };
    const channelId = ctx.actor.channelId ?? "";
    // Policy first: a request that will be refused costs no preflight.
    await approvals.workflow.precheck(requester, channelId);
    const { collectPreflight } = await import("../src/preflight/collect.js");
    const report = await collectPreflight(ctx.services.kube, ctx.services.aws, input.namespace);
    const draft = await approvals.workflow.planDeletionGuard({
      namespace: input.namespace,
      preflight: {
        verdict: report.verdict,
        summary: (report.reasons.length > 0
          ? report.reasons.slice(0, 3).join("; ")
          : "no red flags found"
        ).slice(0, 500),
      },
      reason: input.reason,
      evidence: preflightEvidence(report),
      cleanupPlan: [
        `once approved, delete it within the window: kubectl delete namespace ${input.namespace}`,
        `follow it: watch ns ${input.namespace} (what it still waits on, until it is gone)`,
        "the bot takes the annotation off at the end of the window, and says so in this thread",
        `then: orphans ${input.namespace} (what its load balancers left in AWS)`,
      ],
      requester,
      channelId,
    });
    return filedResult(await approvals.workflow.submit(draft, requester, channelId));
  },
};
