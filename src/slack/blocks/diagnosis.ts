import type { KnownBlock } from "@slack/types";
import { forceAdvisedFor, formatDuration } from "../../diagnosis/analyze.js";
import type { Blocker, NamespaceDiagnosis } from "../../diagnosis/types.js";
import type { SlackMessage } from "./index.js";
import { clip, code, plain, safe, SlackLimit } from "./text.js";

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
  const head = `\`${code(f.groupVersion, 120)}\`: ${safe(f.message, 500)}`;
  const a = f.apiService;
  if (!a) return head;
  const available = `${safe(a.available, 20)}${a.reason ? ` (${safe(a.reason, 100)})` : ""}`;
  const backing =
    a.service === undefined
      ? "served by kube-apiserver itself"
      : `Service \`${code(a.service)}\`: ${a.readyEndpoints === undefined ? "ready endpoints unknown" : `*${a.readyEndpoints}* ready endpoint${a.readyEndpoints === 1 ? "" : "s"}`}`;
  return `${head}\n   APIService \`${code(a.name)}\` Available=${available}${a.message ? `: ${safe(a.message, 500)}` : ""}  ·  ${backing}`;
}

function blockerSection(b: Blocker): KnownBlock {
  const lines = [
    `*${safe(b.kind, 63)} \`${code(`${b.namespace}/${b.name}`)}\`* (${safe(b.apiVersion, 100)})`,
    `finalizers: ${b.finalizers.map((f) => `\`${code(f)}\``).join(", ")}` +
      (b.deletionTimestamp ? `  ·  deleting since ${safe(b.deletionTimestamp, 40)}` : ""),
  ];
  if (b.loadBalancerHostnames)
    lines.push(`load balancer: \`${b.loadBalancerHostnames.map((h) => code(h)).join("`, `")}\``);
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
                : `\`${code(`${c.namespace}/${c.name}`)}\` ${c.readyReplicas}/${c.replicas} ready${c.healthy ? "" : " :warning:"}`,
            )
            .join(", ");
    lines.push(`\`${code(o.finalizer)}\` → ${safe(o.controller)}: ${who}`);
    lines.push(`   _removing it by hand leaves:_ ${safe(o.cleanup, 500)}`);
  }
  if (b.aws) {
    const name = (r: { type: string; name?: string; id: string }): string =>
      `${safe(r.type, 60)} \`${code(r.name ?? r.id)}\``;
    const gone = b.aws.resources.filter((r) => !r.exists).map(name);
    const dying = b.aws.resources.filter((r) => r.exists && r.liveness?.state !== "live").map(name);
    lines.push(`*AWS* (cluster \`${code(b.aws.cluster)}\`, stack \`${code(b.aws.stack)}\`)`);
    if (dying.length > 0) lines.push(`   being deleted / left over: ${dying.join(", ")}`);
    for (const st of b.aws.stays.slice(0, 3))
      lines.push(`   :large_green_circle: in use, not to touch: ${safe(st.why, 500)}`);
    if (gone.length > 0) lines.push(`   already gone: ${gone.join(", ")}`);
    lines.push(`   :mag: ${safe(b.aws.summary, 1000)}`);
    const fix = b.aws.blockedGroups.flatMap((g) => g.remedies).find((r) => r.actionable);
    if (fix && !forceAdvisedFor(b)) {
      lines.push(
        `   :white_check_mark: *Fix without forcing:* ${safe(fix.what)}: ${safe(fix.action, 500)}${fix.commands[0] ? ` — \`${code(fix.commands[0], 500)}\`` : ""}`,
      );
    }
    for (const p of b.aws.problems) lines.push(`   :grey_question: ${safe(p, 500)}`);
  }
  for (const e of b.evidence.filter((x) => x.source !== "aws").slice(0, 6)) {
    lines.push(
      `${e.error ? ":x:" : "•"} _${safe(e.from, 120)}_${e.time ? ` (${safe(e.time, 40)})` : ""}: \`${code(e.text, 400)}\``,
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
        text: plain(`Namespace ${d.namespace}: ${d.verdict.toUpperCase()}`),
      },
    },
    { type: "section", text: { type: "mrkdwn", text: clip(`${ICON[d.verdict]} ${safe(d.summary, 2000)}`) } },
  ];
  const facts: string[] = [];
  if (d.terminatingSeconds !== null) facts.push(`Terminating for *${formatDuration(d.terminatingSeconds)}*`);
  if (d.remaining.length > 0) {
    facts.push(`remaining: ${d.remaining.map((r) => `\`${code(r.resource, 120)}\` ${r.count}`).join(", ")}`);
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
            .map(
              (c) => `*${safe(c.type, 100)}* (${safe(c.reason ?? "", 100)}): ${safe(c.message ?? "", 800)}`,
            )
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
        text: clip(
          `Namespace finalizers left: ${d.namespaceFinalizers.map((f) => `\`${code(f)}\``).join(", ")}`,
        ),
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
  if (d.argo?.redFlag) {
    blocks.push({
      type: "section",
      text: { type: "mrkdwn", text: clip(`:warning: *Argo CD ownership*: ${safe(d.argo.redFlag, 1000)}`) },
    });
  }
  if (d.nextSteps.length > 0) {
    blocks.push({
      type: "section",
      text: {
        type: "mrkdwn",
        text: clip(`*Next steps*\n${d.nextSteps.map((s, i) => `${i + 1}. ${safe(s, 600)}`).join("\n")}`),
      },
    });
  }
  if (d.warnings.length > 0) {
    blocks.push({
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: clip(
            `:grey_question: Partial result — could not read: ${d.warnings.map((w) => safe(w, 400)).join("; ")}`,
          ),
        },
      ],
    });
  }
  return { text: safe(d.summary, SlackLimit.Fallback), blocks: blocks.slice(0, 50) };
}
