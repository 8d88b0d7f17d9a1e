/**
 * What a command answers and who asked it: plain data every surface renders (Block Kit, terminal
 * text, JSON). The services a command runs over and the dispatcher are in `command-contract.ts`.
 */
import type { ApprovalRequest, RequestDraft } from "./requests/model.js";
import type { StoredAuditEntry } from "./audit/entry.js";
import type { NamespaceDiagnosis } from "./diagnosis/types.js";
import type { TraceResult } from "./edge/trace-result.js";
import type { RepointPlan } from "./edge/repoint.js";
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
