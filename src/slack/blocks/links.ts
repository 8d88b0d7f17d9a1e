/**
 * A link to a posted message (Slack's permalink form, resolved in the reader's workspace): a bare
 * URL, which Slack links by itself even inside escaped text.
 */
export function messageLink(message: { readonly channel: string; readonly ts: string }): string {
  return `https://slack.com/archives/${encodeURIComponent(message.channel)}/p${message.ts.replace(".", "")}`;
}
