import { isRequestId } from "../src/requests/model.js";
import { ErrorCode, UnstuckError } from "../src/errors.js";
import { parseSince, resolveSince, type SinceSpec } from "../src/timeline/since.js";
import type { CommandSyntax } from "./grammar.js";
import { requireApprovals } from "./finalize.js";
import type { CommandModule } from "./types.js";

export const timelineSyntax: CommandSyntax = {
  path: ["timeline"],
  summary:
    "A post-mortem draft (Markdown) from the audit log: what happened, the timeline in UTC, recovery; cause and lessons left for you.",
  positionals: [],
  flags: [
    {
      name: "since",
      kind: "string",
      valueName: "ISO time | 2h",
      description: "Start of the window: an ISO-8601 time or a duration back from now (default 24h)",
    },
    {
      name: "thread",
      kind: "string",
      valueName: "channel:ts | link",
      description:
        "Only one Slack thread's events: channel id and the parent message's ts, or a link to a message of it (in a thread, `@unstuck timeline` does this by itself)",
    },
    {
      name: "request",
      kind: "string",
      valueName: "id",
      description: "One request, with the requests about the same object or namespace around it",
    },
  ],
  examples: [
    "timeline",
    "timeline --since 2h",
    "timeline --request q7ug2zqjz3k6nz4xkz6q2m5b3y",
    "timeline --thread C0INCIDENT:1770885540.000100",
  ],
};

export interface TimelineInput {
  readonly since?: SinceSpec;
  readonly request?: string;
  readonly thread?: ThreadRef;
}

export interface ThreadRef {
  readonly channel: string;
  readonly ts: string;
}

const CHANNEL_ID = /^[CGD][A-Z0-9]{2,20}$/;
const MESSAGE_TS = /^\d{9,12}\.\d{6}$/;

/**
 * `C0INCIDENT:1770885540.000100`, or a Slack message link (`https://x.slack.com/archives/C0INCIDENT/p1770885540000100`,
 * with `?thread_ts=…` when the message is a reply: then that is the thread).
 */
export function parseThreadRef(raw: string): ThreadRef {
  const text = raw.trim();
  const plain = /^([A-Z0-9]+):(\d+\.\d+)$/.exec(text);
  let ref: ThreadRef | undefined;
  if (plain?.[1] !== undefined && plain[2] !== undefined) ref = { channel: plain[1], ts: plain[2] };
  const link = /^https:\/\/[a-z0-9.-]+\.slack\.com\/archives\/([A-Z0-9]+)\/p(\d{10,16})(?:\?(.*))?$/.exec(
    text,
  );
  if (link?.[1] !== undefined && link[2] !== undefined) {
    const digits = link[2];
    const threadTs = new URLSearchParams(link[3] ?? "").get("thread_ts");
    ref = { channel: link[1], ts: threadTs ?? `${digits.slice(0, -6)}.${digits.slice(-6)}` };
  }
  if (ref === undefined || !CHANNEL_ID.test(ref.channel) || !MESSAGE_TS.test(ref.ts)) {
    throw new UnstuckError(
      ErrorCode.BadInput,
      `--thread takes <channel id>:<message ts> (C0INCIDENT:1770885540.000100) or a link to a Slack message; got "${raw.slice(0, 80)}".`,
    );
  }
  return ref;
}

/** Entries read from the stream, newest first; enough for days of a busy bot. */
export const TIMELINE_SCAN_LIMIT = 10_000;
/** The window when neither `--since` nor `--request` is given. */
const DEFAULT_WINDOW: SinceSpec = { kind: "ago", ms: 24 * 3_600_000 };

export const timelineCommand: CommandModule<TimelineInput> = {
  syntax: timelineSyntax,
  build(args) {
    const since = args.flags["since"];
    const request = args.flags["request"];
    const thread = args.flags["thread"];
    const input: { since?: SinceSpec; request?: string; thread?: ThreadRef } = {};
    if (typeof since === "string") input.since = parseSince(since);
    if (typeof thread === "string") input.thread = parseThreadRef(thread);
    if (typeof request === "string") {
      if (!isRequestId(request)) {
        throw new UnstuckError(
          ErrorCode.BadInput,
          `--request takes a request id as the bot prints it (26 characters a–z, 2–7); got "${request.slice(0, 40)}".`,
        );
      }
      input.request = request;
    }
    return input;
  },
  async run(input, ctx) {
    const { audit } = requireApprovals(ctx.services, "timeline");
    const now = ctx.services.now();
    // Typed in a thread (a mention there): that thread, unless --thread names another.
    const actor = ctx.actor;
    const thread =
      input.thread ??
      (actor.threadTs !== undefined && actor.channelId !== undefined
        ? { channel: actor.channelId, ts: actor.threadTs }
        : undefined);
    // A thread is its own window: all of it, unless --since cuts it.
    const spec =
      input.since ?? (input.request === undefined && thread === undefined ? DEFAULT_WINDOW : undefined);
    const since = spec ? resolveSince(spec, now) : undefined;
    const rows = await audit.latest(TIMELINE_SCAN_LIMIT);
    const oldest = rows[rows.length - 1];
    const truncated =
      rows.length >= TIMELINE_SCAN_LIMIT &&
      oldest !== undefined &&
      (since === undefined || Date.parse(oldest.at) > Date.parse(since));
    const { buildTimeline } = await import("../src/render/timeline-markdown.js");
    const timeline = buildTimeline(rows, {
      ...(since !== undefined ? { since } : {}),
      ...(input.request !== undefined ? { requestId: input.request } : {}),
      ...(thread !== undefined ? { thread } : {}),
      ...(truncated ? { readBackTo: oldest.at } : {}),
      generatedAt: now.toISOString(),
    });
    if (input.request !== undefined && timeline.entries === 0) {
      throw new UnstuckError(
        ErrorCode.NotFound,
        `The audit log has no entries for request ${input.request}${since !== undefined ? ` since ${since}` : ""}.`,
        { requestId: input.request },
      );
    }
    return {
      type: "timeline",
      markdown: timeline.markdown,
      entries: timeline.entries,
      date: timeline.date ?? now.toISOString().slice(0, 10),
      ...(thread !== undefined ? { thread } : {}),
    };
  },
};
