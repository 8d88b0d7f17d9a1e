import type { KnownBlock } from "@slack/types";
import type { HelpDoc } from "../../../commands/types.js";
import type { ErrorCode, ErrorDetails } from "../../errors.js";
import type { SlackMessage } from "./index.js";
import { clip, esc } from "./text.js";

export function renderHelpBlocks(help: HelpDoc): SlackMessage {
  const blocks: KnownBlock[] = [
    { type: "header", text: { type: "plain_text", text: `${help.product} — commands` } },
  ];
  for (const e of help.entries) {
    const lines = [`*\`${esc(`${help.prefix} ${e.usage}`)}\`*`, esc(e.summary)];
    if (e.aliases.length > 0) lines.push(`_also:_ ${e.aliases.map((a) => `\`${esc(a)}\``).join(", ")}`);
    for (const f of e.flags) lines.push(`• \`${esc(f.flag)}\` ${esc(f.description)}`);
    if (e.examples.length > 0)
      lines.push(`_e.g._ ${e.examples.map((x) => `\`${esc(`${help.prefix} ${x}`)}\``).join("  ")}`);
    blocks.push({ type: "section", text: { type: "mrkdwn", text: clip(lines.join("\n")) } });
  }
  return {
    text: `${help.product}: ${help.entries.map((e) => e.usage.split(" ")[0]).join(", ")}`,
    blocks: blocks.slice(0, 50),
  };
}

export function renderErrorBlocks(
  error: { code: ErrorCode; message: string; details: ErrorDetails },
  help?: HelpDoc,
): SlackMessage {
  const blocks: KnownBlock[] = [
    { type: "section", text: { type: "mrkdwn", text: clip(`:warning: ${esc(error.message)}`) } },
    { type: "context", elements: [{ type: "mrkdwn", text: `code \`${error.code}\`` }] },
  ];
  if (help) blocks.push(...renderHelpBlocks(help).blocks);
  return { text: error.message, blocks: blocks.slice(0, 50) };
}
