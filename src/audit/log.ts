/**
 * Append-only audit log on a Redis stream. Every transition of every request lands here, with who,
 * when, what and the state before and after, so "who approved that at 03:12?" has one answer.
 * An optional mirror copies each entry to an audit channel; a mirror failure never blocks the
 * transition it reports (the stream is the record, the channel is a convenience).
 */
import type { RedisConnection } from "../redis-connection.js";
import type { Logger } from "../log.js";

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
}

/** Not a transition: where a request's message was posted (its channel and thread), for the timeline. */
export const REQUEST_POSTED_EVENT = "request.posted";

/** A stored entry with its stream id. */
export interface StoredAuditEntry extends AuditEntry {
  readonly streamId: string;
}

/**
 * Where the Slack layer mirrors entries (`UNSTUCK_AUDIT_CHANNEL`). Entries carry what users and
 * clusters wrote (reasons, names, error messages), so a mirror that posts to Slack should take the
 * entry (`postEntry`) and render it with escaping; `postToChannel` gets the terminal line and must
 * treat all of it as untrusted text.
 */
export interface AuditMirror {
  postToChannel(text: string): Promise<void>;
  postEntry?(entry: AuditEntry): Promise<void>;
}

export interface AuditLogOptions {
  /** Stream key, e.g. `unstuck:audit`. */
  readonly key: string;
  /** Approximate cap on the stream length (`XADD MAXLEN ~`); default 100 000. */
  readonly maxLen?: number;
  readonly mirror?: AuditMirror;
  readonly log?: Logger;
}

/** One line for humans: `03:12:09Z U123 vote.approve Ingress myapp/x (PENDING → APPROVED): …`. */
export function formatAuditEntry(entry: AuditEntry): string {
  const who = entry.actor.kind === "user" ? `<@${entry.actor.userId}>` : entry.actor.component;
  const move = entry.before || entry.after ? ` (${entry.before ?? "—"} → ${entry.after ?? "—"})` : "";
  const result = entry.result ? `: ${entry.result}` : "";
  return `${entry.at} ${who} ${entry.event} ${entry.action} ${entry.target} [${entry.requestId}]${move}${result}`;
}

export class AuditLog {
  public constructor(
    private readonly redis: RedisConnection,
    private readonly options: AuditLogOptions,
  ) {}

  /** The stream write itself (capped near `maxLen`). */
  private write(entry: AuditEntry): Promise<string | null> {
    return this.redis.xadd(
      this.options.key,
      "MAXLEN",
      "~",
      this.options.maxLen ?? 100_000,
      "*",
      "entry",
      JSON.stringify(entry),
    );
  }

  /** Append one entry; returns its stream id. */
  public async append(entry: AuditEntry): Promise<string> {
    const id = await this.write(entry);
    this.mirror(entry);
    return id ?? "";
  }

  /**
   * Append an entry that is context rather than a change — a bot observation (a diagnosis, a path check, a
   * wait's start or end; see `observe.ts`), where a request was posted — without mirroring it: the audit
   * channel mirrors what people and the executor did, not every read. Never throws: a failed write must
   * not break the command or the wait that made it (it is logged).
   */
  public async record(entry: AuditEntry): Promise<void> {
    try {
      await this.write(entry);
    } catch (err) {
      this.options.log?.warn({ err, event: entry.event }, "could not record an entry in the audit log");
    }
  }

  /**
   * Copy an entry to the audit channel without appending it: for entries a transition's own script
   * wrote to the stream. Never awaited by the transition: a slow or failing Slack call holds up nothing.
   */
  public mirror(entry: AuditEntry): void {
    const mirror = this.options.mirror;
    if (!mirror) return;
    const posted = mirror.postEntry ? mirror.postEntry(entry) : mirror.postToChannel(formatAuditEntry(entry));
    posted.catch((err: unknown) => {
      this.options.log?.warn(
        { err, requestId: entry.requestId },
        "audit mirror failed; the stream has the entry",
      );
    });
  }

  /** The stream key, for the approval store's scripts that write entries with their transitions. */
  public get key(): string {
    return this.options.key;
  }

  /** The newest `n` entries, newest first. */
  public async latest(n: number): Promise<StoredAuditEntry[]> {
    const rows = await this.redis.xrevrange(this.options.key, "+", "-", "COUNT", n);
    const out: StoredAuditEntry[] = [];
    for (const [streamId, fields] of rows) {
      const at = fields.indexOf("entry");
      const raw = at >= 0 ? fields[at + 1] : undefined;
      if (raw !== undefined) out.push({ ...(JSON.parse(raw) as AuditEntry), streamId });
    }
    return out;
  }

  /** Every entry about one request, oldest first (scans the stream; for tests and `/unstuck audit`). */
  public async forRequest(requestId: string, scanLimit = 10_000): Promise<StoredAuditEntry[]> {
    return (await this.latest(scanLimit)).filter((e) => e.requestId === requestId).reverse();
  }
}
