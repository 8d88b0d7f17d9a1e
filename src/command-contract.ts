/**
 * The contract between the command handlers (`commands/`) and the surfaces that run and render them
 * (`src/slack`, `src/render`, the CLI): what a command may use (`CommandServices`, `Actor`), what it
 * produces (`CommandResult`), and how a surface asks for one (`CommandDispatcher`). It lives below both,
 * so neither imports the other: `commands/types.ts` re-exports it for the handlers.
 */
import type { ApprovalWorkflow, Filed, RequestDraft } from "./approvals/workflow.js";
import type { ApprovalRequest } from "./approvals/types.js";
import type { StoredAuditEntry } from "./audit/entry.js";
import type { AuditLog } from "./audit/log.js";
import type { AwsPort } from "./aws/port.js";
import type { Logger } from "./log.js";
import type { KubePort } from "./kube/port.js";
import type { NamespaceDiagnosis } from "./diagnosis/types.js";
import type { TraceResult } from "./traffic/trace.js";
import type { RepointPlan } from "./edge/repoint.js";
import type { EdgeProbe } from "./net/probe.js";
import type { OrphanReport } from "./edge/orphans.js";
import type { PreflightReport } from "./preflight/analyze.js";
import type { ErrorCode, ErrorDetails } from "./errors.js";

/** Who is asking. In Slack: user id + team id (never a display name). In the CLI: the local user. */
export interface Actor {
  readonly userId: string;
  readonly teamId: string;
  readonly channelId?: string;
  /** The thread the command was typed in (the `ts` of its parent message), when it was typed in one. */
  readonly threadTs?: string;
  readonly surface: "slack" | "cli";
}

/** The approval engine, present where Redis is configured (the bot; not the read-only CLI). */
export interface ApprovalServices {
  readonly workflow: ApprovalWorkflow;
  readonly audit: AuditLog;
}

/** Everything a command handler may use; injected, so tests never reach the network by accident. */
export interface CommandServices {
  readonly kube: KubePort;
  readonly now: () => Date;
  readonly log: Logger;
  /** AWS reads for Load Balancer Controller finalizers; absent = diagnosis stays in the cluster. */
  readonly aws?: { readonly port: AwsPort; readonly cluster?: string };
  readonly approvals?: ApprovalServices;
  /** Terminating longer than this with finalizers left = blocked. */
  readonly blockedAfterSeconds?: number;
  /** A diagnosis answers by then with what it has, marked partial. */
  readonly diagnosisDeadlineMs?: number;
  /** DNS and HTTP probes for `trace --probe` (resolvers and front from the configuration). */
  readonly probe?: EdgeProbe;
  /** Paths probed on each hostname besides `/` (config `UNSTUCK_HEALTH_PATHS`). */
  readonly healthPaths?: readonly string[];
}

export interface CommandContext {
  readonly actor: Actor;
  readonly services: CommandServices;
}

export interface HelpEntry {
  readonly usage: string;
  readonly summary: string;
  readonly aliases: readonly string[];
  readonly flags: readonly { flag: string; description: string }[];
  readonly examples: readonly string[];
}

export interface HelpDoc {
  readonly product: string;
  readonly prefix: string;
  readonly entries: readonly HelpEntry[];
}

/** What a command produces; each surface renders it (Block Kit, text, JSON). */
export type CommandResult =
  | { readonly type: "help"; readonly help: HelpDoc }
  /** `all`: the terminal lists every object with finalizers (`ns --all`) instead of a summary. */
  | { readonly type: "diagnosis"; readonly diagnosis: NamespaceDiagnosis; readonly all?: boolean }
  /** The traffic path of hostnames or of a namespace. */
  | { readonly type: "trace"; readonly trace: TraceResult; readonly repair?: RepointPlan }
  /** AWS resources nothing owns any more. */
  | { readonly type: "orphans"; readonly report: OrphanReport }
  /** The blast radius of deleting a namespace. */
  | { readonly type: "preflight"; readonly report: PreflightReport }
  /** A new approval request; Slack posts it and attaches the message to the request. */
  | { readonly type: "approval-request"; readonly request: ApprovalRequest }
  /**
   * A request a fleet's worker planned, for the bot to file as the person it verified: it travels to
   * the bot inside the worker's signed answer and is never shown (the bot files it, or answers why not).
   */
  | { readonly type: "approval-draft"; readonly draft: RequestDraft }
  | { readonly type: "approvals"; readonly requests: readonly ApprovalRequest[]; readonly now: string }
  | { readonly type: "audit"; readonly entries: readonly StoredAuditEntry[] }
  /** A post-mortem draft (Markdown) from the audit log. */
  | {
      readonly type: "timeline";
      readonly markdown: string;
      readonly entries: number;
      /** UTC day of the draft (`YYYY-MM-DD`), for the file name. */
      readonly date: string;
      /** The thread the draft covers, when it covers one. */
      readonly thread?: { readonly channel: string; readonly ts: string };
    }
  /** A namespace wait to start in the thread of the posted message. */
  | { readonly type: "watch"; readonly namespace: string; readonly diagnosis: NamespaceDiagnosis }
  | {
      readonly type: "error";
      readonly error: { readonly code: ErrorCode; readonly message: string; readonly details: ErrorDetails };
      readonly help?: HelpDoc;
    };

/** What a surface needs of the registry (`commands/index.ts`): run one command line. */
export interface CommandDispatcher {
  /** Parse, validate and run; never throws — errors become an `error` result. */
  dispatch(text: string, ctx: CommandContext, prefix?: string): Promise<CommandResult>;
}

/** A submitted request as a command's result: the filed request, or the draft for the bot to file. */
export function filedResult(filed: Filed): CommandResult {
  return filed.kind === "filed"
    ? { type: "approval-request", request: filed.request }
    : { type: "approval-draft", draft: filed.draft };
}
