/**
 * What the bot posted about a namespace, so it can be repainted when the namespace's state changes
 * ("one truth per thing", docs/design.md): each diagnosis card and each "Watching…" message, with where
 * it is (channel, ts). One Redis hash per namespace, `<prefix>:ns-messages:<cluster>:<namespace>`,
 * field `<channel>:<ts>`; it expires a week after the last post, and the namespace-gone wait deletes it
 * once everything in it is repainted.
 *
 * A record holds ids only, signed by the process that posted the message (the bot, or the cluster's
 * watcher): a repaint renders the message's final form from the namespace and its outcome, never from
 * anything stored, and touches only a message whose record verifies as the bot's or that cluster's
 * workers' — a Redis writer can neither put words in it nor point it at another message.
 */
import { byBot, type KeyOwner } from "../trust/keys.js";
import { seal, unseal, type SealKeys } from "../trust/sealed.js";
import { RedisKeys } from "../redis/keys.js";

export const NamespaceMessageKind = { Diagnosis: "diagnosis", Watch: "watch" } as const;
export type NamespaceMessageKind = (typeof NamespaceMessageKind)[keyof typeof NamespaceMessageKind];

export interface NamespaceMessage {
  readonly kind: NamespaceMessageKind;
  readonly namespace: string;
  readonly channel: string;
  readonly ts: string;
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
const DOMAIN = "namespace-message";

interface Signed extends NamespaceMessage {
  readonly cluster: string;
}

export class NamespaceMessages {
  public constructor(
    private readonly redis: NamespaceMessagesRedis,
    private readonly prefix: string,
    private readonly keys: SealKeys,
  ) {}

  private key(cluster: string, namespace: string): string {
    return RedisKeys.namespaceMessages(this.prefix, cluster, namespace);
  }

  /** Remember a posted message (idempotent per channel and ts), signed by this process. */
  public async record(cluster: string, message: NamespaceMessage): Promise<void> {
    const signer = this.keys.key;
    if (signer === undefined) return;
    const key = this.key(cluster, message.namespace);
    if ((await this.redis.hlen(key)) >= MAX_PER_NAMESPACE) return;
    const data: Signed = {
      cluster,
      kind: message.kind,
      namespace: message.namespace,
      channel: message.channel,
      ts: message.ts,
    };
    await this.redis.hset(
      key,
      `${message.channel}:${message.ts}`,
      JSON.stringify(seal(signer, DOMAIN, data)),
    );
    await this.redis.expire(key, TTL_SECONDS);
  }

  /** Every message recorded for the namespace whose record the bot or the cluster's workers signed. */
  public async list(cluster: string, namespace: string): Promise<NamespaceMessage[]> {
    const accepts = (owner: KeyOwner): boolean =>
      byBot(owner) || (owner.kind === "cluster" && owner.cluster === cluster);
    const all = await this.redis.hgetall(this.key(cluster, namespace));
    const out: NamespaceMessage[] = [];
    for (const [field, json] of Object.entries(all)) {
      let value: unknown;
      try {
        value = JSON.parse(json);
      } catch {
        continue; // not ours
      }
      const opened = unseal<Signed>(this.keys.keyring, DOMAIN, value, accepts);
      if (!opened.ok) continue;
      const m = opened.data;
      // Signed for this cluster and namespace, under the field it is filed at: nothing moved.
      if (m.cluster !== cluster || m.namespace !== namespace || field !== `${m.channel}:${m.ts}`) continue;
      if (m.kind !== NamespaceMessageKind.Diagnosis && m.kind !== NamespaceMessageKind.Watch) continue;
      out.push({ kind: m.kind, namespace: m.namespace, channel: m.channel, ts: m.ts });
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
