/**
 * Slack mrkdwn helpers: escaping and Block Kit's size limits.
 *
 * Security property: nothing a user or a cluster wrote may reach Slack as a control sequence
 * (`<!channel>`, `<!here>`, `<!subteam^…>`, `<@U…>`, `<#C…>`, `<http…|…>`). Slack only parses those
 * between `<` and `>`, so escaping the two brackets (and `&`, so an escaped entity cannot be forged)
 * in every piece of foreign text is enough; the only markup that survives is what the bot writes.
 */
import type { KnownBlock } from "@slack/types";

/** Slack's own limits: section text, fallback `text`, header and button-confirm text. */
export const SlackLimit = {
  Section: 3000,
  /** Slack truncates `text` at 40,000; we stay far below so a message stays readable. */
  Fallback: 4000,
  Header: 150,
  /** Echoed user input (names, reasons, error messages carrying them). */
  Echo: 300,
} as const;

/** Escape the three characters Slack treats as control sequences in mrkdwn. */
export function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * Section text is limited to 3,000 characters. A cut never splits the bot's own `<…>` markup (a
 * half mention would show as noise) nor an escape entity (`&am…`), and never a surrogate pair.
 */
export function clip(s: string, max = 2900): string {
  if (s.length <= max) return s;
  let cut = s.slice(0, max - 1);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  const lt = cut.lastIndexOf("<");
  if (lt > cut.lastIndexOf(">")) cut = cut.slice(0, lt);
  const amp = cut.lastIndexOf("&");
  if (amp > cut.lastIndexOf(";") && cut.length - amp < 6) cut = cut.slice(0, amp);
  // A command is never cut: a code span or block the cut would leave open is dropped whole.
  const open = openCode(cut);
  if (open !== undefined) cut = cut.slice(0, open).trimEnd();
  return `${cut}…`;
}

/**
 * Where the code span or code block left open at the end of `s` starts (its opening backticks), or
 * `undefined` when every span and block is closed.
 */
function openCode(s: string): number | undefined {
  const fences = [...s.matchAll(/```/g)];
  const lastFence = fences.at(-1);
  if (fences.length % 2 === 1 && lastFence !== undefined) return lastFence.index;
  // Closed blocks blanked out (same length, so the positions hold), then single backticks counted.
  const spans = s.replace(/```[\s\S]*?```/g, (m) => " ".repeat(m.length));
  const ticks = [...spans.matchAll(/`/g)];
  const lastTick = ticks.at(-1);
  return ticks.length % 2 === 1 && lastTick !== undefined ? lastTick.index : undefined;
}

/** The parts of the bot's own sentence: prose, and the `code` spans (commands, names) it carries. */
function spans(s: string): { readonly code: boolean; readonly text: string }[] {
  const out: { code: boolean; text: string }[] = [];
  let at = 0;
  for (const m of s.matchAll(/`[^`\n]+`/g)) {
    if (m.index > at) out.push({ code: false, text: s.slice(at, m.index) });
    out.push({ code: true, text: m[0] });
    at = m.index + m[0].length;
  }
  if (at < s.length) out.push({ code: false, text: s.slice(at) });
  return out;
}

/** The shortest a piece of prose is cut to before the next one is shortened. */
const PROSE_FLOOR = 40;

/**
 * A sentence the bot composed (plain text whose `code` spans are commands and names, as
 * `src/render` words them) as escaped mrkdwn of about `max` characters: the prose around the code
 * spans is shortened first, longest piece first, and a code span is never cut — a command stays
 * whole and copy-pasteable even when that makes the text longer than `max` (a section holding it
 * is then split by {@link sections}).
 */
export function prose(s: string, max: number = SlackLimit.Section): string {
  // Bounded before escaping, so a huge input costs nothing; a command is never this long.
  const parts = spans(s.length > 20_000 ? s.slice(0, 20_000) : s).map((p) => ({
    code: p.code,
    text: esc(p.text),
  }));
  const length = (): number => parts.reduce((n, p) => n + p.text.length, 0);
  for (let excess = length() - max; excess > 0; excess = length() - max) {
    const longest = parts
      .filter((p) => !p.code && p.text.length > PROSE_FLOOR)
      .sort((a, b) => b.text.length - a.text.length)[0];
    if (longest === undefined) break;
    longest.text = clip(longest.text, Math.max(PROSE_FLOOR, longest.text.length - excess));
  }
  return parts.map((p) => p.text).join("");
}

/**
 * What a card says in place of a command longer than any section: where it is whole. The surface that
 * posts the card attaches the answer as the terminal prints it in the card's thread
 * (`answerFile`), whenever a card carries this note.
 */
export const LONG_COMMAND_NOTE =
  "longer than a Slack message allows: it is whole in the file attached in this message's thread";

/** Whether a rendered card replaced a command by {@link LONG_COMMAND_NOTE}. */
export function hasLongCommand(blocks: readonly unknown[]): boolean {
  return JSON.stringify(blocks).includes(LONG_COMMAND_NOTE);
}

/**
 * A long mrkdwn text as section texts within Slack's limit, split between lines, and a line too long
 * for one section between its prose and its code spans: a command is never split. A single code
 * span longer than a section (thousands of characters: no command the bot writes) is replaced by a
 * note saying where it is whole ({@link LONG_COMMAND_NOTE}), never cut.
 */
export function sectionTexts(text: string, max = 2900): string[] {
  const pieces: string[] = [];
  for (const line of text.split("\n")) {
    if (line.length <= max) {
      pieces.push(line);
      continue;
    }
    let current = "";
    for (const part of spans(line)) {
      const t =
        part.text.length <= max
          ? part.text
          : part.code
            ? `_(a command of ${String(part.text.length)} characters, ${LONG_COMMAND_NOTE})_`
            : clip(part.text, max);
      if (current.length + t.length > max) {
        pieces.push(current);
        current = "";
      }
      current += t;
    }
    if (current !== "") pieces.push(current);
  }
  // A code block split between sections is closed at the end of one and reopened in the next.
  const fence = "```";
  const room = max - 2 * (fence.length + 1);
  const out: string[] = [];
  let chunk = "";
  for (const piece of pieces) {
    if (chunk !== "" && chunk.length + 1 + piece.length > room) {
      const open = (chunk.match(/```/g) ?? []).length % 2 === 1;
      out.push(open ? `${chunk}\n${fence}` : chunk);
      chunk = open ? `${fence}\n${piece}` : piece;
    } else chunk = chunk === "" ? piece : `${chunk}\n${piece}`;
  }
  if (chunk !== "" || out.length === 0) out.push(chunk);
  return out;
}

/** {@link sectionTexts} as section blocks. */
export function sections(text: string, max = 2900): KnownBlock[] {
  return sectionTexts(text, max).map((t) => ({ type: "section", text: { type: "mrkdwn", text: t } }));
}

/**
 * Foreign text for mrkdwn, at most `max` characters as posted: bounded before escaping (so a huge
 * input costs nothing) and after (escaping can quadruple a string of brackets).
 */
export function safe(s: string, max: number = SlackLimit.Echo): string {
  return clip(esc(clip(s, max)), max);
}

/**
 * Foreign text inside an inline code span: a backtick would close the span early and let the rest
 * render as markup, so it becomes a look-alike; line breaks would break the span too.
 */
export function code(s: string, max: number = SlackLimit.Echo): string {
  return safe(s.replace(/`/g, "ˋ").replace(/[\r\n]+/g, " "), max);
}

/** The longest echoed word or quoted input kept whole in a message about it. */
const ECHO_WORD = 100;

/**
 * A message that echoes what a person typed, with each long echo shortened in its middle (a quoted
 * input, or any word without spaces longer than {@link ECHO_WORD}): the explanation around it is
 * the point, and survives whatever was typed.
 */
export function shortenEchoes(message: string): string {
  const cut = (s: string): string =>
    s.length > ECHO_WORD ? `${s.slice(0, ECHO_WORD - 21)}…${s.slice(-20)}` : s;
  return message
    .replace(/"([^"]{100,})"/g, (_m, inner: string) => `"${cut(inner)}"`)
    .replace(/\S{101,}/g, cut);
}

/**
 * A command the bot writes, as an inline code span: escaped, never cut (a cut command run as shown
 * would do something else), on one line. Shown as posted it reads, and copies, exactly as the terminal
 * prints it; Slack turns the escapes back into `<`, `>` and `&`.
 */
export function command(cmd: string): string {
  return `\`${esc(cmd.replace(/`/g, "ˋ").replace(/[\r\n]+/g, " "))}\``;
}

/**
 * Text for `plain_text` objects (headers, button labels): Slack never parses mentions there, but
 * angle brackets are still replaced by look-alikes so a copied header cannot carry markup anywhere.
 */
export function plain(s: string, max: number = SlackLimit.Header): string {
  return clip(s.replace(/</g, "‹").replace(/>/g, "›"), max);
}

/** A Slack user id as Slack issues them; anything else is not rendered as a mention. */
const USER_ID = /^[UW][A-Z0-9]{2,20}$/;

/**
 * The marks a message leads a line with, for the words written outside this folder (each action
 * kind's card words, `src/requests/kinds/`): Slack's emoji codes stay here.
 */
export const Mark = {
  Warning: ":warning:",
  /** A preflight verdict: safe, risky, blocked. */
  verdict: (v: "safe" | "risky" | "blocked"): string =>
    v === "safe" ? ":white_check_mark:" : v === "risky" ? ":warning:" : ":no_entry:",
} as const;

/** A mention the bot writes itself, for an id it took from a signed payload; otherwise the escaped id. */
export function mention(userId: string): string {
  return USER_ID.test(userId) ? `<@${userId}>` : `@${safe(userId, 40)}`;
}

/**
 * A line composed elsewhere (workflow, executor) whose only legitimate markup is a leading mention of
 * someone taking part in the request: that mention is kept, everything else is escaped and bounded.
 */
export function safeLine(
  text: string,
  allowedMentions: ReadonlySet<string>,
  max: number = SlackLimit.Section,
): string {
  const lead = /^<@([A-Z0-9]+)>/.exec(text);
  const id = lead?.[1];
  if (lead && id !== undefined && allowedMentions.has(id) && USER_ID.test(id)) {
    return `<@${id}>${safe(text.slice(lead[0].length), max - lead[0].length)}`;
  }
  return safe(text, max);
}
