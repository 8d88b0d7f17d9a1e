/**
 * A fake Slack Web API over real HTTP. Bolt's WebClient is pointed at `url` (`clientOptions.slackApiUrl`), so
 * the bot under test speaks the same wire format it speaks to Slack: form-encoded or JSON bodies, a bearer token,
 * and `{"ok": false, "error": "..."}` answers with HTTP 200 for platform errors. It also serves `response_url`s
 * so that `respond()` posts are recorded next to the Web API calls. For Socket Mode, `apps.connections.open`
 * (with the app-level token) hands out a WebSocket URL on the same server; see `socket.ts`.
 *
 * Files go through Slack's external upload, the protocol `files.uploadV2` of `@slack/web-api` drives:
 * `files.getUploadURLExternal` (`filename`, `length` in bytes) answers an `upload_url` and a `file_id`; the
 * bytes are POSTed to that URL (raw, or multipart form data as the WebClient sends them: field `body`), without
 * a token, since the URL is the credential; `files.completeUploadExternal` (`files` as a JSON array of
 * `{id, title}`, optional `channel_id`, `thread_ts`, `initial_comment`) shares them as one message in the
 * channel or thread. Without `channel_id` the file stays private to the bot, as in Slack.
 */
import { randomBytes } from "node:crypto";
import { once, EventEmitter } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { createSocketHub, type SocketAck } from "./socket.js";

/** One recorded Web API call: the method name and the decoded body (JSON-valued form fields parsed). */
export interface SlackCall {
  readonly method: string;
  readonly body: Record<string, unknown>;
  /** When the call arrived (epoch ms), to check the pacing of retries. */
  readonly at: number;
  /** What the fake answered (e.g. the `ts` of a posted message); set once answered. */
  response?: Record<string, unknown>;
  /** The injected fault this call was answered with (see {@link FakeSlack.setFault}), if any. */
  fault?: SlackFault;
}

/**
 * A failure to inject into a Web API method, the ways Slack fails: a platform error (`ok: false`
 * with HTTP 200), rate limiting (HTTP 429 with `Retry-After`), or a server error (HTTP 5xx).
 */
export type SlackFault =
  | { readonly kind: "error"; readonly error: string; readonly times?: number }
  | { readonly kind: "rate-limited"; readonly retryAfterSeconds: number; readonly times?: number }
  | { readonly kind: "http"; readonly status: number; readonly times?: number };

/** A held answer (see {@link FakeSlack.hold}). */
export interface SlackHold {
  /** Resolves with the call once it arrived and took effect (its answer is ready, not sent). */
  readonly arrived: Promise<SlackCall>;
  /** Send the answer (at once if the call has not arrived yet: it is then not held at all). */
  release(): void;
}

/** One post to a `response_url` handed out by {@link FakeSlack.responseUrl}. */
export interface SlackResponsePost {
  readonly id: string;
  readonly body: Record<string, unknown>;
}

/** A Web API call or a `response_url` post, as it arrives. */
export type SlackArrival =
  | { readonly kind: "call"; readonly call: SlackCall }
  | { readonly kind: "response"; readonly post: SlackResponsePost };

export interface FakeSlackOptions {
  /** The bot token every call must carry; calls with another get `invalid_auth`. */
  readonly token?: string;
  readonly botUserId?: string;
  readonly botId?: string;
  readonly teamId?: string;
  readonly teamName?: string;
  /** The app-level token (`xapp-…`) `apps.connections.open` must carry; others get `invalid_auth`. */
  readonly appToken?: string;
  readonly appId?: string;
  /**
   * The bot token's scopes. When given, methods that need a scope this list lacks answer `missing_scope`
   * with `needed` and `provided`, as Slack does; when absent, every scope is granted.
   */
  readonly scopes?: readonly string[];
}

/** A file uploaded through the external upload protocol. */
export interface FakeFile {
  readonly id: string;
  readonly filename: string;
  /** The declared size (`length` of `files.getUploadURLExternal`). */
  readonly length: number;
  /** The bytes POSTed to the upload URL; absent until then. */
  readonly content?: Buffer;
  /** Set by `files.completeUploadExternal`. */
  readonly title?: string;
  readonly completed: boolean;
  /** Where it was shared (`channel_id`, `thread_ts`), and the message that shows it. */
  readonly channel?: string;
  readonly threadTs?: string;
  readonly messageTs?: string;
  readonly initialComment?: string;
}

/** A message as it stands now: the last `chat.postMessage`/`chat.update` body for its ts. */
export interface FakeMessage {
  readonly channel: string;
  readonly ts: string;
  readonly threadTs?: string;
  readonly text?: string;
  readonly blocks?: unknown;
  /** A thread reply also sent to the channel (`reply_broadcast`). */
  readonly replyBroadcast?: boolean;
  /** Ids of the files the message shares (`files.completeUploadExternal`). */
  readonly files?: readonly string[];
  /** How many times `chat.update` replaced it. */
  readonly updates: number;
}

export interface FakeChannel {
  readonly name?: string;
  /** A private channel: `conversations.info` then needs `groups:read` (a public one `channels:read`). */
  readonly isPrivate?: boolean;
  /** `false`: the channel does not exist (or the bot cannot see it): `channel_not_found`. */
  readonly exists?: boolean;
  /** When `false`, `chat.postMessage` into the channel fails with `not_in_channel`, as Slack does. */
  readonly isMember?: boolean;
}

export interface FakeSlack {
  /** Base URL of the Web API; ends with `/api/`. */
  readonly url: string;
  readonly token: string;
  readonly appToken: string;
  readonly botUserId: string;
  readonly teamId: string;
  calls(): SlackCall[];
  /** Resolves with the first call (past or future) of `method` matching `predicate`; rejects after the deadline. */
  waitFor(method: string, predicate?: (call: SlackCall) => boolean, timeoutMs?: number): Promise<SlackCall>;
  /** A URL on this server that records posts, to use as a slash command's `response_url`. */
  responseUrl(id: string): string;
  responses(): SlackResponsePost[];
  waitForResponse(
    predicate?: (post: SlackResponsePost) => boolean,
    timeoutMs?: number,
  ): Promise<SlackResponsePost>;
  /**
   * Calls `listener` with every Web API call and `response_url` post as it arrives, until the
   * returned function is called: to time an answer to the moment it reaches Slack.
   */
  watch(listener: (arrived: SlackArrival) => void): () => void;
  /** Make every later call of `method` fail with this Slack error code; `undefined` clears it. */
  setFailure(method: string, error: string | undefined): void;
  /**
   * Fail the next `fault.times` calls of `method` (every call when `times` is absent) with `fault`;
   * `undefined` clears it. Failed calls are recorded with `fault` set, and change nothing.
   */
  setFault(method: string, fault: SlackFault | undefined): void;
  /**
   * Hold the answer to the next call of `method` matching `predicate`: the call takes effect (a message
   * is posted and can be read) but its caller hears nothing until `release()` — Slack answering late,
   * or the caller being stopped, handed over or killed between the post and the answer.
   */
  hold(method: string, predicate?: (call: SlackCall) => boolean): SlackHold;
  /** Members of a user group, for `usergroups.users.list`. */
  setUsergroup(id: string, users: readonly string[]): void;
  setChannel(id: string, channel: FakeChannel): void;
  /** A message's current content (after every update), or `undefined` if never posted. */
  message(channel: string, ts: string): FakeMessage | undefined;
  /** Replies in a message's thread, oldest first. */
  thread(channel: string, ts: string): FakeMessage[];
  /** Files asked for with `files.getUploadURLExternal`, oldest first, as they stand now. */
  files(): FakeFile[];
  /** Replace the bot token's scopes (see {@link FakeSlackOptions.scopes}); `undefined` grants every scope. */
  setScopes(scopes: readonly string[] | undefined): void;
  /**
   * Modals opened with `views.open`, oldest first: each as it reads now (the last `views.update`), with
   * its id and the trigger id that opened it.
   */
  views(): { readonly id: string; readonly triggerId: string; readonly view: Record<string, unknown> }[];
  /** Push a message (usually an envelope, see `slashCommandEnvelope`) to every open Socket Mode connection. */
  socketSend(message: unknown): void;
  /** Socket Mode connections open now (hello sent, not closed). */
  socketConnections(): number;
  /** Resolves once at least `count` Socket Mode connections are open; rejects after the deadline. */
  waitForSocket(count?: number, timeoutMs?: number): Promise<void>;
  /** Send `{"type":"disconnect"}` on every open connection, as Slack does before recycling a host. */
  socketDisconnect(reason?: string): void;
  /** Acknowledgements received over Socket Mode, oldest first. */
  socketAcks(): SocketAck[];
  /** Resolves with the ack (past or future) of this envelope; rejects after the deadline. */
  waitForAck(envelopeId: string, timeoutMs?: number): Promise<SocketAck>;
  /** Forget recorded calls and responses (state such as user groups is kept). */
  clear(): void;
  stop(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 5_000;
/** Form fields that carry JSON, as the WebClient serialises them. */
const JSON_FIELDS = new Set(["blocks", "attachments", "metadata", "unfurl_links_json", "view", "files"]);
/** The scope each method needs, for {@link FakeSlackOptions.scopes}. */
const REQUIRED_SCOPES: Readonly<Record<string, string>> = {
  "chat.postMessage": "chat:write",
  "chat.update": "chat:write",
  "files.getUploadURLExternal": "files:write",
  "files.completeUploadExternal": "files:write",
};
/** Slack's own cap on one uploaded file (1 GB). */
const MAX_FILE_BYTES = 1024 * 1024 * 1024;

/** Start the fake on an ephemeral port of 127.0.0.1. */
/** The modal a `views.open` or `views.update` carries (`view`: type modal, with blocks), if valid. */
function modalOf(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const view = body["view"];
  if (typeof view !== "object" || view === null || Array.isArray(view)) return undefined;
  const record = view as Record<string, unknown>;
  return record["type"] === "modal" && Array.isArray(record["blocks"]) ? record : undefined;
}

/** A view's hash: new on every open and update, as Slack's. */
function viewHash(): string {
  return `${String(Date.now())}.${randomBytes(4).toString("hex")}`;
}

export async function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  const token = options.token ?? "xoxb-fake-bot-token";
  const botUserId = options.botUserId ?? "UBOT00001";
  const botId = options.botId ?? "BBOT00001";
  const teamId = options.teamId ?? "T00000001";
  const teamName = options.teamName ?? "unstuck-test";
  const appToken = options.appToken ?? "xapp-1-A0UNSTUCK-1-fakeapptoken";
  const appId = options.appId ?? "A0UNSTUCK";

  const calls: SlackCall[] = [];
  const responses: SlackResponsePost[] = [];
  const failures = new Map<string, string>();
  /** Injected faults with the number of calls they still fail (`Infinity` until cleared). */
  const faults = new Map<string, { fault: SlackFault; left: number }>();
  /** Answers to hold, first match first. */
  const holds: {
    method: string;
    predicate: (call: SlackCall) => boolean;
    arrive: (call: SlackCall) => void;
    released: Promise<void>;
  }[] = [];
  const usergroups = new Map<string, readonly string[]>();
  const channels = new Map<string, FakeChannel>();
  /** channel → ts → message, so `chat.update` can answer `message_not_found` like Slack. */
  const messages = new Map<string, Map<string, FakeMessage>>();
  /** Open modals by opening order; `hash` changes on every update, as Slack's does. */
  const views: { id: string; triggerId: string; view: Record<string, unknown>; hash: string }[] = [];
  let viewCounter = 0;
  /** file id → file, in the order they were asked for. */
  const files = new Map<string, FakeFile>();
  /** Upload URL token → file id; the token is the only credential the upload carries. */
  const uploadTokens = new Map<string, string>();
  let fileCounter = 0;
  let scopes: ReadonlySet<string> | undefined = options.scopes ? new Set(options.scopes) : undefined;
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const hub = createSocketHub(appId, events);
  let tsCounter = 0;
  const tsBase = Math.floor(Date.now() / 1000);

  /** Unique and increasing, in Slack's `seconds.micros` shape. */
  const nextTs = (): string => {
    tsCounter += 1;
    return `${tsBase + Math.floor(tsCounter / 1_000_000)}.${String(tsCounter % 1_000_000).padStart(6, "0")}`;
  };

  const handlers: Record<string, (body: Record<string, unknown>) => Record<string, unknown>> = {
    "auth.test": () => ({
      url: `https://${teamName}.slack.com/`,
      team: teamName,
      user: "unstuck",
      team_id: teamId,
      user_id: botUserId,
      bot_id: botId,
      is_enterprise_install: false,
    }),
    "chat.postMessage": (body) => {
      const channel = str(body["channel"]);
      if (!channel) return { ok: false, error: "channel_not_found" };
      if (!str(body["text"]) && !Array.isArray(body["blocks"]) && !Array.isArray(body["attachments"])) {
        return { ok: false, error: "no_text" };
      }
      if (channels.get(channel)?.isMember === false) return { ok: false, error: "not_in_channel" };
      const ts = nextTs();
      const known = messages.get(channel) ?? new Map<string, FakeMessage>();
      const threadTs = str(body["thread_ts"]);
      known.set(ts, {
        channel,
        ts,
        ...(threadTs !== undefined ? { threadTs } : {}),
        ...(typeof body["text"] === "string" ? { text: body["text"] } : {}),
        ...(body["blocks"] !== undefined ? { blocks: body["blocks"] } : {}),
        ...(threadTs !== undefined && (body["reply_broadcast"] === true || body["reply_broadcast"] === "true")
          ? { replyBroadcast: true }
          : {}),
        updates: 0,
      });
      messages.set(channel, known);
      return {
        channel,
        ts,
        message: {
          type: "message",
          user: botUserId,
          bot_id: botId,
          text: body["text"],
          blocks: body["blocks"],
          ts,
        },
      };
    },
    "chat.update": (body) => {
      const channel = str(body["channel"]);
      const ts = str(body["ts"]);
      if (!channel) return { ok: false, error: "channel_not_found" };
      const existing = ts ? messages.get(channel)?.get(ts) : undefined;
      if (!ts || !existing) return { ok: false, error: "message_not_found" };
      messages.get(channel)?.set(ts, {
        ...existing,
        ...(typeof body["text"] === "string" ? { text: body["text"] } : {}),
        // Slack keeps the old blocks when an update sends only text.
        ...(body["blocks"] !== undefined ? { blocks: body["blocks"] } : {}),
        updates: existing.updates + 1,
      });
      return { channel, ts, text: body["text"], message: { text: body["text"], blocks: body["blocks"] } };
    },
    "chat.postEphemeral": (body) => {
      const channel = str(body["channel"]);
      if (!channel) return { ok: false, error: "channel_not_found" };
      if (!str(body["user"])) return { ok: false, error: "user_not_in_channel" };
      return { message_ts: nextTs() };
    },
    "views.open": (body) => {
      const triggerId = str(body["trigger_id"]);
      if (!triggerId) return { ok: false, error: "invalid_trigger_id" };
      const record = modalOf(body);
      if (record === undefined) return { ok: false, error: "invalid_arguments" };
      viewCounter += 1;
      const id = `V${String(viewCounter).padStart(8, "0")}`;
      const hash = viewHash();
      views.push({ id, triggerId, view: record, hash });
      return { view: { ...record, id, hash, team_id: teamId } };
    },
    // Slack: `view_id` (or `external_id`) names the modal, `hash` (optional) must be the one it last
    // returned, else `hash_conflict`; an unknown id is `not_found`. The update replaces the whole view.
    "views.update": (body) => {
      const viewId = str(body["view_id"]);
      const record = modalOf(body);
      if (!viewId || record === undefined) return { ok: false, error: "invalid_arguments" };
      const open = views.find((v) => v.id === viewId);
      if (!open) return { ok: false, error: "not_found" };
      const hash = str(body["hash"]);
      if (hash && hash !== open.hash) return { ok: false, error: "hash_conflict" };
      open.view = record;
      open.hash = viewHash();
      return { view: { ...record, id: viewId, hash: open.hash, team_id: teamId } };
    },
    "files.getUploadURLExternal": (body) => {
      const filename = str(body["filename"]);
      const rawLength = body["length"];
      const length =
        typeof rawLength === "number" ? rawLength : typeof rawLength === "string" ? Number(rawLength) : NaN;
      if (!filename || rawLength === undefined || rawLength === "")
        return { ok: false, error: "invalid_arguments" };
      if (!Number.isInteger(length) || length < 0) return { ok: false, error: "invalid_arguments" };
      // Slack's own wording: "typically only occurs when the length provided is 0".
      if (length === 0) return { ok: false, error: "missing_argument" };
      if (length > MAX_FILE_BYTES) return { ok: false, error: "file_upload_size_restricted" };
      fileCounter += 1;
      const id = `F${String(fileCounter).padStart(10, "0")}`;
      const token = randomBytes(12).toString("hex");
      files.set(id, { id, filename, length, completed: false });
      uploadTokens.set(token, id);
      return { upload_url: `${origin}/upload/v1/${token}`, file_id: id };
    },
    "files.completeUploadExternal": (body) => {
      const list = body["files"];
      if (!Array.isArray(list) || list.length === 0) return { ok: false, error: "invalid_arguments" };
      const entries: { id: string; title?: string }[] = [];
      for (const item of list) {
        if (typeof item !== "object" || item === null) return { ok: false, error: "invalid_arguments" };
        const id = str((item as Record<string, unknown>)["id"]);
        if (!id) return { ok: false, error: "invalid_arguments" };
        const title = str((item as Record<string, unknown>)["title"]);
        entries.push({ id, ...(title !== undefined ? { title } : {}) });
      }
      // A file never asked for, never uploaded, or already completed is not there to complete.
      for (const e of entries) {
        const f = files.get(e.id);
        if (!f || f.content === undefined || f.completed) return { ok: false, error: "file_not_found" };
      }
      const channel = str(body["channel_id"]) ?? str(body["channels"]);
      const threadTs = str(body["thread_ts"]);
      const initialComment = str(body["initial_comment"]);
      if (channel !== undefined) {
        if (!/^[CGD][A-Z0-9]{2,}$/.test(channel)) return { ok: false, error: "invalid_channel" };
        if (channels.get(channel)?.isMember === false) return { ok: false, error: "not_in_channel" };
        if (threadTs !== undefined && !/^\d+\.\d+$/.test(threadTs)) {
          return { ok: false, error: "invalid_thread_ts" };
        }
      }
      let messageTs: string | undefined;
      if (channel !== undefined) {
        messageTs = nextTs();
        const known = messages.get(channel) ?? new Map<string, FakeMessage>();
        known.set(messageTs, {
          channel,
          ts: messageTs,
          ...(threadTs !== undefined ? { threadTs } : {}),
          ...(initialComment !== undefined ? { text: initialComment } : {}),
          files: entries.map((e) => e.id),
          updates: 0,
        });
        messages.set(channel, known);
      }
      const done = entries.map((e) => {
        const before = files.get(e.id);
        if (!before) throw new Error("unreachable: checked above");
        const after: FakeFile = {
          ...before,
          title: e.title ?? before.filename,
          completed: true,
          ...(channel !== undefined ? { channel } : {}),
          ...(channel !== undefined && threadTs !== undefined ? { threadTs } : {}),
          ...(messageTs !== undefined ? { messageTs } : {}),
          ...(initialComment !== undefined ? { initialComment } : {}),
        };
        files.set(e.id, after);
        return after;
      });
      return {
        files: done.map((f) => ({
          id: f.id,
          name: f.filename,
          title: f.title,
          size: f.length,
          mimetype: "text/plain",
          user: botUserId,
          channels: f.channel !== undefined ? [f.channel] : [],
        })),
      };
    },
    "usergroups.users.list": (body) => {
      const users = usergroups.get(str(body["usergroup"]) ?? "");
      return users ? { users: [...users] } : { ok: false, error: "no_such_subteam" };
    },
    "users.info": (body) => {
      const id = str(body["user"]);
      if (!id) return { ok: false, error: "user_not_found" };
      return {
        user: {
          id,
          team_id: teamId,
          name: id.toLowerCase(),
          deleted: false,
          is_bot: id === botUserId,
          profile: { display_name: id.toLowerCase(), real_name: id },
        },
      };
    },
    "conversations.info": (body) => {
      const id = str(body["channel"]);
      if (!id) return { ok: false, error: "channel_not_found" };
      const channel = channels.get(id);
      if (channel?.exists === false) return { ok: false, error: "channel_not_found" };
      const isPrivate = channel?.isPrivate === true;
      // Slack's scopes for this method: channels:read for public channels, groups:read for private ones.
      const needed = isPrivate ? "groups:read" : "channels:read";
      if (scopes !== undefined && !scopes.has(needed)) {
        return { ok: false, error: "missing_scope", needed, provided: [...scopes].join(",") };
      }
      return {
        channel: {
          id,
          name: channel?.name ?? id.toLowerCase(),
          is_channel: !isPrivate,
          is_group: false,
          is_im: false,
          is_mpim: false,
          is_private: isPrivate,
          is_archived: false,
          is_general: false,
          is_member: channel?.isMember ?? true,
          created: tsBase,
        },
      };
    },
  };

  const server = createServer((req, res) => {
    readBody(req).then(
      (raw) => {
        const path = new URL(req.url ?? "/", "http://fake").pathname;
        const upload = /^\/upload\/v1\/([0-9a-f]+)$/.exec(path);
        if (upload?.[1] !== undefined) {
          receiveUpload(req, res, upload[1], raw);
          return;
        }
        handle(req, res, raw.toString("utf8"));
      },
      () => send(res, 400, { ok: false, error: "invalid_form_data" }),
    );
  });

  /**
   * The upload URL: bytes as the body (raw), or a multipart form whose first file part holds them. Slack
   * answers 200 with a short text when it took them; a size other than the declared `length`, a second
   * upload, or an unknown URL is refused with a 4xx (the WebClient then rejects the whole `uploadV2`).
   */
  const receiveUpload = (req: IncomingMessage, res: ServerResponse, token: string, raw: Buffer): void => {
    const id = uploadTokens.get(token);
    const file = id !== undefined ? files.get(id) : undefined;
    if (req.method !== "POST" || id === undefined || file === undefined) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    if (file.content !== undefined) {
      res.writeHead(409, { "content-type": "text/plain" }).end("already uploaded");
      return;
    }
    const type = req.headers["content-type"] ?? "";
    let bytes = raw;
    if (type.startsWith("multipart/form-data")) {
      const part = firstFilePart(type, raw);
      if (part === undefined) {
        res.writeHead(400, { "content-type": "text/plain" }).end("no file part");
        return;
      }
      bytes = part;
    }
    if (bytes.length !== file.length) {
      res
        .writeHead(400, { "content-type": "text/plain" })
        .end(`size mismatch: declared ${String(file.length)}, received ${String(bytes.length)}`);
      return;
    }
    files.set(id, { ...file, content: bytes });
    res.writeHead(200, { "content-type": "text/plain" }).end(`OK - ${String(bytes.length)}`);
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string): void => {
    const path = new URL(req.url ?? "/", "http://fake").pathname;
    const body = decodeBody(req.headers["content-type"], raw);
    if (body === undefined) {
      send(res, 200, { ok: false, error: "invalid_json" });
      return;
    }
    const responseMatch = /^\/response\/([^/]+)$/.exec(path);
    if (responseMatch?.[1] !== undefined && req.method === "POST") {
      const post = { id: decodeURIComponent(responseMatch[1]), body };
      responses.push(post);
      events.emit("response", post);
      // response_url answers plain "ok" rather than JSON.
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      return;
    }
    const apiMatch = /^\/api\/([A-Za-z.]+)$/.exec(path);
    const method = apiMatch?.[1];
    if (method === undefined || req.method !== "POST") {
      send(res, 404, { ok: false, error: "unknown_method" });
      return;
    }
    const presented = bearer(req.headers.authorization) ?? str(body["token"]);
    delete body["token"];
    const call: SlackCall = { method, body, at: Date.now() };
    calls.push(call);
    events.emit("call", call);
    if (presented === undefined) {
      send(res, 200, { ok: false, error: "not_authed" });
      return;
    }
    if (method === "apps.connections.open") {
      // Only an app-level token opens a connection; Slack names a bot token's mistake precisely.
      if (presented !== appToken) {
        const error = presented === token ? "not_allowed_token_type" : "invalid_auth";
        send(res, 200, { ok: false, error });
        return;
      }
      const failure = failures.get(method);
      call.response =
        failure !== undefined ? { ok: false, error: failure } : { ok: true, url: hub.issueUrl(origin) };
      send(res, 200, call.response);
      return;
    }
    if (presented !== token) {
      send(res, 200, { ok: false, error: "invalid_auth" });
      return;
    }
    const needed = REQUIRED_SCOPES[method];
    if (scopes !== undefined && needed !== undefined && !scopes.has(needed)) {
      call.response = { ok: false, error: "missing_scope", needed, provided: [...scopes].join(",") };
      send(res, 200, call.response);
      return;
    }
    const failure = failures.get(method);
    if (failure !== undefined) {
      send(res, 200, { ok: false, error: failure });
      return;
    }
    const injected = faults.get(method);
    if (injected !== undefined && injected.left > 0) {
      injected.left -= 1;
      if (injected.left <= 0) faults.delete(method);
      call.fault = injected.fault;
      sendFault(res, injected.fault);
      return;
    }
    const handler = handlers[method];
    if (!handler) {
      send(res, 200, { ok: false, error: "unknown_method" });
      return;
    }
    const answer = { ok: true, ...handler(body) };
    call.response = answer;
    const held = holds.findIndex((h) => h.method === method && h.predicate(call));
    const hold = held >= 0 ? holds.splice(held, 1)[0] : undefined;
    if (hold !== undefined) {
      hold.arrive(call);
      void hold.released.then(() => send(res, 200, answer));
      return;
    }
    send(res, 200, answer);
  };

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) =>
    hub.upgrade(req, socket, head),
  );
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;

  const waitOn = <T>(
    kind: "call" | "response" | "ack",
    existing: () => readonly T[],
    predicate: (item: T) => boolean,
    timeoutMs: number,
    describe: string,
  ): Promise<T> => {
    const found = existing().find(predicate);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise<T>((resolve, reject) => {
      const listener = (item: T): void => {
        if (!predicate(item)) return;
        clearTimeout(timer);
        events.off(kind, listener);
        resolve(item);
      };
      const timer = setTimeout(() => {
        events.off(kind, listener);
        reject(new Error(`fake Slack: no ${describe} within ${timeoutMs} ms`));
      }, timeoutMs);
      events.on(kind, listener);
    });
  };

  return {
    url: `${origin}/api/`,
    token,
    appToken,
    botUserId,
    teamId,
    calls: () => [...calls],
    waitFor: (method, predicate = () => true, timeoutMs = DEFAULT_TIMEOUT_MS) =>
      waitOn<SlackCall>(
        "call",
        () => calls,
        (c) => c.method === method && predicate(c),
        timeoutMs,
        `matching ${method} call`,
      ),
    responseUrl: (id) => `${origin}/response/${encodeURIComponent(id)}`,
    responses: () => [...responses],
    waitForResponse: (predicate = () => true, timeoutMs = DEFAULT_TIMEOUT_MS) =>
      waitOn<SlackResponsePost>(
        "response",
        () => responses,
        predicate,
        timeoutMs,
        "matching response_url post",
      ),
    watch: (listener) => {
      const onCall = (call: SlackCall): void => listener({ kind: "call", call });
      const onResponse = (post: SlackResponsePost): void => listener({ kind: "response", post });
      events.on("call", onCall);
      events.on("response", onResponse);
      return () => {
        events.off("call", onCall);
        events.off("response", onResponse);
      };
    },
    setFailure: (method, error) => {
      if (error === undefined) failures.delete(method);
      else failures.set(method, error);
    },
    setFault: (method, fault) => {
      if (fault === undefined) faults.delete(method);
      else faults.set(method, { fault, left: fault.times ?? Number.POSITIVE_INFINITY });
    },
    hold: (method, predicate = () => true) => {
      let arrive!: (call: SlackCall) => void;
      let release!: () => void;
      const arrived = new Promise<SlackCall>((r) => (arrive = r));
      const released = new Promise<void>((r) => (release = r));
      holds.push({ method, predicate, arrive, released });
      return { arrived, release };
    },
    setUsergroup: (id, users) => usergroups.set(id, [...users]),
    setChannel: (id, channel) => channels.set(id, channel),
    message: (channel, ts) => messages.get(channel)?.get(ts),
    thread: (channel, ts) => [...(messages.get(channel)?.values() ?? [])].filter((m) => m.threadTs === ts),
    files: () => [...files.values()],
    setScopes: (list) => {
      scopes = list ? new Set(list) : undefined;
    },
    views: () => views.map((v) => ({ id: v.id, triggerId: v.triggerId, view: v.view })),
    socketSend: (message) => hub.send(message),
    socketConnections: () => hub.open(),
    waitForSocket: (count = 1, timeoutMs = DEFAULT_TIMEOUT_MS) =>
      hub.open() >= count
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            const listener = (): void => {
              if (hub.open() < count) return;
              clearTimeout(timer);
              events.off("socket-open", listener);
              resolve();
            };
            const timer = setTimeout(() => {
              events.off("socket-open", listener);
              reject(
                new Error(`fake Slack: fewer than ${count} Socket Mode connections within ${timeoutMs} ms`),
              );
            }, timeoutMs);
            events.on("socket-open", listener);
          }),
    socketDisconnect: (reason = "refresh_requested") => hub.disconnectAll(reason),
    socketAcks: () => hub.acks(),
    waitForAck: (envelopeId, timeoutMs = DEFAULT_TIMEOUT_MS) =>
      waitOn<SocketAck>(
        "ack",
        () => hub.acks(),
        (a) => a.envelopeId === envelopeId,
        timeoutMs,
        `Socket Mode ack of envelope ${envelopeId}`,
      ),
    clear: () => {
      calls.length = 0;
      responses.length = 0;
      hub.clearAcks();
    },
    stop: async () => {
      hub.destroyAll();
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

function bearer(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? "");
  return match?.[1];
}

/** Answer as Slack does when it fails that way. */
function sendFault(res: ServerResponse, fault: SlackFault): void {
  switch (fault.kind) {
    case "error":
      send(res, 200, { ok: false, error: fault.error });
      return;
    case "rate-limited":
      res
        .writeHead(429, {
          "content-type": "application/json; charset=utf-8",
          "retry-after": String(fault.retryAfterSeconds),
        })
        .end(JSON.stringify({ ok: false, error: "ratelimited" }));
      return;
    case "http":
      res.writeHead(fault.status, { "content-type": "text/html" }).end("<html>upstream error</html>");
      return;
  }
}

function send(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The content of the first part of a multipart body that carries a file (`filename=` in its headers). */
function firstFilePart(contentType: string, raw: Buffer): Buffer | undefined {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  if (boundary === undefined) return undefined;
  const delimiter = Buffer.from(`--${boundary}`);
  let at = raw.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    const next = raw.indexOf(delimiter, start);
    if (next < 0) return undefined;
    const part = raw.subarray(start, next);
    const headerEnd = part.indexOf("\r\n\r\n");
    if (headerEnd >= 0) {
      const headers = part.subarray(0, headerEnd).toString("utf8");
      // The part's body ends with the CRLF that precedes the next delimiter.
      if (/filename=/i.test(headers)) return part.subarray(headerEnd + 4, part.length - 2);
    }
    at = next;
  }
  return undefined;
}

/** Form fields become strings except the JSON-carrying ones; JSON bodies are taken as they are. */
function decodeBody(contentType: string | undefined, raw: string): Record<string, unknown> | undefined {
  if (raw.length === 0) return {};
  if ((contentType ?? "").includes("application/json")) {
    try {
      const parsed: unknown = JSON.parse(raw);
      return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
        ? { ...(parsed as Record<string, unknown>) }
        : undefined;
    } catch {
      return undefined;
    }
  }
  const body: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    if (JSON_FIELDS.has(key)) {
      try {
        body[key] = JSON.parse(value);
        continue;
      } catch {
        // Slack rejects malformed blocks; keep the raw text so a test can see what was sent.
      }
    }
    body[key] = value;
  }
  return body;
}
