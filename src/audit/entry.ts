/**
 * What an audit entry is, apart from where it is kept: its fields, the change it names, the shape
 * the stream stores and the one log line a SIEM reads. Pure: the timeline and the renderers read
 * entries through this module, never through the Redis-holding `log.ts`.
 */
/**
 * The exact change a request makes, for the log line: the action's target and its JSON patch
 * (finalizer removal), or one line per call of its plan (repoint, clean-up, deletion guard).
 */
export interface AuditChange {
  /** Action type, e.g. `remove-finalizer`. */
  readonly type: string;
  /** Human name of the target, as in the entry. */
  readonly target: string;
  /** The object a patch is sent to (finalizer removal). */
  readonly object?: {
    readonly apiVersion: string;
    readonly kind: string;
    readonly namespace: string;
    readonly name: string;
    readonly uid?: string;
  };
  /** The JSON patch exactly as sent (finalizer removal). */
  readonly patch?: readonly unknown[];
  /** The plan, one line per call (repoint, clean-up, deletion guard). */
  readonly plan?: readonly string[];
}

/** Who caused an entry: a Slack user, or the bot itself (expiry sweep, executor). */
export type AuditActor =
  | { readonly kind: "user"; readonly userId: string; readonly teamId: string }
  | { readonly kind: "system"; readonly component: string };

export interface AuditEntry {
  /** ISO-8601. */
  readonly at: string;
  readonly actor: AuditActor;
  /** What happened, e.g. `request.created`, `vote.approve`, `execution.done`. */
  readonly event: string;
  readonly requestId: string;
  /** Action type, e.g. `remove-finalizer`. */
  readonly action: string;
  /** Human name of the target, e.g. `Ingress myapp/myapp-worker-ingress`. */
  readonly target: string;
  readonly before?: string;
  readonly after?: string;
  /** Outcome or detail in one sentence. */
  readonly result?: string;
  /**
   * The Slack conversation the entry belongs to, when known: the channel, and the `ts` of the thread's
   * parent message (a request's thread is its own message's). Lets `timeline` show one thread's events.
   */
  readonly channel?: string;
  readonly threadTs?: string;
  /** Who asked for the request (stored with the entry). */
  readonly requester?: { readonly userId: string; readonly teamId: string };
  /** User ids of the approvals recorded so far (or verified, at execution); stored with the entry. */
  readonly approvers?: readonly string[];
  /**
   * The exact change (target and patch or plan): in the log line only. The stream stays one short
   * line per entry; the request record holds the plan, bound by its MAC.
   */
  readonly change?: AuditChange;
}

/** Not a transition: where a request's message was posted (its channel and thread), for the timeline. */
export const REQUEST_POSTED_EVENT = "request.posted";

/** A stored entry with its stream id. */
export interface StoredAuditEntry extends AuditEntry {
  readonly streamId: string;
}

/**
 * The entry as the stream stores it: without the change (log line only), and without an empty
 * approver list (the transition scripts' JSON codec cannot tell an empty array from an object).
 */
export function streamFields(entry: AuditEntry): Omit<AuditEntry, "change"> {
  const stored: { -readonly [K in keyof AuditEntry]?: AuditEntry[K] } & Omit<AuditEntry, "change"> = {
    ...entry,
  };
  delete stored.change;
  if (stored.approvers?.length === 0) delete stored.approvers;
  return stored;
}

/** One audit entry as a log line: every key always present, in one shape a SIEM can parse. */
export interface AuditLogLine {
  readonly event: string;
  readonly at: string;
  /** `null` for an entry about no request (a bot observation). */
  readonly requestId: string | null;
  readonly actor: {
    readonly kind: "user" | "system";
    readonly userId: string | null;
    readonly teamId: string | null;
    readonly component: string | null;
  };
  readonly requester: { readonly userId: string; readonly teamId: string } | null;
  /** The person who voted, for `vote.*` entries. */
  readonly voter: { readonly userId: string; readonly teamId: string } | null;
  readonly approvers: readonly string[];
  readonly action: string;
  readonly target: string;
  readonly change: AuditChange | null;
  readonly before: string | null;
  readonly after: string | null;
  readonly result: string | null;
  readonly channel: string | null;
  readonly threadTs: string | null;
}

function identity(value: unknown): { userId: string; teamId: string } | null {
  if (typeof value !== "object" || value === null) return null;
  const v = value as { userId?: unknown; teamId?: unknown };
  return typeof v.userId === "string"
    ? { userId: v.userId, teamId: typeof v.teamId === "string" ? v.teamId : "" }
    : null;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

/**
 * The log line of an entry. Fields are copied one by one from what an entry may hold — anything
 * else an entry carries is not logged — so no token, key or MAC can reach it.
 */
export function auditLogLine(entry: AuditEntry): AuditLogLine {
  // Read as found: an entry parsed back from a script's JSON is not checked against the type.
  const actor: AuditActor | undefined = entry.actor;
  const user = actor?.kind === "user" ? identity(actor) : null;
  const change = entry.change;
  return {
    event: entry.event,
    at: entry.at,
    requestId: text(entry.requestId),
    actor: {
      kind: actor?.kind === "user" ? "user" : "system",
      userId: user?.userId ?? null,
      teamId: user?.teamId ?? null,
      component: actor?.kind === "system" ? text(actor.component) : null,
    },
    requester: identity(entry.requester),
    voter: entry.event.startsWith("vote.") ? user : null,
    approvers: Array.isArray(entry.approvers)
      ? entry.approvers.filter((a): a is string => typeof a === "string")
      : [],
    action: entry.action,
    target: entry.target,
    change:
      change === undefined
        ? null
        : {
            type: change.type,
            target: change.target,
            ...(change.object !== undefined
              ? {
                  object: {
                    apiVersion: change.object.apiVersion,
                    kind: change.object.kind,
                    namespace: change.object.namespace,
                    name: change.object.name,
                    ...(change.object.uid !== undefined ? { uid: change.object.uid } : {}),
                  },
                }
              : {}),
            ...(change.patch !== undefined ? { patch: change.patch } : {}),
            ...(change.plan !== undefined ? { plan: change.plan } : {}),
          },
    before: text(entry.before),
    after: text(entry.after),
    result: text(entry.result),
    channel: text(entry.channel),
    threadTs: text(entry.threadTs),
  };
}
