import { describe, expect, it } from "vitest";
import { ApprovalSigner, randomApprovalKey } from "../../../src/approvals/integrity.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";

const vote = {
  requestId: "aaaaaaaaaaaaaaaaaaaaaaaaaa",
  voter: { userId: "UBOB", teamId: "T1" },
  decision: "approve" as const,
  at: "2026-02-12T09:00:00.000Z",
  channelId: "COPS",
};

describe("ApprovalSigner", () => {
  it("refuses a key shorter than 32 bytes, naming the variable", () => {
    let err: unknown;
    try {
      new ApprovalSigner("x".repeat(31));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UnstuckError);
    expect((err as UnstuckError).code).toBe(ErrorCode.Config);
    expect((err as UnstuckError).details.variable).toBe("UNSTUCK_APPROVAL_KEY");
  });

  it("verifies what it signed and nothing else: another key, field, request or kind fails", () => {
    const key = randomApprovalKey();
    const signer = new ApprovalSigner(key);
    const other = new ApprovalSigner(randomApprovalKey());
    const docMac = signer.requestMac(vote.requestId, '{"id":"a"}');
    expect(signer.verifyRequest(vote.requestId, '{"id":"a"}', docMac)).toBe(true);
    expect(other.verifyRequest(vote.requestId, '{"id":"a"}', docMac)).toBe(false);
    expect(signer.verifyRequest(vote.requestId, '{"id":"b"}', docMac)).toBe(false);

    const mac = signer.voteMac(docMac, vote);
    expect(signer.verifyVote(docMac, { ...vote, mac })).toBe(true);
    for (const changed of [
      { ...vote, mac, requestId: "bbbbbbbbbbbbbbbbbbbbbbbbbb" },
      { ...vote, mac, voter: { userId: "UCAROL", teamId: "T1" } },
      { ...vote, mac, voter: { userId: "UBOB", teamId: "T2" } },
      { ...vote, mac, decision: "deny" as const },
      { ...vote, mac, at: "2026-02-12T09:00:01.000Z" },
      { ...vote, mac, channelId: "CELSEWHERE" },
    ]) {
      expect(signer.verifyVote(docMac, changed)).toBe(false);
    }
    // Bound to the request MAC: the same vote under an edited document does not verify.
    expect(signer.verifyVote(signer.requestMac(vote.requestId, "{}"), { ...vote, mac })).toBe(false);
    // A MAC of one kind never verifies as another.
    expect(signer.verifyState(vote.requestId, docMac, "APPROVED", vote.at, mac)).toBe(false);
    const stateMac = signer.stateMac(vote.requestId, docMac, "APPROVED", vote.at);
    expect(signer.verifyState(vote.requestId, docMac, "APPROVED", vote.at, stateMac)).toBe(true);
    expect(signer.verifyState(vote.requestId, docMac, "EXECUTING", vote.at, stateMac)).toBe(false);
    expect(signer.verifyState(vote.requestId, docMac, "APPROVED", vote.at, undefined)).toBe(false);
  });

  it("never shows its key when logged or serialised", () => {
    const key = randomApprovalKey();
    const signer = new ApprovalSigner(key);
    expect(JSON.stringify({ signer })).not.toContain(key);
    expect(String(Object.values(signer))).not.toContain(key);
  });
});
