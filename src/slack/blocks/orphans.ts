/** Slack card for an orphan report: the first line says whether anything was left behind. */
import type { KnownBlock } from "@slack/types";
import type { OrphanReport } from "../../edge/orphans.js";
import type { SlackMessage } from "./message.js";
import { clip, esc, SlackLimit } from "./text.js";

export function renderOrphansBlocks(r: OrphanReport): SlackMessage {
  const scope = r.namespace !== undefined ? `namespace ${r.namespace}` : `cluster ${r.cluster}`;
  const headline =
    r.orphans.length === 0
      ? `No orphans for ${scope} (${String(r.liveCount)} resources in use).`
      : `${String(r.orphans.length)} orphan${r.orphans.length === 1 ? "" : "s"} for ${scope}.`;
  const blocks: KnownBlock[] = [
    {
      type: "section",
      text: {
        type: "mrkdwn",
        text: clip(`${r.orphans.length === 0 ? ":large_green_circle:" : ":broom:"} *${esc(headline)}*`),
      },
    },
  ];
  for (const o of r.orphans.slice(0, 30)) {
    blocks.push({
      type: "section",
      text: {
        type: "mrkdwn",
        text: clip(
          `*${esc(o.type)}* \`${esc(o.name ?? o.id)}\`\n${esc(o.why)}${o.cost ? `\n_${esc(o.cost)}_` : ""}\n${o.removableNow ? "remove" : "remove (not yet)"}: ${o.remove.map((c) => `\`${esc(c)}\``).join(" then ")}`,
        ),
      },
    });
  }
  if (r.orphans.length > 30) {
    blocks.push({
      type: "context",
      elements: [
        { type: "mrkdwn", text: `…and ${String(r.orphans.length - 30)} more (use the CLI with --json).` },
      ],
    });
  }
  if (r.inProgress.length > 0) {
    blocks.push({
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: clip(
            `:hourglass: Still being deleted by the controller: ${r.inProgress.map((p) => esc(p.id)).join(", ")}`,
          ),
        },
      ],
    });
  }
  if (r.warnings.length > 0) {
    blocks.push({
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: clip(`:grey_question: Partial — could not read: ${r.warnings.map(esc).join("; ")}`),
        },
      ],
    });
  }
  return { text: clip(esc(headline), SlackLimit.Fallback), blocks: blocks.slice(0, 50) };
}
