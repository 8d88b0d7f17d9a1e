/**
 * Append-only audit log on a Redis stream. Every transition of every request lands here, with who,
 * when, what and the state before and after, so "who approved that at 03:12?" has one answer.
 * An optional mirror copies each entry to an audit channel; a mirror failure never blocks the
 * transition it reports (the stream is the record, the channel is a convenience).
 *
 * Every entry written to the stream — here, or by a transition's own script (the approval store
 * logs those) — is also one structured log line at info level (`auditLogLine`), so the audit
 * trail leaves Redis for whatever collects the logs (a SIEM): `{"audit": {…}, "msg": "audit"}`,
 * always the same keys (`null` or `[]` when not known), never a token, key or MAC.
 */
import type { RedisConnection } from "../redis-connection.js";
import type { Logger } from "../log.js";
import { auditLogLine, streamFields, type AuditEntry, type StoredAuditEntry } from "./entry.js";

/**
 * Where the Slack layer mirrors entries (`UNSTUCK_AUDIT_CHANNEL`). It gets the entry itself and words
 * it (who acted, what, the result); entries carry what users and clusters wrote (reasons, names,
 * error messages), so it renders them with escaping.
 */
export interface AuditMirror {
  postEntry(entry: AuditEntry): Promise<void>;
}

export interface AuditLogOptions {
  /** Stream key, e.g. `unstuck:audit`. */
  readonly key: string;
  /** Approximate cap on the stream length (`XADD MAXLEN ~`); default 100 000. */
  readonly maxLen?: number;
  readonly mirror?: AuditMirror;
  readonly log?: Logger;
}

/** Write an entry's log line (info, message `audit`); nothing without a logger. */
export function logAuditEntry(log: Logger | undefined, entry: AuditEntry): void {
  log?.info({ audit: auditLogLine(entry) }, "audit");
}

export class AuditLog {
  public constructor(
    private readonly redis: RedisConnection,
    private readonly options: AuditLogOptions,
  ) {}

  /** The stream write itself (capped near `maxLen`), then the entry's log line. */
  private async write(entry: AuditEntry): Promise<string | null> {
    const id = await this.redis.xadd(
      this.options.key,
      "MAXLEN",
      "~",
      this.options.maxLen ?? 100_000,
      "*",
      "entry",
      JSON.stringify(streamFields(entry)),
    );
    logAuditEntry(this.options.log, entry);
    return id;
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
   * Copy an entry to the audit channel without appending it (nor logging it: the store logs what its
   * scripts write): for entries a transition's own script wrote to the stream. Never awaited by the transition: a slow or failing Slack call holds up nothing.
   */
  public mirror(entry: AuditEntry): void {
    const mirror = this.options.mirror;
    if (!mirror) return;
    mirror.postEntry(entry).catch((err: unknown) => {
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
