/**
 * Signatures of approval records. Redis is shared infrastructure, so whoever can write to it could
 * otherwise mark a request APPROVED. Every stored request document, every vote, every state
 * transition and the message that shows a request carry an Ed25519 signature (`src/trust/keys.ts`);
 * whoever acts on a record checks them first and refuses anything that does not verify.
 *
 * Who signs what — no key signs for more than one role, and none is shared between clusters:
 * - the bot (it alone verified Slack's signature, so it alone turns a person into a requester or a
 *   voter): the request document, every vote, the message a request is shown in, and the states a
 *   person moves a request to — PENDING, APPROVED, DENIED, CANCELLED;
 * - the workers of the request's cluster (they alone act on it): EXECUTING and how the execution
 *   ended, DONE, STALE or TAMPERED, with its result;
 * - either, or any cluster's workers (whose sweep runs over every request): EXPIRED and FAILED, which
 *   only ever end a request without a change.
 *
 * What each signature binds:
 * - request: the request id and the exact stored document (target with uid, frozen precondition,
 *   patch, requester, channel, cluster, reason, the requester's statements, lifetime, approvals needed);
 * - vote: request id, the request's signature (so an edited plan invalidates every vote), voter user and
 *   team, decision, time and channel;
 * - state: request id, the request's signature, the state, the time of the transition and its result;
 * - message: request id, the request's signature, the channel and the message ts.
 *
 * In Redis the fields keep their first names (`docMac`, `stateMac`, a vote's `mac`): what they hold
 * is a signature, `<key id>.<Ed25519 signature>`.
 */
import { ErrorCode, UnstuckError } from "../errors.js";
import {
  byBot,
  byCluster,
  type KeyOwner,
  type ProcessKeys,
  type SignatureCheck,
  type SigningKey,
} from "../trust/keys.js";
import type { RequestState, Vote } from "../requests/model.js";

/** The fields of a vote its signature binds (everything but the signature itself). */
export interface SignedVoteFields {
  readonly requestId: string;
  readonly voter: { readonly userId: string; readonly teamId: string };
  readonly decision: string;
  readonly at: string;
  readonly channelId?: string;
  readonly reason?: string;
}

/** Who may sign each state of a request for `cluster`. */
function stateSigners(state: string, cluster: string): (owner: KeyOwner) => boolean {
  switch (state as RequestState) {
    case "PENDING":
    case "APPROVED":
    case "DENIED":
    case "CANCELLED":
      return byBot;
    case "EXPIRED":
    case "FAILED":
      return () => true;
    case "EXECUTING":
    case "DONE":
    case "STALE":
    case "TAMPERED":
      return byCluster(cluster);
    default:
      return () => false;
  }
}

/** The error a write raises where its signer's key is not held: the terminal reads, only the bot and workers sign. */
export function missingSignerError(what: "bot" | "worker"): UnstuckError {
  return what === "bot"
    ? new UnstuckError(
        ErrorCode.Config,
        "UNSTUCK_BOT_SIGNING_KEY is not set here: only the bot (it verifies Slack's signature) signs requests, votes and the states a person moves a request to.",
        { variable: "UNSTUCK_BOT_SIGNING_KEY" },
      )
    : new UnstuckError(
        ErrorCode.Config,
        "UNSTUCK_WORKER_SIGNING_KEY is not set here: only a cluster's workers sign what they execute.",
        { variable: "UNSTUCK_WORKER_SIGNING_KEY" },
      );
}

export class ApprovalSigner {
  public constructor(public readonly keys: ProcessKeys) {}

  /** Never print the keys. */
  public toJSON(): string {
    return "[ApprovalSigner]";
  }

  /** The cluster a request is for (`cluster` in its document, else this install's). */
  public clusterOf(request: { readonly cluster?: string | undefined }): string {
    return request.cluster ?? this.keys.localCluster;
  }

  private get bot(): SigningKey {
    if (this.keys.bot === undefined) throw missingSignerError("bot");
    return this.keys.bot;
  }

  /** The key that signs `state` here: the bot's for a person's states, the workers' for an execution's. */
  private keyFor(state: string): SigningKey {
    const signers = stateSigners(
      state,
      this.keys.worker?.owner.kind === "cluster" ? this.keys.worker.owner.cluster : "",
    );
    if (this.keys.worker !== undefined && signers(this.keys.worker.owner)) return this.keys.worker;
    if (this.keys.bot !== undefined && signers(this.keys.bot.owner)) return this.keys.bot;
    throw missingSignerError(signers({ kind: "bot" }) ? "bot" : "worker");
  }

  /** Whether this process can sign `state` (a process without the key leaves that transition to another). */
  public canSign(state: string): boolean {
    try {
      this.keyFor(state);
      return true;
    } catch {
      return false;
    }
  }

  /** Signature of a request: its id and the stored document, byte for byte. */
  public requestSig(id: string, doc: string): string {
    return this.bot.sign("request", [id, doc]);
  }

  public checkRequest(id: string, doc: string, sig: unknown): SignatureCheck {
    return this.keys.keyring.verify("request", [id, doc], sig, byBot);
  }

  /** Signature of a vote, bound to the request (id and request signature). */
  public voteSig(docSig: string, vote: SignedVoteFields): string {
    return this.bot.sign("vote", voteFields(docSig, vote));
  }

  public checkVote(docSig: string, vote: Vote): SignatureCheck {
    if (vote.requestId === undefined) return { ok: false, why: "the vote names no request" };
    return this.keys.keyring.verify(
      "vote",
      voteFields(docSig, { ...vote, requestId: vote.requestId }),
      vote.mac,
      byBot,
    );
  }

  /** Signature of a state transition: the request is in `state` since `at`, with `result` ("" for none). */
  public stateSig(requestId: string, docSig: string, state: string, at: string, result = ""): string {
    return this.keyFor(state).sign("state", [requestId, docSig, state, at, result]);
  }

  public checkState(
    request: { readonly id: string; readonly cluster?: string | undefined },
    docSig: string,
    state: { readonly state: string; readonly at: string; readonly mac: string; readonly result?: string },
  ): SignatureCheck {
    return this.keys.keyring.verify(
      "state",
      [request.id, docSig, state.state, state.at, state.result ?? ""],
      state.mac,
      stateSigners(state.state, this.clusterOf(request)),
    );
  }

  /** Signature of the message a request is shown in (the bot posted it). */
  public messageSig(requestId: string, docSig: string, channel: string, ts: string): string {
    return this.bot.sign("request-message", [requestId, docSig, channel, ts]);
  }

  public checkMessage(
    requestId: string,
    docSig: string,
    channel: string,
    ts: string,
    sig: unknown,
  ): SignatureCheck {
    return this.keys.keyring.verify("request-message", [requestId, docSig, channel, ts], sig, byBot);
  }
}

function voteFields(docSig: string, vote: SignedVoteFields): string[] {
  return [
    vote.requestId,
    docSig,
    vote.voter.userId,
    vote.voter.teamId,
    vote.decision,
    vote.at,
    vote.channelId ?? "",
    // Only when given, so a vote without one is signed exactly as before reasons existed.
    ...(vote.reason !== undefined ? [vote.reason] : []),
  ];
}
