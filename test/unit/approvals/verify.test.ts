/**
 * Why a record is refused before anything is executed: a document, vote or state not signed by the
 * signer allowed to sign it, a key the keyring does not hold, a plan it never signed. A bot key rotated
 * with the old public key kept in the keyring still verifies what it signed.
 */
import { describe, expect, it } from "vitest";
import { ApprovalSigner } from "../../../src/approvals/integrity.js";
import type { SignedRecord } from "../../../src/approvals/store.js";
import type { ApprovalRequest, Vote } from "../../../src/requests/model.js";
import { verifiedMessage, verifyApproval, verifyIntegrity } from "../../../src/approvals/verify.js";
import { buildFinalizerPatch } from "../../../src/kube/finalizer-patch.js";
import {
  BOT,
  clusterOwner,
  generateKeyText,
  Keyring,
  parsePrivateKey,
  SigningKey,
} from "../../../src/trust/keys.js";
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
  cluster: "c1",
  reason: "cause confirmed; recovery first",
  evidence: [],
  cleanupPlan: [],
  createdAt: "2026-02-12T09:00:00.000Z",
  expiresAt: "2026-02-12T09:30:00.000Z",
  approvalsRequired: 1,
};

/** A key of the bot (`undefined`) or of a cluster's workers. */
const newKey = (owner: string | undefined) =>
  new SigningKey(
    parsePrivateKey(generateKeyText().privateKey, "V"),
    owner === undefined ? BOT : clusterOwner(owner),
  );
const oldBot = newKey(undefined);
const bot = newKey(undefined);
const c1 = newKey("c1");
const c2 = newKey("c2");
const ringOf = (...bots: SigningKey[]) =>
  new Keyring([
    ...bots.map((k) => ({ key: k.publicKey, owner: BOT })),
    { key: c1.publicKey, owner: clusterOwner("c1") },
    { key: c2.publicKey, owner: clusterOwner("c2") },
  ]);
const keyring = ringOf(oldBot, bot);
/** What signs, as each process would: the bot's record, c1's and c2's workers. */
const signerOf = (k: SigningKey, ring = keyring) =>
  new ApprovalSigner(
    k.owner.kind === "bot"
      ? { bot: k, keyring: ring, localCluster: "c1" }
      : { worker: k, keyring: ring, localCluster: "c1" },
  );
const worker1 = signerOf(c1);

/** A record as the store would hold it once approved by Bob, the bot's parts signed by `by`. */
function approvedRecord(by: ApprovalSigner, edit: (d: typeof doc) => typeof doc = (d) => d): SignedRecord {
  const text = JSON.stringify(doc);
  const docMac = by.requestSig(ID, text);
  const fields = {
    requestId: ID,
    voter: { userId: "UBOB", teamId: "T1" },
    decision: "approve" as const,
    at: "2026-02-12T09:05:00.000Z",
    channelId: "COPS",
  };
  const vote: Vote = { ...fields, mac: by.voteSig(docMac, fields) };
  const stored = JSON.stringify(edit(doc));
  const request: ApprovalRequest = {
    ...(JSON.parse(stored) as typeof doc),
    state: "APPROVED",
    votes: [vote],
    executionAttempts: 0,
    updatedAt: fields.at,
  };
  const state = { state: "APPROVED", at: fields.at, mac: by.stateSig(ID, docMac, "APPROVED", fields.at) };
  return { request, doc: stored, docMac, state };
}
const approvers = new Set(["UBOB"]);

describe("verifyApproval", () => {
  it("passes the bot's record on the request's own cluster, and one of the bot's previous key kept in the keyring", () => {
    for (const k of [bot, oldBot]) {
      const record = approvedRecord(signerOf(k));
      expect(verifyApproval({ id: ID, record, prior: record.state, signer: worker1, approvers })).toEqual({
        ok: true,
        approvers: ["UBOB"],
      });
    }
  });

  it("refuses a record signed with a key the keyring no longer holds, as tampering that names the key id", () => {
    const record = approvedRecord(signerOf(oldBot));
    const v = verifyApproval({
      id: ID,
      record,
      prior: record.state,
      signer: signerOf(c1, ringOf(bot)),
      approvers,
    });
    expect(v.ok).toBe(false);
    expect(!v.ok && v.problems.join("; ")).toContain(`signed by an unknown key (key id ${oldBot.keyId})`);
  });

  it("refuses a request a cluster's workers made and approved themselves: their key signs no request, vote or APPROVED", () => {
    // What a worker pod could do with every key it holds: sign the whole record with its own key.
    const forgedBy = new ApprovalSigner({
      bot: new SigningKey(parsePrivateKey(generateKeyText().privateKey, "V"), BOT),
      keyring,
      localCluster: "c1",
    });
    const record = approvedRecord(forgedBy);
    const v = verifyApproval({ id: ID, record, prior: record.state, signer: worker1, approvers });
    expect(v.ok).toBe(false);
    // A worker key in the bot's place (the key id is the cluster's): not the bot's either.
    const c1AsBot = new ApprovalSigner({
      bot: new SigningKey(parsePrivateKey(generateKeyText().privateKey, "V"), BOT),
      keyring,
      localCluster: "c1",
    });
    const edited = approvedRecord(c1AsBot);
    const relabelled: SignedRecord = {
      ...edited,
      docMac: `${c1.keyId}.${edited.docMac.split(".")[1] ?? ""}`,
    };
    expect(
      verifyApproval({ id: ID, record: relabelled, prior: relabelled.state, signer: worker1, approvers }).ok,
    ).toBe(false);
  });

  it("refuses an EXECUTING state another cluster's workers signed (a resume of a claim it never made)", () => {
    const record = approvedRecord(signerOf(bot));
    const at = "2026-02-12T09:06:00.000Z";
    const foreign = {
      state: "EXECUTING",
      at,
      mac: signerOf(c2).stateSig(ID, record.docMac, "EXECUTING", at),
    };
    const v = verifyApproval({ id: ID, record, prior: foreign, signer: worker1, approvers });
    expect(!v.ok && v.problems.join("; ")).toMatch(
      /EXECUTING state was not recorded by its signer \(signed by cluster c2's workers/,
    );
    const own = { state: "EXECUTING", at, mac: worker1.stateSig(ID, record.docMac, "EXECUTING", at) };
    expect(verifyApproval({ id: ID, record, prior: own, signer: worker1, approvers }).ok).toBe(true);
  });

  it("refuses an edited plan, whatever signed it", () => {
    const retarget = (d: typeof doc) => ({
      ...d,
      action: { ...d.action, target: { ...d.action.target, name: "x" } },
    });
    const edited = approvedRecord(signerOf(bot), retarget);
    const v = verifyApproval({ id: ID, record: edited, prior: edited.state, signer: worker1, approvers });
    expect(!v.ok && v.problems.join("; ")).toMatch(/request document is not the bot's/);
  });
});

describe("verifyIntegrity (before a vote) and the request's message", () => {
  it("says what does not verify", () => {
    const record = approvedRecord(signerOf(bot));
    expect(verifyIntegrity(ID, record, worker1)).toEqual({ ok: true });
    const edited = { ...record, doc: record.doc.replace("UALICE", "UMALLORY") };
    expect(verifyIntegrity(ID, edited, worker1)).toMatchObject({ ok: false });
  });

  it("a repaint may touch only the message the bot signed for this request", () => {
    const record = approvedRecord(signerOf(bot));
    const mac = signerOf(bot).messageSig(ID, record.docMac, "COPS", "1.000100");
    expect(
      verifiedMessage({ ...record, message: { channel: "COPS", ts: "1.000100", mac } }, worker1),
    ).toEqual({
      channel: "COPS",
      ts: "1.000100",
    });
    // Pointed at another message (an approval card of another request, say): refused.
    expect(
      verifiedMessage({ ...record, message: { channel: "COPS", ts: "2.000100", mac } }, worker1),
    ).toBeUndefined();
    expect(
      verifiedMessage({ ...record, message: { channel: "COPS", ts: "1.000100", mac: "" } }, worker1),
    ).toBeUndefined();
  });
});
