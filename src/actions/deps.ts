/**
 * What the executor of approved requests is given: the store and signer it verifies with, the
 * ports it acts through, and the follow-ups and test seams around an outcome. One shape for every
 * action type (`executors.ts` picks the module that runs each).
 */
import type { AuditLog } from "../audit/log.js";
import type { KubePort } from "../kube/port.js";
import type { Logger } from "../log.js";
import type { ApprovalNotifier } from "../approvals/notifier.js";
import type { ApprovalSigner } from "../approvals/integrity.js";
import type { ApprovalPolicy } from "../approvals/policy.js";
import type { ApprovalStore } from "../approvals/store.js";
import type { ApprovalRequest } from "../requests/model.js";
import type { ObjectSnapshot } from "../kube/types.js";
import type { OrphanAwsDeletes, OrphanAwsReads, RepointAwsWrites } from "../aws/port.js";
import type { DeletionGuardSigner } from "../approvals/deletion-guard-token.js";
import type { RepointApplied } from "./repoint-path.js";
import type { GuardCloseData } from "./deletion-guard.js";

/** Test seams to stop a worker at a precise point (the killed-worker tests use them). */
export interface ExecutorHooks {
  /** After the request was claimed EXECUTING, before the object is read. */
  afterClaim?(requestId: string): Promise<void>;
  /** After the patch was accepted, before the outcome is recorded. */
  afterPatch?(requestId: string): Promise<void>;
  /** After the outcome was recorded, before what follows it (replies, waits) runs. */
  afterOutcome?(requestId: string): Promise<void>;
}

/**
 * The Kubernetes calls of every approved action: a finalizer removal (read, JSON patch), the
 * deletion guard's annotation, the orphan deletion's re-check of the live owners.
 */
export type ExecutorKube = Pick<
  KubePort,
  | "getObject"
  | "removeFinalizers"
  | "getNamespace"
  | "annotateNamespace"
  | "removeNamespaceAnnotation"
  | "discover"
  | "listDeployments"
  | "listObjects"
>;

export interface ExecutorDeps {
  readonly store: ApprovalStore;
  /** Verifies the record's MACs (`UNSTUCK_APPROVAL_KEY`). */
  readonly signer: ApprovalSigner;
  /** The approver list, looked up live to re-derive eligibility from the signed votes. */
  readonly policy: Pick<ApprovalPolicy, "approverIds">;
  /** PATCH attempts when the API server's answer is ambiguous and a re-read shows nothing changed (default 3). */
  readonly patchAttempts?: number;
  /** Pause before re-sending such a patch, times the attempt number (default 250 ms). */
  readonly patchRetryDelayMs?: number;
  /** What the executors read and write: each action kind's own calls, nothing else. */
  readonly kube: ExecutorKube;
  /**
   * In a fleet: the cluster this worker serves (`UNSTUCK_CLUSTER_NAME`). A request whose signed
   * `cluster` is another one, or none, is refused (FAILED, audited). Absent outside a fleet.
   */
  readonly cluster?: string;
  readonly audit: AuditLog;
  readonly now: () => Date;
  readonly notifier?: ApprovalNotifier;
  readonly log?: Logger;
  readonly hooks?: ExecutorHooks;
  /** AWS, for `repoint-path` and `delete-orphans` requests (absent: those fail with a clear message). */
  readonly aws?: RepointAwsWrites & OrphanAwsReads & OrphanAwsDeletes;
  /**
   * Follow-up work started from the executor's outcome (not from a message edit): the namespace
   * wait after a finalizer removal, the Route 53 / CloudFront waits after a repoint. Failures are logged.
   */
  readonly afterDone?: (request: ApprovalRequest, applied?: RepointApplied) => Promise<void>;
  /** Schedules the close of an opened deletion guard (`open-deletion-guard`); absent: those fail. */
  readonly scheduleGuardClose?: (data: GuardCloseData, delayMs: number) => Promise<void>;
  /** Signs the deletion guard's annotation (`UNSTUCK_APPROVAL_KEY`); absent: those requests fail. */
  readonly guardSigner?: DeletionGuardSigner;
}

/** How an action ended; the executor records it (a thrown error is retried or failed instead). */
export interface ActionOutcome {
  readonly state: "DONE" | "STALE" | "FAILED";
  readonly message: string;
  /** The object after a finalizer removal. */
  readonly object?: ObjectSnapshot;
  /** What a repoint applied (the waits that follow read it). */
  readonly applied?: RepointApplied;
}

/** One verified, claimed attempt of a request. */
export interface ActionRun {
  readonly deps: ExecutorDeps;
  readonly request: ApprovalRequest;
  readonly requestId: string;
  /** An earlier attempt claimed the request and died: its write may have been applied. */
  readonly resumed: boolean;
  /** The change in words, for messages. */
  readonly target: string;
}
