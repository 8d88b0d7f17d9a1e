/**
 * The post-mortem draft names the namespace that was diagnosed (a mistyped name that was not found
 * is no part of it) and keeps what a person typed as typed (`->` stays), while nothing in it can
 * still become Slack markup.
 */
import { describe, expect, it } from "vitest";
import type { AuditActor } from "../../../src/audit/entry.js";
import { buildTimeline } from "../../../src/render/timeline-markdown.js";
import { renderTimelineBlocks } from "../../../src/slack/blocks/timeline.js";
import type { TimelineEntry } from "../../../src/timeline/build.js";

const alice: AuditActor = { kind: "user", userId: "UALICE", teamId: "T1" };
const ns: AuditActor = { kind: "system", component: "ns" };
const REQ = "abcdefghijklmnopqrstuvwxyz";

const entries: TimelineEntry[] = [
  {
    at: "2026-02-12T08:40:00Z",
    actor: ns,
    event: "observed.diagnosis",
    requestId: "",
    action: "observe",
    target: "namespace myap",
    result: "not-found: Namespace myap does not exist.",
  },
  {
    at: "2026-02-12T08:41:00Z",
    actor: ns,
    event: "observed.diagnosis",
    requestId: "",
    action: "observe",
    target: "namespace myapp",
    result: "blocked: Namespace myapp is stuck in Terminating",
  },
  {
    at: "2026-02-12T08:50:10Z",
    actor: alice,
    event: "request.created",
    requestId: REQ,
    action: "repoint-path",
    target: "Ingress myapp/myapp-worker-ingress",
    after: "PENDING",
    result: "worker.example.com -> the re-created ALB; <!channel> see <https://evil.example|x>",
  },
];

describe("the post-mortem draft", () => {
  const { markdown } = buildTimeline(entries);

  it("is titled by the namespace diagnosed, not by a mistyped one that was not found", () => {
    const title = markdown.split("\n")[0] ?? "";
    expect(title).toBe("# Incident: namespace myapp — 2026-02-12");
    expect(markdown).not.toContain("myap`");
    expect(markdown).not.toMatch(/\bmyap\b/);
    expect(markdown).toContain("the bot diagnosed `namespace myapp`");
  });

  it("keeps the reason as typed: `->` stays, markup brackets still become look-alikes", () => {
    expect(markdown).toContain("worker.example.com -> the re-created ALB");
    expect(markdown).not.toContain("-›");
    expect(markdown).toContain("‹!channel›");
    expect(markdown).toContain("‹https://evil.example|x›");
    expect(markdown).not.toContain("<!channel>");
    // The Slack card escapes the draft as a whole: `>` as Slack's own entity, shown as typed.
    const card = JSON.stringify(renderTimelineBlocks(markdown, 3).blocks);
    expect(card).toContain("worker.example.com -&gt; the re-created ALB");
    expect(card).not.toContain("<!channel>");
  });
});
