/** Slack card for a pre-deletion check: the verdict first, then the reasons. */
import type { KnownBlock } from "@slack/types";
import type { PreflightReport } from "../../preflight/analyze.js";
import type { SlackMessage } from "./message.js";
import { plural } from "../../util/format.js";
import { clip, esc, prose, sections, SlackLimit } from "./text.js";

const ICON = {
  safe: ":large_green_circle:",
  risky: ":large_orange_circle:",
  blocked: ":red_circle:",
} as const;

export function renderPreflightBlocks(r: PreflightReport): SlackMessage {
  const headline = `Delete namespace ${r.namespace}: ${r.verdict.toUpperCase()}`;
  const blocks: KnownBlock[] = [
    { type: "section", text: { type: "mrkdwn", text: clip(`${ICON[r.verdict]} *${esc(headline)}*`) } },
  ];
  if (r.reasons.length > 0) {
    blocks.push(...sections(r.reasons.map((x, i) => `${String(i + 1)}. ${prose(x, 1200)}`).join("\n")));
  }
  const facts = [
    `${plural(r.finalizerObjects.length, "object", "objects")} with finalizers`,
    `${plural(r.awsDeleted.length, "AWS resource", "AWS resources")} deleted with it`,
    plural(r.hostnames.length, "hostname breaks", "hostnames break"),
  ];
  blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: esc(facts.join("  ·  ")) }] });
  return {
    text: clip(esc(`${headline}${r.reasons[0] ? ` — ${r.reasons[0]}` : ""}`), SlackLimit.Fallback),
    blocks,
  };
}
