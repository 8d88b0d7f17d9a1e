/**
 * Redis store for approval requests. Every state transition is one Lua script (`src/redis/lua/approval-*.lua`),
 * so concurrent clicks, workers and sweeps can never interleave a check with a write.
 *
 * Keys (all under the configured prefix):
 * - `<prefix>:req:<id>`         hash: `doc` (immutable JSON), `state`, counters, `message`, `result`
 * - `<prefix>:req:<id>:voters`  set of user ids that voted (one vote per person)
 * - `<prefix>:req:<id>:votes`   list of vote JSON, in order
 * - `<prefix>:pending`          sorted set of PENDING ids by expiry (ms)
 * - `<prefix>:approved`         sorted set of APPROVED, not yet claimed ids by approval time (ms)
 * - `<prefix>:open:<target>`    id of the PENDING request for one object (one pending request each);
 *                               in a fleet `<target>` starts with the cluster (`@c1/…`, `requestSubject`)
 * - `<prefix>:finished:<id>`    how a request ended (state, time, state MAC, result), set by every
 *                               terminal transition and kept longer than the request itself: a hash
 *                               rolled back to an earlier signed state is refused and put back
 *                               (`approval-prelude-finished.lua` in `src/redis/lua/`), so a finished request never runs again
 * - `<prefix>:requeues:<id>`    how often the sweep re-queued an approved request (bounded)
 *
 * Integrity: the hash holds `docMac` (the bot's signature of id and `doc`), `stateMac` (the signature of
 * the state, its time and its result, by whoever may sign that state) and `messageMac` (the bot's
 * signature of the message that shows the request); every vote carries its own. They are made here,
 * with this process's keys (`integrity.ts`), and stored by the scripts; Redis never holds a private
 * key, so a record written straight into Redis does not verify (see `verify.ts`). Reads need no key;
 * every write needs the key of its signer.
 *
 * Audit: a transition's entry is written by its own script; each script returns the entries it
 * wrote beside its reply, and the store logs each one (`logAuditEntry`), with the change the
 * caller's template named (which the stream does not keep).
 *
 * The store is split by concern: `store-context.ts` (keys, signer, the runner of the scripts below),
 * `store-reads.ts`, `store-pending.ts` (filing, votes, cancel, expiry), `store-execution.ts` (claim,
 * finish, requeue) and `store-bookkeeping.ts` (the request's message, the follow-up outbox); this
 * class is their one face.
 */
import { loadScript, readLua, type RedisScript } from "../redis/scripts.js";
import type { RedisConnection } from "../redis-connection.js";
import type {
  ApprovalRequest,
  ExecutionResult,
  Identity,
  MessageRef,
  VoteDecision,
} from "../requests/model.js";
import {
  verifiedRequest,
  verifyIntegrity,
  type IntegrityCheck,
  type SignedRecord,
  type VerifiedView,
} from "./verify.js";
import { ApprovalKeys } from "../redis/keys.js";
import { signerOf, storeContext, type StoreContext, type TransitionScripts } from "./store-context.js";
import { listPending, liveIds, readRequest, readSigned } from "./store-reads.js";
import { cancelRequest, castVote, createRequest, expireDue } from "./store-pending.js";
import {
  claimExecution,
  endUnverified,
  finishExecution,
  requeue,
  type EndUnverifiedOutcome,
} from "./store-execution.js";
import {
  claimFollowUp,
  followUpPending,
  followUpRan,
  followUpsDue,
  setMessage,
} from "./store-bookkeeping.js";

export type { SignedRecord, SignedState } from "./verify.js";

export type * from "./store-types.js";
import type {
  NewRequest,
  VoteOutcome,
  CancelOutcome,
  ClaimOutcome,
  RequeueOutcome,
  FollowUpOf,
  FinishOutcome,
  ApprovalStoreOptions,
  AuditTemplate,
} from "./store-types.js";

/**
 * A transition's script: its file's body runs as a function after the shared preludes, so that the
 * whole script returns its reply and the audit entries it wrote (`AUDIT_WRITTEN`, see
 * `approval-prelude-audit.lua`). Its key count (in the file's name) counts the audit stream, which
 * every transition takes as its last key.
 */
function transition(file: string): RedisScript {
  const preludes = ["audit", "open", "finished"].map((p) => readLua(`approval-prelude-${p}.lua`)).join("\n");
  return loadScript(
    file,
    (body) =>
      `${preludes}\nlocal function main()\n${body}\nend\nlocal reply = main()\nreturn { reply, AUDIT_WRITTEN }\n`,
  );
}

/** The store's transitions, one script each, handed to its parts with its context. */
const SCRIPTS: TransitionScripts = {
  create: transition("approval-create.4.lua"),
  vote: transition("approval-vote.7.lua"),
  cancel: transition("approval-cancel.6.lua"),
  claim: transition("approval-claim.4.lua"),
  finish: transition("approval-finish.6.lua"),
  expire: transition("approval-expire.2.lua"),
  setMessage: transition("approval-set-message.1.lua"),
  requeue: transition("approval-requeue.7.lua"),
  endUnverified: transition("approval-end-unverified.7.lua"),
};

/** Requests by state where the store keeps an index, for `/metrics`. */
export interface ApprovalIndexCounts {
  /** Waiting for votes (the pending set). */
  readonly pending: number;
  /** Of those, past their expiry and not yet swept. */
  readonly pendingOverdue: number;
  /** Approved, not yet claimed by an executor (the approved set). */
  readonly approved: number;
}

/**
 * Counts from the store's own indexes under `prefix` (the store's prefix): one ZCARD, ZCOUNT and
 * ZCARD — constant cost whatever the history, since finished requests are in no index.
 */
export async function approvalIndexCounts(
  redis: Pick<RedisConnection, "zcard" | "zcount">,
  prefix: string,
  now: Date,
): Promise<ApprovalIndexCounts> {
  const [pending, pendingOverdue, approved] = await Promise.all([
    redis.zcard(ApprovalKeys.pending(prefix)),
    redis.zcount(ApprovalKeys.pending(prefix), "-inf", now.getTime()),
    redis.zcard(ApprovalKeys.approved(prefix)),
  ]);
  return { pending, pendingOverdue, approved };
}

/** Redis-backed approval requests with atomic transitions. */
export class ApprovalStore {
  private readonly ctx: StoreContext;

  public constructor(redis: RedisConnection, options: ApprovalStoreOptions) {
    this.ctx = storeContext(redis, options, SCRIPTS);
  }

  /** The audit stream this store's transitions write their entries to (`undefined`: none). */
  public get auditKey(): string | undefined {
    return this.ctx.options.auditKey;
  }

  /**
   * Store a new PENDING request; throws `Conflict` if the id is taken, or if a request for the same
   * object is still pending (`details.existingRequestId` names it).
   */
  public async create(
    request: NewRequest,
    now: Date = new Date(request.createdAt),
    audit?: AuditTemplate,
  ): Promise<ApprovalRequest> {
    return createRequest(this.ctx, request, now, audit);
  }

  /** The request, or `null` when unknown (or the id is malformed). */
  public async get(id: string): Promise<ApprovalRequest | null> {
    return readRequest(this.ctx, id);
  }

  /** The request with its MACs and the raw document they cover; `null` when unknown. */
  public async getSigned(id: string): Promise<SignedRecord | null> {
    return readSigned(this.ctx, id);
  }

  /**
   * Record a vote (see `approval-vote.7.lua`). The caller checks the approver list first. `channelId`
   * is where the vote was cast; it is bound into the vote's MAC.
   */
  public async vote(
    id: string,
    voter: Identity,
    decision: VoteDecision,
    now: Date,
    channelId?: string,
    audit?: AuditTemplate,
    reason?: string,
  ): Promise<VoteOutcome> {
    return castVote(this.ctx, id, voter, decision, now, { channelId, audit, reason });
  }

  /** Cancel a PENDING request on behalf of `actor` (see `approval-cancel.6.lua`). */
  public async cancel(id: string, actor: Identity, now: Date, audit?: AuditTemplate): Promise<CancelOutcome> {
    return cancelRequest(this.ctx, id, actor, now, audit);
  }

  /** APPROVED → EXECUTING (or take over a dead attempt's EXECUTING) under `token`. */
  public async claimExecution(
    id: string,
    token: string,
    now: Date,
    audit?: AuditTemplate,
  ): Promise<ClaimOutcome> {
    return claimExecution(this.ctx, id, token, now, audit);
  }

  /** EXECUTING → DONE/FAILED/STALE, only for the attempt holding `token`. */
  public async finishExecution(
    id: string,
    token: string,
    state: "DONE" | "FAILED" | "STALE" | "TAMPERED",
    result: ExecutionResult,
    now: Date,
    audit?: AuditTemplate,
    followUp?: FollowUpOf,
  ): Promise<FinishOutcome> {
    return finishExecution(this.ctx, id, token, now, { state, result, audit, followUp });
  }

  /** Mark every PENDING request past its expiry EXPIRED; returns the ids this call expired. */
  public async expireDue(
    now: Date,
    limit = 500,
    auditFor?: (request: ApprovalRequest) => AuditTemplate,
  ): Promise<string[]> {
    return expireDue(this.ctx, now, limit, auditFor);
  }

  /**
   * Ids approved at or before `approvedBefore` that no executor has claimed yet: normally none
   * for long; any found mean an enqueue was lost (e.g. Redis hiccup right after the vote).
   */
  public async approvedUnclaimed(approvedBefore: Date, limit = 500): Promise<string[]> {
    const key = ApprovalKeys.approved(this.ctx.options.prefix);
    return this.ctx.redis.zrangebyscore(key, "-inf", approvedBefore.getTime(), "LIMIT", 0, limit);
  }

  /**
   * The sweep's requeue of an approved, unclaimed request (see `approval-requeue.7.lua`): `check` before
   * the enqueue (a request that ended already is refused, one no longer APPROVED unlisted), `count`
   * after it; past `maxRequeues` counted requeues the request ends FAILED with `result`.
   * `audit` is the template of the refusal's or the end's entry.
   */
  public async requeue(
    id: string,
    mode: "check" | "count",
    now: Date,
    maxRequeues: number,
    result: ExecutionResult,
    audit?: AuditTemplate,
  ): Promise<RequeueOutcome> {
    return requeue(this.ctx, id, now, { mode, maxRequeues, result, audit });
  }

  /**
   * End a request whose record cannot be trusted, before anything executes it (see
   * `approval-end-unverified.7.lua`): `found` PENDING ends EXPIRED, APPROVED ends FAILED, with `result`.
   */
  public async endUnverified(
    id: string,
    found: "PENDING" | "APPROVED",
    result: ExecutionResult,
    now: Date,
    audit?: AuditTemplate,
  ): Promise<EndUnverifiedOutcome> {
    return endUnverified(this.ctx, id, found, result, now, audit);
  }

  /** Ids the store lists as live: pending (any expiry) and approved, not yet claimed. */
  public async liveIds(limit = 1_000): Promise<{ pending: string[]; approved: string[] }> {
    return liveIds(this.ctx, limit);
  }

  /**
   * The request as its signatures vouch for it (`null`: no such request), for painting: see
   * `verifiedRequest`. Needs the keyring, not a private key.
   */
  public async getVerified(id: string): Promise<VerifiedView | null> {
    const record = await this.getSigned(id);
    if (!record) return null;
    return verifiedRequest(record, signerOf(this.ctx));
  }

  /**
   * Whether the request's document and current state verify as their signers' (`null`: no such
   * request). Needs the keyring, not a private key.
   */
  public async checkIntegrity(id: string): Promise<IntegrityCheck | null> {
    const record = await this.getSigned(id);
    if (!record) return null;
    return verifyIntegrity(id, record, signerOf(this.ctx));
  }

  /**
   * Remember the Slack message showing the request, signed by the bot that posted it (a repaint or a
   * reply touches no other message); false when the request is unknown.
   */
  public async setMessage(id: string, message: MessageRef): Promise<boolean> {
    return setMessage(this.ctx, id, message);
  }

  /** Whether what follows the request's outcome is still to run (recorded with its outcome). */
  public async followUpPending(cluster: string, id: string): Promise<boolean> {
    return followUpPending(this.ctx, cluster, id);
  }

  /**
   * Take the request's follow-up to run it: true when it is in the outbox and no other runner holds it
   * (its score is not in the future); it is then held `leaseMs` (the sweep leaves it alone that long,
   * and takes it again after, should this runner die in it).
   */
  public async claimFollowUp(cluster: string, id: string, now: Date, leaseMs: number): Promise<boolean> {
    return claimFollowUp(this.ctx, cluster, id, now, leaseMs);
  }

  /** The follow-ups recorded before `before` and not run yet (oldest first, at most `limit`). */
  public async followUpsDue(cluster: string, before: Date, limit = 100): Promise<string[]> {
    return followUpsDue(this.ctx, cluster, before, limit);
  }

  /** What follows the request's outcome has run (its waits started, its replies posted). */
  public async followUpRan(cluster: string, id: string): Promise<void> {
    return followUpRan(this.ctx, cluster, id);
  }

  /**
   * PENDING requests not yet expired, soonest expiry first, one page in two round trips
   * (ids, then every hash and vote list in one pipeline).
   */
  public async listPending(
    now: Date,
    page: { offset?: number; limit?: number } = {},
  ): Promise<ApprovalRequest[]> {
    return listPending(this.ctx, now, page);
  }

  /** Delete every key under this store's prefix (tests and teardown only). */
  public async destroy(): Promise<void> {
    const { redis, options } = this.ctx;
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", ApprovalKeys.all(options.prefix), "COUNT", 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  }
}
