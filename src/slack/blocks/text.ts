/**
 * Slack mrkdwn helpers: escaping and Block Kit's size limits.
 *
 * Security property: nothing a user or a cluster wrote may reach Slack as a control sequence
 * (`<!channel>`, `<!here>`, `<!subteam^…>`, `<@U…>`, `<#C…>`, `<http…|…>`). Slack only parses those
 * between `<` and `>`, so escaping the two brackets (and `&`, so an escaped entity cannot be forged)
 * in every piece of foreign text is enough; the only markup that survives is what the bot writes.
 */

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
  return `${cut}…`;
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

/**
 * Text for `plain_text` objects (headers, button labels): Slack never parses mentions there, but
 * angle brackets are still replaced by look-alikes so a copied header cannot carry markup anywhere.
 */
export function plain(s: string, max: number = SlackLimit.Header): string {
  return clip(s.replace(/</g, "‹").replace(/>/g, "›"), max);
}

/** A Slack user id as Slack issues them; anything else is not rendered as a mention. */
const USER_ID = /^[UW][A-Z0-9]{2,20}$/;

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
