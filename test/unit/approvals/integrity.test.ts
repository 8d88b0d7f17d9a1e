/**
 * Who signs each part of an approval record, and what a signature binds: the bot signs what a person
 * did, a cluster's workers what they executed; no process signs with a key it does not hold, and no
 * cluster's key passes for the bot's or for another cluster's.
 */
import { describe, expect, it } from "vitest";
import { ApprovalSigner } from "../../../src/approvals/integrity.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import {
  BOT,
  clusterOwner,
  generateKeyText,
  Keyring,
  parsePrivateKey,
  SigningKey,
} from "../../../src/trust/keys.js";

const vote = {
  requestId: "aaaaaaaaaaaaaaaaaaaaaaaaaa",
  voter: { userId: "UBOB", teamId: "T1" },
  decision: "approve" as const,
  at: "2026-02-12T09:00:00.000Z",
  channelId: "COPS",
};

/** A key of the bot (`undefined`) or of a cluster's workers. */
const key = (owner: string | undefined) =>
  new SigningKey(
    parsePrivateKey(generateKeyText().privateKey, "V"),
    owner === undefined ? BOT : clusterOwner(owner),
  );
const botKey = key(undefined);
const c1 = key("c1");
const c2 = key("c2");
const keyring = new Keyring([
  { key: botKey.publicKey, owner: BOT },
  { key: c1.publicKey, owner: clusterOwner("c1") },
  { key: c2.publicKey, owner: clusterOwner("c2") },
]);
/** The Slack-facing bot of a fleet, a worker of c1, a worker of c2. */
const bot = new ApprovalSigner({ bot: botKey, keyring, localCluster: "c1" });
const worker1 = new ApprovalSigner({ worker: c1, keyring, localCluster: "c1" });
const worker2 = new ApprovalSigner({ worker: c2, keyring, localCluster: "c2" });

function thrown(run: () => unknown): UnstuckError {
  try {
    run();
  } catch (err) {
    return err as UnstuckError;
  }
  throw new Error("expected an error");
}

describe("ApprovalSigner", () => {
  it("verifies what the bot signed and nothing else: another field, request or kind fails", () => {
    const docMac = bot.requestSig(vote.requestId, '{"id":"a"}');
    expect(worker1.checkRequest(vote.requestId, '{"id":"a"}', docMac).ok).toBe(true);
    expect(worker1.checkRequest(vote.requestId, '{"id":"b"}', docMac).ok).toBe(false);

    const mac = bot.voteSig(docMac, vote);
    expect(worker2.checkVote(docMac, { ...vote, mac }).ok).toBe(true);
    for (const changed of [
      { ...vote, mac, requestId: "bbbbbbbbbbbbbbbbbbbbbbbbbb" },
      { ...vote, mac, voter: { userId: "UCAROL", teamId: "T1" } },
      { ...vote, mac, voter: { userId: "UBOB", teamId: "T2" } },
      { ...vote, mac, decision: "deny" as const },
      { ...vote, mac, at: "2026-02-12T09:00:01.000Z" },
      { ...vote, mac, channelId: "CELSEWHERE" },
      { ...vote, mac, reason: "added later" },
    ]) {
      expect(worker1.checkVote(docMac, changed).ok).toBe(false);
    }
    // A denier's reason is bound too: edited or dropped, the vote no longer verifies.
    const denied = { ...vote, decision: "deny" as const, reason: "wait for the ENI" };
    const deniedMac = bot.voteSig(docMac, denied);
    expect(worker1.checkVote(docMac, { ...denied, mac: deniedMac }).ok).toBe(true);
    expect(worker1.checkVote(docMac, { ...denied, mac: deniedMac, reason: "approve it" }).ok).toBe(false);
    expect(worker1.checkVote(docMac, { ...vote, decision: "deny", mac: deniedMac }).ok).toBe(false);
    // Bound to the request's signature: the same vote under an edited document does not verify.
    expect(worker1.checkVote(bot.requestSig(vote.requestId, "{}"), { ...vote, mac }).ok).toBe(false);
    // A signature of one kind never verifies as another.
    const request = { id: vote.requestId, cluster: "c1" };
    expect(worker1.checkState(request, docMac, { state: "APPROVED", at: vote.at, mac }).ok).toBe(false);
    const stateMac = bot.stateSig(vote.requestId, docMac, "APPROVED", vote.at);
    expect(worker1.checkState(request, docMac, { state: "APPROVED", at: vote.at, mac: stateMac }).ok).toBe(
      true,
    );
    expect(worker1.checkState(request, docMac, { state: "EXECUTING", at: vote.at, mac: stateMac }).ok).toBe(
      false,
    );
  });

  it("only the bot signs requests, votes and a person's states; a worker holds no key for them", () => {
    for (const run of [
      () => worker1.requestSig(vote.requestId, "{}"),
      () => worker1.voteSig("x", vote),
      () => worker1.stateSig(vote.requestId, "x", "APPROVED", vote.at),
      () => worker1.messageSig(vote.requestId, "x", "C1", "1.2"),
    ]) {
      const err = thrown(run);
      expect(err.code).toBe(ErrorCode.Config);
      expect(err.details.variable).toBe("UNSTUCK_BOT_SIGNING_KEY");
    }
    // And the bot holds no key for an execution's states.
    expect(thrown(() => bot.stateSig(vote.requestId, "x", "DONE", vote.at)).details.variable).toBe(
      "UNSTUCK_WORKER_SIGNING_KEY",
    );
    expect(bot.canSign("APPROVED")).toBe(true);
    expect(bot.canSign("DONE")).toBe(false);
    expect(worker1.canSign("DONE")).toBe(true);
  });

  it("a state an execution reaches verifies only as the request's own cluster's, its result bound in", () => {
    const docMac = bot.requestSig(vote.requestId, "{}");
    const result = '{"outcome":"done","message":"Removed."}';
    const done = worker1.stateSig(vote.requestId, docMac, "DONE", vote.at, result);
    const forC1 = { id: vote.requestId, cluster: "c1" };
    const forC2 = { id: vote.requestId, cluster: "c2" };
    expect(bot.checkState(forC1, docMac, { state: "DONE", at: vote.at, mac: done, result }).ok).toBe(true);
    // c1's workers cannot finish (or claim) c2's request.
    expect(bot.checkState(forC2, docMac, { state: "DONE", at: vote.at, mac: done, result })).toEqual({
      ok: false,
      why: "signed by cluster c1's workers, who may not sign it",
    });
    // The result is part of what is signed: another message is not the workers'.
    const other = '{"outcome":"done","message":"<!channel> click here"}';
    expect(bot.checkState(forC1, docMac, { state: "DONE", at: vote.at, mac: done, result: other }).ok).toBe(
      false,
    );
    // A worker's signature never passes for the bot's APPROVED.
    const approved = worker1.stateSig(vote.requestId, docMac, "FAILED", vote.at);
    expect(bot.checkState(forC1, docMac, { state: "APPROVED", at: vote.at, mac: approved }).ok).toBe(false);
  });

  it("EXPIRED and FAILED, which end a request without a change, verify from the bot or any cluster's sweep", () => {
    const docMac = bot.requestSig(vote.requestId, "{}");
    const request = { id: vote.requestId, cluster: "c1" };
    for (const signer of [bot, worker1, worker2]) {
      for (const state of ["EXPIRED", "FAILED"]) {
        const mac = signer.stateSig(vote.requestId, docMac, state, vote.at);
        expect(bot.checkState(request, docMac, { state, at: vote.at, mac }).ok).toBe(true);
      }
    }
  });

  it("the message a request is shown in verifies as the bot's, for that request only", () => {
    const docMac = bot.requestSig(vote.requestId, "{}");
    const mac = bot.messageSig(vote.requestId, docMac, "COPS", "1700000000.000100");
    expect(worker1.checkMessage(vote.requestId, docMac, "COPS", "1700000000.000100", mac).ok).toBe(true);
    expect(worker1.checkMessage(vote.requestId, docMac, "COPS", "1700000000.000200", mac).ok).toBe(false);
    expect(
      worker1.checkMessage("bbbbbbbbbbbbbbbbbbbbbbbbbb", docMac, "COPS", "1700000000.000100", mac).ok,
    ).toBe(false);
  });

  it("never shows a key when logged or serialised", () => {
    const pair = generateKeyText();
    const signer = new ApprovalSigner({
      bot: new SigningKey(parsePrivateKey(pair.privateKey, "V"), BOT),
      keyring,
      localCluster: "c1",
    });
    expect(JSON.stringify({ signer })).not.toContain(pair.privateKey);
  });
});
