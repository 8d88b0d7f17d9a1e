import { describe, expect, it } from "vitest";
import { parseThreadRef } from "../../../commands/timeline.js";
import { defaultRegistry } from "../../../commands/index.js";
import type { TimelineEntry } from "../../../src/timeline/build.js";
import { buildTimeline } from "../../../src/render/timeline-markdown.js";
import { renderTimelineBlocks, timelineFilename } from "../../../src/slack/blocks/timeline.js";

const REQ_A = "aaaaaaaaaaaaaaaaaaaaaaaaaa";
const REQ_B = "bbbbbbbbbbbbbbbbbbbbbbbbbb";
const user = { kind: "user", userId: "UALICE", teamId: "T1" } as const;
const system = { kind: "system", component: "slack" } as const;

function e(at: string, extra: Partial<TimelineEntry> & Pick<TimelineEntry, "event">): TimelineEntry {
  return {
    at: `2026-02-12T${at}Z`,
    actor: user,
    requestId: REQ_A,
    action: "remove-finalizer",
    target: "Ingress myapp/x",
    ...extra,
  };
}

describe("timeline --thread", () => {
  it("takes channel:ts or a Slack message link (a reply's link names its thread)", () => {
    expect(parseThreadRef("C0INCIDENT:1770885540.000100")).toEqual({
      channel: "C0INCIDENT",
      ts: "1770885540.000100",
    });
    expect(parseThreadRef("https://acme.slack.com/archives/C0INCIDENT/p1770885540000100")).toEqual({
      channel: "C0INCIDENT",
      ts: "1770885540.000100",
    });
    expect(
      parseThreadRef(
        "https://acme.slack.com/archives/C0INCIDENT/p1770885600000200?thread_ts=1770885540.000100&cid=C0INCIDENT",
      ),
    ).toEqual({ channel: "C0INCIDENT", ts: "1770885540.000100" });
    for (const bad of [
      "C0INCIDENT",
      "c0incident:1.2",
      "C0INCIDENT:abc",
      "https://evil.example/archives/C1/p1770885540000100",
    ]) {
      expect(() => parseThreadRef(bad)).toThrow(/--thread takes/);
    }
    expect(defaultRegistry().parse("timeline --thread C0INCIDENT:1770885540.000100").input).toEqual({
      thread: { channel: "C0INCIDENT", ts: "1770885540.000100" },
    });
  });

  it("keeps a thread's requests (by where they were posted) and observations, and nothing of another thread", () => {
    const entries: TimelineEntry[] = [
      e("08:50:00", { event: "request.created", result: "A" }),
      {
        ...e("08:50:01", { event: "request.posted" }),
        actor: system,
        action: "",
        target: "",
        channel: "C1",
        threadTs: "1.000001",
      },
      e("08:51:00", { event: "vote.approve", actor: { kind: "user", userId: "UBOB", teamId: "T1" } }),
      e("08:52:00", { event: "request.created", requestId: REQ_B, target: "Ingress other/y", result: "B" }),
      {
        ...e("08:52:01", { event: "request.posted", requestId: REQ_B }),
        actor: system,
        action: "",
        target: "",
        channel: "C1",
        threadTs: "2.000002",
      },
      {
        ...e("08:53:00", {
          event: "observed.wait-finished",
          requestId: "",
          action: "observe",
          target: "namespace myapp",
        }),
        actor: { kind: "system", component: "waits" },
        result: "gone",
        channel: "C1",
        threadTs: "1.000001",
      },
      {
        ...e("08:54:00", {
          event: "observed.wait-finished",
          requestId: "",
          action: "observe",
          target: "namespace other",
        }),
        actor: { kind: "system", component: "waits" },
        result: "other gone",
        channel: "C1",
        threadTs: "2.000002",
      },
    ];
    const a = buildTimeline(entries, { thread: { channel: "C1", ts: "1.000001" } });
    expect(a.entries).toBe(3);
    expect(a.markdown).toContain("Ingress myapp/x");
    expect(a.markdown).toContain("finished waiting: `namespace myapp`: `gone`");
    expect(a.markdown).not.toContain("other");
    // request.posted is context, never a line of the draft.
    expect(a.markdown).not.toContain("request.posted");
    expect(a.date).toBe("2026-02-12");
    const all = buildTimeline(entries);
    expect(all.entries).toBe(5);
  });

  it("the card names the file, or says why the upload failed", () => {
    expect(timelineFilename("2026-02-12")).toBe("postmortem-2026-02-12.md");
    expect(timelineFilename("../../etc")).toBe("postmortem.md");
    const ok = JSON.stringify(
      renderTimelineBlocks("# x", 1, { filename: "postmortem-2026-02-12.md" }).blocks,
    );
    expect(ok).toContain("postmortem-2026-02-12.md");
    const failed = JSON.stringify(
      renderTimelineBlocks("# x", 1, { uploadFailure: "missing <files:write>" }).blocks,
    );
    expect(failed).toContain("could not attach the draft as a file (missing &lt;files:write&gt;)");
  });
});
