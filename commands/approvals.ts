import { ErrorCode, UnstuckError } from "../src/errors.js";
import type { CommandSyntax } from "./grammar.js";
import { requireApprovals } from "./finalize.js";
import type { CommandModule } from "./types.js";

export const approvalsSyntax: CommandSyntax = {
  path: ["approvals"],
  summary: "List pending approval requests, soonest expiry first.",
  positionals: [],
  flags: [
    {
      name: "limit",
      kind: "number",
      valueName: "n",
      description: "At most n requests (default 50, max 500)",
    },
  ],
  examples: ["approvals"],
};

export const approvalsCommand: CommandModule<{ limit: number }> = {
  syntax: approvalsSyntax,
  build(args) {
    const raw = args.flags.limit;
    const limit = typeof raw === "number" ? Math.trunc(raw) : 50;
    if (limit < 1 || limit > 500) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        `--limit takes a number from 1 to 500 (got ${String(raw)}).`,
      );
    }
    return { limit };
  },
  async run(input, ctx) {
    const { workflow } = requireApprovals(ctx.services, "approvals");
    const requests = await workflow.listPending({ limit: input.limit });
    return { type: "approvals", requests, now: ctx.services.now().toISOString() };
  },
};
