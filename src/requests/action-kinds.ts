/**
 * One table of what each kind of approved change is, typed over every action type: adding a member
 * to `ApprovalAction` does not compile until its entry says what it acts on, what approving it does,
 * what one pending request per object means for it, its exact change for the audit log and which
 * plans of it are well formed. Its executor is the entry in `src/actions/executors.ts`; its Slack
 * words the entry in `src/slack/blocks/approval-words.ts`.
 */
import type { AuditChange } from "../audit/entry.js";
import { buildFinalizerPatch } from "../kube/finalizer-patch.js";
import {
  DELETION_APPROVED_ANNOTATION,
  describeTarget,
  type ApprovalAction,
  type RepointPathAction,
} from "./model.js";

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
}

/** What the filing bot decides of a plan, from its own configuration. */
export interface FilerSettings {
  /** How long an approved deletion guard stays open (config `deletionWindowSeconds`). */
  readonly deletionWindowSeconds: number;
}

const asPlanned = <A>(a: A): A => a;

function orphansOf(a: ActionOf<"delete-orphans">): string {
  return `${String(a.resources.length)} AWS orphan${a.resources.length === 1 ? "" : "s"} of ${a.namespace !== undefined ? `namespace ${a.namespace}` : `cluster ${a.cluster}`}`;
}

/** A repoint plan whose Route 53 batches are DELETE/CREATE pairs of one record and whose origins change. */
function wellFormedRepoint(action: RepointPathAction): boolean {
  return action.steps.every((step) => {
    if (step.kind === "cloudfront-origin") return step.from !== step.to && step.etag !== "";
    if (step.changes.length === 0 || step.changes.length % 2 !== 0) return false;
    for (let i = 0; i < step.changes.length; i += 2) {
      const del = step.changes[i];
      const create = step.changes[i + 1];
      if (del?.action !== "DELETE" || create?.action !== "CREATE") return false;
      if (del.record.name !== create.record.name || del.record.type !== create.record.type) return false;
      if ((del.record.setIdentifier ?? "") !== (create.record.setIdentifier ?? "")) return false;
    }
    return true;
  });
}

/** The ids a clean-up may name: load balancer and target group ARNs, interface and group ids. */
const ORPHAN_ID = {
  LoadBalancer:
    /^arn:aws[a-z-]*:elasticloadbalancing:[a-z0-9-]+:\d{12}:loadbalancer\/(app|net)\/[A-Za-z0-9-]+\/[0-9a-f]+$/,
  TargetGroup:
    /^arn:aws[a-z-]*:elasticloadbalancing:[a-z0-9-]+:\d{12}:targetgroup\/[A-Za-z0-9-]+\/[0-9a-f]+$/,
  SecurityGroup: /^sg-[0-9a-f]{8,17}$/,
} as const;

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
    // The patch is exactly the one its precondition implies, removing only finalizers it holds.
    filed: asPlanned,
    wellFormed: (a) =>
      a.remove.every((f) => a.precondition.finalizers.includes(f)) &&
      JSON.stringify(a.patch) === JSON.stringify(buildFinalizerPatch(a.precondition, a.remove)),
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
    filed: (a, filer) => ({ ...a, windowSeconds: filer.deletionWindowSeconds }),
    // Nothing derived to compare: one namespace as it was read, and a window of at most a day.
    wellFormed: (a) =>
      /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(a.namespace) &&
      a.precondition.uid !== "" &&
      a.precondition.resourceVersion !== "" &&
      Number.isInteger(a.windowSeconds) &&
      a.windowSeconds > 0 &&
      a.windowSeconds <= 86_400,
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
    filed: asPlanned,
    // Only ids of the kinds it deletes.
    wellFormed: (a) => a.resources.length > 0 && a.resources.every((r) => ORPHAN_ID[r.type].test(r.id)),
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
    filed: asPlanned,
    wellFormed: wellFormedRepoint,
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
