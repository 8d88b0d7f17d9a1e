import { diagnoseNamespace } from "../src/diagnosis/diagnose.js";
import { assertNamespaceName } from "../src/kube/names.js";
import { diagnoseOptions } from "./finalize.js";
import type { CommandSyntax } from "./grammar.js";
import type { CommandModule } from "./types.js";

export const watchSyntax: CommandSyntax = {
  path: ["watch", "ns"],
  aliases: [["watch", "namespace"]],
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
    return { type: "watch", namespace: input.namespace, diagnosis };
  },
};
