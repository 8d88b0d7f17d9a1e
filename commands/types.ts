import type { CommandContext, CommandResult } from "../src/command-contract.js";
import type { CommandSyntax, ParsedArgs } from "./grammar.js";

export type {
  Actor,
  ApprovalServices,
  CommandContext,
  CommandDispatcher,
  CommandResult,
  CommandServices,
  HelpDoc,
  HelpEntry,
} from "../src/command-contract.js";

/** One command module: its grammar, how to build validated input from parsed words, its handler. */
export interface CommandModule<I = unknown> {
  readonly syntax: CommandSyntax;
  /** Validate parsed words; throws `UnstuckError` (BadInput/InvalidName) and never does I/O. */
  build(args: ParsedArgs): I;
  run(input: I, ctx: CommandContext): Promise<CommandResult>;
}
