import { describe, expect, it } from "vitest";
import type { AuditActor } from "../../../src/audit/entry.js";
import { buildTimeline } from "../../../src/render/timeline-markdown.js";
import { namespaceOf, selectEntries, span, type TimelineEntry } from "../../../src/timeline/build.js";
import { parseSince, resolveSince } from "../../../src/timeline/since.js";
import { renderTimelineBlocks } from "../../../src/slack/blocks/timeline.js";
import { timelineCommand } from "../../../commands/timeline.js";
import { defaultRegistry } from "../../../commands/index.js";

const alice: AuditActor = { kind: "user", userId: "UALICE", teamId: "T1" };
const bob: AuditActor = { kind: "user", userId: "UBOB", teamId: "T1" };
const workflow: AuditActor = { kind: "system", component: "workflow" };
const executor: AuditActor = { kind: "system", component: "executor" };

const REQ = "abcdefghijklmnopqrstuvwxyz";
const OTHER = "aaaaaaaaaaaaaaaaaaaaaaaaaa";
const TARGET = "Ingress myapp/myapp-worker-ingress";

function entry(
  at: string,
  actor: AuditActor,
  event: string,
  extra: Partial<TimelineEntry> = {},
): TimelineEntry {
  return {
    at: `2026-02-12T${at}Z`,
    actor,
    event,
    requestId: REQ,
    action: "remove-finalizer",
    target: TARGET,
    ...extra,
  };
}

/** The seed incident's forced removal, as the bot's audit log records it. */
const lifecycle: TimelineEntry[] = [
  entry("08:50:10", alice, "request.created", {
    after: "PENDING",
    result: "SG deletion blocked by DependencyViolation; recovery first",
  }),
  entry("08:51:02", bob, "vote.approve", { before: "PENDING", after: "APPROVED" }),
  entry("08:51:02", workflow, "execution.enqueued", { before: "APPROVED", after: "APPROVED" }),
  entry("08:51:03", executor, "execution.claimed", {
    before: "APPROVED",
    after: "EXECUTING",
    result: "attempt 1",
  }),
  entry("08:51:04", executor, "execution.done", {
    before: "EXECUTING",
    after: "DONE",
    result: "removed ingress.k8s.aws/resources; the object is gone",
  }),
];

function timelineLines(markdown: string): string[] {
  const section = markdown.split("## Timeline (UTC)")[1]?.split("\n## ")[0] ?? "";
  return section.split("\n").filter((l) => l.startsWith("- "));
}

describe("buildTimeline", () => {
  it("turns a request's full lifecycle into one line per event and a paragraph", () => {
    const { markdown, entries } = buildTimeline(lifecycle, { generatedAt: "2026-02-12T09:00:00Z" });
    expect(entries).toBe(5);
    expect(markdown.split("\n")[0]).toBe("# Incident: namespace myapp — 2026-02-12");
    const lines = timelineLines(markdown);
    expect(lines).toEqual([
      `- 08:50:10 <@UALICE> — requested the finalizer removal on \`${TARGET}\` (request \`${REQ}\`); reason \`SG deletion blocked by DependencyViolation; recovery first\``,
      `- 08:51:02 <@UBOB> — approved request \`${REQ}\` — approvals complete`,
      `- 08:51:02 unstuck (workflow) — queued the execution of request \`${REQ}\``,
      `- 08:51:03 unstuck (executor) — started executing request \`${REQ}\` on \`${TARGET}\`: \`attempt 1\``,
      `- 08:51:04 unstuck (executor) — execution of request \`${REQ}\` **done**: \`removed ingress.k8s.aws/resources; the object is gone\``,
    ]);
    const what = markdown.split("## What happened")[1]?.split("## Timeline")[0] ?? "";
    expect(what).toContain(
      "<@UALICE> requested the finalizer removal on `Ingress myapp/myapp-worker-ingress`",
    );
    expect(what).toContain("<@UBOB> approved it.");
    expect(what).toContain("The bot executed it; at 08:51:04 UTC the outcome was **done**");
    expect(markdown).toContain("## Recovery");
    expect(markdown).toMatch(/## Cause\n\n_to be written: [^\n]+_/);
    expect(markdown).toMatch(/## Lessons\n\n_to be written: [^\n]+_/);
  });

  it("names every kind of request by what it does, the deletion guard too", () => {
    const guard = "deletion guard of namespace myapp";
    const { markdown } = buildTimeline([
      entry("08:50:10", alice, "request.created", {
        action: "open-deletion-guard",
        target: guard,
        after: "PENDING",
        result: "decommissioning myapp after the incident",
      }),
    ]);
    expect(timelineLines(markdown)[0]).toContain(`requested the opening of the \`${guard}\``);
  });

  it("orders by time, then by stream id for the same millisecond", () => {
    const shuffled: TimelineEntry[] = [
      { ...lifecycle[4]!, streamId: "1770886264000-0" },
      { ...lifecycle[2]!, streamId: "1770886262000-1" },
      { ...lifecycle[0]!, streamId: "1770886210000-0" },
      { ...lifecycle[1]!, streamId: "1770886262000-0" },
      { ...lifecycle[3]!, streamId: "1770886263000-0" },
    ];
    const lines = timelineLines(buildTimeline(shuffled).markdown);
    expect(lines.map((l) => l.slice(2, 10))).toEqual([
      "08:50:10",
      "08:51:02",
      "08:51:02",
      "08:51:03",
      "08:51:04",
    ]);
    expect(lines[1]).toContain("<@UBOB> — approved");
    expect(lines[2]).toContain("unstuck (workflow) — queued");
  });

  it("an empty window still gives the draft's shape, saying nothing happened", () => {
    const { markdown, entries } = buildTimeline(lifecycle, { since: "2026-02-12T10:00:00Z" });
    expect(entries).toBe(0);
    expect(markdown).toContain("# Incident: unstuck actions — 2026-02-12");
    expect(markdown).toContain("_No audit entries in this window");
    expect(markdown).toContain("_No events._");
    for (const heading of ["## What happened", "## Timeline (UTC)", "## Cause", "## Lessons"]) {
      expect(markdown).toContain(heading);
    }
    expect(buildTimeline([]).entries).toBe(0);
  });

  it("renders markup in a reason as plain text", () => {
    const hostile = "<!channel> see <https://evil.example|docs> `x`\n# Heading\n- item <@UEVIL> *bold*";
    const { markdown } = buildTimeline([entry("08:50:10", alice, "request.created", { result: hostile })]);
    expect(markdown).not.toMatch(/<!channel>|<https|<@UEVIL>/);
    expect(markdown).not.toMatch(/^# Heading/m);
    expect(markdown).not.toMatch(/^- item/m);
    // The reason is one code span: no backtick inside it can close it early.
    expect(markdown).toContain(
      "`‹!channel› see ‹https://evil.example|docs› ˋxˋ # Heading - item ‹@UEVIL› *bold*`",
    );
    // The bot's own mention of the requester stays.
    expect(markdown).toContain("<@UALICE>");
  });

  it("does not turn a user id that is not Slack's into a mention", () => {
    const odd: AuditActor = { kind: "user", userId: "cli:<!here>", teamId: "local" };
    const { markdown } = buildTimeline([entry("08:50:10", odd, "vote.approve")]);
    expect(markdown).toContain("`cli:‹!here›`");
    expect(markdown).not.toContain("<!here>");
  });

  it("--request takes that request and the requests about the same object or namespace around it", () => {
    const orphans = "2 AWS orphans of namespace myapp";
    const related: TimelineEntry[] = [
      ...lifecycle,
      entry("09:30:00", alice, "request.created", {
        requestId: OTHER,
        action: "delete-orphans",
        target: orphans,
      }),
      entry("09:31:00", bob, "vote.deny", { requestId: OTHER, action: "delete-orphans", target: orphans }),
      entry("08:55:00", bob, "request.created", {
        requestId: "bbbbbbbbbbbbbbbbbbbbbbbbbb",
        target: "Ingress other/api",
      }),
      // A month later: not part of this incident.
      {
        ...entry("09:00:00", alice, "request.created", { requestId: "cccccccccccccccccccccccccc" }),
        at: "2026-03-12T09:00:00Z",
      },
    ];
    const picked = selectEntries(related, { requestId: REQ });
    expect(new Set(picked.map((e) => e.requestId))).toEqual(new Set([REQ, OTHER]));
    const { markdown } = buildTimeline(related, { requestId: REQ });
    expect(markdown).toContain("deletion of `2 AWS orphans of namespace myapp`");
    expect(markdown).toContain("<@UBOB> denied it.");
    expect(buildTimeline(related, { requestId: "dddddddddddddddddddddddddd" }).entries).toBe(0);
  });

  it("dates every line when the window spans more than one UTC day", () => {
    const late = { ...lifecycle[0]!, at: "2026-02-11T23:59:30Z" };
    const lines = timelineLines(buildTimeline([late, lifecycle[1]!]).markdown);
    expect(lines[0]).toMatch(/^- 2026-02-11 23:59:30 /);
    expect(lines[1]).toMatch(/^- 2026-02-12 08:51:02 /);
  });

  it("says when the stream was read only partly", () => {
    const { markdown } = buildTimeline(lifecycle, { readBackTo: "2026-02-12T08:51:00Z" });
    expect(markdown).toContain(
      "Only the newest part of the audit stream was read (back to 2026-02-12 08:51:00 UTC)",
    );
  });
});

describe("the questions a timeline raises", () => {
  const observation = (at: string, kind: string): TimelineEntry =>
    entry(at, { kind: "system", component: "waits" }, `observed.${kind}`, {
      requestId: "",
      action: "observe",
      target: "namespace myapp",
    });
  const prompts = (entries: TimelineEntry[]): string[] =>
    buildTimeline(entries)
      .markdown.split("\n")
      .filter((l) => l.startsWith("- _Prompt:"));

  it("asks each filed kind's own questions, and about orphans only when none were checked", () => {
    const unchecked = prompts(lifecycle);
    expect(unchecked.some((p) => p.includes("when the finalizer was removed"))).toBe(true);
    expect(unchecked.some((p) => p.includes("no orphan check is recorded"))).toBe(true);
    expect(unchecked.some((p) => p.includes("whole path Route 53"))).toBe(false);
    const checked = prompts([...lifecycle, observation("08:55:00", "orphan-check")]);
    expect(checked.some((p) => p.includes("no orphan check is recorded"))).toBe(false);
    expect(checked.some((p) => p.includes("when the finalizer was removed"))).toBe(true);
  });

  it("asks about the whole path once, after a repoint and a path re-check alike", () => {
    const repoint = entry("09:10:00", alice, "request.created", {
      requestId: OTHER,
      action: "repoint-path",
      target: "traffic path of test.example.com",
    });
    const both = prompts([...lifecycle, repoint, observation("09:20:00", "path-recheck")]);
    expect(both.filter((p) => p.includes("whole path Route 53"))).toHaveLength(1);
    const recheckOnly = prompts([...lifecycle, observation("09:20:00", "path-recheck")]);
    expect(recheckOnly.filter((p) => p.includes("whole path Route 53"))).toHaveLength(1);
    // The forced removal's questions come first, as the kind table orders them.
    expect(both.findIndex((p) => p.includes("finalizer was removed"))).toBeLessThan(
      both.findIndex((p) => p.includes("whole path Route 53")),
    );
  });
});

describe("helpers", () => {
  it("span neutralises and bounds", () => {
    expect(span("a`b<c>d\r\ne", 100)).toBe("`aˋb‹c›d e`");
    expect(span("x".repeat(500), 10)).toBe(`\`${"x".repeat(9)}…\``);
    expect(span("")).toBe("`—`");
  });

  it("namespaceOf reads the targets the bot writes", () => {
    expect(namespaceOf(TARGET)).toBe("myapp");
    expect(namespaceOf("3 AWS orphans of namespace myapp")).toBe("myapp");
    expect(namespaceOf("traffic path of test.example.com")).toBeUndefined();
    expect(namespaceOf("Ingress <!here>/x")).toBeUndefined();
  });

  it("--since takes an ISO time or a duration", () => {
    const now = new Date("2026-02-12T10:00:00Z");
    expect(resolveSince(parseSince("2h"), now)).toBe("2026-02-12T08:00:00.000Z");
    expect(resolveSince(parseSince("30m"), now)).toBe("2026-02-12T09:30:00.000Z");
    expect(resolveSince(parseSince("2026-02-12T08:30:00Z"), now)).toBe("2026-02-12T08:30:00.000Z");
    // No zone: UTC, not the terminal's local time.
    expect(resolveSince(parseSince("2026-02-12T08:30"), now)).toBe("2026-02-12T08:30:00.000Z");
    for (const bad of ["yesterday", "0h", "2w", "999d", "2026-13-45"])
      expect(() => parseSince(bad)).toThrow(/--since/);
  });
});

describe("the timeline command", () => {
  it("parses its flags and validates the request id", () => {
    const registry = defaultRegistry();
    expect(registry.parse("timeline --since 2h").input).toEqual({ since: { kind: "ago", ms: 7_200_000 } });
    expect(registry.parse(`timeline --request ${REQ}`).input).toEqual({ request: REQ });
    expect(() => registry.parse("timeline --request <!channel>")).toThrow(/--request/);
    expect(registry.parse("timeline").command).toBe(timelineCommand);
  });
});

describe("renderTimelineBlocks", () => {
  it("posts counts and the draft in a code block, escaped and within Block Kit limits", () => {
    const many = Array.from({ length: 200 }, (_, i) =>
      entry(
        `08:${String(10 + Math.floor(i / 60)).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}`,
        alice,
        "request.created",
        {
          result: "<!channel> ```break out``` <@UEVIL>",
        },
      ),
    );
    const { markdown, entries } = buildTimeline(many);
    const message = renderTimelineBlocks(markdown, entries);
    expect(message.text).toBe("Post-mortem draft: 200 audit entries");
    const json = JSON.stringify(message.blocks);
    expect(json).not.toMatch(/<!channel>|<@U/);
    const section = message.blocks[1];
    expect(section?.type).toBe("section");
    const text = section?.type === "section" ? (section.text?.text ?? "") : "";
    expect(text.length).toBeLessThanOrEqual(3000);
    expect(text.startsWith("```\n# Incident")).toBe(true);
    expect(text.endsWith("\n```")).toBe(true);
    expect((text.match(/```/g) ?? []).length).toBe(2);
    expect(json).toContain("longer than one Slack message");
  });
});
