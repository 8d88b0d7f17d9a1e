import { assertNamespaceName } from "../src/kube/names.js";
import type { CommandSyntax } from "./grammar.js";
import type { CommandModule } from "./types.js";

export const preflightSyntax: CommandSyntax = {
  path: ["preflight", "delete", "ns"],
  aliases: [["preflight", "delete", "namespace"]],
  summary:
    "Before deleting a namespace: who owns it in Argo CD (two owners is the red flag), what its finalizers will wait on, which AWS load balancers and security groups go with it, and which hostnames will break. Verdict safe / risky / blocked. Changes nothing.",
  positionals: [{ name: "namespace", description: "Namespace name" }],
  flags: [],
  examples: ["preflight delete ns myapp"],
};

export const preflightCommand: CommandModule<{ namespace: string }> = {
  syntax: preflightSyntax,
  build: (args) => ({ namespace: assertNamespaceName(args.positionals[0] ?? "") }),
  run: async (input, ctx) => {
    // Loaded when asked for: the terminal's other commands never evaluate the preflight's code.
    const { collectPreflight } = await import("../src/preflight/collect.js");
    return {
      type: "preflight",
      report: await collectPreflight(ctx.services.kube, ctx.services.aws, input.namespace),
    };
  },
};
