/**
 * One table of what each kind of approved change is, typed over every action type: adding a member
 * to `ApprovalAction` does not compile until its entry says what it acts on, what approving it does,
 * what one pending request per object means for it, and its exact change for the audit log. The
 * surfaces word the rest (`src/slack/blocks/approval.ts`, `src/render/text.ts`) from these.
 */
import type { AuditChange } from "../audit/log.js";
import { DELETION_APPROVED_ANNOTATION, describeTarget, type ApprovalAction } from "./types.js";

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
}

function orphansOf(a: ActionOf<"delete-orphans">): string {
  return `${String(a.resources.length)} AWS orphan${a.resources.length === 1 ? "" : "s"} of ${a.namespace !== undefined ? `namespace ${a.namespace}` : `cluster ${a.cluster}`}`;
}

export const ACTION_KINDS: { readonly [T in ApprovalAction["type"]]: ActionKind<ActionOf<T>> } = {
  "remove-finalizer": {
    target: (a) => describeTarget(a.target),
    change: (a) =>
      `remove finalizer${a.remove.length === 1 ? "" : "s"} ${a.remove.join(", ")} from ${describeTarget(a.target)}`,
    subject: (a) => `${a.target.group}/${a.target.resource}/${a.target.namespace}/${a.target.name}`,
    audit: (a, target) => ({
      type: a.type,
      target,
      object: {
        apiVersion: a.target.apiVersion,
        kind: a.target.kind,
        namespace: a.target.namespace,
        name: a.target.name,
        ...(a.target.uid !== undefined ? { uid: a.target.uid } : {}),
      },
      patch: a.patch,
    }),
  },
  "open-deletion-guard": {
    target: (a) => `deletion guard of namespace ${a.namespace}`,
    change: (a) =>
      `allow deleting namespace ${a.namespace} for ${String(Math.round(a.windowSeconds / 60))} min (preflight: ${a.preflight.verdict})`,
    subject: (a) => `deletion-guard/${a.namespace}`,
    audit: (a, target) => ({
      type: a.type,
      target,
      plan: [
        `set annotation ${DELETION_APPROVED_ANNOTATION}=<request id> on namespace ${a.namespace} (uid ${a.precondition.uid}, resourceVersion ${a.precondition.resourceVersion}) for ${String(a.windowSeconds)} s`,
      ],
    }),
  },
  "delete-orphans": {
    target: orphansOf,
    change: (a) => `delete ${orphansOf(a)}`,
    subject: (a) =>
      `orphans/${a.resources
        .map((r) => r.id)
        .sort()
        .join("+")}`,
    audit: (a, target) => ({
      type: a.type,
      target,
      plan: a.resources.map((r) => `delete ${r.type} ${r.id}${r.name !== undefined ? ` (${r.name})` : ""}`),
    }),
  },
  "repoint-path": {
    target: (a) => `traffic path of ${a.hostnames.join(", ")}`,
    change: (a) =>
      `repoint the traffic path of ${a.hostnames.join(", ")} (${String(a.steps.length)} change${a.steps.length === 1 ? "" : "s"})`,
    subject: (a) =>
      `repoint/${a.steps
        .map((s) =>
          s.kind === "route53"
            ? `r53/${s.zoneId}/${s.edits.map((e) => `${e.name}/${e.type}`).join(",")}`
            : `cf/${s.distributionId}/${s.originId}`,
        )
        .sort()
        .join("+")}`,
    audit: (a, target) => ({
      type: a.type,
      target,
      plan: a.steps.flatMap((step) =>
        step.kind === "route53"
          ? step.edits.map((e) => `route53 ${step.zoneId} ${e.name} ${e.type}: ${e.from} -> ${e.to}`)
          : [
              `cloudfront ${step.distributionId} origin ${step.originId}: ${step.from} -> ${step.to} (If-Match ${step.etag})`,
            ],
      ),
    }),
  },
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
