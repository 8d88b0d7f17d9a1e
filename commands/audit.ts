import { ErrorCode, UnstuckError } from "../src/errors.js";
import type { CommandSyntax } from "./grammar.js";
import { requireApprovals } from "./finalize.js";
import type { CommandModule } from "./types.js";

export const auditSyntax: CommandSyntax = {
  path: ["audit"],
  summary: "Show the latest audit entries: every approval transition, who, when, before/after, result.",
  positionals: [{ name: "n", description: "How many entries (default 20, max 200)", optional: true }],
  flags: [],
  examples: ["audit", "audit 50"],
};

export const auditCommand: CommandModule<{ count: number }> = {
  syntax: auditSyntax,
  build(args) {
    const raw = args.positionals[0];
    if (raw === undefined) return { count: 20 };
    const count = Number(raw);
    if (!Number.isInteger(count) || count < 1 || count > 200) {
      throw new UnstuckError(ErrorCode.BadInput, `audit takes a count from 1 to 200 (got "${raw}").`);
    }
    return { count };
  },
  async run(input, ctx) {
    const { audit } = requireApprovals(ctx.services, "audit");
    return { type: "audit", entries: await audit.latest(input.count) };
  },
};
