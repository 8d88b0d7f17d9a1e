/**
 * The one table of the kinds of approved change, typed over every action type: adding a member to
 * `ApprovalAction` does not compile until its line names its kind (`src/requests/kinds/`), which says
 * what it acts on, what approving it does, what one pending request per object means for it, its
 * exact change for the audit log, which plans of it are well formed, and what the terminal, the Slack
 * card and the timeline say of it, and what is waited for once it is done. The module that makes the
 * change is its line in the executor table (`src/actions/executors.ts`).
 */
import type { AuditChange } from "../audit/entry.js";
import type { ActionKind, ActionOf, FilerSettings } from "./kind.js";
import { deleteOrphans } from "./kinds/delete-orphans.js";
import { openDeletionGuard } from "./kinds/open-deletion-guard.js";
import { removeFinalizer } from "./kinds/remove-finalizer.js";
import { repointPath } from "./kinds/repoint-path.js";
import type { ApprovalAction } from "./model.js";

export const ACTION_KINDS: { readonly [T in ApprovalAction["type"]]: ActionKind<ActionOf<T>> } = {
  "remove-finalizer": removeFinalizer,
  "open-deletion-guard": openDeletionGuard,
  "delete-orphans": deleteOrphans,
  "repoint-path": repointPath,
};

/** The table's entry for an action, typed to it. */
export function actionKind<A extends ApprovalAction>(a: A): ActionKind<A> {
  return ACTION_KINDS[a.type] as unknown as ActionKind<A>;
}

/** What an action acts on, for messages and the audit log. */
export function describeAction(action: ApprovalAction): string {
  return actionKind(action).target(action);
}

/** What approving an action does, as a verb phrase. */
export function describeChange(action: ApprovalAction): string {
  return actionKind(action).change(action);
}

/** What an action is "about": at most one request per subject may be pending. */
export function actionSubject(action: ApprovalAction): string {
  return actionKind(action).subject(action);
}

/** The exact change of an action for the audit log line. */
export function auditChange(action: ApprovalAction): AuditChange {
  return actionKind(action).audit(action, describeAction(action));
}

/**
 * The key of "one pending request per subject": the action's subject, and in a fleet the cluster it is
 * for first (`@c1/…`: no plain subject starts with `@`), so the same object name in two clusters is two
 * subjects. Outside a fleet (no cluster) it is the subject itself, as it always was.
 */
export function requestSubject(action: ApprovalAction, cluster: string | undefined): string {
  const subject = actionSubject(action);
  return cluster !== undefined ? `@${cluster}/${subject}` : subject;
}

/**
 * Whether a plan is one the bot could have made: a repoint's batches are DELETE/CREATE pairs, a
 * clean-up names only ids of the kinds it deletes, a guard one namespace as read and a window, and a
 * finalizer removal's patch is exactly the one its precondition implies.
 */
export function wellFormed(action: ApprovalAction): boolean {
  return actionKind(action).wellFormed(action);
}

/** The plan as the bot files it (see {@link ActionKind.filed}). */
export function filedAction(action: ApprovalAction, filer: FilerSettings): ApprovalAction {
  return actionKind(action).filed(action, filer);
}
