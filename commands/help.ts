import type { CommandModule, HelpDoc, HelpEntry } from "./types.js";
import { usageLine, type CommandSyntax } from "./grammar.js";

export const PRODUCT = "unstuck";

/** Help generated from the same declarations the parser uses. */
export function buildHelp(syntaxes: readonly CommandSyntax[], prefix: string): HelpDoc {
  const entries: HelpEntry[] = syntaxes.map((s) => ({
    usage: usageLine(s),
    summary: s.summary,
    aliases: (s.aliases ?? []).map((a) => a.join(" ")),
    flags: s.flags.map((f) => ({
      flag:
        (f.short ? `-${f.short}, ` : "") +
        `--${f.name}` +
        (f.kind === "boolean" ? "" : ` <${f.valueName ?? f.kind}>`),
      description: f.description,
    })),
    examples: s.examples,
  }));
  return { product: PRODUCT, prefix, entries };
}

export const helpSyntax: CommandSyntax = {
  path: ["help"],
  summary: "Show the commands and their options.",
  positionals: [],
  flags: [],
  examples: ["help"],
};

/** `help` itself needs the registry's list, so the registry supplies it at run time. */
export function helpCommand(getHelp: () => HelpDoc): CommandModule<undefined> {
  return {
    syntax: helpSyntax,
    build: () => undefined,
    run: () => Promise.resolve({ type: "help", help: getHelp() }),
  };
}
