/**
 * The engine reports thread replies as events; the Slack notifier words them. The words are the ones
 * the thread always showed, and a reply job queued as words before replies were events (still in
 * Redis after an upgrade) is posted as it was queued.
 */
import { describe, expect, it } from "vitest";
import type { ThreadEvent } from "../../../src/approvals/notifier.js";
import { replyEvent, type ReplyJobData } from "../../../src/jobs/notify.js";
import { renderThreadReply } from "../../../src/slack/notifier.js";
import type { ApprovalRequest } from "../../../src/approvals/types.js";

describe("thread replies", () => {
  it("word each event as the thread always showed it", () => {
    const cases: [ThreadEvent, string][] = [
      [
        { kind: "vote", voter: "UBOB", decision: "approve", tally: { approvals: 1, required: 2 } },
        "<@UBOB> approved (1/2).",
      ],
      [{ kind: "vote", voter: "UBOB", decision: "approve" }, "<@UBOB> approved."],
      [{ kind: "vote", voter: "UCAROL", decision: "deny" }, "<@UCAROL> denied."],
      [{ kind: "cancelled", by: "UALICE" }, "<@UALICE> cancelled the request."],
      [{ kind: "expired" }, "The request expired without enough approvals."],
      [{ kind: "outcome", state: "DONE", message: "✅ Finalizer removed." }, "✅ Finalizer removed."],
      [
        {
          kind: "outcome",
          state: "TAMPERED",
          message: "Refused: this approval record failed verification (x).",
        },
        ":rotating_light: Refused: this approval record failed verification (x).",
      ],
      [
        { kind: "outcome", state: "TAMPERED", message: ":rotating_light: Refused." },
        ":rotating_light: Refused.",
      ],
      [{ kind: "legacy-text", text: "<@UBOB> approved (1/2)." }, "<@UBOB> approved (1/2)."],
    ];
    for (const [event, words] of cases) expect(renderThreadReply(event)).toBe(words);
  });

  it("a reply job carries its event; one queued as words before is read as those words", () => {
    const snapshot = {} as ApprovalRequest;
    const event: ThreadEvent = { kind: "expired" };
    expect(replyEvent({ requestId: "r", snapshot, event } satisfies ReplyJobData)).toEqual(event);
    expect(replyEvent({ requestId: "r", snapshot, text: "<@UBOB> denied." })).toEqual({
      kind: "legacy-text",
      text: "<@UBOB> denied.",
    });
    expect(replyEvent({ requestId: "r", snapshot })).toBeUndefined();
  });
});
