import type { KnownBlock } from "@slack/types";
import type { HelpDoc } from "../../command-result.js";
import type { ErrorCode, ErrorDetails } from "../../errors.js";
import type { SlackMessage } from "./message.js";
import { clip, code, esc, safe, shortenEchoes, SlackLimit } from "./text.js";
import { slackErrorMessage } from "./error-text.js";

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
    text: clip(
      esc(`${help.product}: ${[...new Set(help.entries.map((e) => e.usage.split(" ")[0]))].join(", ")}`),
      SlackLimit.Fallback,
    ),
    blocks: blocks.slice(0, 50),
  };
}

/** An error message echoes input; 600 characters name any real mistake and keep the reply small. */
const ERROR_MAX = 600;

export function renderErrorBlocks(
  error: { code: ErrorCode; message: string; details: ErrorDetails },
  help?: HelpDoc,
): SlackMessage {
  // A long echo of the input is shortened, never the explanation after it.
  const message = shortenEchoes(slackErrorMessage(error));
  const blocks: KnownBlock[] = [
    // Error messages often quote what the user typed (a name, a flag): bounded, then escaped.
    { type: "section", text: { type: "mrkdwn", text: `:warning: ${safe(message, ERROR_MAX)}` } },
    { type: "context", elements: [{ type: "mrkdwn", text: `code \`${code(error.code, 40)}\`` }] },
  ];
  if (help) blocks.push(...renderHelpBlocks(help).blocks);
  return { text: safe(message, ERROR_MAX), blocks: blocks.slice(0, 50) };
}
