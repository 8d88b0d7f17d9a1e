import { commandObserver } from "../src/audit/observe.js";
import { ObservationKind } from "../src/audit/observation.js";
import { diagnoseNamespace } from "../src/diagnosis/diagnose.js";
import { assertNamespaceName } from "../src/kube/names.js";
import { SUMMARY_FIRST } from "../src/render/blocker-summary.js";
import { causeSentence } from "../src/render/diagnosis-prose.js";
import { diagnoseOptions } from "./finalize.js";
import type { CommandSyntax } from "./grammar.js";
import type { CommandModule } from "./types.js";

export const nsSyntax: CommandSyntax = {
  path: ["ns"],
  aliases: [
    ["diagnose", "namespace"],
    ["diagnose", "ns"],
  ],
  summary:
    "Why is this namespace stuck in Terminating? Lists every blocking object, its finalizers, the controller that owns each, and the evidence.",
  positionals: [{ name: "namespace", description: "Namespace name (RFC 1123 label)" }],
  flags: [
    {
      name: "all",
      kind: "boolean",
      description: `List every object with finalizers in the terminal; without it, more than ${String(SUMMARY_FIRST)} are counted by type and finalizer and the first ${String(SUMMARY_FIRST)} shown (--json always has all; in Slack, Details summarises)`,
    },
  ],
  examples: ["ns myapp", "ns myapp --all", "diagnose namespace myapp"],
};

export interface NsInput {
  readonly namespace: string;
  readonly all: boolean;
}

export const nsCommand: CommandModule<NsInput> = {
  syntax: nsSyntax,
  build: (args) => ({
    namespace: assertNamespaceName(args.positionals[0] ?? ""),
    all: args.flags.all === true,
  }),
  run: async (input, ctx) => {
    const diagnosis = await diagnoseNamespace(
      ctx.services.kube,
      input.namespace,
      diagnoseOptions(ctx.services),
    );
    // For the incident timeline: what the bot saw, when (never fails the command).
    await commandObserver(ctx.services, ctx.actor, "ns")(
      ObservationKind.Diagnosis,
      `namespace ${input.namespace}`,
      `${diagnosis.verdict}: ${causeSentence(diagnosis)}`,
    );
    return { type: "diagnosis", diagnosis, ...(input.all ? { all: true } : {}) };
  },
};
