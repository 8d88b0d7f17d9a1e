/**
 * What the approval workflow (`workflow.ts`) is built from and takes: its ports and settings, the
 * inputs of each kind of request, a vote's context and result, and what filing a plan gives.
 */
import type { AuditLog } from "../audit/log.js";
import type { KubePort } from "../kube/port.js";
import type { ResourceType } from "../kube/types.js";
import type { Logger } from "../log.js";
import type {
  ApprovalAction,
  ApprovalRequest,
  DeleteOrphansAction,
  Identity,
  OpenDeletionGuardAction,
  RepointPathAction,
  RequestDraft,
  RequesterStatement,
} from "../requests/model.js";
import type { ApprovalNotifier } from "./notifier.js";
import type { ApprovalPolicy } from "./policy.js";
import type { ApprovalStore } from "./store.js";

/**
 * What an enqueue found: `added` (a new job), `pending` (the request's job is there and will run:
 * waiting, delayed or running), `ended` (its job ran and ended, so the enqueue changed nothing).
 */
export type EnqueueOutcome = "added" | "pending" | "ended";

/**
 * Puts the execution of an approved request on the actions queue (idempotent per request); may say
 * what it found (an enqueue that says nothing counts as `added`).
 */
export type EnqueueExecution = (
  request: ApprovalRequest,
  // An enqueue that says nothing (a test's, the terminal's refusing one) is read as `added`.
  // eslint-disable-next-line @typescript-eslint/no-invalid-void-type
) => Promise<EnqueueOutcome | void>;

/** Requeues by the sweep of one approved request before it ends FAILED (default of `maxRequeues`). */
export const DEFAULT_MAX_REQUEUES = 5;

export interface ApprovalWorkflowDeps {
  readonly store: ApprovalStore;
  readonly policy: ApprovalPolicy;
  readonly audit: AuditLog;
  readonly kube: KubePort;
  readonly enqueueExecution: EnqueueExecution;
  /** In a fleet: the cluster this process serves, recorded (signed) in every request it files. */
  readonly cluster?: string;
  /**
   * Where a planned request is filed: `here` (default) signs and stores it — the bot, the only process
   * that verified who asked; `bot` hands it back as a draft for the bot to file — a fleet's worker,
   * which plans from its cluster but holds no key that signs a request.
   */
  readonly files?: "here" | "bot";
  readonly now: () => Date;
  /** Approvals needed besides the requester (config `approvalsRequired`). */
  readonly approvalsRequired: number;
  /** Config `requestTtlSeconds`. */
  readonly requestTtlSeconds: number;
  readonly notifier?: ApprovalNotifier;
  readonly log?: Logger;
  /** Id generator; the default is 128 random bits. */
  readonly newId?: () => string;
  /** How long an approved deletion guard stays open (config `deletionWindowSeconds`; default 3600). */
  readonly deletionWindowSeconds?: number;
  /**
   * How often the sweep may queue one approved request again when its job is gone or ended without
   * claiming it; past that the request ends FAILED (default {@link DEFAULT_MAX_REQUEUES}).
   */
  readonly maxRequeues?: number;
}

export interface DeletionGuardInput {
  readonly namespace: string;
  /** The pre-deletion check's verdict and one-line summary, frozen into the plan approvers see. */
  readonly preflight: OpenDeletionGuardAction["preflight"];
  readonly reason: string;
  readonly evidence?: readonly string[];
  readonly cleanupPlan?: readonly string[];
  readonly requester: Identity;
  readonly channelId: string;
}

export interface FinalizerRemovalInput {
  readonly type: ResourceType;
  readonly namespace: string;
  readonly name: string;
  /** Remove only this finalizer; all of them when absent. */
  readonly finalizer?: string;
  readonly reason: string;
  readonly evidence?: readonly string[];
  readonly cleanupPlan?: readonly string[];
  /** What the requester confirmed in the form (the form's statements, in its words). */
  readonly statements?: readonly RequesterStatement[];
  readonly requester: Identity;
  readonly channelId: string;
}

/** What a request carrying a ready plan is asked with (a repoint, an orphan clean-up). */
export interface PlannedInput<A extends ApprovalAction> {
  /** The plan, made from a fresh read; not empty. */
  readonly action: A;
  readonly reason: string;
  readonly evidence?: readonly string[];
  readonly cleanupPlan?: readonly string[];
  readonly requester: Identity;
  readonly channelId: string;
}

/** A repoint of the traffic path, planned from a trace. */
export type RepointInput = PlannedInput<RepointPathAction>;

/** A clean-up of the AWS orphans the orphan check found removable. */
export type OrphanDeletionInput = PlannedInput<DeleteOrphansAction>;

export interface VoteResult {
  readonly request: ApprovalRequest;
  /** True when this vote moved the request to APPROVED or DENIED. */
  readonly transitioned: boolean;
}

/** Where a vote was cast, as the signed Slack payload says. */
export interface VoteContext {
  /** The channel of the message whose button was clicked. */
  readonly channelId?: string;
  /** Why, in the voter's words (the deny form asks; optional): signed with the vote, audited. */
  readonly reason?: string;
}

/** The longest reason a vote keeps (a sentence or two; longer is refused, never cut). */
export const MAX_VOTE_REASON = 500;

/** A planned request as submitted: filed (signed and stored) here, or a draft for the bot to file. */
export type Filed =
  | { readonly kind: "filed"; readonly request: ApprovalRequest }
  | { readonly kind: "draft"; readonly draft: RequestDraft };
