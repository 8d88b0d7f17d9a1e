import type { CommandContext } from "../src/command-contract.js";
import type { CommandResult } from "../src/command-result.js";
import type { CommandSyntax, ParsedArgs } from "./grammar.js";

export type {
  ApprovalServices,
  CommandContext,
  CommandDispatcher,
  CommandServices,
} from "../src/command-contract.js";
export type { Actor, CommandResult, HelpDoc, HelpEntry } from "../src/command-result.js";

/** One command module: its grammar, how to build validated input from parsed words, its handler. */
export interface CommandModule<I = unknown> {
  readonly syntax: CommandSyntax;
  /** Validate parsed words; throws `UnstuckError` (BadInput/InvalidName) and never does I/O. */
  build(args: ParsedArgs): I;
  run(input: I, ctx: CommandContext): Promise<CommandResult>;
}
