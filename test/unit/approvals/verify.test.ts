/**
 * Why a record is refused: signed with a key the bot no longer holds (a rotation) is said as such,
 * never as tampering; anything edited under a key it holds, or a plan it never signed, is tampering.
 */
import { describe, expect, it } from "vitest";
import { ApprovalSigner, randomApprovalKey } from "../../../src/approvals/integrity.js";
import type { SignedRecord } from "../../../src/approvals/store.js";
import type { ApprovalRequest, Vote } from "../../../src/approvals/types.js";
import { verifyApproval, verifyIntegrity } from "../../../src/approvals/verify.js";
import { buildFinalizerPatch } from "../../../src/kube/finalizer-patch.js";
import { WORKER_INGRESS } from "./fixtures.js";

const ID = "abcdefghijklmnopqrstuvwxyz";
const precondition = { resourceVersion: "1234", finalizers: ["ingress.k8s.aws/resources"] };
const doc = {
  id: ID,
  action: {
    type: "remove-finalizer" as const,
    target: WORKER_INGRESS,
    precondition,
    remove: ["ingress.k8s.aws/resources"],
    patch: buildFinalizerPatch(precondition, ["ingress.k8s.aws/resources"]),
  },
  requester: { userId: "UALICE", teamId: "T1" },
  channelId: "COPS",
  reason: "cause confirmed; recovery first",
  evidence: [],
  cleanupPlan: [],
  createdAt: "2026-02-12T09:00:00.000Z",
  expiresAt: "2026-02-12T09:30:00.000Z",
  approvalsRequired: 1,
};

/** A record as the store would hold it once approved by Bob, every MAC made by `signer`. */
function approvedRecord(
  signer: ApprovalSigner,
  edit: (d: typeof doc) => typeof doc = (d) => d,
): SignedRecord {
  const text = JSON.stringify(doc);
  const docMac = signer.requestMac(ID, text);
  const fields = {
    requestId: ID,
    voter: { userId: "UBOB", teamId: "T1" },
    decision: "approve" as const,
    at: "2026-02-12T09:05:00.000Z",
    channelId: "COPS",
  };
  const vote: Vote = { ...fields, mac: signer.voteMac(docMac, fields) };
  const stored = JSON.stringify(edit(doc));
  const request: ApprovalRequest = {
    ...(JSON.parse(stored) as typeof doc),
    state: "APPROVED",
    votes: [vote],
    executionAttempts: 0,
    updatedAt: fields.at,
  };
  const state = { state: "APPROVED", at: fields.at, mac: signer.stateMac(ID, docMac, "APPROVED", fields.at) };
  return { request, doc: stored, docMac, state };
}

const oldKey = randomApprovalKey();
const old = new ApprovalSigner(oldKey);
const current = randomApprovalKey();
const approvers = new Set(["UBOB"]);

describe("verifyApproval: retired key or tampering", () => {
  it("passes a record of the previous key during the rotation window", () => {
    const record = approvedRecord(old);
    const rotating = new ApprovalSigner(current, { previous: oldKey });
    expect(verifyApproval({ id: ID, record, prior: record.state, signer: rotating, approvers })).toEqual({
      ok: true,
      approvers: ["UBOB"],
    });
  });

  it("a record signed with a retired key is refused as that, naming the key id", () => {
    const record = approvedRecord(old);
    const v = verifyApproval({
      id: ID,
      record,
      prior: record.state,
      signer: new ApprovalSigner(current),
      approvers,
    });
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.cause).toBe("retired-key");
    expect(v.retiredKeyIds).toEqual([old.keyId]);
    expect(v.problems.join("; ")).toMatch(/signed with a retired approval key/);
    expect(v.problems.join("; ")).not.toMatch(/edited|not recorded by the bot/);
  });

  it("a record edited in Redis is tampered with, whatever key signed it", () => {
    const retarget = (d: typeof doc) => ({
      ...d,
      action: { ...d.action, target: { ...d.action.target, name: "x" } },
    });
    const edited = approvedRecord(new ApprovalSigner(current), retarget);
    const v = verifyApproval({
      id: ID,
      record: edited,
      prior: edited.state,
      signer: new ApprovalSigner(current),
      approvers,
    });
    expect(!v.ok && v.cause).toBe("tampered");
    // An old record with a state the bot never signed (a forged APPROVED) is tampered with too.
    const record = approvedRecord(old);
    const forged = { ...record.state, mac: "not-a-mac" };
    const w = verifyApproval({
      id: ID,
      record,
      prior: forged,
      signer: new ApprovalSigner(current, { previous: oldKey }),
      approvers,
    });
    expect(!w.ok && w.cause).toBe("tampered");
  });
});

describe("verifyIntegrity (before a vote)", () => {
  it("says retired key, tampered, or fine", () => {
    const record = approvedRecord(old);
    expect(verifyIntegrity(ID, record, new ApprovalSigner(current, { previous: oldKey }))).toEqual({
      ok: true,
    });
    const retired = verifyIntegrity(ID, record, new ApprovalSigner(current));
    expect(retired).toMatchObject({ ok: false, cause: "retired-key" });
    const edited = { ...record, doc: record.doc.replace("UALICE", "UMALLORY") };
    expect(verifyIntegrity(ID, edited, old)).toMatchObject({ ok: false, cause: "tampered" });
  });
});
