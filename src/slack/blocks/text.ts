/** Slack mrkdwn helpers: escaping and Block Kit's size limits. */

/** Escape the three characters Slack treats as control sequences in mrkdwn. */
export function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Section text is limited to 3,000 characters. */
export function clip(s: string, max = 2900): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
