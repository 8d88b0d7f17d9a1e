/**
 * The calls a fleet's bot sends to a cluster's workers, and their answers, as they cross Redis: each
 * signed by its sender and checked by its receiver, so whoever can write to Redis — or consume a
 * cluster's queue — can neither make a worker act for a person nor make the bot believe an answer.
 *
 * A call is signed by the bot (`src/trust/keys.ts`), the only process that verified Slack's signature:
 * it names the person (actor or requester), the cluster it is for, a nonce and when it expires. A worker
 * runs it only when the bot's signature verifies, the cluster is its own, it has not expired and its nonce
 * was never seen (`openCall`); anything else is refused and audited. An answer is signed by the cluster's
 * workers and names the call's nonce: the bot reads only an answer of that cluster's workers to that very
 * call (`openAnswer`). Pure: the nonce's one use is claimed in Redis by the caller.
 */
import { randomBytes } from "node:crypto";
import type { Actor } from "../command-result.js";
import type { RemovalRequestInput } from "../requests/model.js";
import type { ErrorCode, ErrorDetails } from "../errors.js";
import type { RepairFormInput, RepairSubject } from "../traffic/repoint.js";
import { byBot, byCluster, type Keyring, type SigningKey } from "../trust/keys.js";
import { seal, unseal, type Sealed } from "../trust/sealed.js";

export type { Sealed } from "../trust/sealed.js";

/** What a cluster's worker is asked to run for the bot. */
export type RemoteCall =
  | {
      readonly kind: "command";
      readonly text: string;
      readonly actor: Actor;
      readonly prefix?: string;
    }
  | { readonly kind: "removal-request"; readonly input: RemovalRequestInput }
  | { readonly kind: "repair-request"; readonly input: RepairFormInput }
  | { readonly kind: "repair-check"; readonly subject: RepairSubject }
  | { readonly kind: "diagnose"; readonly namespace: string };

/** A call as signed: for whom, where, once, until when. */
export interface CallEnvelope {
  readonly v: 1;
  readonly cluster: string;
  /** 128 random bits: a call runs once, and its answer names it. */
  readonly nonce: string;
  /** Epoch ms on the bot's clock. */
  readonly issuedAt: number;
  /** Epoch ms past which nobody waits for the answer: a worker that takes the call later runs nothing. */
  readonly expiresAt: number;
  readonly call: RemoteCall;
}

/** The answer of a remote call: its value, or the user-facing error it ended with. */
export type RemoteAnswer =
  | { readonly ok: true; readonly value: unknown }
  | {
      readonly ok: false;
      readonly error: { readonly code: ErrorCode; readonly message: string; readonly details: ErrorDetails };
    };

interface AnswerEnvelope {
  readonly v: 1;
  readonly cluster: string;
  readonly nonce: string;
  readonly answer: RemoteAnswer;
}

/** How far a worker's clock may be behind or ahead of the bot's before a call counts as expired or early. */
export const CLOCK_SKEW_MS = 30_000;

/** A new call to `cluster`, signed by the bot, valid for `ttlMs`. */
export function sealCall(
  bot: SigningKey,
  cluster: string,
  call: RemoteCall,
  now: number,
  ttlMs: number,
): {
  readonly envelope: CallEnvelope;
  readonly sealed: Sealed;
} {
  const envelope: CallEnvelope = {
    v: 1,
    cluster,
    nonce: randomBytes(16).toString("base64url"),
    issuedAt: now,
    expiresAt: now + ttlMs,
    call,
  };
  return { envelope, sealed: seal(bot, "remote-call", envelope) };
}

/** Why a worker refuses a call, or the call to run. */
export type OpenedCall =
  { readonly ok: true; readonly envelope: CallEnvelope } | { readonly ok: false; readonly why: string };

/**
 * A call as a worker of `cluster` may run it: the bot's, for this cluster, not expired (nor issued
 * in the future beyond the clock skew). The nonce's one use is the caller's to claim.
 */
export function openCall(keyring: Keyring, cluster: string, data: unknown, now: number): OpenedCall {
  const opened = unseal<CallEnvelope>(keyring, "remote-call", data, byBot);
  if (!opened.ok) {
    return {
      ok: false,
      why:
        opened.why === "it is not signed"
          ? "it is not a signed call (no payload and signature)"
          : `it is not the bot's call: ${opened.why}`,
    };
  }
  const envelope = opened.data;
  if (envelope.v !== 1 || typeof envelope.nonce !== "string" || typeof envelope.call?.kind !== "string") {
    return { ok: false, why: "its payload is not a call of this version" };
  }
  if (envelope.cluster !== cluster) {
    return {
      ok: false,
      why: `it is for cluster ${envelope.cluster}, and this worker serves ${cluster}`,
    };
  }
  if (!(now <= envelope.expiresAt)) return { ok: false, why: "it expired before a worker took it" };
  if (envelope.issuedAt > now + CLOCK_SKEW_MS) return { ok: false, why: "it was issued in the future" };
  return { ok: true, envelope };
}

/** A worker's answer to the call `envelope`, signed with its cluster's key. */
export function sealAnswer(worker: SigningKey, envelope: CallEnvelope, answer: RemoteAnswer): Sealed {
  const body: AnswerEnvelope = { v: 1, cluster: envelope.cluster, nonce: envelope.nonce, answer };
  return seal(worker, "remote-answer", body);
}

/** The answer to `envelope` when its cluster's workers signed it for this very call; why not otherwise. */
export function openAnswer(
  keyring: Keyring,
  envelope: CallEnvelope,
  data: unknown,
): { readonly ok: true; readonly answer: RemoteAnswer } | { readonly ok: false; readonly why: string } {
  const opened = unseal<AnswerEnvelope>(keyring, "remote-answer", data, byCluster(envelope.cluster));
  if (!opened.ok) {
    return {
      ok: false,
      why:
        opened.why === "it is not signed"
          ? "the answer is not signed"
          : `the answer is not cluster ${envelope.cluster}'s workers': ${opened.why}`,
    };
  }
  const body = opened.data;
  if (body.v !== 1 || body.cluster !== envelope.cluster || body.nonce !== envelope.nonce) {
    return { ok: false, why: "the answer is to another call" };
  }
  if (typeof body.answer !== "object" || body.answer === null || typeof body.answer.ok !== "boolean") {
    return { ok: false, why: "the answer is not an answer" };
  }
  return { ok: true, answer: body.answer };
}
