/**
 * The executor's check of an approval record before any write: it trusts nothing the store says
 * about state or votes, and re-derives the approval from what the bot itself signed.
 *
 * A record passes only when
 * - the request document's signature verifies as the bot's and names this id (so an edited plan,
 *   target, requester or cluster fails);
 * - the state it was claimed from carries a valid signature of a signer allowed to sign it: APPROVED
 *   the bot's, EXECUTING (a resumed attempt) the request's cluster's workers';
 * - its votes include at least `approvalsRequired` approvals, each signed by the bot and bound to this
 *   request (a vote copied from another request, or its signature, fails), cast within the request's
 *   lifetime, by distinct approvers on the current approver list, none of them the requester, from
 *   the requester's team and the request's channel; and no valid deny;
 * - the stored patch is exactly the one the precondition and the finalizers to remove imply;
 * - the requester's statements (in the document, so bound by its signature) are the form's own words.
 *
 * Any failure is tampering: a signature by a key the keyring does not hold (a forgery, or a key
 * retired while records it signed were still live) is refused like one that does not verify.
 */
import { wellFormed } from "../requests/action-kinds.js";
import type { ApprovalSigner } from "./integrity.js";
import type { ApprovalRequest } from "../requests/model.js";
import { areKnownStatements } from "../requests/model.js";

/** A state as stored with its transition time, its result (JSON, as stored) and its signature. */
export interface SignedState {
  readonly state: string;
  readonly at: string;
  readonly mac: string;
  /** The execution's result as stored (`""`: none), which the state's signature covers. */
  readonly result?: string;
}

/** A request with the raw material its signatures cover, for verification. */
export interface SignedRecord {
  readonly request: ApprovalRequest;
  /** The stored document, byte for byte. */
  readonly doc: string;
  readonly docMac: string;
  readonly state: SignedState;
  /** The message the request is shown in, as stored, and its signature (absent: not posted yet). */
  readonly message?: { readonly channel: string; readonly ts: string; readonly mac: string };
}

export type Verification =
  | { readonly ok: true; readonly approvers: readonly string[] }
  | { readonly ok: false; readonly problems: readonly string[] };

export interface VerifyInput {
  readonly id: string;
  readonly record: SignedRecord;
  /** The state the executor claimed the request from, as stored before the claim. */
  readonly prior: SignedState;
  readonly signer: ApprovalSigner;
  /** User ids on the approver list now (user groups resolved live). */
  readonly approvers: ReadonlySet<string>;
}

export function verifyApproval(input: VerifyInput): Verification {
  const { id, record, prior, signer, approvers } = input;
  const { request, doc, docMac } = record;
  const problems: string[] = [];
  const document = signer.checkRequest(id, doc, docMac);
  if (!document.ok || request.id !== id) {
    // Nothing else in the record can be trusted once the document does not verify.
    return {
      ok: false,
      problems: [
        `the request document is not the bot's (${document.ok ? "it names another request" : document.why}): plan, target or requester edited`,
      ],
    };
  }
  if (prior.state !== "APPROVED" && prior.state !== "EXECUTING") {
    problems.push(`it was claimed from state ${prior.state || "(none)"}`);
  } else {
    const state = signer.checkState(request, docMac, prior);
    if (!state.ok) problems.push(`its ${prior.state} state was not recorded by its signer (${state.why})`);
  }
  if (!wellFormed(request.action)) problems.push("its patch is not the one its precondition implies");
  if (request.statements !== undefined && !areKnownStatements(request.statements)) {
    problems.push("its requester statements are not the ones the form asks for");
  }

  const created = Date.parse(request.createdAt);
  const expires = Date.parse(request.expiresAt);
  const counted = new Set<string>();
  let forged = 0;
  let denied = false;
  for (const vote of request.votes) {
    if (vote.requestId !== id || !signer.checkVote(docMac, vote).ok) {
      forged++;
      continue;
    }
    if (vote.decision === "deny") {
      denied = true;
      continue;
    }
    const at = Date.parse(vote.at);
    const eligible =
      vote.decision === "approve" &&
      vote.voter.userId !== request.requester.userId &&
      vote.voter.teamId === request.requester.teamId &&
      (vote.channelId === undefined || vote.channelId === request.channelId) &&
      approvers.has(vote.voter.userId) &&
      Number.isFinite(at) &&
      at >= created &&
      at < expires;
    if (eligible) counted.add(vote.voter.userId);
  }
  if (forged > 0) problems.push(`${forged} vote(s) carry no valid signature of the bot for this request`);
  if (denied) problems.push("it carries a deny vote");
  if (counted.size < request.approvalsRequired) {
    problems.push(
      `only ${counted.size} of the ${request.approvalsRequired} required approval(s) verify as signed votes by eligible approvers`,
    );
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, approvers: [...counted].sort() };
}

/** Whether a request can still be acted on, as far as its signatures go (checked before a vote). */
export type IntegrityCheck = { readonly ok: true } | { readonly ok: false; readonly problem: string };

/**
 * The request document and its current state verify under keys allowed to sign them. A vote on a
 * record that fails could never lead to an execution: the workflow refuses it with this reason.
 */
export function verifyIntegrity(id: string, record: SignedRecord, signer: ApprovalSigner): IntegrityCheck {
  const { request, doc, docMac, state } = record;
  if (request.id !== id) return { ok: false, problem: "its record names another request" };
  const document = signer.checkRequest(id, doc, docMac);
  if (!document.ok) return { ok: false, problem: `its request document is not the bot's (${document.why})` };
  const signed = signer.checkState(request, docMac, state);
  if (!signed.ok)
    return { ok: false, problem: `its ${state.state} state was not recorded by its signer (${signed.why})` };
  return { ok: true };
}

/**
 * The message a request is shown in, when the bot posted it for this request: the only message any
 * repaint or reply about the request may touch (`undefined`: none, or one the bot did not sign).
 */
export function verifiedMessage(
  record: SignedRecord,
  signer: ApprovalSigner,
): { readonly channel: string; readonly ts: string } | undefined {
  const m = record.message;
  if (m === undefined) return undefined;
  if (!signer.checkRequest(record.request.id, record.doc, record.docMac).ok) return undefined;
  return signer.checkMessage(record.request.id, record.docMac, m.channel, m.ts, m.mac).ok
    ? { channel: m.channel, ts: m.ts }
    : undefined;
}

/** A request as its signatures vouch for it, for painting: or why it cannot be shown. */
export type VerifiedView =
  { readonly ok: true; readonly request: ApprovalRequest } | { readonly ok: false; readonly why: string };

/**
 * The request as far as its signatures go, for whoever paints it (a message, a reply, a list): its
 * document and current state must verify, else nothing of it is shown; only the votes the bot signed
 * for it are kept; its message only when the bot signed it for this request; its result only as the
 * state's signature covers it.
 */
export function verifiedRequest(record: SignedRecord, signer: ApprovalSigner): VerifiedView {
  const integrity = verifyIntegrity(record.request.id, record, signer);
  if (!integrity.ok) return { ok: false, why: integrity.problem };
  const { request } = record;
  const votes = request.votes.filter(
    (v) => v.requestId === request.id && signer.checkVote(record.docMac, v).ok,
  );
  const message = verifiedMessage(record, signer);
  // The stored message only when the bot signed it for this request; none otherwise.
  return { ok: true, request: { ...request, votes, message } };
}
