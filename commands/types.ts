import type { Logger } from "../src/log.js";
import type { KubePort } from "../src/kube/port.js";
import type { NamespaceDiagnosis } from "../src/diagnosis/types.js";
import type { ErrorCode, ErrorDetails } from "../src/errors.js";
import type { CommandSyntax, ParsedArgs } from "./grammar.js";

/** Who is asking. In Slack: user id + team id (never a display name). In the CLI: the local user. */
export interface Actor {
  readonly userId: string;
  readonly teamId: string;
  readonly channelId?: string;
  readonly surface: "slack" | "cli";
}

/** Everything a command handler may use; injected, so tests never reach the network by accident. */
export interface CommandServices {
  readonly kube: KubePort;
  readonly now: () => Date;
  readonly log: Logger;
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
  | { readonly type: "diagnosis"; readonly diagnosis: NamespaceDiagnosis }
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
