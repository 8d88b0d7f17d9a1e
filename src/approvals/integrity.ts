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
 *
 * Key rotation: every MAC is stored as `<key id>.<HMAC>`, the key id being a fingerprint of the key
 * that made it (an HMAC of a fixed string under that key: it tells keys apart and reveals nothing of
 * them). New MACs are always made with the current key (`UNSTUCK_APPROVAL_KEY`); during a rotation
 * window the previous key (`UNSTUCK_APPROVAL_KEY_PREVIOUS`) still verifies what it signed, and never
 * signs. A MAC whose key id is neither theirs was made with a retired key: the record is refused
 * all the same, but said to be that, not tampered with. (Redis can be written by whoever holds it,
 * so the key id is a claim, never a proof: a record only ever passes by verifying.) MACs written
 * before key ids existed carry none; they are checked against the current and the previous key.
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

/** Which key a stored MAC claims to be made with (from its key id). */
export type MacKey = "current" | "previous" | "retired" | "none";

/** A key's fingerprint as stored beside its MACs: 8 bytes of an HMAC of a fixed string, base64url. */
function fingerprint(key: Buffer): string {
  return createHmac("sha256", key)
    .update("unstuck/approval/key-id")
    .digest()
    .subarray(0, 8)
    .toString("base64url");
}

const KEY_ID = /^[A-Za-z0-9_-]{11}$/;

function keyBytes(key: string | Buffer, variable: string): Buffer {
  const bytes = typeof key === "string" ? Buffer.from(key, "utf8") : Buffer.from(key);
  if (bytes.length < MIN_APPROVAL_KEY_BYTES) {
    throw new UnstuckError(
      ErrorCode.Config,
      `${variable} must be at least ${MIN_APPROVAL_KEY_BYTES} bytes (e.g. \`openssl rand -base64 48\`).`,
      { variable },
    );
  }
  return bytes;
}

export interface ApprovalSignerOptions {
  /** `UNSTUCK_APPROVAL_KEY_PREVIOUS`: verifies records it signed during a rotation window; never signs. */
  readonly previous?: string | Buffer;
}

export class ApprovalSigner {
  readonly #key: Buffer;
  readonly #previous: Buffer | undefined;
  /** Fingerprint of the current key, stored beside every MAC it makes. */
  public readonly keyId: string;
  /** Fingerprint of the previous key, when one is configured. */
  public readonly previousKeyId: string | undefined;

  public constructor(key: string | Buffer, options: ApprovalSignerOptions = {}) {
    this.#key = keyBytes(key, "UNSTUCK_APPROVAL_KEY");
    this.keyId = fingerprint(this.#key);
    if (options.previous !== undefined) {
      const previous = keyBytes(options.previous, "UNSTUCK_APPROVAL_KEY_PREVIOUS");
      if (previous.equals(this.#key)) {
        throw new UnstuckError(
          ErrorCode.Config,
          "UNSTUCK_APPROVAL_KEY_PREVIOUS is the same key as UNSTUCK_APPROVAL_KEY: set it to the key being retired, or unset it.",
          { variable: "UNSTUCK_APPROVAL_KEY_PREVIOUS" },
        );
      }
      this.#previous = previous;
      this.previousKeyId = fingerprint(previous);
    } else {
      this.#previous = undefined;
      this.previousKeyId = undefined;
    }
  }

  /** Never print the keys. */
  public toJSON(): string {
    return "[ApprovalSigner]";
  }

  private static hmac(key: Buffer, kind: string, fields: readonly string[]): string {
    return createHmac("sha256", key)
      .update(JSON.stringify(["unstuck/approval/v1", kind, ...fields]))
      .digest("base64url");
  }

  /** A new MAC: always under the current key, with its key id. */
  private mac(kind: string, fields: readonly string[]): string {
    return `${this.keyId}.${ApprovalSigner.hmac(this.#key, kind, fields)}`;
  }

  /** The key id a stored MAC names, or `undefined` for one without (made before key ids) or not a MAC. */
  public static keyIdOf(mac: unknown): string | undefined {
    if (typeof mac !== "string") return undefined;
    const dot = mac.indexOf(".");
    const id = dot < 0 ? "" : mac.slice(0, dot);
    return KEY_ID.test(id) ? id : undefined;
  }

  /**
   * Which key a stored MAC claims: the current or previous one, a retired one (a key id this bot
   * does not hold), or none (no key id: absent, malformed, or made before key ids existed).
   */
  public keyOf(mac: unknown): MacKey {
    const id = ApprovalSigner.keyIdOf(mac);
    if (id === undefined) return "none";
    if (id === this.keyId) return "current";
    if (id === this.previousKeyId) return "previous";
    return "retired";
  }

  private check(kind: string, fields: readonly string[], actual: unknown): boolean {
    if (typeof actual !== "string") return false;
    const equal = (expected: string, got: string): boolean => {
      const a = Buffer.from(expected);
      const b = Buffer.from(got);
      return a.length === b.length && timingSafeEqual(a, b);
    };
    const id = ApprovalSigner.keyIdOf(actual);
    if (id !== undefined) {
      const key = id === this.keyId ? this.#key : id === this.previousKeyId ? this.#previous : undefined;
      if (key === undefined) return false;
      return equal(`${id}.${ApprovalSigner.hmac(key, kind, fields)}`, actual);
    }
    // Made before key ids: the current key, then the previous one.
    const keys = this.#previous !== undefined ? [this.#key, this.#previous] : [this.#key];
    return keys.some((key) => equal(ApprovalSigner.hmac(key, kind, fields), actual));
  }

  /** MAC of a request: its id and the stored document, byte for byte. */
  public requestMac(id: string, doc: string): string {
    return this.mac("request", [id, doc]);
  }

  public verifyRequest(id: string, doc: string, mac: unknown): boolean {
    return this.check("request", [id, doc], mac);
  }

  /** MAC of a vote, bound to the request (id and request MAC). */
  public voteMac(requestMac: string, vote: SignedVoteFields): string {
    return this.mac("vote", voteFields(requestMac, vote));
  }

  public verifyVote(requestMac: string, vote: Vote): boolean {
    if (vote.requestId === undefined) return false;
    return this.check("vote", voteFields(requestMac, { ...vote, requestId: vote.requestId }), vote.mac);
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
    return this.check("state", [requestId, requestMac, state, at], mac);
  }
}

function voteFields(requestMac: string, vote: SignedVoteFields): string[] {
  return [
    vote.requestId,
    requestMac,
    vote.voter.userId,
    vote.voter.teamId,
    vote.decision,
    vote.at,
    vote.channelId ?? "",
  ];
}

/** The error a write without a key raises: the terminal can read approvals, only the bot signs them. */
export function missingSignerError(): UnstuckError {
  return new UnstuckError(
    ErrorCode.Config,
    "UNSTUCK_APPROVAL_KEY is not set: approval records cannot be signed, so none can be written.",
    { variable: "UNSTUCK_APPROVAL_KEY" },
  );
}
