import { isRequestId } from "../src/approvals/types.js";
import { ErrorCode, UnstuckError } from "../src/errors.js";
import { buildTimeline } from "../src/timeline/build.js";
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
      name: "request",
      kind: "string",
      valueName: "id",
      description: "One request, with the requests about the same object or namespace around it",
    },
  ],
  examples: ["timeline", "timeline --since 2h", "timeline --request q7ug2zqjz3k6nz4xkz6q2m5b3y"],
};

export interface TimelineInput {
  readonly since?: SinceSpec;
  readonly request?: string;
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
    const input: { since?: SinceSpec; request?: string } = {};
    if (typeof since === "string") input.since = parseSince(since);
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
    const spec = input.since ?? (input.request === undefined ? DEFAULT_WINDOW : undefined);
    const since = spec ? resolveSince(spec, now) : undefined;
    const rows = await audit.latest(TIMELINE_SCAN_LIMIT);
    const oldest = rows[rows.length - 1];
    const truncated =
      rows.length >= TIMELINE_SCAN_LIMIT &&
      oldest !== undefined &&
      (since === undefined || Date.parse(oldest.at) > Date.parse(since));
    const timeline = buildTimeline(rows, {
      ...(since !== undefined ? { since } : {}),
      ...(input.request !== undefined ? { requestId: input.request } : {}),
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
    return { type: "timeline", markdown: timeline.markdown, entries: timeline.entries };
  },
};
