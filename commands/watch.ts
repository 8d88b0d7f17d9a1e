import { diagnoseNamespace } from "../src/diagnosis/diagnose.js";
import { ErrorCode, UnstuckError } from "../src/errors.js";
import { assertNamespaceName } from "../src/kube/names.js";
import { diagnoseOptions } from "./finalize.js";
import type { CommandSyntax } from "./grammar.js";
import type { CommandModule } from "./types.js";

export const watchSyntax: CommandSyntax = {
  path: ["watch", "ns"],
  // `watch myapp` is what people type first: it means the same.
  aliases: [["watch", "namespace"], ["watch"]],
  summary:
    "Watch a Terminating namespace until it is gone: one status message in the thread, edited as blockers go, with the result at the end.",
  positionals: [{ name: "namespace", description: "Namespace name" }],
  flags: [],
  examples: ["watch ns myapp"],
};

export const watchCommand: CommandModule<{ namespace: string }> = {
  syntax: watchSyntax,
  build: (args) => ({ namespace: assertNamespaceName(args.positionals[0] ?? "") }),
  async run(input, ctx) {
    const diagnosis = await diagnoseNamespace(
      ctx.services.kube,
      input.namespace,
      diagnoseOptions(ctx.services),
    );
    if (diagnosis.verdict === "active") {
      throw new UnstuckError(
        ErrorCode.InvalidState,
        `Namespace ${input.namespace} is ${diagnosis.phase}: it is not being deleted, so there is nothing to watch.`,
        { namespace: input.namespace },
      );
    }
    return { type: "watch", namespace: input.namespace, diagnosis };
  },
};
