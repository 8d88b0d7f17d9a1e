/**
 * The words of the deletion guard: its opening (src/actions/deletion-guard.ts), its close at the end
 * of a window (src/jobs/deletion-guard.ts) and the reconcile loop (src/jobs/guard-reconcile.ts) say
 * what they found and did as a typed event, and this renders it for the request's thread and the
 * audit log.
 */
import { DELETION_APPROVED_ANNOTATION } from "../requests/model.js";
import { clock } from "../util/format.js";

/** What a guard's close found and did. `window`: its length as said (`15 min`). */
export type GuardCloseStatus =
  /** The namespace is gone: nothing to close. */
  | { readonly kind: "gone"; readonly namespace: string; readonly window: string }
  /** The annotation was already off (`recreated`: the namespace has another uid now). */
  | {
      readonly kind: "already-closed";
      readonly namespace: string;
      readonly window: string;
      readonly recreated: boolean;
    }
  /** The annotation names another request: left alone. */
  | {
      readonly kind: "other-request";
      readonly namespace: string;
      readonly window: string;
      readonly otherRequestId: string;
      readonly recreated: boolean;
    }
  /** The annotation holds a value this request did not write: left to the reconcile loop. */
  | {
      readonly kind: "foreign-value";
      readonly namespace: string;
      readonly window: string;
      readonly recreated: boolean;
    }
  /** Closed: the annotation removed. */
  | {
      readonly kind: "closed";
      readonly namespace: string;
      readonly window: string;
      readonly deletionStarted: boolean;
    };

export function renderGuardCloseStatus(e: GuardCloseStatus): string {
  const ns = e.namespace;
  const ended = `🔒 Deletion window of namespace ${ns} ended (${e.window})`;
  switch (e.kind) {
    case "gone":
      return `${ended}: the namespace is gone, nothing to close.`;
    case "already-closed":
      return `${ended}: the guard was already closed${recreatedText(e.recreated)}.`;
    case "other-request":
      return `${ended}: it now carries ${DELETION_APPROVED_ANNOTATION} for request ${e.otherRequestId}, another request's; left alone${recreatedText(e.recreated)}.`;
    case "foreign-value":
      return `${ended}: it carries ${DELETION_APPROVED_ANNOTATION} with a value this request did not write; left alone (the bot's reconcile loop takes off any value that is not valid)${recreatedText(e.recreated)}.`;
    case "closed":
      return `🔒 Closed the deletion guard of namespace ${ns}: the ${e.window} window ended, ${DELETION_APPROVED_ANNOTATION} removed; deleting it needs a new approval.${e.deletionStarted ? " (Its deletion had already started.)" : ""}`;
  }
}

function recreatedText(recreated: boolean): string {
  return recreated ? " (it was re-created since)" : "";
}

/** What the reconcile loop took off a namespace: an expired guard, or a value the bot never signed. */
export type GuardReconcileStatus =
  | { readonly kind: "expired"; readonly namespace: string; readonly until: string }
  | { readonly kind: "invalid"; readonly namespace: string };

export function renderGuardReconcileStatus(e: GuardReconcileStatus): string {
  return e.kind === "expired"
    ? `🔒 Closed the deletion guard of namespace ${e.namespace} by reconciliation: its window ended at ${e.until}, ${DELETION_APPROVED_ANNOTATION} removed; deleting it needs a new approval.`
    : `🔒 Removed ${DELETION_APPROVED_ANNOTATION} from namespace ${e.namespace}: its value is not one the bot signed for this namespace.`;
}

/** The guard opened: the namespace carries this request's signed value until `until`. */
export interface GuardOpened {
  readonly namespace: string;
  readonly requestId: string;
  /** When the window ends, and its length in seconds. */
  readonly until: Date;
  readonly windowSeconds: number;
  /** An interrupted attempt had already opened it; this one found it and kept its window. */
  readonly resumed: boolean;
}

export function renderGuardOpened(e: GuardOpened): string {
  const ns = e.namespace;
  return `🔓 ${e.resumed ? "Completed by the interrupted attempt: n" : "N"}amespace ${ns} may be deleted until about ${clock(e.until.getTime(), { minutes: true })} (${String(Math.round(e.windowSeconds / 60))} min): it carries ${DELETION_APPROVED_ANNOTATION} for request ${e.requestId} (signed by the bot, until ${e.until.toISOString().slice(0, 19)}Z), which the deletion guard lets through. Delete it now (\`kubectl delete namespace ${ns}\`); the bot closes the guard at the end of the window.`;
}
