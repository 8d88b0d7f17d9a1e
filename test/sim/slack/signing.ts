/**
 * What Slack itself sends to the bot: signed, form-encoded requests. The payload builders produce the fields
 * Slack sends for a slash command and for a `block_actions` interaction, so end-to-end tests exercise Bolt's
 * real parsing and signature verification.
 */
import { createHmac } from "node:crypto";

export interface SignedHeaders {
  readonly "content-type": string;
  readonly "x-slack-request-timestamp": string;
  readonly "x-slack-signature": string;
}

/** `x-slack-signature: v0=<hex HMAC-SHA256(secret, "v0:" + timestamp + ":" + body)>`. */
export function signRequest(
  secret: string,
  body: string,
  timestamp: number = Math.floor(Date.now() / 1000),
): SignedHeaders {
  const digest = createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex");
  return {
    "content-type": "application/x-www-form-urlencoded",
    "x-slack-request-timestamp": String(timestamp),
    "x-slack-signature": `v0=${digest}`,
  };
}

export interface SlashCommandFields {
  readonly text: string;
  readonly responseUrl: string;
  readonly command?: string;
  readonly userId?: string;
  readonly userName?: string;
  readonly teamId?: string;
  readonly teamDomain?: string;
  readonly channelId?: string;
  readonly channelName?: string;
  readonly apiAppId?: string;
  readonly triggerId?: string;
}

/** The form-encoded body of a slash command invocation. */
export function slashCommandBody(fields: SlashCommandFields): string {
  return new URLSearchParams({
    // Slack still sends the deprecated verification token; the bot must never rely on (or log) it.
    token: "legacy-verification-token",
    team_id: fields.teamId ?? "T00000001",
    team_domain: fields.teamDomain ?? "unstuck-test",
    channel_id: fields.channelId ?? "C0INCIDENT",
    channel_name: fields.channelName ?? "incident",
    user_id: fields.userId ?? "U0ONCALL1",
    user_name: fields.userName ?? "oncall",
    command: fields.command ?? "/unstuck",
    text: fields.text,
    api_app_id: fields.apiAppId ?? "A0UNSTUCK",
    is_enterprise_install: "false",
    response_url: fields.responseUrl,
    trigger_id: fields.triggerId ?? "1337.42.abcdef",
  }).toString();
}

export interface BlockActionFields {
  readonly actionId: string;
  readonly value?: string;
  readonly blockId?: string;
  readonly responseUrl: string;
  readonly userId?: string;
  readonly userName?: string;
  readonly teamId?: string;
  readonly channelId?: string;
  readonly messageTs?: string;
  readonly blocks?: readonly unknown[];
  readonly apiAppId?: string;
  readonly triggerId?: string;
}

/** The form-encoded body of a button click: one field `payload` holding the JSON. */
export function blockActionsBody(fields: BlockActionFields): string {
  const teamId = fields.teamId ?? "T00000001";
  const channelId = fields.channelId ?? "C0INCIDENT";
  const messageTs = fields.messageTs ?? "1700000000.000100";
  const payload = {
    type: "block_actions",
    user: { id: fields.userId ?? "U0ONCALL2", username: fields.userName ?? "approver", team_id: teamId },
    api_app_id: fields.apiAppId ?? "A0UNSTUCK",
    token: "legacy-verification-token",
    container: { type: "message", message_ts: messageTs, channel_id: channelId, is_ephemeral: false },
    trigger_id: fields.triggerId ?? "1337.43.abcdef",
    team: { id: teamId, domain: "unstuck-test" },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: channelId, name: "incident" },
    message: { type: "message", ts: messageTs, text: "", blocks: fields.blocks ?? [] },
    state: { values: {} },
    response_url: fields.responseUrl,
    actions: [
      {
        type: "button",
        action_id: fields.actionId,
        block_id: fields.blockId ?? "actions",
        text: { type: "plain_text", text: fields.actionId, emoji: true },
        value: fields.value ?? "",
        action_ts: `${Math.floor(Date.now() / 1000)}.000200`,
      },
    ],
  };
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

export interface ViewSubmissionFields {
  readonly callbackId: string;
  /** Echoed back as Slack stores it; the bot must still re-validate it. */
  readonly privateMetadata?: string;
  /**
   * `block_id → action_id → value` of the modal's inputs: a string (or null) for a plain-text input,
   * `{ selected: [values] }` for checkboxes (sent as Slack sends them: `selected_options`).
   */
  readonly values?: Readonly<
    Record<string, Readonly<Record<string, string | null | { readonly selected: readonly string[] }>>>
  >;
  readonly userId?: string;
  readonly userName?: string;
  readonly teamId?: string;
  readonly viewId?: string;
  readonly apiAppId?: string;
  readonly triggerId?: string;
}

/** The form-encoded body of a modal submission (`view_submission`). */
export function viewSubmissionBody(fields: ViewSubmissionFields): string {
  const teamId = fields.teamId ?? "T00000001";
  const values: Record<string, Record<string, object>> = {};
  for (const [blockId, actions] of Object.entries(fields.values ?? {})) {
    values[blockId] = Object.fromEntries(
      Object.entries(actions).map(([actionId, value]) => [
        actionId,
        value !== null && typeof value === "object"
          ? {
              type: "checkboxes",
              selected_options: value.selected.map((v) => ({
                text: { type: "plain_text", text: v },
                value: v,
              })),
            }
          : { type: "plain_text_input", value },
      ]),
    );
  }
  const payload = {
    type: "view_submission",
    team: { id: teamId, domain: "unstuck-test" },
    user: { id: fields.userId ?? "U0ONCALL1", username: fields.userName ?? "oncall", team_id: teamId },
    api_app_id: fields.apiAppId ?? "A0UNSTUCK",
    token: "legacy-verification-token",
    trigger_id: fields.triggerId ?? "1337.44.abcdef",
    view: {
      id: fields.viewId ?? "V00000001",
      team_id: teamId,
      type: "modal",
      blocks: [],
      private_metadata: fields.privateMetadata ?? "",
      callback_id: fields.callbackId,
      state: { values },
      hash: "1700000000.abcdef",
      title: { type: "plain_text", text: "Remove a finalizer" },
      app_id: fields.apiAppId ?? "A0UNSTUCK",
      bot_id: "BBOT00001",
    },
    response_urls: [],
    is_enterprise_install: false,
    enterprise: null,
  };
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

/** POST a body to the bot, signed with `secret` at `timestamp` (seconds; default now). */
export async function postSigned(
  url: string,
  secret: string,
  body: string,
  timestamp?: number,
): Promise<{ status: number; text: string; elapsedMs: number }> {
  const started = performance.now();
  const res = await fetch(url, {
    method: "POST",
    headers: { ...signRequest(secret, body, timestamp) },
    body,
  });
  const text = await res.text();
  return { status: res.status, text, elapsedMs: performance.now() - started };
}

export interface AppMentionFields {
  /** The message text as Slack sends it: the mention is markup, `<@UBOT00001> timeline`. */
  readonly text: string;
  readonly ts: string;
  /** The thread's parent `ts`, when the mention was typed in a thread. */
  readonly threadTs?: string;
  readonly userId?: string;
  readonly teamId?: string;
  readonly channelId?: string;
  readonly apiAppId?: string;
  readonly botUserId?: string;
}

/** The JSON body of an `app_mention` event (Events API `event_callback`). */
export function appMentionBody(fields: AppMentionFields): string {
  const teamId = fields.teamId ?? "T00000001";
  return JSON.stringify({
    token: "legacy-verification-token",
    team_id: teamId,
    api_app_id: fields.apiAppId ?? "A0UNSTUCK",
    type: "event_callback",
    event_id: `Ev${fields.ts.replace(".", "")}`,
    event_time: Math.floor(Number(fields.ts)),
    authorizations: [
      {
        team_id: teamId,
        user_id: fields.botUserId ?? "UBOT00001",
        is_bot: true,
        is_enterprise_install: false,
      },
    ],
    event: {
      type: "app_mention",
      user: fields.userId ?? "U0ONCALL1",
      text: fields.text,
      ts: fields.ts,
      ...(fields.threadTs !== undefined ? { thread_ts: fields.threadTs } : {}),
      channel: fields.channelId ?? "C0INCIDENT",
      event_ts: fields.ts,
    },
  });
}

/**
 * POST a JSON body (an Events API callback) to the bot, signed with `secret`. `headers` adds what
 * Slack adds to a re-delivery (`X-Slack-Retry-Num`, `X-Slack-Retry-Reason`).
 */
export async function postSignedJson(
  url: string,
  secret: string,
  body: string,
  timestamp?: number,
  headers: Readonly<Record<string, string>> = {},
): Promise<{ status: number; text: string; elapsedMs: number }> {
  const started = performance.now();
  const res = await fetch(url, {
    method: "POST",
    headers: { ...headers, ...signRequest(secret, body, timestamp), "content-type": "application/json" },
    body,
  });
  const text = await res.text();
  return { status: res.status, text, elapsedMs: performance.now() - started };
}
