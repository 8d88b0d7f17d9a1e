/**
 * The engine reports thread replies as events; the Slack notifier words them, as the thread always
 * showed them. A reply job carries only which event it is: the worker words it from the signed record,
 * so no job can put words of its own in the thread.
 */
import { describe, expect, it } from "vitest";
import type { ThreadEvent } from "../../../src/approvals/notifier.js";
import { eventOf, replyRef } from "../../../src/jobs/notify.js";
import { renderThreadReply } from "../../../src/slack/notifier.js";
import type { ApprovalRequest } from "../../../src/requests/model.js";

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
    ];
    for (const [event, words] of cases) expect(renderThreadReply(event)).toBe(words);
  });

  it("a reply job carries which event it is, and the worker words it from the record", () => {
    const vote = (voter: string, decision: "approve" | "deny") => ({
      requestId: "r",
      voter: { userId: voter, teamId: "T1" },
      decision,
      at: "2026-12-03T07:00:00.000Z",
      mac: "",
    });
    const request = {
      id: "r",
      requester: { userId: "UALICE", teamId: "T1" },
      approvalsRequired: 2,
      state: "DONE",
      votes: [vote("UBOB", "approve"), vote("UCAROL", "approve")],
      result: { outcome: "done", message: "Removed.", at: "2026-12-03T07:01:00.000Z" },
    } as unknown as ApprovalRequest;
    const outcome: ThreadEvent = {
      kind: "outcome",
      state: "DONE",
      message: "<!channel> a message of the job's own",
    };
    // The job holds no words: the outcome's message is the record's.
    expect(replyRef(outcome)).toEqual({ kind: "outcome", state: "DONE" });
    expect(eventOf(replyRef(outcome), request)).toEqual({
      kind: "outcome",
      state: "DONE",
      message: "Removed.",
    });
    // The first approval of two is tallied, the second completes it.
    expect(eventOf({ kind: "vote", voter: "UBOB", decision: "approve" }, request)).toEqual({
      kind: "vote",
      voter: "UBOB",
      decision: "approve",
      tally: { approvals: 1, required: 2 },
    });
    expect(eventOf({ kind: "vote", voter: "UCAROL", decision: "approve" }, request)).toEqual({
      kind: "vote",
      voter: "UCAROL",
      decision: "approve",
    });
    // What the record does not hold is not worded: a vote nobody signed, an outcome it did not reach.
    expect(eventOf({ kind: "vote", voter: "UMALLORY", decision: "approve" }, request)).toBeUndefined();
    expect(eventOf({ kind: "outcome", state: "TAMPERED" }, request)).toBeUndefined();
    expect(eventOf({ kind: "cancelled" }, request)).toBeUndefined();
  });
});
