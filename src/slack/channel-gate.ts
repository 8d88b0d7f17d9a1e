/**
 * Which channels may use the bot: fixed channel ids (`UNSTUCK_CHANNELS`) and channel-name patterns
 * (`UNSTUCK_CHANNEL_PATTERNS`, e.g. `inc-*`), for the channel an incident tool creates per incident.
 * A name is read with `conversations.info` and cached briefly, so a busy incident channel costs one
 * lookup a minute and a renamed channel is judged by its new name within that minute. Neither list
 * set allows every channel.
 */
import { ErrorCode, UnstuckError } from "../errors.js";

/** A channel's name (without `#`), or `undefined` when Slack does not say. Throws when unreachable. */
export type ChannelNameLookup = (channelId: string) => Promise<string | undefined>;

export interface ChannelGateOptions {
  /** Channel ids always allowed. */
  readonly ids: readonly string[];
  /** Channel-name patterns; `*` matches any run of characters, nothing else is special. */
  readonly patterns: readonly string[];
  /** How names are read when a call does not bring its own lookup (the bot's Web API client). */
  readonly lookup?: ChannelNameLookup;
  /** How long a name is trusted (default 60 s). */
  readonly ttlMs?: number;
  readonly now?: () => number;
}

/** Whether `name` matches `pattern` (`*` = any run of characters; case-insensitive, whole name). */
export function channelNameMatches(name: string, pattern: string): boolean {
  const escaped = pattern
    .toLowerCase()
    .split("*")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${escaped}$`).test(name.toLowerCase());
}

/** Bound on cached names: a workspace has many channels, a bot sees few. */
const CACHE_CAP = 5_000;

export class ChannelGate {
  private readonly ids: ReadonlySet<string>;
  private readonly names = new Map<string, { name: string | undefined; until: number }>();
  private readonly now: () => number;
  private readonly ttlMs: number;

  public constructor(private readonly options: ChannelGateOptions) {
    this.ids = new Set(options.ids);
    this.now = options.now ?? Date.now;
    this.ttlMs = options.ttlMs ?? 60_000;
  }

  /** No ids and no patterns: every channel may use the bot. */
  public get open(): boolean {
    return this.ids.size === 0 && this.options.patterns.length === 0;
  }

  /**
   * Whether the channel may use the bot. A name that cannot be read (Slack unreachable, no
   * `channels:read`) allows nothing: the failure propagates, so the caller can say why.
   */
  public async allowed(channelId: string | undefined, lookup?: ChannelNameLookup): Promise<boolean> {
    if (this.open) return true;
    if (channelId === undefined) return false;
    if (this.ids.has(channelId)) return true;
    if (this.options.patterns.length === 0) return false;
    const name = await this.nameOf(channelId, lookup ?? this.options.lookup);
    return name !== undefined && this.options.patterns.some((p) => channelNameMatches(name, p));
  }

  /** Throws `ChannelNotAllowed` (with how to enable the channel) unless the channel is allowed. */
  public async assertAllowed(channelId: string, lookup?: ChannelNameLookup): Promise<void> {
    if (!(await this.allowed(channelId, lookup))) {
      throw new UnstuckError(ErrorCode.ChannelNotAllowed, this.howToEnable(channelId), {
        channel: channelId,
      });
    }
  }

  /** One sentence on how an admin enables a channel, naming both settings. */
  public howToEnable(channelId: string | undefined): string {
    const id = channelId ?? "<channel id>";
    const patterns = this.options.patterns;
    return patterns.length > 0
      ? `To enable it, add ${id} to UNSTUCK_CHANNELS, or give the channel a name matching UNSTUCK_CHANNEL_PATTERNS (${patterns.join(", ")}).`
      : `To enable it, add ${id} to UNSTUCK_CHANNELS, or set UNSTUCK_CHANNEL_PATTERNS (e.g. inc-*) to allow incident channels by name.`;
  }

  private async nameOf(
    channelId: string,
    lookup: ChannelNameLookup | undefined,
  ): Promise<string | undefined> {
    const now = this.now();
    const cached = this.names.get(channelId);
    if (cached !== undefined && cached.until > now) return cached.name;
    if (lookup === undefined) return undefined;
    // A failed lookup is not cached: the next request asks again.
    const name = await lookup(channelId);
    this.names.delete(channelId);
    this.names.set(channelId, { name, until: now + this.ttlMs });
    if (this.names.size > CACHE_CAP) {
      const oldest = this.names.keys().next().value;
      if (oldest !== undefined) this.names.delete(oldest);
    }
    return name;
  }
}
