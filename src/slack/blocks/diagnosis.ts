import type { KnownBlock } from "@slack/types";
import { forceAdvisedFor, formatDuration } from "../../diagnosis/analyze.js";
import type { Blocker, NamespaceDiagnosis } from "../../diagnosis/types.js";
import type { SlackMessage } from "./index.js";
import { clip, esc } from "./text.js";

const ICON: Record<NamespaceDiagnosis["verdict"], string> = {
  active: ":large_green_circle:",
  "not-found": ":white_circle:",
  terminating: ":large_yellow_circle:",
  blocked: ":red_circle:",
};

/** Action id of the "Request finalizer removal" button (handled by the approvals layer). */
export const REQUEST_FINALIZE_ACTION = "finalize:request";

/** A failing group-version, with the APIService that serves it and its Service's ready endpoints. */
function discoveryLine(f: NamespaceDiagnosis["discoveryFailures"][number]): string {
  const head = `\`${esc(f.groupVersion)}\`: ${esc(f.message)}`;
  const a = f.apiService;
  if (!a) return head;
  const available = `${esc(a.available)}${a.reason ? ` (${esc(a.reason)})` : ""}`;
  const backing =
    a.service === undefined
      ? "served by kube-apiserver itself"
      : `Service \`${esc(a.service)}\`: ${a.readyEndpoints === undefined ? "ready endpoints unknown" : `*${a.readyEndpoints}* ready endpoint${a.readyEndpoints === 1 ? "" : "s"}`}`;
  return `${head}\n   APIService \`${esc(a.name)}\` Available=${available}${a.message ? `: ${esc(a.message)}` : ""}  ·  ${backing}`;
}

function blockerSection(b: Blocker): KnownBlock {
  const lines = [
    `*${esc(b.kind)} \`${esc(b.namespace)}/${esc(b.name)}\`* (${esc(b.apiVersion)})`,
    `finalizers: ${b.finalizers.map((f) => `\`${esc(f)}\``).join(", ")}` +
      (b.deletionTimestamp ? `  ·  deleting since ${esc(b.deletionTimestamp)}` : ""),
  ];
  if (b.loadBalancerHostnames)
    lines.push(`load balancer: \`${b.loadBalancerHostnames.map(esc).join("`, `")}\``);
  for (const o of b.owners) {
    const who =
      o.candidates.length === 0
        ? o.status === "not-installed"
          ? "*not installed: nothing will ever remove this finalizer*"
          : "*no such controller found in the cluster*"
        : o.candidates
            .map((c) =>
              c.kind === "builtin"
                ? "built into Kubernetes"
                : `\`${esc(c.namespace)}/${esc(c.name)}\` ${c.readyReplicas}/${c.replicas} ready${c.healthy ? "" : " :warning:"}`,
            )
            .join(", ");
    lines.push(`\`${esc(o.finalizer)}\` → ${esc(o.controller)}: ${who}`);
    lines.push(`   _removing it by hand leaves:_ ${esc(o.cleanup)}`);
  }
  if (b.aws) {
    const name = (r: { type: string; name?: string; id: string }): string =>
      `${r.type} \`${esc(r.name ?? r.id)}\``;
    const gone = b.aws.resources.filter((r) => !r.exists).map(name);
    const dying = b.aws.resources.filter((r) => r.exists && r.liveness?.state !== "live").map(name);
    lines.push(`*AWS* (cluster \`${esc(b.aws.cluster)}\`, stack \`${esc(b.aws.stack)}\`)`);
    if (dying.length > 0) lines.push(`   being deleted / left over: ${dying.join(", ")}`);
    for (const st of b.aws.stays.slice(0, 3))
      lines.push(`   :large_green_circle: in use, not to touch: ${esc(st.why)}`);
    if (gone.length > 0) lines.push(`   already gone: ${gone.join(", ")}`);
    lines.push(`   :mag: ${esc(b.aws.summary)}`);
    const fix = b.aws.blockedGroups.flatMap((g) => g.remedies).find((r) => r.actionable);
    if (fix && !forceAdvisedFor(b)) {
      lines.push(
        `   :white_check_mark: *Fix without forcing:* ${esc(fix.what)}: ${esc(fix.action)}${fix.commands[0] ? ` — \`${esc(fix.commands[0])}\`` : ""}`,
      );
    }
    for (const p of b.aws.problems) lines.push(`   :grey_question: ${esc(p)}`);
  }
  for (const e of b.evidence.filter((x) => x.source !== "aws").slice(0, 6)) {
    lines.push(
      `${e.error ? ":x:" : "•"} _${esc(e.from)}_${e.time ? ` (${esc(e.time)})` : ""}: \`${esc(e.text)}\``,
    );
  }
  return { type: "section", text: { type: "mrkdwn", text: clip(lines.join("\n")) } };
}

export function renderDiagnosisBlocks(d: NamespaceDiagnosis): SlackMessage {
  const blocks: KnownBlock[] = [
    {
      type: "header",
      text: {
        type: "plain_text",
        text: `Namespace ${d.namespace}: ${d.verdict.toUpperCase()}`.slice(0, 150),
      },
    },
    { type: "section", text: { type: "mrkdwn", text: clip(`${ICON[d.verdict]} ${esc(d.summary)}`) } },
  ];
  const facts: string[] = [];
  if (d.terminatingSeconds !== null) facts.push(`Terminating for *${formatDuration(d.terminatingSeconds)}*`);
  if (d.remaining.length > 0) {
    facts.push(`remaining: ${d.remaining.map((r) => `\`${esc(r.resource)}\` ${r.count}`).join(", ")}`);
  }
  if (facts.length > 0)
    blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: clip(facts.join("  ·  ")) }] });
  const trueConditions = d.conditions.filter((c) => c.status === "True");
  if (trueConditions.length > 0) {
    blocks.push({
      type: "section",
      text: {
        type: "mrkdwn",
        text: clip(
          trueConditions
            .map((c) => `*${esc(c.type)}* (${esc(c.reason ?? "")}): ${esc(c.message ?? "")}`)
            .join("\n"),
        ),
      },
    });
  }
  if (d.discoveryFailures.length > 0) {
    blocks.push({
      type: "section",
      text: {
        type: "mrkdwn",
        text: clip(
          `:rotating_light: *Discovery failures*\n${d.discoveryFailures.map(discoveryLine).join("\n")}`,
        ),
      },
    });
  }
  if (d.namespaceFinalizers.length > 0) {
    blocks.push({
      type: "section",
      text: {
        type: "mrkdwn",
        text: `Namespace finalizers left: ${d.namespaceFinalizers.map((f) => `\`${esc(f)}\``).join(", ")}`,
      },
    });
  }
  // Slack allows 50 blocks: keep room for the tail (more-blockers note, next steps, warnings), so
  // a namespace with many blockers never loses its next steps to truncation.
  const perBlocker = d.verdict === "blocked" ? 2 : 1;
  const room = Math.max(1, Math.floor((50 - blocks.length - 1 - 3) / perBlocker));
  const shown = d.blockers.slice(0, Math.min(20, room));
  if (shown.length > 0) blocks.push({ type: "divider" });
  for (const b of shown) {
    blocks.push(blockerSection(b));
    // Offered only when forcing is the advice: when a fix the operator can apply exists, the card
    // leads with that fix instead.
    if (d.verdict === "blocked" && forceAdvisedFor(b)) {
      blocks.push({
        type: "actions",
        elements: [
          {
            type: "button",
            action_id: REQUEST_FINALIZE_ACTION,
            text: { type: "plain_text", text: "Request finalizer removal" },
            value: JSON.stringify({
              resource: b.resource,
              apiVersion: b.apiVersion,
              kind: b.kind,
              namespace: b.namespace,
              name: b.name,
            }),
          },
        ],
      });
    }
  }
  if (d.blockers.length > shown.length) {
    blocks.push({
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: `…and ${d.blockers.length - shown.length} more blockers (use the CLI with --json for all).`,
        },
      ],
    });
  }
  if (d.nextSteps.length > 0) {
    blocks.push({
      type: "section",
      text: {
        type: "mrkdwn",
        text: clip(`*Next steps*\n${d.nextSteps.map((s, i) => `${i + 1}. ${esc(s)}`).join("\n")}`),
      },
    });
  }
  if (d.warnings.length > 0) {
    blocks.push({
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: clip(`:grey_question: Partial result — could not read: ${d.warnings.map(esc).join("; ")}`),
        },
      ],
    });
  }
  return { text: d.summary, blocks: blocks.slice(0, 50) };
}
