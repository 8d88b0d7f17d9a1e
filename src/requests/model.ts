/**
 * The approval request model: a frozen plan (the exact change plus the state it was approved
 * against), who asked, who voted, and where it stands. Plain data only, so the Slack layer, the
 * CLI and the audit log can all render it.
 */
import { randomBytes } from "node:crypto";
import type { RepointStep, RepointTarget } from "../edge/repoint-steps.js";

/** Every state a request can be in. Only the store's Lua scripts move a request between them. */
export const RequestState = {
  Pending: "PENDING",
  Approved: "APPROVED",
  Executing: "EXECUTING",
  Done: "DONE",
  Failed: "FAILED",
  Denied: "DENIED",
  Expired: "EXPIRED",
  Cancelled: "CANCELLED",
  Stale: "STALE",
  /** The record failed verification (its MACs or votes do not hold): refused, nothing changed. */
  Tampered: "TAMPERED",
} as const;
export type RequestState = (typeof RequestState)[keyof typeof RequestState];

/** States no transition leaves. */
export const TERMINAL_STATES: readonly RequestState[] = [
  RequestState.Done,
  RequestState.Failed,
  RequestState.Denied,
  RequestState.Expired,
  RequestState.Cancelled,
  RequestState.Stale,
  RequestState.Tampered,
];

export function isTerminal(state: RequestState): boolean {
  return TERMINAL_STATES.includes(state);
}

/**
 * A Slack identity. People are compared by user id (Slack user ids are unique across an
 * organisation, so a person cannot become "someone else" by acting from another workspace);
 * the team id is recorded for audit. Display names are never used.
 */
export interface Identity {
  readonly userId: string;
  readonly teamId: string;
}

/** The object an action changes, with everything needed to address it without discovery. */
export interface ObjectTarget {
  readonly apiVersion: string;
  readonly kind: string;
  /** Plural resource name, e.g. `ingresses`. */
  readonly resource: string;
  /** `""` for the core group. */
  readonly group: string;
  readonly version: string;
  readonly namespace: string;
  readonly name: string;
  /** The object's uid when the request was made; the executor refuses a different object of the same name. */
  readonly uid?: string;
}

export type { JsonPatchOp } from "../kube/finalizer-patch.js";
import type { JsonPatchOp } from "../kube/finalizer-patch.js";

/** The state an approval is bound to; the executor refuses to act if the object left it. */
export interface ObjectPrecondition {
  readonly resourceVersion: string;
  readonly finalizers: readonly string[];
}

export interface RemoveFinalizerAction {
  readonly type: "remove-finalizer";
  readonly target: ObjectTarget;
  readonly precondition: ObjectPrecondition;
  /** The finalizers to remove (a subset of `precondition.finalizers`). */
  readonly remove: readonly string[];
  /** The exact JSON patch: `test` resourceVersion, `test` finalizers, then replace/remove. */
  readonly patch: readonly JsonPatchOp[];
}

/** Repair of the traffic path: every stale link of the traced hostnames, as exact API calls. */
export interface RepointPathAction {
  readonly type: "repoint-path";
  /** The hostnames traced when planning (what the repair is for). */
  readonly hostnames: readonly string[];
  readonly steps: readonly RepointStep[];
  /** Every load balancer the steps point at, with its owner and evidence (signed with the plan). */
  readonly targets?: readonly RepointTarget[];
  /** What approvers must weigh first (a target of another namespace, an owner that could not be established). */
  readonly risks?: readonly string[];
}

/** One AWS resource a clean-up deletes: an orphan the controller tagged for the cluster. */
export interface OrphanTarget {
  readonly type: "LoadBalancer" | "TargetGroup" | "SecurityGroup";
  readonly id: string;
  readonly name?: string;
}

/**
 * Delete orphans a forced removal left behind. Precondition, re-checked by the executor from a fresh
 * read: each is still an orphan (no live or deleting owner) and still removable (unattached). Deleted
 * in dependency order: load balancers, target groups, security groups. (ELB's own interfaces are not
 * the bot's to delete: the bot's IAM writes are limited to what the controller tagged, and ELB releases
 * them itself.)
 */
export interface DeleteOrphansAction {
  readonly type: "delete-orphans";
  readonly cluster: string;
  readonly namespace?: string;
  readonly resources: readonly OrphanTarget[];
}

/**
 * The annotation the chart's namespace-deletion guard (`guard.namespaceDeletion`) requires on a
 * namespace before it admits its DELETE; only the bot's ServiceAccount may set, change or remove it.
 */
export const DELETION_APPROVED_ANNOTATION = "unstuck.dev/deletion-approved";

/**
 * Open the deletion guard of one namespace for a while: the executor sets
 * `unstuck.dev/deletion-approved=<request id>` on it, and a delayed job takes it off again at the
 * end of the window (only while it still carries this request's id). Bound to the namespace as it
 * was when requested: the same uid (not re-created), the same resourceVersion, not Terminating.
 */
export interface OpenDeletionGuardAction {
  readonly type: "open-deletion-guard";
  readonly namespace: string;
  readonly precondition: { readonly uid: string; readonly resourceVersion: string };
  /** How long the guard stays open once set (config `UNSTUCK_DELETION_WINDOW_SECONDS` when requested). */
  readonly windowSeconds: number;
  /** The pre-deletion check's verdict when requested (its reasons are the request's evidence). */
  readonly preflight: { readonly verdict: "safe" | "risky" | "blocked"; readonly summary: string };
}

/** Every change the bot can be approved to make. A union so new actions extend it. */
export type ApprovalAction =
  RemoveFinalizerAction | RepointPathAction | DeleteOrphansAction | OpenDeletionGuardAction;

/** The action as a finalizer removal; throws for another kind (callers that only handle that one). */
export function finalizerRemoval(action: ApprovalAction): RemoveFinalizerAction {
  if (action.type !== "remove-finalizer")
    throw new Error(`expected a remove-finalizer action, got ${action.type}`);
  return action;
}

/** User ids of the approve votes a request carries, in order, once each. */
export function approverIds(request: Pick<ApprovalRequest, "votes">): string[] {
  return [...new Set(request.votes.filter((v) => v.decision === "approve").map((v) => v.voter.userId))];
}

export type VoteDecision = "approve" | "deny";

export interface Vote {
  readonly voter: Identity;
  readonly decision: VoteDecision;
  /** ISO-8601. */
  readonly at: string;
  /** The request this vote was cast on (bound by `mac`). */
  readonly requestId?: string;
  /** The channel the vote was cast from, when known (bound by `mac`). */
  readonly channelId?: string;
  /** Why, in the voter's words, when they gave one (a denier is asked; bound by `mac`). */
  readonly reason?: string;
  /** HMAC of the fields above under `UNSTUCK_APPROVAL_KEY` (see `integrity.ts`). */
  readonly mac?: string;
}

/** How an executed (or refused-at-execution) request ended. */
export interface ExecutionResult {
  readonly outcome: "done" | "failed" | "stale" | "tampered";
  /** One human sentence: what happened, or what changed since approval. */
  readonly message: string;
  /** ISO-8601. */
  readonly at: string;
  readonly resourceVersionAfter?: string;
  readonly finalizersAfter?: readonly string[];
  /**
   * What a repoint wrote (Route 53 change ids, distributions updated): signed with the outcome, so the
   * waits that follow can be started again from the record alone.
   */
  readonly applied?: {
    readonly route53Changes: readonly { readonly zoneId: string; readonly changeId: string }[];
    readonly distributions: readonly string[];
  };
}

/** The Slack message that shows the request (set once the Slack layer has posted it). */
export interface MessageRef {
  readonly channel: string;
  readonly ts: string;
}

/**
 * The three conditions for forcing a change (the operator's rule in docs/incident.md, step 7), each a
 * statement the requester ticks in the form: shown to approvers as the requester's own words, never as the bot's check marks.
 */
export const RequesterStatementId = {
  CauseConfirmed: "cause-confirmed",
  RecoveryFirst: "recovery-first",
  CleanupPlan: "cleanup-plan",
} as const;
export type RequesterStatementId = (typeof RequesterStatementId)[keyof typeof RequesterStatementId];

/** One statement the requester confirmed: its id and the exact words they ticked. */
export interface RequesterStatement {
  readonly id: RequesterStatementId;
  readonly text: string;
}

/**
 * The statements the finalize form asks for, in order; the words are the checkbox options (Slack
 * allows 75 characters each), so what approvers read is exactly what the requester ticked.
 */
export const REQUESTER_STATEMENTS: readonly (RequesterStatement & { readonly label: string })[] = [
  {
    id: RequesterStatementId.CauseConfirmed,
    label: "Cause confirmed",
    text: "I confirmed what blocks the deletion (the evidence in the diagnosis).",
  },
  {
    id: RequesterStatementId.RecoveryFirst,
    label: "Recovery first",
    text: "The service is down until this object is gone; recovery cannot wait.",
  },
  {
    id: RequesterStatementId.CleanupPlan,
    label: "Clean-up plan",
    text: "I will clean up what the removal leaves behind (the clean-up plan).",
  },
];

/** True when `statements` are exactly the form's statements, each once, in its words. */
export function areKnownStatements(statements: readonly RequesterStatement[]): boolean {
  const seen = new Set<string>();
  return statements.every((s) => {
    const known = REQUESTER_STATEMENTS.find((k) => k.id === s.id);
    if (known?.text !== s.text || seen.has(s.id)) return false;
    seen.add(s.id);
    return Object.keys(s).length === 2;
  });
}

export interface ApprovalRequest {
  /** 128 random bits, base32; unguessable, so a forged button value names no request. */
  readonly id: string;
  readonly action: ApprovalAction;
  readonly requester: Identity;
  readonly channelId: string;
  /**
   * In a fleet: the cluster the change is for (part of the signed document; its workers alone run it).
   * Absent in a single-cluster install, so its documents are signed exactly as before.
   */
  readonly cluster?: string;
  readonly message?: MessageRef;
  readonly reason: string;
  readonly evidence: readonly string[];
  readonly cleanupPlan: readonly string[];
  /**
   * What the requester confirmed in the form, in their name (part of the signed document, so an edit
   * in Redis fails verification); absent for requests made without the form.
   */
  readonly statements?: readonly RequesterStatement[];
  /** ISO-8601. */
  readonly createdAt: string;
  /** ISO-8601. */
  readonly expiresAt: string;
  /** ISO-8601 time of the last transition. */
  readonly updatedAt: string;
  /** Approvals needed besides the requester. */
  readonly approvalsRequired: number;
  readonly state: RequestState;
  readonly votes: readonly Vote[];
  /** Execution attempts that claimed the request (more than 1 means a worker was interrupted). */
  readonly executionAttempts: number;
  readonly result?: ExecutionResult;
}

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
const REQUEST_ID = /^[a-z2-7]{26}$/;

/** A fresh request id: 128 bits from the CSPRNG in lower-case RFC 4648 base32 (26 characters). */
export function newRequestId(): string {
  const bytes = randomBytes(16);
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32.charAt((value >>> (bits - 5)) & 31);
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32.charAt((value << (5 - bits)) & 31);
  return out;
}

/** True for strings shaped like an id `newRequestId` issues; anything else is refused before Redis. */
export function isRequestId(value: string): boolean {
  return REQUEST_ID.test(value);
}

/** `Ingress myapp/myapp-worker-ingress`: how a target is named in messages and the audit log. */
export function describeTarget(target: ObjectTarget): string {
  return `${target.kind} ${target.namespace}/${target.name}`;
}

/** A finalizer removal as a form names it: the object by resource, API version and kind. */
export interface RemovalRequestInput {
  readonly namespace: string;
  readonly resource: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly finalizer?: string;
  readonly reason: string;
  /** The statements the requester ticked in the form (the form sends all three). */
  readonly statements?: readonly RequesterStatement[];
  readonly requester: Identity;
  readonly channelId: string;
}

/**
 * A request as planned from a fresh read, before it is filed: the plan and what the requester said.
 * Who asked, where, for which cluster, for how long and with how many approvals are the filer's.
 */
export interface RequestDraft {
  readonly action: ApprovalAction;
  readonly reason: string;
  readonly evidence: readonly string[];
  readonly cleanupPlan: readonly string[];
  readonly statements?: readonly RequesterStatement[];
}
