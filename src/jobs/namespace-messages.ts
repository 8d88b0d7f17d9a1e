/**
 * What the bot posted about a namespace, so it can be repainted when the namespace's state changes
 * ("one truth per thing", docs/design.md): each diagnosis card and each "Watching…" message, with where
 * it is (channel, ts) and the card's blocks as posted (what a GONE repaint keeps). One Redis hash per
 * namespace, `<prefix>:ns-messages:<cluster>:<namespace>`, field `<channel>:<ts>`; it expires a week
 * after the last post, and the namespace-gone wait deletes it once everything in it is repainted.
 */

export const NamespaceMessageKind = { Diagnosis: "diagnosis", Watch: "watch" } as const;
export type NamespaceMessageKind = (typeof NamespaceMessageKind)[keyof typeof NamespaceMessageKind];

export interface NamespaceMessage {
  readonly kind: NamespaceMessageKind;
  readonly namespace: string;
  readonly channel: string;
  readonly ts: string;
  /**
   * The diagnosis card's blocks as posted (for `watch`: without its intro line), kept opaque here:
   * only the Slack surface reads them back.
   */
  readonly blocks: readonly unknown[];
}

/** The Redis calls the record needs (a plain client or a cluster client alike). */
export interface NamespaceMessagesRedis {
  hset(key: string, field: string, value: string): Promise<number>;
  hgetall(key: string): Promise<Record<string, string>>;
  hdel(key: string, ...fields: string[]): Promise<number>;
  hlen(key: string): Promise<number>;
  expire(key: string, seconds: number): Promise<number>;
}

/** A week: longer than any wait's deadline, short enough that nothing piles up. */
const TTL_SECONDS = 7 * 86_400;
/** A namespace diagnosed this often is diagnosed in a loop: keep the first ones, not every one. */
const MAX_PER_NAMESPACE = 50;

export class NamespaceMessages {
  public constructor(
    private readonly redis: NamespaceMessagesRedis,
    private readonly prefix: string,
  ) {}

  private key(cluster: string, namespace: string): string {
    return `${this.prefix}:ns-messages:${cluster}:${namespace}`;
  }

  /** Remember a posted message (idempotent per channel and ts). */
  public async record(cluster: string, message: NamespaceMessage): Promise<void> {
    const key = this.key(cluster, message.namespace);
    if ((await this.redis.hlen(key)) >= MAX_PER_NAMESPACE) return;
    await this.redis.hset(key, `${message.channel}:${message.ts}`, JSON.stringify(message));
    await this.redis.expire(key, TTL_SECONDS);
  }

  /** Every message recorded for the namespace (unreadable entries skipped). */
  public async list(cluster: string, namespace: string): Promise<NamespaceMessage[]> {
    const all = await this.redis.hgetall(this.key(cluster, namespace));
    const out: NamespaceMessage[] = [];
    for (const json of Object.values(all)) {
      try {
        const m = JSON.parse(json) as NamespaceMessage;
        if (typeof m.channel === "string" && typeof m.ts === "string" && Array.isArray(m.blocks)) out.push(m);
      } catch {
        // not ours: skip
      }
    }
    return out;
  }

  /** Forget these messages (once their repaint is queued). */
  public async forget(
    cluster: string,
    namespace: string,
    messages: readonly NamespaceMessage[],
  ): Promise<void> {
    if (messages.length === 0) return;
    await this.redis.hdel(this.key(cluster, namespace), ...messages.map((m) => `${m.channel}:${m.ts}`));
  }
}
