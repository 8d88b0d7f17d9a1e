/**
 * What an observation of the bot's is, as an audit entry: event `observed.<what>`, action `observe`,
 * no request. Plain data; the writers that record one are in `observe.ts`.
 */
import type { AuditEntry } from "./entry.js";

/** What the bot observed. */
export const ObservationKind = {
  /** A namespace diagnosis: verdict and blockers. */
  Diagnosis: "diagnosis",
  /** A traffic path check (`trace`). */
  PathCheck: "path-check",
  /** An orphan check (`orphans`, or after a forced removal). */
  OrphanCheck: "orphan-check",
  WaitStarted: "wait-started",
  WaitFinished: "wait-finished",
  /** The path re-check after a forced removal (the controller re-creating the stack). */
  PathRecheck: "path-recheck",
} as const;
export type ObservationKind = (typeof ObservationKind)[keyof typeof ObservationKind];

/** The event prefix of every observation entry. */
export const OBSERVED_PREFIX = "observed.";
export const OBSERVE_ACTION = "observe";

export interface Observation {
  readonly kind: ObservationKind;
  /** Which part of the bot saw it (`ns`, `trace`, `waits`, …): the entry's system actor. */
  readonly component: string;
  /** What it is about: `namespace myapp`, `test.example.com`, `CloudFront E123`. */
  readonly target: string;
  /** What the bot saw, in one sentence (bounded when written). */
  readonly result: string;
  readonly channel?: string;
  readonly threadTs?: string;
}

/** Records an observation; resolves even when the write failed. */
export type Observe = (observation: Observation) => Promise<void>;

const MAX_RESULT = 500;

/** The audit entry of an observation. */
export function observationEntry(o: Observation, at: Date): AuditEntry {
  const result = o.result.length > MAX_RESULT ? `${o.result.slice(0, MAX_RESULT - 1)}…` : o.result;
  return {
    at: at.toISOString(),
    actor: { kind: "system", component: o.component },
    event: `${OBSERVED_PREFIX}${o.kind}`,
    requestId: "",
    action: OBSERVE_ACTION,
    target: o.target,
    result,
    ...(o.channel !== undefined ? { channel: o.channel } : {}),
    ...(o.channel !== undefined && o.threadTs !== undefined ? { threadTs: o.threadTs } : {}),
  };
}

/** Whether an audit entry is an observation rather than a request's event. */
export function isObservation(entry: Pick<AuditEntry, "event">): boolean {
  return entry.event.startsWith(OBSERVED_PREFIX);
}
