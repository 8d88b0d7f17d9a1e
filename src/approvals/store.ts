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
 */
import { createHash } from "node:crypto";
import { loadScript, readLua, type RedisScript } from "../redis/scripts.js";
import type { RedisConnection } from "../redis-connection.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import type {
  ApprovalAction,
  ApprovalRequest,
  ExecutionResult,
  Identity,
  MessageRef,
  RequestState,
  Vote,
  VoteDecision,
} from "../requests/model.js";
import { isRequestId } from "../requests/model.js";
import { requestSubject } from "../requests/action-kinds.js";
import { streamFields, type AuditEntry } from "../audit/entry.js";
import { logAuditEntry } from "../audit/log.js";
import type { ApprovalSigner } from "./integrity.js";
import {
  verifiedRequest,
  verifyIntegrity,
  type IntegrityCheck,
  type SignedRecord,
  type SignedState,
  type VerifiedView,
} from "./verify.js";
import { ApprovalKeys } from "../redis/keys.js";

export type { SignedRecord, SignedState };

export type * from "./store-types.js";
import type {
  NewRequest,
  VoteStatus,
  VoteOutcome,
  CancelOutcome,
  ClaimOutcome,
  RequeueOutcome,
  FollowUpOf,
  FinishOutcome,
  ApprovalStoreOptions,
  AuditTemplate,
} from "./store-types.js";

/** A script's own reply, and the audit entries (JSON) it wrote to the stream. */
interface ScriptResult {
  readonly reply: unknown;
  readonly written: readonly string[];
}

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

async function runTransition(
  script: RedisScript,
  redis: RedisConnection,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<ScriptResult> {
  const [reply, written] = tuple(await script.run(redis, keys, args));
  return { reply, written: Array.isArray(written) ? written.map(str) : [] };
}

/** Takes a follow-up from the outbox unless another runner holds it. */
const CLAIM_FOLLOW_UP = loadScript("follow-up-claim.1.lua");

const SCRIPTS = {
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

function tuple(reply: unknown): unknown[] {
  if (!Array.isArray(reply)) throw new Error("unexpected reply from approval script");
  return reply as unknown[];
}

function str(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  return "";
}

function num(value: unknown): number {
  return typeof value === "number" ? value : Number(value ?? 0);
}

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

/** Refuse anything not shaped like an id we issued, before it reaches a key name. */
export function assertRequestId(id: string): void {
  if (!isRequestId(id)) {
    throw new UnstuckError(
      ErrorCode.NotFound,
      "No such approval request (the id is not one this bot issued).",
      {
        requestId: id.slice(0, 64),
      },
    );
  }
}

/** Redis-backed approval requests with atomic transitions. */
export class ApprovalStore {
  private readonly retention: number;
  private readonly finishedRetention: number;

  public constructor(
    private readonly redis: RedisConnection,
    private readonly options: ApprovalStoreOptions,
  ) {
    this.retention = options.retentionSeconds ?? 30 * 86_400;
    this.finishedRetention = Math.max(this.retention, options.finishedRetentionSeconds ?? 365 * 86_400);
  }

  private requestKey(id: string): string {
    return ApprovalKeys.request(this.options.prefix, id);
  }

  private markerKey(id: string): string {
    return ApprovalKeys.finished(this.options.prefix, id);
  }

  private requeueKey(id: string): string {
    return ApprovalKeys.requeues(this.options.prefix, id);
  }

  /** The follow-up outbox of one cluster's workers (see `approval-finish.6.lua`): request id -> ms recorded. */
  private followUpKey(cluster: string): string {
    return ApprovalKeys.followUps(this.options.prefix, cluster);
  }

  /** Whether what follows the request's outcome is still to run (recorded with its outcome). */
  public async followUpPending(cluster: string, id: string): Promise<boolean> {
    assertRequestId(id);
    return (await this.redis.zscore(this.followUpKey(cluster), id)) !== null;
  }

  /**
   * Take the request's follow-up to run it: true when it is in the outbox and no other runner holds it
   * (its score is not in the future); it is then held `leaseMs` (the sweep leaves it alone that long,
   * and takes it again after, should this runner die in it).
   */
  public async claimFollowUp(cluster: string, id: string, now: Date, leaseMs: number): Promise<boolean> {
    assertRequestId(id);
    const claimed = await CLAIM_FOLLOW_UP.run(
      this.redis,
      [this.followUpKey(cluster)],
      [id, now.getTime(), now.getTime() + leaseMs],
    );
    return claimed === 1;
  }

  /** The follow-ups recorded before `before` and not run yet (oldest first, at most `limit`). */
  public async followUpsDue(cluster: string, before: Date, limit = 100): Promise<string[]> {
    const ids = await this.redis.zrangebyscore(
      this.followUpKey(cluster),
      "-inf",
      before.getTime(),
      "LIMIT",
      0,
      limit,
    );
    // Only ids this store issues: anything else written there is dropped, never used in a key.
    const bad = ids.filter((id) => !isRequestId(id));
    if (bad.length > 0) await this.redis.zrem(this.followUpKey(cluster), ...bad);
    return ids.filter(isRequestId);
  }

  /** What follows the request's outcome has run (its waits started, its replies posted). */
  public async followUpRan(cluster: string, id: string): Promise<void> {
    assertRequestId(id);
    await this.redis.zrem(this.followUpKey(cluster), id);
  }

  private keysFor(id: string): [string, string, string] {
    const ap = this.options.prefix;
    return [ApprovalKeys.request(ap, id), ApprovalKeys.voters(ap, id), ApprovalKeys.votes(ap, id)];
  }

  private get pendingKey(): string {
    return ApprovalKeys.pending(this.options.prefix);
  }

  private get approvedKey(): string {
    return ApprovalKeys.approved(this.options.prefix);
  }

  private openKey(action: ApprovalAction, cluster: string | undefined): string {
    const subject = requestSubject(action, cluster);
    // A long repoint subject is hashed; a finalizer removal keeps its readable key.
    const key = subject.length > 200 ? createHash("sha256").update(subject).digest("hex") : subject;
    return ApprovalKeys.open(this.options.prefix, key);
  }

  /** The audit stream this store's transitions write their entries to (`undefined`: none). */
  public get auditKey(): string | undefined {
    return this.options.auditKey;
  }

  /** The audit stream key scripts write to (a key of ours when no audit is configured: never written). */
  private get auditStream(): string {
    return this.options.auditKey ?? ApprovalKeys.noAudit(this.options.prefix);
  }

  private auditArg(template: AuditTemplate | undefined): string {
    return template !== undefined && this.options.auditKey !== undefined
      ? JSON.stringify(streamFields(template))
      : "";
  }

  /**
   * Run a script and log the audit entries it wrote, each with the change its template named (the
   * stream does not keep it; templates are matched by request id).
   */
  private async exec(
    script: RedisScript,
    keys: readonly string[],
    args: readonly (string | number)[],
    templates: readonly (AuditTemplate | undefined)[] = [],
  ): Promise<unknown> {
    const { reply, written } = await runTransition(script, this.redis, keys, args);
    for (const raw of written) {
      let entry: AuditEntry;
      try {
        entry = JSON.parse(raw) as AuditEntry;
      } catch {
        continue;
      }
      const change = templates.find((t) => t?.requestId === entry.requestId)?.change;
      logAuditEntry(this.options.log, change !== undefined ? { ...entry, change } : entry);
    }
    return reply;
  }

  private get signer(): ApprovalSigner {
    const signer = this.options.signer;
    if (!signer) {
      throw new UnstuckError(
        ErrorCode.Config,
        "This process holds no signing key: it can read approvals, not write them.",
      );
    }
    return signer;
  }

  /** The stored request MAC (read before a write that must bind to it). */
  private async docMacOf(id: string): Promise<string> {
    return (await this.redis.hget(this.requestKey(id), "docMac")) ?? "";
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
    assertRequestId(request.id);
    const signer = this.signer;
    const doc = JSON.stringify(request);
    const docMac = signer.requestSig(request.id, doc);
    const reply = tuple(
      await this.exec(
        SCRIPTS.create,
        [
          this.requestKey(request.id),
          this.pendingKey,
          this.openKey(request.action, request.cluster),
          this.auditStream,
        ],
        [
          request.id,
          doc,
          request.requester.userId,
          Date.parse(request.expiresAt),
          request.approvalsRequired,
          request.createdAt,
          docMac,
          signer.stateSig(request.id, docMac, "PENDING", request.createdAt),
          ApprovalKeys.requestPrefix(this.options.prefix),
          now.getTime(),
          this.auditArg(audit),
        ],
        [audit],
      ),
    );
    const status = num(reply[0]);
    if (status === 2) {
      throw new UnstuckError(ErrorCode.Conflict, "A request for this object is already pending.", {
        existingRequestId: str(reply[1]),
      });
    }
    if (status !== 1) throw new UnstuckError(ErrorCode.Conflict, "An approval request with this id exists.");
    return { ...request, state: "PENDING", votes: [], executionAttempts: 0, updatedAt: request.createdAt };
  }

  /** The request, or `null` when unknown (or the id is malformed). */
  public async get(id: string): Promise<ApprovalRequest | null> {
    if (!isRequestId(id)) return null;
    const [key, , votesKey] = this.keysFor(id);
    const replies = await this.redis.multi().hgetall(key).lrange(votesKey, 0, -1).exec();
    return parseRequest(replies?.[0]?.[1], replies?.[1]?.[1]);
  }

  /** The request with its MACs and the raw document they cover; `null` when unknown. */
  public async getSigned(id: string): Promise<SignedRecord | null> {
    if (!isRequestId(id)) return null;
    const [key, , votesKey] = this.keysFor(id);
    const replies = await this.redis.multi().hgetall(key).lrange(votesKey, 0, -1).exec();
    return signedRecordOf(replies?.[0]?.[1], replies?.[1]?.[1]);
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
    assertRequestId(id);
    const signer = this.signer;
    const docMac = await this.docMacOf(id);
    const at = now.toISOString();
    const fields = {
      requestId: id,
      voter: { userId: voter.userId, teamId: voter.teamId },
      decision,
      at,
      ...(channelId !== undefined ? { channelId } : {}),
      ...(reason !== undefined ? { reason } : {}),
    };
    const vote: Vote = { ...fields, mac: signer.voteSig(docMac, fields) };
    const stateMac = (state: string): string => signer.stateSig(id, docMac, state, at);
    const reply = tuple(
      await this.exec(
        SCRIPTS.vote,
        [...this.keysFor(id), this.pendingKey, this.approvedKey, this.markerKey(id), this.auditStream],
        [
          id,
          voter.userId,
          decision,
          now.getTime(),
          JSON.stringify(vote),
          at,
          this.retention,
          stateMac("PENDING"),
          stateMac("APPROVED"),
          stateMac("DENIED"),
          stateMac("EXPIRED"),
          this.finishedRetention,
          this.auditArg(audit),
        ],
        [audit],
      ),
    );
    return {
      status: str(reply[0]) as VoteStatus,
      state: str(reply[1]) as RequestState | "",
      approvals: num(reply[2]),
      transitioned: num(reply[3]) === 1,
    };
  }

  /** Cancel a PENDING request on behalf of `actor` (see `approval-cancel.6.lua`). */
  public async cancel(id: string, actor: Identity, now: Date, audit?: AuditTemplate): Promise<CancelOutcome> {
    assertRequestId(id);
    const signer = this.signer;
    const docMac = await this.docMacOf(id);
    const at = now.toISOString();
    const reply = tuple(
      await this.exec(
        SCRIPTS.cancel,
        [...this.keysFor(id), this.pendingKey, this.markerKey(id), this.auditStream],
        [
          id,
          actor.userId,
          now.getTime(),
          at,
          this.retention,
          signer.stateSig(id, docMac, "CANCELLED", at),
          signer.stateSig(id, docMac, "EXPIRED", at),
          this.finishedRetention,
          this.auditArg(audit),
        ],
        [audit],
      ),
    );
    return { status: str(reply[0]) as CancelOutcome["status"], state: str(reply[1]) as RequestState | "" };
  }

  /** APPROVED → EXECUTING (or take over a dead attempt's EXECUTING) under `token`. */
  public async claimExecution(
    id: string,
    token: string,
    now: Date,
    audit?: AuditTemplate,
  ): Promise<ClaimOutcome> {
    assertRequestId(id);
    const signer = this.signer;
    const docMac = await this.docMacOf(id);
    const at = now.toISOString();
    const reply = tuple(
      await this.exec(
        SCRIPTS.claim,
        [this.requestKey(id), this.approvedKey, this.markerKey(id), this.auditStream],
        [token, at, id, signer.stateSig(id, docMac, "EXECUTING", at), this.retention, this.auditArg(audit)],
        [audit],
      ),
    );
    return {
      status: str(reply[0]) as ClaimOutcome["status"],
      state: str(reply[1]) as RequestState | "",
      attempts: num(reply[2]),
      prior: { state: str(reply[3]), at: str(reply[4]), mac: str(reply[5]) },
      refusedNow: num(reply[6]) === 1,
    };
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
    assertRequestId(id);
    const signer = this.signer;
    const docMac = await this.docMacOf(id);
    const at = now.toISOString();
    const resultJson = JSON.stringify(result);
    const reply = tuple(
      await this.exec(
        SCRIPTS.finish,
        [
          ...this.keysFor(id),
          this.markerKey(id),
          this.followUpKey(followUp?.cluster ?? ""),
          this.auditStream,
        ],
        [
          token,
          state,
          resultJson,
          at,
          this.retention,
          signer.stateSig(id, docMac, state, at, resultJson),
          this.finishedRetention,
          followUp !== undefined ? id : "",
          now.getTime(),
          this.auditArg(audit),
        ],
        [audit],
      ),
    );
    return { status: str(reply[0]) as FinishOutcome["status"], state: str(reply[1]) as RequestState | "" };
  }

  /** Mark every PENDING request past its expiry EXPIRED; returns the ids this call expired. */
  public async expireDue(
    now: Date,
    limit = 500,
    auditFor?: (request: ApprovalRequest) => AuditTemplate,
  ): Promise<string[]> {
    const signer = this.signer;
    const listed = await this.redis.zrangebyscore(this.pendingKey, "-inf", now.getTime(), "LIMIT", 0, limit);
    // Members that are not ids this bot issues were not written by it: unlist them, or they would
    // fill every page of this sweep.
    const foreign = listed.filter((id) => !isRequestId(id));
    if (foreign.length > 0) await this.redis.zrem(this.pendingKey, ...foreign);
    const due = listed.filter(isRequestId);
    if (due.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of due) pipeline.hget(this.requestKey(id), "docMac");
    const macs = (await pipeline.exec()) ?? [];
    const at = now.toISOString();
    // Each id's audit entry is built from its stored request; the script writes it only if it expires it.
    const requests =
      auditFor !== undefined && this.options.auditKey !== undefined
        ? await Promise.all(due.map((id) => this.get(id)))
        : [];
    const templates = due.map((_id, i) => {
      const request = requests[i];
      return request && auditFor ? auditFor(request) : undefined;
    });
    const triples = due.flatMap((id, i) => [
      id,
      signer.stateSig(id, str(macs[i]?.[1]), "EXPIRED", at),
      this.auditArg(templates[i]),
    ]);
    const reply = tuple(
      await this.exec(
        SCRIPTS.expire,
        [this.pendingKey, this.auditStream],
        [
          now.getTime(),
          ApprovalKeys.requestPrefix(this.options.prefix),
          at,
          this.retention,
          ApprovalKeys.finishedPrefix(this.options.prefix),
          this.finishedRetention,
          ...triples,
        ],
        templates,
      ),
    );
    return reply.map(str);
  }

  /**
   * Ids approved at or before `approvedBefore` that no executor has claimed yet: normally none
   * for long; any found mean an enqueue was lost (e.g. Redis hiccup right after the vote).
   */
  public async approvedUnclaimed(approvedBefore: Date, limit = 500): Promise<string[]> {
    return this.redis.zrangebyscore(this.approvedKey, "-inf", approvedBefore.getTime(), "LIMIT", 0, limit);
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
    assertRequestId(id);
    const signer = this.signer;
    const docMac = await this.docMacOf(id);
    const at = now.toISOString();
    const resultJson = JSON.stringify(result);
    const reply = tuple(
      await this.exec(
        SCRIPTS.requeue,
        [...this.keysFor(id), this.approvedKey, this.markerKey(id), this.requeueKey(id), this.auditStream],
        [
          id,
          mode,
          at,
          this.retention,
          this.finishedRetention,
          maxRequeues,
          signer.stateSig(id, docMac, "FAILED", at, resultJson),
          resultJson,
          this.auditArg(audit),
        ],
        [audit],
      ),
    );
    return {
      status: str(reply[0]) as RequeueOutcome["status"],
      state: str(reply[1]) as RequestState | "",
      count: num(reply[2]),
    };
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
  ): Promise<{ readonly status: "OK" | "MOVED" | "NOT_FOUND"; readonly state: RequestState | "" }> {
    assertRequestId(id);
    const signer = this.signer;
    const docMac = await this.docMacOf(id);
    const at = now.toISOString();
    const state = found === "PENDING" ? "EXPIRED" : "FAILED";
    const resultJson = JSON.stringify(result);
    const reply = tuple(
      await this.exec(
        SCRIPTS.endUnverified,
        [...this.keysFor(id), this.pendingKey, this.approvedKey, this.markerKey(id), this.auditStream],
        [
          id,
          found,
          state,
          at,
          signer.stateSig(id, docMac, state, at, resultJson),
          resultJson,
          this.retention,
          this.finishedRetention,
          this.auditArg(audit),
        ],
        [audit],
      ),
    );
    return {
      status: str(reply[0]) as "OK" | "MOVED" | "NOT_FOUND",
      state: str(reply[1]) as RequestState | "",
    };
  }

  /** Ids the store lists as live: pending (any expiry) and approved, not yet claimed. */
  public async liveIds(limit = 1_000): Promise<{ pending: string[]; approved: string[] }> {
    const [pending, approved] = await Promise.all([
      this.redis.zrangebyscore(this.pendingKey, "-inf", "+inf", "LIMIT", 0, limit),
      this.redis.zrangebyscore(this.approvedKey, "-inf", "+inf", "LIMIT", 0, limit),
    ]);
    return { pending: pending.filter(isRequestId), approved: approved.filter(isRequestId) };
  }

  /**
   * The request as its signatures vouch for it (`null`: no such request), for painting: see
   * `verifiedRequest`. Needs the keyring, not a private key.
   */
  public async getVerified(id: string): Promise<VerifiedView | null> {
    const record = await this.getSigned(id);
    if (!record) return null;
    return verifiedRequest(record, this.signer);
  }

  /**
   * Whether the request's document and current state verify as their signers' (`null`: no such
   * request). Needs the keyring, not a private key.
   */
  public async checkIntegrity(id: string): Promise<IntegrityCheck | null> {
    const record = await this.getSigned(id);
    if (!record) return null;
    return verifyIntegrity(id, record, this.signer);
  }

  /**
   * Remember the Slack message showing the request, signed by the bot that posted it (a repaint or a
   * reply touches no other message); false when the request is unknown.
   */
  public async setMessage(id: string, message: MessageRef): Promise<boolean> {
    assertRequestId(id);
    const signer = this.signer;
    const docMac = await this.docMacOf(id);
    const ref: MessageRef = { channel: message.channel, ts: message.ts };
    const stored = await this.exec(
      SCRIPTS.setMessage,
      [this.requestKey(id)],
      [JSON.stringify(ref), signer.messageSig(id, docMac, ref.channel, ref.ts)],
    );
    return num(stored) === 1;
  }

  /**
   * PENDING requests not yet expired, soonest expiry first, one page in two round trips
   * (ids, then every hash and vote list in one pipeline).
   */
  public async listPending(
    now: Date,
    page: { offset?: number; limit?: number } = {},
  ): Promise<ApprovalRequest[]> {
    const ids = await this.redis.zrangebyscore(
      this.pendingKey,
      `(${now.getTime()}`,
      "+inf",
      "LIMIT",
      page.offset ?? 0,
      page.limit ?? 50,
    );
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) {
      const [key, , votesKey] = this.keysFor(id);
      pipeline.hgetall(key).lrange(votesKey, 0, -1);
    }
    const replies = (await pipeline.exec()) ?? [];
    const out: ApprovalRequest[] = [];
    for (let i = 0; i < ids.length; i++) {
      const record = signedRecordOf(replies[2 * i]?.[1], replies[2 * i + 1]?.[1]);
      if (record?.request.state !== "PENDING") continue;
      // With the keyring at hand, a record the signers never made is not listed as anyone's request.
      const signer = this.options.signer;
      if (signer === undefined) out.push(record.request);
      else {
        const view = verifiedRequest(record, signer);
        if (view.ok) out.push(view.request);
      }
    }
    return out;
  }

  /** Delete every key under this store's prefix (tests and teardown only). */
  public async destroy(): Promise<void> {
    let cursor = "0";
    do {
      const [next, keys] = await this.redis.scan(
        cursor,
        "MATCH",
        ApprovalKeys.all(this.options.prefix),
        "COUNT",
        500,
      );
      if (keys.length > 0) await this.redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  }
}

/** A stored hash and vote list as a record with the raw material its signatures cover; `null`: not ours. */
function signedRecordOf(rawHash: unknown, votes: unknown): SignedRecord | null {
  const hash = rawHash as Record<string, string | undefined> | undefined;
  let request: ApprovalRequest | null;
  try {
    request = parseRequest(hash, votes);
  } catch {
    request = null; // unparseable JSON: not a record this bot wrote
  }
  if (!request || !hash) return null;
  return {
    request,
    doc: hash.doc ?? "",
    docMac: hash.docMac ?? "",
    state: {
      state: hash.state ?? "",
      at: hash.updatedAt ?? "",
      mac: hash.stateMac ?? "",
      result: hash.result ?? "",
    },
    ...(request.message !== undefined
      ? { message: { channel: request.message.channel, ts: request.message.ts, mac: hash.messageMac ?? "" } }
      : {}),
  };
}

function parseRequest(hash: unknown, votes: unknown): ApprovalRequest | null {
  if (typeof hash !== "object" || hash === null) return null;
  const h = hash as Record<string, string | undefined>;
  if (h.doc === undefined || h.state === undefined) return null;
  const doc = JSON.parse(h.doc) as NewRequest;
  const voteList = Array.isArray(votes) ? (votes as string[]).map((v) => JSON.parse(v) as Vote) : [];
  return {
    ...doc,
    state: h.state as RequestState,
    votes: voteList,
    executionAttempts: Number(h.execAttempts ?? 0),
    updatedAt: h.updatedAt ?? doc.createdAt,
    ...(h.message ? { message: JSON.parse(h.message) as MessageRef } : {}),
    ...(h.result ? { result: JSON.parse(h.result) as ExecutionResult } : {}),
  };
}
