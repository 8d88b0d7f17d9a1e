/**
 * The traffic-path card whose *Fix the path* led to a repair request, so the card can lose its button
 * once the repair is made ("buttons that can no longer do anything are removed"). The bot remembers the
 * card (where it is and its blocks as clicked) when the form opens, and links the request to it when the
 * form is submitted; the worker that executes the request takes the card and repaints it.
 *
 * Keys: `<prefix>:repair-card:<channel>:<ts>` (the card) and `<prefix>:repair-card-of:<request id>`
 * (which card a request came from); both expire after a week, longer than any request lives.
 */

/** Where a card is and what it showed when its button was clicked (opaque: only the Slack surface reads it). */
export interface RepairCard {
  readonly channel: string;
  readonly ts: string;
  readonly blocks: readonly unknown[];
}

/** The Redis calls the record needs (a plain client or a cluster client alike). */
export interface RepairCardsRedis {
  set(key: string, value: string, ex: "EX", seconds: number): Promise<unknown>;
  get(key: string): Promise<string | null>;
  del(key: string): Promise<number>;
}

const TTL_SECONDS = 7 * 86_400;
/** A card's blocks as Slack allows them (50 blocks of at most a few KB): anything bigger is not ours. */
const MAX_CARD_BYTES = 200_000;

export class RepairCards {
  public constructor(
    private readonly redis: RepairCardsRedis,
    private readonly prefix: string,
  ) {}

  private cardKey(channel: string, ts: string): string {
    return `${this.prefix}:repair-card:${channel}:${ts}`;
  }

  private linkKey(requestId: string): string {
    return `${this.prefix}:repair-card-of:${requestId}`;
  }

  /** Remember the card a *Fix the path* was clicked on (the latest click's blocks win). */
  public async remember(card: RepairCard): Promise<void> {
    const json = JSON.stringify({ channel: card.channel, ts: card.ts, blocks: card.blocks });
    if (json.length > MAX_CARD_BYTES) return;
    await this.redis.set(this.cardKey(card.channel, card.ts), json, "EX", TTL_SECONDS);
  }

  /** The request `requestId` was asked for from the card at `channel`/`ts`. */
  public async link(
    requestId: string,
    card: { readonly channel: string; readonly ts: string },
  ): Promise<void> {
    await this.redis.set(
      this.linkKey(requestId),
      JSON.stringify({ channel: card.channel, ts: card.ts }),
      "EX",
      TTL_SECONDS,
    );
  }

  /**
   * The card request `requestId` came from, once: the link and the card are forgotten, so a request
   * handled again repaints nothing twice. `undefined` when there is none (asked by command) or it expired.
   */
  public async take(requestId: string): Promise<RepairCard | undefined> {
    const link = parse(await this.redis.get(this.linkKey(requestId)));
    if (link === undefined) return undefined;
    const key = this.cardKey(link.channel, link.ts);
    const card = parse(await this.redis.get(key));
    // One key per call: the two may live on different nodes of a Redis Cluster.
    await this.redis.del(this.linkKey(requestId));
    await this.redis.del(key);
    return card !== undefined && Array.isArray(card.blocks)
      ? { channel: card.channel, ts: card.ts, blocks: card.blocks }
      : undefined;
  }
}

function parse(json: string | null): (Partial<RepairCard> & { channel: string; ts: string }) | undefined {
  if (json === null) return undefined;
  try {
    const v = JSON.parse(json) as Partial<RepairCard>;
    return typeof v.channel === "string" && typeof v.ts === "string"
      ? { ...v, channel: v.channel, ts: v.ts }
      : undefined;
  } catch {
    return undefined;
  }
}
