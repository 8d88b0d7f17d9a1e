/**
 * The local Slack console: a web page on 127.0.0.1 that shows what the bot posted to the fake Slack
 * (channel, threads, edits, ephemeral answers, modals) as Slack would, and sends what Slack sends
 * back — signed slash commands, `block_actions` and `view_submission` payloads — as any of a few
 * simulated users. Everything it shows is linted (../block-kit-lint.ts); problems are drawn on the
 * message and listed at `GET /api/lint`.
 *
 *   GET  /                 the page (index.html, console.js, console.css: no build step)
 *   GET  /api/state        channel messages, threads, ephemerals, modals, users, lint problems
 *   GET  /api/stream       Server-Sent Events: `change` whenever the fake Slack saw something new
 *   GET  /api/lint         every problem in what the bot posted, as JSON
 *   GET  /api/file/<id>    a file the bot uploaded (the post-mortem draft), as a download
 *   POST /api/lint         lint `{ blocks, text }` or `{ view }` sent in the body
 *   POST /api/command      `{ user, text }`: a signed slash command
 *   POST /api/action       `{ user, ts, actionId, ... }`: a signed button click / select
 *   POST /api/submit       `{ user, viewId, values }`: a signed modal submission; answers its errors
 *   POST /api/close        `{ user, viewId }`: close a modal without submitting
 *   POST /api/world        `{ user, id }`: run one of the world's events (Argo CD re-syncs, …)
 *
 * Who may drive it: the console signs what it sends as any sandbox user, so a request that acts must
 * come from the console's own page, never from another site the same browser has open (see
 * {@link refuseCrossSite} and {@link consoleTokens}). Every request that is not a GET:
 *   - from the console's own origin: an `Origin` header, when sent, is `http://<its Host>` (a
 *     loopback name and this port), and `Sec-Fetch-Site`, when sent, is `same-origin` or `none`;
 *     browsers send `Origin` with every POST, so a cross-site page is refused here (403);
 *   - with `X-Console-Token` equal to the token in the page it was served with (a `<meta>` tag,
 *     random per page load, checked in constant time), 403 otherwise — except `POST /api/lint`,
 *     which changes nothing; a client outside a browser (curl, the tests) has no `Origin` and reads
 *     the token from `GET /` as the page does;
 *   - with the media type exactly `application/json` (parameters such as `charset=utf-8` allowed),
 *     415 otherwise: no form or `text/plain` body, which browsers send cross-site without asking.
 * A refused request runs nothing. The GET endpoints that return data (`/api/state`, `/api/lint`,
 * `/api/stream`) refuse cross-site requests too, and no response carries a CORS header: another
 * site can neither read nor embed them (`Cross-Origin-Resource-Policy: same-origin`).
 *
 * Only the sim uses it; it imports nothing from the product.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { existsSync } from "node:fs";
import { lintMessage, lintView, lintBlockList, type LintProblem } from "../block-kit-lint.js";
import type { FakeSlack } from "../fake-slack.js";
import { blockActionsBody, postSigned, slashCommandBody } from "../signing.js";

export interface ConsoleUser {
  readonly id: string;
  readonly name: string;
  /** What this user is in the scenario: requester, approver, stranger. */
  readonly role: string;
}

export interface ConsoleOptions {
  readonly fake: FakeSlack;
  /** The bot's `/slack/events` URL. */
  readonly eventsUrl: string;
  readonly signingSecret: string;
  readonly channel: { readonly id: string; readonly name: string };
  readonly users: readonly ConsoleUser[];
  readonly command?: string;
  readonly teamId?: string;
  /** 0 or absent: a free port. */
  readonly port?: number;
  /**
   * Things that happen in the simulated world outside Slack (Argo CD re-syncs an application, …):
   * a button each in the page's header; what they did is shown in the channel as a world event.
   */
  readonly worldActions?: readonly ConsoleWorldAction[];
}

/** One button of the console's world bar. */
export interface ConsoleWorldAction {
  readonly id: string;
  /** The button text, e.g. "Argo CD re-syncs myapp". */
  readonly label: string;
  /** What `run` reports: `ok` false when nothing happened (the lines say why). */
  run(): Promise<{ readonly ok: boolean; readonly lines: readonly string[] }>;
}

interface WorldEvent {
  readonly seq: number;
  readonly id: string;
  readonly label: string;
  readonly user: string;
  readonly at: number;
  status: "running" | "done" | "refused" | "failed";
  lines: readonly string[];
}

export interface SlackConsole {
  readonly url: string;
  /** What `GET /api/lint` answers. */
  lint(): LintReport;
  stop(): Promise<void>;
}

export interface LintedProblem extends LintProblem {
  /** What carried it: `message <ts>`, `ephemeral <ts>`, `modal <view id>`. */
  readonly where: string;
}

export interface LintReport {
  readonly ok: boolean;
  readonly checked: number;
  readonly errors: number;
  readonly warnings: number;
  readonly problems: readonly LintedProblem[];
}

/** A `response_url` id naming the user it answers, so their ephemeral answers can be shown to them only. */
export function userResponseId(user: string, tag: string): string {
  return `u~${user}~${tag}`;
}

function userOfResponse(id: string): string | undefined {
  return /^u~([A-Z0-9]+)~/.exec(id)?.[1];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const s = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");

interface ConsoleMessage {
  readonly kind: "message" | "ephemeral";
  readonly channel: string;
  readonly ts: string;
  readonly threadTs?: string;
  readonly text: string;
  readonly blocks: unknown;
  readonly updates: number;
  /** When it arrived (epoch ms), to order the channel. */
  readonly at: number;
  /** For ephemerals: the only user who sees it (undefined: unknown, shown to all marked as such). */
  readonly visibleTo?: string;
  readonly problems: readonly LintProblem[];
  /** Files the message shares (`files.uploadV2`): each downloadable at `GET /api/file/<id>`. */
  readonly files?: readonly { readonly id: string; readonly name: string; readonly size: number }[];
}

interface ConsoleView {
  readonly viewId: string;
  readonly openedBy?: string;
  readonly view: unknown;
  readonly problems: readonly LintProblem[];
}

const STATIC_FILES: Record<string, string> = {
  "/": "index.html",
  "/index.html": "index.html",
  "/console.js": "console.js",
  "/console.css": "console.css",
};
/** The header the page sends its token in, and the `<meta>` it reads it from. */
export const CONSOLE_TOKEN_HEADER = "x-console-token";
export const CONSOLE_TOKEN_META = "console-token";
/** The placeholder in index.html that each served page gets its own token in. */
const TOKEN_PLACEHOLDER = `<meta name="${CONSOLE_TOKEN_META}" content="" />`;
/** Names the console answers under; a DNS name pointed at 127.0.0.1 by someone else is not one. */
const LOOPBACK_NAMES: readonly string[] = ["127.0.0.1", "localhost", "[::1]"];
/** Posts that change nothing: no token needed (they still must be same-origin JSON). */
const TOKENLESS_POSTS: ReadonlySet<string> = new Set(["/api/lint"]);

/**
 * Page tokens: a random nonce and its HMAC under a key that lives only in this process, so each
 * served page gets its own token and checking one needs no list of the tokens handed out.
 */
export function consoleTokens(key: Buffer = randomBytes(32)): {
  mint(): string;
  valid(presented: string | undefined): boolean;
} {
  const mac = (nonce: string): Buffer =>
    Buffer.from(createHmac("sha256", key).update(nonce).digest("base64url"));
  return {
    mint() {
      const nonce = randomBytes(18).toString("base64url");
      return `${nonce}.${mac(nonce).toString()}`;
    },
    valid(presented) {
      if (presented === undefined) return false;
      const dot = presented.indexOf(".");
      if (dot <= 0) return false;
      const expected = mac(presented.slice(0, dot));
      const given = Buffer.from(presented.slice(dot + 1));
      // The length of a MAC is no secret; the comparison of its bytes takes the same time however many match.
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

/** A header's one value (Node joins repeated ones; an array only for `set-cookie`). */
function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(", ") : v;
}

/** `application/json; charset=utf-8` → `application/json`; the type and subtype only, lower case. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/**
 * Why a request is not the console's own page talking to it, or `undefined`. `Origin` must be this
 * console's origin when present; `Sec-Fetch-Site` must be `same-origin` (the page) or `none` (typed
 * in the address bar) when present. With neither header it is no browser's cross-site request.
 */
export function refuseCrossSite(req: IncomingMessage, port: number): string | undefined {
  const origin = header(req, "origin");
  if (origin !== undefined) {
    const host = header(req, "host") ?? "";
    const own = LOOPBACK_NAMES.map((name) => `http://${name}:${String(port)}`);
    if (origin !== `http://${host}` || !own.includes(origin)) {
      return `cross-origin request (Origin ${JSON.stringify(origin.slice(0, 100))})`;
    }
  }
  const site = header(req, "sec-fetch-site");
  if (site !== undefined && site !== "same-origin" && site !== "none") {
    return `cross-site request (Sec-Fetch-Site ${JSON.stringify(site.slice(0, 40))})`;
  }
  return undefined;
}

const CONTENT_TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
};

/**
 * The page's files sit beside this module's source. Bundled into dist/ (deploy/build.ts), this code
 * runs from `dist/chunks/` or `dist/test/sim/`, and the files stay in the checkout's test/.
 */
function staticDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const dist = /^(.*)[/\\]dist(?:[/\\]|$)/.exec(here);
  const candidates = [
    here,
    ...(dist?.[1] !== undefined ? [join(dist[1], "test", "sim", "slack", "console")] : []),
  ];
  return candidates.find((d) => existsSync(join(d, "index.html"))) ?? here;
}

export async function startConsole(options: ConsoleOptions): Promise<SlackConsole> {
  const { fake, eventsUrl, signingSecret, channel } = options;
  const command = options.command ?? "/unstuck";
  const teamId = options.teamId ?? fake.teamId;
  const dir = staticDir();
  const knownUsers = new Set(options.users.map((u) => u.id));
  /** trigger id → the user whose click opened a modal. */
  const triggers = new Map<string, string>();
  const closed = new Set<string>();
  /** Bumped on changes the fake does not see (a modal closed). */
  let localVersion = 0;
  let counter = 0;
  const worldActions = options.worldActions ?? [];
  const worldEvents: WorldEvent[] = [];
  const tokens = consoleTokens();
  /** Set once listening: what `Origin` must name. */
  let port = 0;

  const messages = (): ConsoleMessage[] => {
    const out: ConsoleMessage[] = [];
    for (const call of fake.calls()) {
      const res = call.response;
      if (!res || res["ok"] !== true) continue;
      if (call.method === "chat.postMessage") {
        const ch = s(res["channel"]) || s(call.body["channel"]);
        const ts = s(res["ts"]);
        const now = fake.message(ch, ts);
        if (!now) continue;
        const blocks = now.blocks;
        const text = now.text ?? "";
        out.push({
          kind: "message",
          channel: ch,
          ts,
          ...(now.threadTs && now.threadTs !== ts ? { threadTs: now.threadTs } : {}),
          text,
          blocks,
          updates: now.updates,
          at: call.at,
          problems: lintMessage({ text, ...(blocks !== undefined ? { blocks } : {}) }),
        });
      } else if (call.method === "files.completeUploadExternal") {
        // A file shared in the channel or a thread: a message of its own, as Slack shows it.
        const shared = Array.isArray(res["files"]) ? (res["files"] as unknown[]) : [];
        const ids = new Set(shared.filter(isObj).map((f) => s(f["id"])));
        const made = fake.files().filter((f) => ids.has(f.id) && f.messageTs !== undefined);
        const first = made[0];
        if (first?.channel === undefined || first.messageTs === undefined) continue;
        out.push({
          kind: "message",
          channel: first.channel,
          ts: first.messageTs,
          ...(first.threadTs !== undefined ? { threadTs: first.threadTs } : {}),
          text: first.initialComment ?? "",
          blocks: undefined,
          updates: 0,
          at: call.at,
          problems: [],
          files: made.map((f) => ({ id: f.id, name: f.filename, size: f.content?.length ?? f.length })),
        });
      } else if (call.method === "chat.postEphemeral") {
        const b = call.body;
        out.push({
          kind: "ephemeral",
          channel: s(b["channel"]),
          ts: s(res["message_ts"]),
          ...(s(b["thread_ts"]) ? { threadTs: s(b["thread_ts"]) } : {}),
          text: s(b["text"]),
          blocks: b["blocks"],
          updates: 0,
          at: call.at,
          visibleTo: s(b["user"]),
          problems: lintMessage({
            text: b["text"],
            ...(b["blocks"] !== undefined ? { blocks: b["blocks"] } : {}),
          }),
        });
      }
    }
    fake.responses().forEach((r, i) => {
      const b = r.body;
      if (b["delete_original"] === true || b["delete_original"] === "true") return;
      const user = userOfResponse(r.id);
      const inChannel = b["response_type"] === "in_channel";
      out.push({
        kind: inChannel ? "message" : "ephemeral",
        channel: channel.id,
        ts: `response-${String(i)}`,
        text: s(b["text"]),
        blocks: b["blocks"],
        updates: 0,
        at: responseSeen(i),
        ...(!inChannel && user !== undefined ? { visibleTo: user } : {}),
        problems: lintMessage({
          text: b["text"],
          ...(b["blocks"] !== undefined ? { blocks: b["blocks"] } : {}),
        }),
      });
    });
    return out.sort((a, b) => a.at - b.at);
  };
  /** The fake does not time `response_url` posts: the first time this console saw each one. */
  const responseTimes: number[] = [];
  const responseSeen = (i: number): number => {
    while (responseTimes.length <= i) responseTimes.push(Date.now());
    return responseTimes[i] ?? Date.now();
  };

  // Each modal as it reads now: a `views.update` (a form that first said "Tracing…") replaces it.
  const views = (): ConsoleView[] =>
    fake.views().map((v) => {
      const by = triggers.get(v.triggerId);
      return {
        viewId: v.id,
        ...(by !== undefined ? { openedBy: by } : {}),
        view: v.view,
        problems: lintView(v.view),
      };
    });

  const state = (): Obj => ({
    channel,
    command,
    users: options.users,
    version: version(),
    messages: messages(),
    views: views().filter((v) => !closed.has(v.viewId)),
    world: {
      actions: worldActions.map((a) => ({ id: a.id, label: a.label })),
      events: worldEvents,
    },
  });

  const lint = (): LintReport => {
    const problems: LintedProblem[] = [];
    let checked = 0;
    for (const m of messages()) {
      checked += 1;
      for (const p of m.problems) problems.push({ ...p, where: `${m.kind} ${m.ts}` });
    }
    for (const v of views()) {
      checked += 1;
      for (const p of v.problems) problems.push({ ...p, where: `modal ${v.viewId}` });
    }
    const errors = problems.filter((p) => p.severity === "error").length;
    return { ok: errors === 0, checked, errors, warnings: problems.length - errors, problems };
  };

  const version = (): string => `${fake.calls().length}.${fake.responses().length}.${localVersion}`;

  const userOf = (body: Obj): string => {
    const user = s(body["user"]);
    if (!knownUsers.has(user)) throw new HttpError(400, `unknown user ${JSON.stringify(user)}`);
    return user;
  };

  const post = async (body: string): Promise<{ status: number; text: string }> => {
    const res = await postSigned(eventsUrl, signingSecret, body);
    return { status: res.status, text: res.text };
  };

  const api: Record<string, (body: Obj) => Promise<Obj>> = {
    "/api/command": async (body) => {
      const user = userOf(body);
      const text = s(body["text"]).trim();
      const name = command.replace(/^\//, "");
      const args = text.replace(new RegExp(`^/${name}\\b\\s*`), "");
      counter += 1;
      const res = await post(
        slashCommandBody({
          text: args,
          command,
          userId: user,
          userName: user.toLowerCase(),
          teamId,
          channelId: channel.id,
          channelName: channel.name,
          responseUrl: fake.responseUrl(userResponseId(user, `cmd${String(counter)}`)),
          triggerId: trigger(user),
        }),
      );
      return { status: res.status };
    },
    "/api/action": async (body) => {
      const user = userOf(body);
      const ts = s(body["ts"]);
      const actionId = s(body["actionId"]);
      if (!actionId) throw new HttpError(400, "actionId is required");
      const msg = messages().find((m) => m.ts === ts);
      counter += 1;
      const triggerId = trigger(user);
      const res = await post(
        blockActionsBody({
          actionId,
          value: s(body["value"]),
          blockId: s(body["blockId"]) || "actions",
          userId: user,
          userName: user.toLowerCase(),
          teamId,
          channelId: msg?.channel || channel.id,
          messageTs: ts,
          blocks: Array.isArray(msg?.blocks) ? msg.blocks : [],
          responseUrl: fake.responseUrl(userResponseId(user, `act${String(counter)}`)),
          triggerId,
        }),
      );
      return { status: res.status, triggerId };
    },
    "/api/submit": async (body) => {
      const user = userOf(body);
      const viewId = s(body["viewId"]);
      const found = views().find((v) => v.viewId === viewId);
      if (!found || !isObj(found.view)) throw new HttpError(404, `no open modal ${viewId}`);
      const values = isObj(body["values"]) ? body["values"] : {};
      counter += 1;
      const res = await post(viewSubmissionPayload(found.view, viewId, values, user, teamId, trigger(user)));
      let answer: Obj = {};
      try {
        const parsed: unknown = res.text ? JSON.parse(res.text) : {};
        if (isObj(parsed)) answer = parsed;
      } catch {
        // Bolt acks with an empty body: the modal closes.
      }
      const errors =
        answer["response_action"] === "errors" && isObj(answer["errors"]) ? answer["errors"] : undefined;
      if (res.status === 200 && errors === undefined) {
        closed.add(viewId);
        localVersion += 1;
      }
      return { status: res.status, ...(errors !== undefined ? { errors } : {}) };
    },
    "/api/close": (body) => {
      userOf(body);
      closed.add(s(body["viewId"]));
      localVersion += 1;
      return Promise.resolve({ status: 200 });
    },
    "/api/world": async (body) => {
      const user = userOf(body);
      const action = worldActions.find((a) => a.id === s(body["id"]));
      if (action === undefined) throw new HttpError(404, `no world action ${JSON.stringify(s(body["id"]))}`);
      const event: WorldEvent = {
        seq: worldEvents.length + 1,
        id: action.id,
        label: action.label,
        user,
        at: Date.now(),
        status: "running",
        lines: [],
      };
      worldEvents.push(event);
      localVersion += 1;
      try {
        const result = await action.run();
        event.status = result.ok ? "done" : "refused";
        event.lines = result.lines;
      } catch (err) {
        event.status = "failed";
        event.lines = [err instanceof Error ? err.message : String(err)];
      }
      localVersion += 1;
      return { status: 200, event: event.status, lines: event.lines };
    },
    "/api/lint": (body) => {
      if (body["view"] !== undefined) return Promise.resolve({ problems: lintView(body["view"]) });
      if (body["text"] !== undefined) {
        return Promise.resolve({ problems: lintMessage({ text: body["text"], blocks: body["blocks"] }) });
      }
      return Promise.resolve({ problems: lintBlockList(body["blocks"]) });
    },
  };

  const trigger = (user: string): string => {
    counter += 1;
    const id = `${String(Date.now())}.${String(counter)}.console`;
    triggers.set(id, user);
    return id;
  };

  const streams = new Set<ServerResponse>();
  let lastVersion = version();
  const ticker = setInterval(() => {
    const v = version();
    if (v === lastVersion) return;
    responseSeen(fake.responses().length - 1);
    lastVersion = v;
    for (const res of streams) res.write(`event: change\ndata: ${v}\n\n`);
  }, 100);
  const keepalive = setInterval(() => {
    for (const res of streams) res.write(": keepalive\n\n");
  }, 15_000);

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      sendJson(res, status, { error: err instanceof Error ? err.message : String(err) });
    });
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // Loopback only, and only under a loopback name: no DNS-rebound page can drive the bot.
    const host = (req.headers.host ?? "").replace(/:\d+$/, "");
    if (!LOOPBACK_NAMES.includes(host)) {
      sendJson(res, 403, { error: "the console answers on 127.0.0.1 only" });
      return;
    }
    const path = new URL(req.url ?? "/", "http://console").pathname;
    if (req.method === "GET") {
      const file = STATIC_FILES[path];
      if (file !== undefined) {
        let body: Buffer | string = await readFile(join(dir, file));
        if (file === "index.html") {
          // Each page its own token: only a page read from this server can act through it.
          const html = body.toString("utf8");
          if (!html.includes(TOKEN_PLACEHOLDER))
            throw new HttpError(500, "index.html has no token placeholder");
          body = html.replace(
            TOKEN_PLACEHOLDER,
            `<meta name="${CONSOLE_TOKEN_META}" content="${tokens.mint()}" />`,
          );
        }
        res
          .writeHead(200, {
            "content-type": CONTENT_TYPES[file.split(".").pop() ?? ""] ?? "application/octet-stream",
            "cache-control": "no-store",
            // Nothing the bot posts can run as script: only this page's own files load.
            "content-security-policy":
              "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            "x-content-type-options": "nosniff",
            "cross-origin-resource-policy": "same-origin",
            "cross-origin-opener-policy": "same-origin",
          })
          .end(body);
        return;
      }
      if (path.startsWith("/api/")) {
        // What the bot posted is the sandbox's: another site may not read it, not even by embedding it.
        const refused = refuseCrossSite(req, port);
        if (refused !== undefined) {
          sendJson(res, 403, { error: `refused: ${refused}` });
          return;
        }
      }
      if (path === "/api/state") return sendJson(res, 200, state());
      const fileId = /^\/api\/file\/([A-Za-z0-9]+)$/.exec(path)?.[1];
      if (fileId !== undefined) {
        // An uploaded file (the post-mortem draft), as Slack's download would give it.
        const file = fake.files().find((f) => f.id === fileId && f.completed);
        if (file?.content === undefined) return sendJson(res, 404, { error: "no such file" });
        res
          .writeHead(200, {
            "content-type": "text/plain; charset=utf-8",
            "content-disposition": `attachment; filename="${file.filename.replace(/[^A-Za-z0-9._-]/g, "_")}"`,
            "cache-control": "no-store",
            "x-content-type-options": "nosniff",
            "cross-origin-resource-policy": "same-origin",
          })
          .end(file.content);
        return;
      }
      if (path === "/api/lint") return sendJson(res, 200, lint());
      if (path === "/api/stream") {
        res.writeHead(200, {
          "content-type": "text/event-stream",
          "cache-control": "no-store",
          "x-content-type-options": "nosniff",
          "cross-origin-resource-policy": "same-origin",
          connection: "keep-alive",
        });
        res.write(`event: change\ndata: ${version()}\n\n`);
        streams.add(res);
        req.on("close", () => streams.delete(res));
        return;
      }
      sendJson(res, 404, { error: "not found" });
      return;
    }
    const handler = api[path];
    if (req.method !== "POST" || handler === undefined) {
      sendJson(res, 404, { error: "not found" });
      return;
    }
    // Only the console's own page acts, and only with the token it was served: checked before the
    // body is read, so a refused request runs nothing.
    const refused = refuseCrossSite(req, port);
    if (refused !== undefined) {
      sendJson(res, 403, { error: `refused: ${refused}` });
      return;
    }
    if (!TOKENLESS_POSTS.has(path) && !tokens.valid(header(req, CONSOLE_TOKEN_HEADER))) {
      sendJson(res, 403, {
        error: `refused: no valid ${CONSOLE_TOKEN_HEADER}; send the token of the page (its <meta name="${CONSOLE_TOKEN_META}">)`,
      });
      return;
    }
    // Exactly a JSON body: `text/plain;charset=application/json` is text/plain, which any site may send.
    if (mediaType(header(req, "content-type")) !== "application/json") {
      sendJson(res, 415, { error: "send application/json" });
      return;
    }
    const raw = await readBody(req);
    let body: unknown;
    try {
      body = JSON.parse(raw || "{}");
    } catch {
      throw new HttpError(400, "the body is not JSON");
    }
    if (!isObj(body)) throw new HttpError(400, "the body must be a JSON object");
    sendJson(res, 200, await handler(body));
  };

  server.listen(options.port ?? 0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${String(port)}/`,
    lint,
    stop: async () => {
      clearInterval(ticker);
      clearInterval(keepalive);
      for (const res of streams) res.end();
      streams.clear();
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

class HttpError extends Error {
  public constructor(
    public readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * What Slack sends when a modal is submitted: the view as it was opened, with `state.values` typed by
 * each input's element (text, checkboxes, select, radio buttons), signed like everything else.
 */
export function viewSubmissionPayload(
  view: Obj,
  viewId: string,
  entered: Obj,
  user: string,
  teamId: string,
  triggerId: string,
): string {
  const values: Record<string, Record<string, Obj>> = {};
  for (const block of Array.isArray(view["blocks"]) ? view["blocks"] : []) {
    if (!isObj(block) || block["type"] !== "input" || !isObj(block["element"])) continue;
    const blockId = s(block["block_id"]);
    const element = block["element"];
    const actionId = s(element["action_id"]);
    const type = s(element["type"]);
    const given = isObj(entered[blockId]) ? entered[blockId][actionId] : undefined;
    const options = Array.isArray(element["options"]) ? element["options"].filter(isObj) : [];
    const pick = (value: unknown): Obj | undefined => options.find((o) => o["value"] === value);
    let entry: Obj;
    switch (type) {
      case "checkboxes": {
        const chosen = Array.isArray(given) ? given : [];
        entry = { type, selected_options: options.filter((o) => chosen.includes(o["value"])) };
        break;
      }
      case "static_select":
      case "radio_buttons":
        entry = { type, selected_option: pick(given) ?? null };
        break;
      default: {
        // Slack sends null for an input left empty.
        const text = typeof given === "string" && given.length > 0 ? given : null;
        entry = { type, value: text };
      }
    }
    values[blockId] = { [actionId]: entry };
  }
  const payload = {
    type: "view_submission",
    team: { id: teamId, domain: "unstuck-sandbox" },
    user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: teamId },
    api_app_id: "A0UNSTUCK",
    token: "legacy-verification-token",
    trigger_id: triggerId,
    view: {
      ...view,
      id: viewId,
      team_id: teamId,
      state: { values },
      hash: `${String(Math.floor(Date.now() / 1000))}.console`,
      app_id: "A0UNSTUCK",
      bot_id: "BBOT00001",
    },
    response_urls: [],
    is_enterprise_install: false,
    enterprise: null,
  };
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "cross-origin-resource-policy": "same-origin",
  });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
