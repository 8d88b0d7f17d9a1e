import { ErrorCode, UnstuckError } from "../src/errors.js";
import { assertNamespaceName } from "../src/kube/names.js";
import { collectOrphans } from "../src/orphans/collect.js";
import type { CommandSyntax } from "./grammar.js";
import type { CommandModule } from "./types.js";

export const orphansSyntax: CommandSyntax = {
  path: ["orphans"],
  summary:
    "Did a forced action leave AWS orphans? Load balancers, target groups and security groups the Load Balancer Controller tagged for this cluster that nothing owns any more, and ELB interfaces of deleted load balancers. Never lists a resource in use.",
  positionals: [
    {
      name: "namespace",
      description: "Only this namespace's stacks (default: the whole cluster)",
      optional: true,
    },
  ],
  flags: [],
  examples: ["orphans myapp", "orphans"],
};

export const orphansCommand: CommandModule<{ namespace?: string }> = {
  syntax: orphansSyntax,
  build: (args) => {
    const ns = args.positionals[0];
    return ns === undefined ? {} : { namespace: assertNamespaceName(ns) };
  },
  async run(input, ctx) {
    if (!ctx.services.aws) {
      throw new UnstuckError(
        ErrorCode.BadInput,
        "Orphans live in AWS: set AWS_REGION (and credentials) for the bot; without a region it only looks at the cluster.",
      );
    }
    return {
      type: "orphans",
      report: await collectOrphans(ctx.services.aws.port, ctx.services.kube, {
        ...(ctx.services.aws.cluster !== undefined ? { cluster: ctx.services.aws.cluster } : {}),
        ...(input.namespace !== undefined ? { namespace: input.namespace } : {}),
      }),
    };
  },
};
