/**
 * What the approval store (`store.ts`) takes and answers: a new request's fields, the outcome of
 * each transition its scripts make, and its options.
 */
import type { AuditEntry } from "../audit/entry.js";
import type { Logger } from "../log.js";
import type { ApprovalRequest, RequestState } from "../requests/model.js";
import type { ApprovalSigner } from "./integrity.js";
import type { SignedState } from "./verify.js";

/** The fields fixed at creation; the store adds state, votes and execution bookkeeping. */
export type NewRequest = Pick<
  ApprovalRequest,
  | "id"
  | "action"
  | "requester"
  | "channelId"
  | "cluster"
  | "reason"
  | "evidence"
  | "cleanupPlan"
  | "statements"
  | "createdAt"
  | "expiresAt"
  | "approvalsRequired"
>;

export type VoteStatus =
  | "OK"
  | "NOT_FOUND"
  | "INVALID_STATE"
  | "EXPIRED"
  | "SELF_APPROVAL"
  | "ALREADY_VOTED"
  /** It had ended already and its record was found put back to an earlier state: refused, restored. */
  | "FINISHED";

export interface VoteOutcome {
  readonly status: VoteStatus;
  /** The state after the call. */
  readonly state: RequestState | "";
  readonly approvals: number;
  /** True for exactly one caller: the one whose call moved the request out of PENDING. */
  readonly transitioned: boolean;
}

export interface CancelOutcome {
  readonly status: "OK" | "NOT_FOUND" | "NOT_REQUESTER" | "INVALID_STATE" | "EXPIRED";
  readonly state: RequestState | "";
}

export interface ClaimOutcome {
  /**
   * CLAIMED: was APPROVED. RESUMED: was EXECUTING, an earlier attempt died. FINISHED: it had ended
   * already (its finished marker) and its record was found put back to an earlier state: refused,
   * and restored to how it ended (`state`).
   */
  readonly status: "CLAIMED" | "RESUMED" | "INVALID_STATE" | "NOT_FOUND" | "FINISHED";
  readonly state: RequestState | "";
  readonly attempts: number;
  /** The state, its transition time and its MAC as found before the claim. */
  readonly prior: SignedState;
  /** FINISHED: true for the one call that wrote the refusal's audit entry. */
  readonly refusedNow: boolean;
}

/** The sweep's requeue of an approved, unclaimed request (see `approval-requeue.7.lua`). */
export interface RequeueOutcome {
  readonly status: "OK" | "FINISHED" | "NOT_APPROVED" | "NOT_FOUND" | "GAVE_UP";
  readonly state: RequestState | "";
  /** Requeues counted so far. */
  readonly count: number;
}

/** Records, with an outcome, that what follows it is still to run on `cluster`'s workers. */
export interface FollowUpOf {
  /** The cluster whose workers run the follow-up ("" outside a fleet). */
  readonly cluster: string;
}

export interface FinishOutcome {
  readonly status: "OK" | "NOT_FOUND" | "INVALID_STATE" | "TOKEN_MISMATCH";
  readonly state: RequestState | "";
}

export interface ApprovalStoreOptions {
  /** Key prefix, e.g. `unstuck:approvals` (tests use a unique one each). */
  readonly prefix: string;
  /** How long a terminal request stays readable; default 30 days. */
  readonly retentionSeconds?: number;
  /** How long the record of a request's end outlives it (`<prefix>:finished:<id>`); default 365 days. */
  readonly finishedRetentionSeconds?: number;
  /** Signs every write with this process's keys; without it the store is read-only. */
  readonly signer?: ApprovalSigner;
  /**
   * The audit stream (`AuditLog`'s key). Each transition's entry, when the caller gives one, is
   * written by the same script as the transition (see `approval-prelude-audit.lua`).
   */
  readonly auditKey?: string;
  /** Where each entry a transition's script writes is logged as well (`logAuditEntry`). */
  readonly log?: Logger;
}

/** The entry a transition writes; the script fills in `after` (and the event of an expiry it finds). */
export type AuditTemplate = AuditEntry;
