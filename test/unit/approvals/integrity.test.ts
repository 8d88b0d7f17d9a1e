import { describe, expect, it } from "vitest";
import { createHmac } from "node:crypto";
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

  it("never shows its previous key either", () => {
    const previous = randomApprovalKey();
    const signer = new ApprovalSigner(randomApprovalKey(), { previous });
    expect(JSON.stringify({ signer })).not.toContain(previous);
    expect(String(Object.values(signer))).not.toContain(previous);
  });
});

describe("key rotation (UNSTUCK_APPROVAL_KEY_PREVIOUS)", () => {
  const oldKey = randomApprovalKey();
  const newKey = randomApprovalKey();
  const before = new ApprovalSigner(oldKey);
  const rotating = new ApprovalSigner(newKey, { previous: oldKey });
  const after = new ApprovalSigner(newKey);
  const docMac = before.requestMac(vote.requestId, '{"id":"a"}');
  const voteMac = before.voteMac(docMac, vote);
  const stateMac = before.stateMac(vote.requestId, docMac, "APPROVED", vote.at);

  it("stores the signing key's id beside every MAC, and the id tells nothing of the key", () => {
    expect(docMac.startsWith(`${before.keyId}.`)).toBe(true);
    expect(voteMac.startsWith(`${before.keyId}.`)).toBe(true);
    expect(before.keyId).toMatch(/^[A-Za-z0-9_-]{11}$/);
    expect(before.keyId).not.toBe(after.keyId);
    expect(oldKey).not.toContain(before.keyId);
    expect(rotating.previousKeyId).toBe(before.keyId);
  });

  it("verifies what the previous key signed during the window, and signs only with the current key", () => {
    expect(rotating.verifyRequest(vote.requestId, '{"id":"a"}', docMac)).toBe(true);
    expect(rotating.verifyVote(docMac, { ...vote, mac: voteMac })).toBe(true);
    expect(rotating.verifyState(vote.requestId, docMac, "APPROVED", vote.at, stateMac)).toBe(true);
    expect(rotating.keyOf(docMac)).toBe("previous");

    // Never signs with the previous key: what it makes is the current key's, verifiable without the old one.
    const fresh = rotating.stateMac(vote.requestId, docMac, "EXECUTING", vote.at);
    expect(fresh.startsWith(`${after.keyId}.`)).toBe(true);
    expect(rotating.keyOf(fresh)).toBe("current");
    expect(after.verifyState(vote.requestId, docMac, "EXECUTING", vote.at, fresh)).toBe(true);
    expect(before.verifyState(vote.requestId, docMac, "EXECUTING", vote.at, fresh)).toBe(false);
    expect(rotating.requestMac(vote.requestId, "{}")).toBe(after.requestMac(vote.requestId, "{}"));
  });

  it("a MAC of a key neither current nor previous is a retired key's, and does not verify", () => {
    expect(after.verifyRequest(vote.requestId, '{"id":"a"}', docMac)).toBe(false);
    expect(after.verifyVote(docMac, { ...vote, mac: voteMac })).toBe(false);
    expect(after.keyOf(docMac)).toBe("retired");
    expect(ApprovalSigner.keyIdOf(docMac)).toBe(before.keyId);
  });

  it("a MAC edited under a key it holds is not a retired key's; one without a key id is checked against both keys", () => {
    const forged = `${after.keyId}.${Buffer.alloc(32, 7).toString("base64url")}`;
    expect(after.keyOf(forged)).toBe("current");
    expect(after.verifyRequest(vote.requestId, '{"id":"a"}', forged)).toBe(false);
    expect(after.keyOf(undefined)).toBe("none");
    expect(after.keyOf("not a mac")).toBe("none");
    // Made before key ids existed: the bare HMAC, under the old key.
    const bare = createHmac("sha256", oldKey)
      .update(JSON.stringify(["unstuck/approval/v1", "request", vote.requestId, '{"id":"a"}']))
      .digest("base64url");
    expect(rotating.keyOf(bare)).toBe("none");
    expect(rotating.verifyRequest(vote.requestId, '{"id":"a"}', bare)).toBe(true);
    expect(after.verifyRequest(vote.requestId, '{"id":"a"}', bare)).toBe(false);
  });

  it("refuses a previous key that is short or the same as the current one, naming the variable", () => {
    for (const previous of ["x".repeat(31), newKey]) {
      let err: unknown;
      try {
        new ApprovalSigner(newKey, { previous });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UnstuckError);
      expect((err as UnstuckError).details.variable).toBe("UNSTUCK_APPROVAL_KEY_PREVIOUS");
      expect((err as UnstuckError).message).not.toContain(newKey);
    }
  });
});
