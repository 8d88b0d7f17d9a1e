/**
 * Shared by the escaping property test and the command fuzz test: a seeded generator of hostile text
 * (Slack control sequences, entities, mrkdwn, unicode, control characters, huge strings) and the
 * check that a posted Slack text carries no live markup except the bot's own, within its bound.
 */
import { expect } from "vitest";
import type { SlackMessage } from "../../src/slack/blocks/index.js";
import { SlackLimit } from "../../src/slack/blocks/text.js";

/** mulberry32: small, fast, seedable; enough to make every case replayable from its seed. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Pieces an attacker would use: Slack control sequences, entities, mrkdwn, unicode, control characters. */
export const HOSTILE_TOKENS: readonly string[] = [
  "<!channel>",
  "<!here>",
  "<!everyone>",
  "<!here|here>",
  "<!subteam^S0ONCALL|@oncall>",
  "<!subteam^S0ONCALL>",
  "<@U0ADMIN>",
  "<@W0ADMIN|admin>",
  "<@U0ALICE>",
  "<#C0SECRET>",
  "<#C0SECRET|secret>",
  "<http://evil.example|click here>",
  "<https://evil.example/login>",
  "<mailto:a@evil.example|mail>",
  "<tel:+100|call>",
  "<!date^1^{date}|now>",
  "&lt;!channel&gt;",
  "&amp;lt;!here&amp;gt;",
  "&",
  "&#60;!channel&#62;",
  "<",
  ">",
  "<<!channel>>",
  "`",
  "```",
  "*bold*",
  "_it_",
  "~del~",
  ">>> quote",
  "\n",
  "\r\n",
  "\t",
  "\u0000",
  "\u0007",
  "\u001b[31m",
  "\u200b",
  "\u202e",
  "\ufeff",
  "é",
  "👩‍👩‍👧",
  "日本語",
  "\ud800",
  "ingress.k8s.aws/resources",
  "myapp",
];

/** A hostile string: mostly tokens and random code points, sometimes huge. */
export function hostile(r: () => number, maxPieces = 12): string {
  const roll = r();
  if (roll < 0.03) {
    // Huge: far beyond any Slack limit, so every bound is exercised.
    const unit = HOSTILE_TOKENS[Math.floor(r() * HOSTILE_TOKENS.length)] ?? "<!channel>";
    return unit.repeat(Math.ceil((20_000 + r() * 60_000) / Math.max(1, unit.length)));
  }
  const pieces = 1 + Math.floor(r() * maxPieces);
  let out = "";
  for (let i = 0; i < pieces; i++) {
    const kind = r();
    if (kind < 0.55) out += HOSTILE_TOKENS[Math.floor(r() * HOSTILE_TOKENS.length)] ?? "";
    else if (kind < 0.8) out += String.fromCodePoint(0x20 + Math.floor(r() * 0x5f));
    else if (kind < 0.95) out += String.fromCodePoint(Math.floor(r() * 0xd7ff));
    else out += " ";
  }
  return out;
}

export const USER_ID = /^[UW][A-Z0-9]{2,20}$/;

/** Every text in a Block Kit tree with the bound Slack sets for where it sits. */
function blockTexts(node: unknown, path: string, out: { where: string; text: string; max: number }[]) {
  if (Array.isArray(node)) {
    node.forEach((n, i) => blockTexts(n, `${path}[${String(i)}]`, out));
    return;
  }
  if (typeof node !== "object" || node === null) return;
  const rec = node as Record<string, unknown>;
  if ((rec["type"] === "mrkdwn" || rec["type"] === "plain_text") && typeof rec["text"] === "string") {
    const max = path.endsWith(".confirm.text")
      ? 300
      : path.endsWith(".title") || path.includes(".confirm.")
        ? 100
        : /\.elements\[\d+\]\.text$/.test(path) && !path.includes("context")
          ? 75
          : SlackLimit.Section;
    out.push({ where: path, text: rec["text"], max });
  }
  for (const [k, v] of Object.entries(rec)) blockTexts(v, `${path}.${k}`, out);
}

/** Header blocks carry a 150-character limit of their own. */
function headerTexts(blocks: readonly unknown[]): string[] {
  return blocks
    .filter(
      (b): b is { type: "header"; text: { text: string } } => (b as { type?: string }).type === "header",
    )
    .map((b) => b.text.text);
}

export interface Allowed {
  readonly users: ReadonlySet<string>;
  readonly channels: ReadonlySet<string>;
}

const DATE_STAMP =
  /<!date\^\d+\^\{date_short_pretty\} \{time_secs\}\|\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:\d\d)>/g;
/** The diagnosis card's tokens: Slack's own format tokens only, a UTC minute as the fallback. */
const DATE_TOKEN =
  /<!date\^\d+\^(?:\{(?:date_short_pretty|date_short|date|time|time_secs|ago)\}|[ ,()])+\|\d{4}-\d\d-\d\d \d\d:\d\d UTC>/g;

/** What is left after removing exactly the markup the bot writes itself. */
function withoutBotMarkup(text: string, allowed: Allowed): string {
  return text
    .replace(DATE_STAMP, "")
    .replace(DATE_TOKEN, "")
    .replace(/<@([A-Z0-9]+)>/g, (m, id: string) => (allowed.users.has(id) ? "" : m))
    .replace(/<#([A-Z0-9]+)>/g, (m, id: string) => (allowed.channels.has(id) ? "" : m));
}

/** Live Slack markup: a control sequence, a mention, a channel link, or any `<scheme:…>` link. */
const MARKUP = /<(?:[!@#]|[a-z][a-z0-9+.-]*:)/i;

export function assertSafeText(text: string, max: number, allowed: Allowed, label: string): void {
  expect(text.length, `${label}: ${String(text.length)} > ${String(max)}`).toBeLessThanOrEqual(max);
  const rest = withoutBotMarkup(text, allowed);
  const hit = MARKUP.exec(rest);
  expect(
    hit,
    `${label}: live markup ${JSON.stringify(rest.slice(Math.max(0, (hit?.index ?? 0) - 20), (hit?.index ?? 0) + 40))}`,
  ).toBeNull();
  // Escaping leaves no raw bracket at all outside the bot's own markup.
  expect(rest.includes("<"), `${label}: raw "<" in ${JSON.stringify(rest.slice(0, 200))}`).toBe(false);
}

export function assertSafeMessage(m: SlackMessage, allowed: Allowed, label: string): void {
  assertSafeText(m.text, SlackLimit.Fallback, allowed, `${label} fallback text`);
  expect(m.blocks.length, `${label}: blocks`).toBeLessThanOrEqual(50);
  for (const h of headerTexts(m.blocks)) expect(h.length, `${label}: header`).toBeLessThanOrEqual(150);
  const texts: { where: string; text: string; max: number }[] = [];
  blockTexts(m.blocks, "blocks", texts);
  for (const t of texts) assertSafeText(t.text, t.max, allowed, `${label} ${t.where}`);
}

/** The markup the bot may write: mentions of these users, links to these channels (and date stamps). */
export function allowedFor(ids: readonly string[], channels: readonly string[] = []): Allowed {
  return {
    users: new Set(ids.filter((id) => USER_ID.test(id))),
    channels: new Set(channels.filter((c) => /^[CGD][A-Z0-9]{2,20}$/.test(c))),
  };
}
