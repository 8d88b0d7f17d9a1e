/**
 * What a person reads in a channel, measured: every message the bot left there (posted or sent in the
 * channel through a response URL) as it reads now, reduced to its visible text — headers, sections,
 * fields and context lines; no button labels, no fallback text when blocks are shown, links and
 * mentions as Slack displays them.
 */
import type { FakeMessage, FakeSlack } from "../sim/slack/index.js";

export interface ReadMessage {
  /** `ts` of a posted message, `response:<n>` of an in-channel response. */
  readonly id: string;
  readonly text: string;
  /** Lines a reader scrolls past before the first row of buttons (all lines when there is none). */
  readonly linesAboveButtons: number;
}

/** `<url|label>` → label, `<@U1>` → @U1, `<#C1>` → #C1, `<!date^…|fallback>` → a clock time. */
function displayed(mrkdwn: string): string {
  return mrkdwn
    .replace(/<!date\^\d+\^[^|>]*\|[^>]*>/g, "07:11 UTC")
    .replace(/<([^<>|]+)\|([^<>]*)>/g, "$2")
    .replace(/<[@#!]([^<>]+)>/g, "@$1")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

function textOf(value: unknown): string {
  if (value === null || typeof value !== "object") return "";
  const t = (value as Record<string, unknown>)["text"];
  return typeof t === "string" ? displayed(t) : "";
}

/** Each block's visible lines, in order; `null` marks a row of buttons. */
function blockLines(blocks: readonly unknown[]): (string[] | null)[] {
  return blocks.map((raw) => {
    const b = raw as Record<string, unknown>;
    switch (b["type"]) {
      case "actions":
        return null;
      case "header":
      case "section": {
        const own = textOf(b["text"]);
        const fields = Array.isArray(b["fields"]) ? (b["fields"] as unknown[]).map(textOf) : [];
        return [own, ...fields].filter((t) => t !== "").flatMap((t) => t.split("\n"));
      }
      case "context":
        return Array.isArray(b["elements"])
          ? [
              (b["elements"] as unknown[])
                .map(textOf)
                .filter((t) => t !== "")
                .join("  "),
            ]
          : [];
      default:
        return [];
    }
  });
}

export function readMessage(id: string, text: string | undefined, blocks: unknown): ReadMessage {
  if (!Array.isArray(blocks) || blocks.length === 0) {
    const t = displayed(text ?? "");
    return { id, text: t, linesAboveButtons: t.split("\n").length };
  }
  const per = blockLines(blocks);
  const lines = per.flatMap((l) => l ?? []);
  const firstButtons = per.indexOf(null);
  const above = (firstButtons === -1 ? per : per.slice(0, firstButtons)).flatMap((l) => l ?? []);
  return { id, text: lines.join("\n"), linesAboveButtons: above.length };
}

/** Every message the bot has in `channel` now, top-level and replies, oldest first. */
export function channelMessages(fake: FakeSlack, channel: string): ReadMessage[] {
  const seen = new Set<string>();
  const out: ReadMessage[] = [];
  let responses = 0;
  for (const call of fake.calls()) {
    if (call.method === "chat.postMessage" && call.body["channel"] === channel && call.response?.["ok"]) {
      const ts = String(call.response["ts"]);
      if (seen.has(ts)) continue;
      seen.add(ts);
      const m: FakeMessage | undefined = fake.message(channel, ts);
      if (m) out.push(readMessage(ts, m.text, m.blocks));
    }
  }
  for (const r of fake.responses()) {
    if (r.body["response_type"] !== "in_channel") continue;
    responses += 1;
    out.push(
      readMessage(
        `response:${String(responses)}`,
        typeof r.body["text"] === "string" ? r.body["text"] : "",
        r.body["blocks"],
      ),
    );
  }
  return out;
}

/** Sentences of `minWords` words or more that a message says more than once, with their counts. */
export function repeatedSentences(text: string, minWords = 10): Map<string, number> {
  const counts = new Map<string, number>();
  for (const raw of text.split(/(?<=[.!?])\s+|\n+/)) {
    const sentence = raw
      .replace(/^[\s•>*_\d.)-]+/, "")
      .replace(/[*_`]/g, "")
      .trim()
      .toLowerCase();
    if (sentence.split(/\s+/).filter((w) => /\w/.test(w)).length < minWords) continue;
    counts.set(sentence, (counts.get(sentence) ?? 0) + 1);
  }
  return new Map([...counts].filter(([, n]) => n > 1));
}
