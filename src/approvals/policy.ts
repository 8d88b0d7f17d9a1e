/**
 * Who may ask for a change and who may approve it. The rules live here, in one place, so every
 * surface (Slack buttons, CLI, API) goes through the same checks.
 */
import { ErrorCode, UnstuckError } from "../errors.js";
import type { ApprovalRequest, Identity } from "../requests/model.js";

/** The Slack directory calls the policy needs (Slack `usergroups.users.list`). */
export interface SlackDirectory {
  /** User ids of the members of one user group (`S…`). */
  usergroupMembers(groupId: string): Promise<readonly string[]>;
}

export interface ApprovalPolicyOptions {
  /** Channel ids where requests may be made; empty = anywhere. */
  readonly channels: readonly string[];
  /**
   * Ids and channel-name patterns (`UNSTUCK_CHANNEL_PATTERNS`); when given, it decides instead of
   * `channels`.
   */
  readonly channelGate?: {
    allowed(channelId: string): Promise<boolean>;
    howToEnable(channelId: string): string;
  };
  /** Slack user ids (`U…`/`W…`) and user-group ids (`S…`). */
  readonly approvers: readonly string[];
  readonly directory?: SlackDirectory;
  readonly now: () => Date;
  /**
   * How long a resolved user group is cached for display (who could approve). Votes and the
   * executor never use the cache: they look membership up live.
   */
  readonly groupCacheSeconds?: number;
}

const USER_ID = /^[UW][A-Z0-9]{2,}$/;
const GROUP_ID = /^S[A-Z0-9]{2,}$/;

/**
 * Channel allow-list and approver rules. The requester can never approve their own request,
 * whatever the approver list says.
 */
export class ApprovalPolicy {
  private readonly users: ReadonlySet<string>;
  private readonly groups: readonly string[];
  private readonly cache = new Map<string, { members: readonly string[]; until: number }>();

  public constructor(private readonly options: ApprovalPolicyOptions) {
    const users = new Set<string>();
    const groups: string[] = [];
    for (const entry of options.approvers) {
      if (USER_ID.test(entry)) users.add(entry);
      else if (GROUP_ID.test(entry)) groups.push(entry);
      else {
        throw new UnstuckError(
          ErrorCode.Config,
          `UNSTUCK_APPROVERS entry "${entry}" is neither a Slack user id (U…/W…) nor a user-group id (S…).`,
          { variable: "UNSTUCK_APPROVERS" },
        );
      }
    }
    if (groups.length > 0 && !options.directory) {
      throw new UnstuckError(
        ErrorCode.Config,
        "UNSTUCK_APPROVERS names user groups, but no Slack directory is available to resolve them.",
        { variable: "UNSTUCK_APPROVERS" },
      );
    }
    this.users = users;
    this.groups = groups;
  }

  /** Throws `ChannelNotAllowed` unless requests may be made in this channel. */
  public async assertMayRequest(channelId: string): Promise<void> {
    const { channels, channelGate } = this.options;
    if (channelGate !== undefined) {
      // Ids and name patterns, the same gate (and name cache) the Slack listeners use.
      if (!(await channelGate.allowed(channelId).catch(() => false))) {
        throw new UnstuckError(
          ErrorCode.ChannelNotAllowed,
          `Changes can only be requested in the on-call channels this bot is configured for. ${channelGate.howToEnable(channelId)}`,
          { channel: channelId },
        );
      }
      return;
    }
    if (channels.length > 0 && !channels.includes(channelId)) {
      throw new UnstuckError(
        ErrorCode.ChannelNotAllowed,
        "Changes can only be requested in the on-call channels this bot is configured for.",
        { channel: channelId },
      );
    }
  }

  /**
   * Every user id that may approve, with user groups resolved: cached briefly for display, or
   * `live` (no cache) for a decision. A failed live lookup throws `Unreachable`.
   */
  public async approverIds(options: { live?: boolean } = {}): Promise<ReadonlySet<string>> {
    const ids = new Set(this.users);
    for (const group of this.groups) {
      for (const member of await this.members(group, options.live ?? false)) ids.add(member);
    }
    return ids;
  }

  /** Approvers who could approve a request from `requester` (everyone but the requester). */
  public async eligibleApprovers(requester: Identity): Promise<readonly string[]> {
    const ids = await this.approverIds();
    return [...ids].filter((id) => id !== requester.userId).sort();
  }

  /**
   * Throws `Config` when a request from `requester` could never gather `required` approvals, so
   * nobody waits for a vote that cannot come.
   */
  public async assertApprovable(requester: Identity, required: number): Promise<void> {
    const eligible = await this.eligibleApprovers(requester);
    if (eligible.length < required) {
      throw new UnstuckError(
        ErrorCode.Config,
        `This change needs ${required} approval(s) from someone other than you, but only ${eligible.length} ` +
          `eligible approver(s) are configured. Ask an admin to add approvers to UNSTUCK_APPROVERS.`,
        { variable: "UNSTUCK_APPROVERS", required, eligible: eligible.length },
      );
    }
  }

  /** Throws `SelfApproval` or `NotApprover` unless `voter` may vote on `request`. */
  public async assertMayVote(voter: Identity, request: Pick<ApprovalRequest, "requester">): Promise<void> {
    if (voter.userId === request.requester.userId) {
      throw new UnstuckError(
        ErrorCode.SelfApproval,
        "You made this request, so someone else has to approve it (two-person rule).",
      );
    }
    if (this.users.has(voter.userId)) return;
    const ids = await this.approverIds({ live: true });
    if (!ids.has(voter.userId)) {
      throw new UnstuckError(
        ErrorCode.NotApprover,
        "You are not on the approver list for changes made by this bot.",
      );
    }
  }

  private async members(group: string, live: boolean): Promise<readonly string[]> {
    const now = this.options.now().getTime();
    const hit = this.cache.get(group);
    if (!live && hit && hit.until > now) return hit.members;
    const directory = this.options.directory;
    if (!directory) return [];
    let listed: readonly string[];
    try {
      listed = await directory.usergroupMembers(group);
    } catch (err) {
      if (!live) throw err;
      throw new UnstuckError(
        ErrorCode.Unreachable,
        `I could not check the approver group's current members with Slack, so nothing was counted; try again in a moment.`,
        { group },
        { cause: err },
      );
    }
    const members = listed.filter((id) => USER_ID.test(id));
    this.cache.set(group, { members, until: now + (this.options.groupCacheSeconds ?? 60) * 1000 });
    return members;
  }
}
