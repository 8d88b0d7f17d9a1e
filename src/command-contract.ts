/**
 * The contract between the command handlers (`commands/`) and the surfaces that run and render them
 * (`src/slack`, the CLI): what a command may use (`CommandServices`) and how a surface asks for one
 * (`CommandDispatcher`); what it produces and who asked are plain data in `command-result.ts`. Both sides
 * import it, so neither imports the other: `commands/types.ts` re-exports it for the handlers.
 */
import type { ApprovalWorkflow, Filed } from "./approvals/workflow.js";
import type { AuditLog } from "./audit/log.js";
import type { AwsPort } from "./aws/port.js";
import type { Actor, CommandResult } from "./command-result.js";
import type { Logger } from "./log.js";
import type { KubePort } from "./kube/port.js";
import type { EdgeProbe } from "./net/port.js";

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
