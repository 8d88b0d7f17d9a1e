/** Slack card for an orphan report: the first line says whether anything was left behind. */
import type { KnownBlock } from "@slack/types";
import type { OrphanReport } from "../../edge/orphans.js";
import type { SlackMessage } from "./message.js";
import { plural } from "../../util/format.js";
import { clip, command, esc, sections, SlackLimit } from "./text.js";

export function renderOrphansBlocks(r: OrphanReport): SlackMessage {
  const scope = r.namespace !== undefined ? `namespace ${r.namespace}` : `cluster ${r.cluster}`;
  const headline =
    r.orphans.length === 0
      ? `No orphans for ${scope} (${String(r.liveCount)} resources in use).`
      : `${plural(r.orphans.length, "orphan", "orphans")} for ${scope}.`;
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
    // Each removal command whole, on its own line: copied as the terminal prints it.
    blocks.push(
      ...sections(
        `*${esc(o.type)}* \`${esc(o.name ?? o.id)}\`\n${clip(esc(o.why), 1000)}${o.cost ? `\n_${clip(esc(o.cost), 300)}_` : ""}\n${o.removableNow ? "remove" : "remove (not yet)"}:\n${o.remove.map((c) => command(c)).join("\nthen ")}`,
      ),
    );
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
