import type { ApprovalWorkflow } from "../src/approvals/workflow.js";
import type { ApprovalRequest } from "../src/approvals/types.js";
import type { AuditLog, StoredAuditEntry } from "../src/audit/log.js";
import type { AwsPort } from "../src/aws/port.js";
import type { Logger } from "../src/log.js";
import type { KubePort } from "../src/kube/port.js";
import type { NamespaceDiagnosis } from "../src/diagnosis/types.js";
import type { TraceResult } from "../src/traffic/trace.js";
import type { RepointPlan } from "../src/edge/repoint.js";
import type { EdgeProbe } from "../src/edge/probe.js";
import type { OrphanReport } from "../src/edge/orphans.js";
import type { PreflightReport } from "../src/preflight/analyze.js";
import type { ErrorCode, ErrorDetails } from "../src/errors.js";
import type { CommandSyntax, ParsedArgs } from "./grammar.js";

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

/** One command module: its grammar, how to build validated input from parsed words, its handler. */
export interface CommandModule<I = unknown> {
  readonly syntax: CommandSyntax;
  /** Validate parsed words; throws `UnstuckError` (BadInput/InvalidName) and never does I/O. */
  build(args: ParsedArgs): I;
  run(input: I, ctx: CommandContext): Promise<CommandResult>;
}
