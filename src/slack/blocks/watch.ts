/**
 * The top-level "Watching…" message of `watch ns` and its later forms: done (the namespace is gone),
 * timed out (still there at the wait's deadline), or joined (another wait already reports on the
 * namespace: a link to its thread instead of a second status message and a second "gone"). Also the
 * watcher's own messages: its notice card, the updates in its thread, and the namespace gone.
 */
import type { KnownBlock } from "@slack/types";
import { formatDuration } from "../../diagnosis/analyze.js";
import type { NamespaceDiagnosis } from "../../diagnosis/types.js";
import { renderDiagnosisBlocks, slackDate } from "./diagnosis.js";
import type { SlackMessage } from "./message.js";
import { clip, code, plain, safe, SlackLimit } from "./text.js";

/** The intro line, then the diagnosis card as it was posted. */
function withIntro(intro: string, blocks: readonly KnownBlock[], text: string): SlackMessage {
  const head: KnownBlock = { type: "section", text: { type: "mrkdwn", text: clip(intro) } };
  return { text: clip(text, SlackLimit.Fallback), blocks: [head, ...blocks].slice(0, 50) };
}

/** `:eyes: Watching …`: the message `watch ns` posts; the wait reports in its thread. */
export function renderWatching(namespace: string, card: SlackMessage): SlackMessage {
  return withIntro(
    `:eyes: Watching namespace \`${code(namespace, 63)}\` until it is gone; progress in the thread.`,
    card.blocks,
    `Watching namespace ${code(namespace, 63)}: ${card.text}`,
  );
}

/**
 * Another wait already reports on the namespace: say where (a bare archive link, which Slack links by
 * itself), and keep the diagnosis below it.
 */
export function renderWatchJoined(namespace: string, card: SlackMessage, threadLink: string): SlackMessage {
  return withIntro(
    `:eyes: Namespace \`${code(namespace, 63)}\` is already being watched: progress and the result are in that thread — ${threadLink}`,
    card.blocks,
    `Namespace ${code(namespace, 63)} is already being watched: ${threadLink}`,
  );
}

/**
 * The "Watching…" message once its wait ended: gone (the GONE card) or timed out (stopped, what still
 * blocks in the thread). Rendered from the namespace and the outcome alone: nothing of the message as
 * posted is kept, so no stored words can reach it.
 */
export function renderWatchFinished(
  namespace: string,
  outcome: "gone" | "timed-out",
  at: Date,
): SlackMessage {
  const when = slackDate(at.toISOString());
  if (outcome === "gone") {
    const gone = renderGoneCard(namespace, `at ${when}`);
    return withIntro(
      `:white_check_mark: *Done* — watched namespace \`${code(namespace, 63)}\` until it was gone (${when}); the checks are in the thread.`,
      gone.blocks,
      `Done: namespace ${code(namespace, 63)} is gone.`,
    );
  }
  return withIntro(
    `:hourglass: *Stopped watching* namespace \`${code(namespace, 63)}\` at the deadline (${when}): it was still there; what still blocks is in the thread. \`watch ns\` again to keep waiting.`,
    [],
    `Stopped watching namespace ${code(namespace, 63)}: still there at the deadline.`,
  );
}

/** A diagnosis card once the namespace is gone: GONE, no buttons, what to look at next. */
export function renderDiagnosisGone(namespace: string, at: Date): SlackMessage {
  return renderGoneCard(namespace, `at ${slackDate(at.toISOString())}`);
}

/**
 * The card once the namespace is gone: it says so and what comes next (the orphan check, the traffic
 * path of its hostnames), and drops the verdict, the advice and the buttons — none of them can do
 * anything for a namespace that no longer exists. What held it is in the card's thread.
 */
export function renderGoneCard(namespace: string, after: string, command = "/unstuck"): SlackMessage {
  const ns = code(namespace, 63);
  const out: KnownBlock[] = [
    { type: "header", text: { type: "plain_text", text: plain(`Namespace ${namespace}: GONE`) } },
    {
      type: "section",
      text: {
        type: "mrkdwn",
        text: clip(
          `:white_check_mark: *GONE* — namespace \`${ns}\` no longer exists${after ? ` (${after})` : ""}.`,
        ),
      },
    },
    {
      type: "section",
      text: {
        type: "mrkdwn",
        text: clip(
          `*Next*: what its load balancers left in AWS — \`${code(`${command} orphans ${namespace}`)}\`; the traffic path of the hostnames that reached it — \`${code(`${command} trace ns ${namespace}`)}\`.`,
        ),
      },
    },
  ];
  return { text: `Namespace ${namespace} is gone.`, blocks: out };
}

/** The diagnosis card, introduced as the watcher's own notice. */
export function renderWatchCard(d: NamespaceDiagnosis, thresholdMs: number): SlackMessage {
  const m = renderDiagnosisBlocks(d);
  const intro: KnownBlock = {
    type: "context",
    elements: [
      {
        type: "mrkdwn",
        text: `:rotating_light: Noticed by the watcher: namespace \`${code(d.namespace, 63)}\` has been Terminating longer than ${formatDuration(Math.round(thresholdMs / 1000))} with content left. Updates in the thread.`,
      },
    ],
  };
  return { text: m.text, blocks: [intro, ...m.blocks].slice(0, 50) };
}

/** In the watcher's thread: what is left of a namespace still Terminating. */
export function renderWatchUpdate(d: NamespaceDiagnosis): SlackMessage {
  const shown = d.blockers
    .slice(0, 5)
    .map((b) => `${safe(b.kind, 63)} \`${code(`${b.namespace}/${b.name}`)}\``);
  const more =
    d.blockers.length > shown.length ? ` and ${String(d.blockers.length - shown.length)} more` : "";
  const text =
    `Still Terminating${d.terminatingSeconds !== null ? ` after ${formatDuration(d.terminatingSeconds)}` : ""}: ` +
    (d.blockers.length > 0
      ? `${String(d.blockers.length)} blocking object(s) left: ${shown.join(", ")}${more}.`
      : `${d.remaining.map((r) => `${code(r.resource, 120)} ${String(r.count)}`).join(", ")} left.`);
  return { text, blocks: [{ type: "section", text: { type: "mrkdwn", text } }] };
}

/** `after 12m Terminating`, or nothing when how long is not known. */
function terminatingFor(seconds: number | undefined): string {
  return seconds !== undefined ? `after ${formatDuration(seconds)} Terminating` : "";
}

/** In the watcher's thread: the namespace is gone (a quiet note). */
export function renderWatchGoneNote(namespace: string, terminatingSeconds?: number): SlackMessage {
  const after = terminatingFor(terminatingSeconds);
  const text = `Namespace \`${code(namespace, 63)}\` is gone${after ? ` ${after}` : ""}.`;
  return { text, blocks: [{ type: "context", elements: [{ type: "mrkdwn", text }] }] };
}

/** The watcher's card once the namespace is gone: GONE, no buttons. */
export function renderWatchGoneCard(namespace: string, terminatingSeconds?: number): SlackMessage {
  return renderGoneCard(namespace, terminatingFor(terminatingSeconds));
}
