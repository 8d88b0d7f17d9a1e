/**
 * The traffic-path card whose *Fix the path* led to a repair request, so the card can lose its button
 * once the repair is made ("buttons that can no longer do anything are removed"). The bot remembers the
 * card when its button was clicked (Slack's signed click proves the card is the bot's and where it is),
 * and links the request to it when the form is submitted; the worker that executes the request takes
 * the card and repaints it from the request.
 *
 * Keys: `<prefix>:repair-card:<channel>:<ts>` (the card) and `<prefix>:repair-card-of:<request id>`
 * (which card a request came from); both hold ids only, signed by the bot, and expire after a week,
 * longer than any request lives. A record that does not verify is no card: nothing is repainted.
 */
import { byBot } from "../trust/keys.js";
import { seal, unseal, type SealKeys } from "../trust/sealed.js";
import { RedisKeys } from "../redis/keys.js";

/** Where a card is. */
export interface RepairCard {
  readonly channel: string;
  readonly ts: string;
}

/** The Redis calls the record needs (a plain client or a cluster client alike). */
export interface RepairCardsRedis {
  set(key: string, value: string, ex: "EX", seconds: number): Promise<unknown>;
  get(key: string): Promise<string | null>;
  del(key: string): Promise<number>;
}

const TTL_SECONDS = 7 * 86_400;
const CARD = "repair-card";
const LINK = "repair-card-of";

export class RepairCards {
  public constructor(
    private readonly redis: RepairCardsRedis,
    private readonly prefix: string,
    private readonly keys: SealKeys,
  ) {}

  private cardKey(channel: string, ts: string): string {
    return RedisKeys.repairCard(this.prefix, channel, ts);
  }

  private linkKey(requestId: string): string {
    return RedisKeys.repairCardOf(this.prefix, requestId);
  }

  /** Remember the card a *Fix the path* was clicked on (signed by the bot, which saw the click). */
  public async remember(card: RepairCard): Promise<void> {
    const signer = this.keys.key;
    if (signer === undefined) return;
    const data: RepairCard = { channel: card.channel, ts: card.ts };
    await this.redis.set(
      this.cardKey(card.channel, card.ts),
      JSON.stringify(seal(signer, CARD, data)),
      "EX",
      TTL_SECONDS,
    );
  }

  /** The request `requestId` was asked for from the card at `channel`/`ts`. */
  public async link(requestId: string, card: RepairCard): Promise<void> {
    const signer = this.keys.key;
    if (signer === undefined) return;
    const data = { requestId, channel: card.channel, ts: card.ts };
    await this.redis.set(
      this.linkKey(requestId),
      JSON.stringify(seal(signer, LINK, data)),
      "EX",
      TTL_SECONDS,
    );
  }

  /**
   * The card request `requestId` came from, once: the link and the card are forgotten, so a request
   * handled again repaints nothing twice. `undefined` when there is none (asked by command), it
   * expired, or either record is not the bot's for this request and card.
   */
  public async take(requestId: string): Promise<RepairCard | undefined> {
    const link = this.open(LINK, await this.redis.get(this.linkKey(requestId)));
    if (link === undefined || link.requestId !== requestId) return undefined;
    const key = this.cardKey(link.channel, link.ts);
    const card = this.open(CARD, await this.redis.get(key));
    // One key per call: the two may live on different nodes of a Redis Cluster.
    await this.redis.del(this.linkKey(requestId));
    await this.redis.del(key);
    return card !== undefined && card.channel === link.channel && card.ts === link.ts
      ? { channel: card.channel, ts: card.ts }
      : undefined;
  }

  private open(domain: string, json: string | null): (RepairCard & { requestId?: string }) | undefined {
    if (json === null) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      return undefined;
    }
    const opened = unseal<RepairCard & { requestId?: string }>(this.keys.keyring, domain, value, byBot);
    if (!opened.ok || typeof opened.data.channel !== "string" || typeof opened.data.ts !== "string")
      return undefined;
    return opened.data;
  }
}
