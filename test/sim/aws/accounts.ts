/**
 * Accounts: the simulated AWS is partitioned by account, each an {@link AwsWorld} of its own. A
 * request is answered by the world of the account its access key id belongs to: a key STS handed
 * out belongs to the assumed role's account, a key registered with {@link AwsAccounts.addAccessKey}
 * to that account, and any other key to the main world (so a single-account world behaves exactly
 * as before accounts existed). Roles have a simple trust policy: the accounts whose principals may
 * assume them, and an optional external id.
 */
import { AwsApiError } from "./errors.js";
import type { AwsWorld } from "./world.js";

/** A role STS lets callers assume. */
export interface SimRole {
  /** `arn:aws:iam::<account>:role/<name>`; the account must be one of the simulator's. */
  readonly arn: string;
  /** Accounts whose principals the trust policy allows (`"Principal": {"AWS": "arn:aws:iam::<id>:root"}`). */
  readonly trustedAccounts: readonly string[];
  /** The trust policy's `sts:ExternalId` condition: AssumeRole must send exactly this. */
  readonly externalId?: string;
  /**
   * Actions the role's policy does not allow, as an operation name (`ListHostedZones`) or in IAM
   * form (`route53:ListHostedZones`): its sessions get the service's own access-denied error.
   */
  readonly deny?: readonly string[];
}

/** Temporary credentials STS handed out, and whose they are. */
export interface SimSession {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
  readonly expiration: Date;
  readonly accountId: string;
  readonly roleArn: string;
  readonly sessionName: string;
  /** `arn:aws:sts::<account>:assumed-role/<role name>/<session name>`. */
  readonly arn: string;
  /** `<role id>:<session name>`. */
  readonly assumedRoleId: string;
  /** The access key id that asked for them. */
  readonly assumedBy: string;
}

/** What an AssumeRole request asks for. */
export interface AssumeRoleRequest {
  readonly roleArn: string;
  readonly sessionName: string;
  readonly externalId?: string;
  readonly durationSeconds?: number;
}

const ROLE_ARN = /^arn:aws:iam::(\d{12}):role\/(?:[\w+=,.@-]+\/)*([\w+=,.@-]{1,64})$/;

/** The account and role name of a role ARN; `undefined` when it is not one. */
export function parseRoleArn(arn: string): { accountId: string; name: string } | undefined {
  const m = ROLE_ARN.exec(arn);
  return m ? { accountId: m[1] ?? "", name: m[2] ?? "" } : undefined;
}

export class AwsAccounts {
  private readonly worlds = new Map<string, AwsWorld>();
  private readonly roles = new Map<string, SimRole>();
  private readonly roleIds = new Map<string, string>();
  private readonly sessions = new Map<string, SimSession>();
  private readonly keys = new Map<string, string>();

  public constructor(public readonly main: AwsWorld) {
    this.worlds.set(main.accountId, main);
  }

  /** Another account, answered for the keys of its roles' sessions and the keys registered to it. */
  public addAccount(world: AwsWorld): void {
    if (this.worlds.has(world.accountId)) throw new Error(`account ${world.accountId} already exists`);
    this.worlds.set(world.accountId, world);
  }

  /** A role in one of the accounts. */
  public addRole(role: SimRole): void {
    const parsed = parseRoleArn(role.arn);
    if (!parsed) throw new Error(`not a role ARN: ${role.arn}`);
    const world = this.worlds.get(parsed.accountId);
    if (!world) throw new Error(`role ${role.arn}: account ${parsed.accountId} is not simulated`);
    this.roles.set(role.arn, {
      ...role,
      trustedAccounts: [...role.trustedAccounts],
      ...(role.deny ? { deny: [...role.deny] } : {}),
    });
    this.roleIds.set(role.arn, `AROA${world.ids.upper(17)}`);
  }

  /** Static keys of an account other than the main one (an IAM user's, or a pod's role there). */
  public addAccessKey(accessKeyId: string, accountId: string): void {
    if (!this.worlds.has(accountId)) throw new Error(`account ${accountId} is not simulated`);
    this.keys.set(accessKeyId, accountId);
  }

  /** More than the main account, or roles: calls then report the account that answered them. */
  public get partitioned(): boolean {
    return this.worlds.size > 1 || this.roles.size > 0;
  }

  public world(accountId: string): AwsWorld | undefined {
    return this.worlds.get(accountId);
  }

  public accountIds(): string[] {
    return [...this.worlds.keys()];
  }

  /** The account an access key id belongs to (unknown keys: the main account). */
  public accountOf(accessKeyId: string): string {
    return this.sessions.get(accessKeyId)?.accountId ?? this.keys.get(accessKeyId) ?? this.main.accountId;
  }

  /** The world that answers requests signed with `accessKeyId`. */
  public worldOf(accessKeyId: string): AwsWorld {
    return this.worlds.get(this.accountOf(accessKeyId)) ?? this.main;
  }

  /** The session STS handed out with this access key id, if it did. */
  public session(accessKeyId: string): SimSession | undefined {
    return this.sessions.get(accessKeyId);
  }

  /** Every session of a role, oldest first. */
  public sessionsOf(roleArn: string): SimSession[] {
    return [...this.sessions.values()].filter((s) => s.roleArn === roleArn);
  }

  /** The actions the caller's role may not call (none for keys that are not a role's session). */
  public deniedTo(accessKeyId: string): readonly string[] {
    const s = this.sessions.get(accessKeyId);
    return s ? (this.roles.get(s.roleArn)?.deny ?? []) : [];
  }

  /**
   * STS AssumeRole: the caller's account must be trusted by the role (and send its external id);
   * otherwise AccessDenied as STS words it, for an unknown role as for an untrusted caller.
   */
  public assumeRole(callerKey: string, req: AssumeRoleRequest): SimSession {
    if (!/^[\w+=,.@-]{2,64}$/.test(req.sessionName)) {
      throw new AwsApiError(
        "ValidationError",
        `1 validation error detected: Value '${req.sessionName}' at 'roleSessionName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]*`,
      );
    }
    if (req.roleArn.length < 20) {
      throw new AwsApiError(
        "ValidationError",
        `1 validation error detected: Value '${req.roleArn}' at 'roleArn' failed to satisfy constraint: Member must have length greater than or equal to 20`,
      );
    }
    const duration = req.durationSeconds ?? 3600;
    if (duration < 900 || duration > 43_200) {
      throw new AwsApiError(
        "ValidationError",
        `1 validation error detected: Value '${duration}' at 'durationSeconds' failed to satisfy constraint: Member must have value ${duration < 900 ? "greater than or equal to 900" : "less than or equal to 43200"}`,
      );
    }
    const callerWorld = this.worldOf(callerKey);
    const caller = this.sessions.get(callerKey)?.arn ?? callerWorld.identityFor(callerKey).arn;
    const role = this.roles.get(req.roleArn);
    const trusted =
      role !== undefined &&
      role.trustedAccounts.includes(this.accountOf(callerKey)) &&
      (role.externalId === undefined || role.externalId === req.externalId);
    if (!role || !trusted) {
      throw new AwsApiError(
        "AccessDenied",
        `User: ${caller} is not authorized to perform: sts:AssumeRole on resource: ${req.roleArn}`,
        403,
      );
    }
    // A role assumed with a role's session (role chaining) lasts one hour at most.
    if (this.sessions.has(callerKey) && duration > 3600) {
      throw new AwsApiError(
        "ValidationError",
        "The requested DurationSeconds exceeds the 1 hour session limit for roles assumed by role chaining.",
      );
    }
    const parsed = parseRoleArn(req.roleArn);
    const world = parsed ? this.worlds.get(parsed.accountId) : undefined;
    if (!parsed || !world) throw new Error(`role ${req.roleArn} without its account`);
    const arn = `arn:aws:sts::${parsed.accountId}:assumed-role/${parsed.name}/${req.sessionName}`;
    const roleId = this.roleIds.get(req.roleArn) ?? "AROAUNKNOWN";
    const session: SimSession = {
      accessKeyId: `ASIA${world.ids.upper(16)}`,
      secretAccessKey: world.ids.chars(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        40,
      ),
      sessionToken: `FwoGZXIvYXdzE${world.ids.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 300)}`,
      expiration: new Date(Math.floor(world.now().getTime() / 1000) * 1000 + duration * 1000),
      accountId: parsed.accountId,
      roleArn: req.roleArn,
      sessionName: req.sessionName,
      arn,
      assumedRoleId: `${roleId}:${req.sessionName}`,
      assumedBy: callerKey,
    };
    this.sessions.set(session.accessKeyId, session);
    world.setIdentity(session.accessKeyId, {
      type: "AssumedRole",
      arn,
      principalId: session.assumedRoleId,
      userName: req.sessionName,
    });
    return session;
  }
}
