/**
 * What a kind of approved change is, as one entry of the action-kind table
 * (`src/requests/action-kinds.ts`): its rules (subject, well-formedness, the plan as filed, the audit
 * line) and every word a surface says of it (message, terminal, Slack card, timeline). Each kind's
 * entry is one module in `src/requests/kinds/`. What it waits for once done is said here as data
 * (`FollowUp`); the module that makes the change is its line in the executor table
 * (`src/actions/executors.ts`), which the pure core cannot hold.
 */
import type { AuditChange } from "../audit/entry.js";
import type { ObservationKind } from "../audit/observation.js";
import type { ApprovalAction } from "./model.js";

/** The action of one type. */
export type ActionOf<T extends ApprovalAction["type"]> = Extract<ApprovalAction, { readonly type: T }>;

export interface ActionKind<A extends ApprovalAction> {
  /** What it acts on, as a noun: `Ingress myapp/x`, `traffic path of a.example.com`. */
  readonly target: (a: A) => string;
  /** What approving it does, as a verb phrase: `remove finalizer f from Ingress myapp/x`. */
  readonly change: (a: A) => string;
  /** What it is "about": at most one request per subject may be pending. */
  readonly subject: (a: A) => string;
  /** The exact change for the audit log line (`target` as described above). */
  readonly audit: (a: A, target: string) => AuditChange;
  /** Whether the plan is one the bot could have made (checked when filed and before it runs). */
  readonly wellFormed: (a: A) => boolean;
  /** The plan as the bot files it: what the filer's settings decide, not the planner (the guard's window). */
  readonly filed: (a: A, filer: FilerSettings) => A;
  /** What the terminal says of it (`npm run unstuck -- request <id>`). */
  readonly terminal: TerminalWords<A>;
  /** What the Slack request card and its Details say of it (escaped mrkdwn). */
  readonly card: CardWords<A>;
  /** What kind of change it is in the timeline, as a noun phrase before its target. */
  readonly timeline: string;
  /**
   * The questions a post-mortem draft asks when a request of this kind was filed, given which of the
   * bot's observations the timeline holds (e.g. no orphan check after a forced removal).
   */
  readonly lessons: (observed: (kind: ObservationKind) => boolean) => readonly string[];
  /**
   * What is waited for once it is done, in the request's thread; `null`: nothing, its outcome says
   * everything (a clean-up says what it deleted; an opened guard's close is already scheduled).
   */
  readonly followedBy: (a: A) => FollowUp | null;
}

/** What follows a done change: the wait its kind asks for, with what that wait needs of the plan. */
export type FollowUp =
  /** The namespace-gone wait (or a pointer to the one already running). */
  | { readonly wait: "namespace-gone"; readonly namespace: string }
  /** CloudFront Deployed, Route 53 INSYNC and each hostname answering, after a repair. */
  | {
      readonly wait: "edge";
      readonly hostnames: readonly string[];
      /** The name of each Route 53 zone the plan changes, by zone id. */
      readonly zoneNames: Readonly<Record<string, string>>;
    };

/** What the filing bot decides of a plan, from its own configuration. */
export interface FilerSettings {
  /** How long an approved deletion guard stays open (config `deletionWindowSeconds`). */
  readonly deletionWindowSeconds: number;
}

/** The terminal's words for a request: what it does, and its exact change, whole. */
export interface TerminalWords<A extends ApprovalAction> {
  readonly what: (a: A) => string;
  readonly exact: (a: A) => readonly string[];
}

/**
 * What the request card and its Details say: its header, its one-line change, its why and what it
 * leaves behind (or the evidence's and the plan's), its risks, its exact change and what it is bound
 * to, and the condition its Approve dialog names.
 */
export interface CardWords<A extends ApprovalAction> {
  /** The header after the state (plain text). */
  readonly header: (a: A) => string;
  /** *Changes*: the object (the cluster is added by the card). */
  readonly changes: (a: A) => string;
  /** *Why*: given the first evidence item (one line, escaped), when there is one. */
  readonly why: (a: A, firstEvidence: string | undefined) => string;
  /** *Leaves behind*: given the plan's first item and how many more (escaped), when there is one. */
  readonly leaves: (a: A, firstStep: string | undefined) => string;
  /** Risks of this very plan, said on the card too (raw text). */
  readonly risks: (a: A) => readonly string[];
  /** The risk paragraph Details leads with. */
  readonly risk: (a: A) => string;
  /** The exact change and what it is bound to (Details). */
  readonly exact: (a: A, requestId: string) => string;
  /** The Approve dialog's "it runs only if … is still exactly as it was". */
  readonly holds: (a: A) => string;
  /** Said after "says why" when a request has no statements (the kind's form asks for them). */
  readonly withoutForm: string;
}
