/**
 * Integrity of approval records. Redis is shared infrastructure, so whoever can write to it could
 * otherwise mark a request APPROVED. Every stored request document, every vote and every state
 * transition therefore carries an HMAC-SHA256 under a key the bot holds outside Redis
 * (`UNSTUCK_APPROVAL_KEY`); the executor recomputes them before it acts and refuses anything that
 * does not verify.
 *
 * What each MAC binds:
 * - request: the request id and the exact stored document (target with uid, frozen precondition,
 *   patch, requester, channel, reason, the requester's confirmed statements, lifetime, approvals
 *   required);
 * - vote: request id, the request MAC (so an edited plan invalidates every vote), voter user and
 *   team, decision, time and channel;
 * - state: request id, the request MAC, the state and the time of the transition.
 *
 * Inputs are encoded as a JSON array with a domain tag first, so no two different field lists
 * share an encoding and a MAC of one kind never verifies as another.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { Vote } from "./types.js";

/** The shortest key accepted, in bytes (HMAC-SHA256's block of security). */
export const MIN_APPROVAL_KEY_BYTES = 32;

/** A fresh random key (tests and the local sandbox generate one per process). */
export function randomApprovalKey(): string {
  return randomBytes(48).toString("base64url");
}

/** The fields of a vote its MAC binds (everything but the MAC itself). */
export interface SignedVoteFields {
  readonly requestId: string;
  readonly voter: { readonly userId: string; readonly teamId: string };
  readonly decision: string;
  readonly at: string;
  readonly channelId?: string;
}

export class ApprovalSigner {
  readonly #key: Buffer;

  public constructor(key: string | Buffer) {
    const bytes = typeof key === "string" ? Buffer.from(key, "utf8") : Buffer.from(key);
    if (bytes.length < MIN_APPROVAL_KEY_BYTES) {
      throw new UnstuckError(
        ErrorCode.Config,
        `UNSTUCK_APPROVAL_KEY must be at least ${MIN_APPROVAL_KEY_BYTES} bytes (e.g. \`openssl rand -base64 48\`).`,
        { variable: "UNSTUCK_APPROVAL_KEY" },
      );
    }
    this.#key = bytes;
  }

  /** Never print the key. */
  public toJSON(): string {
    return "[ApprovalSigner]";
  }

  private mac(kind: string, fields: readonly string[]): string {
    return createHmac("sha256", this.#key)
      .update(JSON.stringify(["unstuck/approval/v1", kind, ...fields]))
      .digest("base64url");
  }

  private check(expected: string, actual: unknown): boolean {
    if (typeof actual !== "string") return false;
    const a = Buffer.from(expected);
    const b = Buffer.from(actual);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  /** MAC of a request: its id and the stored document, byte for byte. */
  public requestMac(id: string, doc: string): string {
    return this.mac("request", [id, doc]);
  }

  public verifyRequest(id: string, doc: string, mac: unknown): boolean {
    return this.check(this.requestMac(id, doc), mac);
  }

  /** MAC of a vote, bound to the request (id and request MAC). */
  public voteMac(requestMac: string, vote: SignedVoteFields): string {
    return this.mac("vote", [
      vote.requestId,
      requestMac,
      vote.voter.userId,
      vote.voter.teamId,
      vote.decision,
      vote.at,
      vote.channelId ?? "",
    ]);
  }

  public verifyVote(requestMac: string, vote: Vote): boolean {
    if (vote.requestId === undefined) return false;
    return this.check(this.voteMac(requestMac, { ...vote, requestId: vote.requestId }), vote.mac);
  }

  /** MAC of a state transition: the request is in `state` since `at`. */
  public stateMac(requestId: string, requestMac: string, state: string, at: string): string {
    return this.mac("state", [requestId, requestMac, state, at]);
  }

  public verifyState(
    requestId: string,
    requestMac: string,
    state: string,
    at: string,
    mac: unknown,
  ): boolean {
    return this.check(this.stateMac(requestId, requestMac, state, at), mac);
  }
}

/** The error a write without a key raises: the terminal can read approvals, only the bot signs them. */
export function missingSignerError(): UnstuckError {
  return new UnstuckError(
    ErrorCode.Config,
    "UNSTUCK_APPROVAL_KEY is not set: approval records cannot be signed, so none can be written.",
    { variable: "UNSTUCK_APPROVAL_KEY" },
  );
}
