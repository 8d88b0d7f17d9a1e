/**
 * How every service adapter of `src/aws` calls the SDK: the mapping of an SDK error to a coded,
 * user-facing `UnstuckError` naming the IAM action, conditional writes refused as STALE, deletions
 * (gone is done, in use is a conflict), and the tag lists the APIs return.
 */
import { ErrorCode, UnstuckError } from "../errors.js";
import type { Tags } from "./types.js";

const ACCESS_DENIED = new Set([
  "AccessDenied",
  "AccessDeniedException",
  "UnauthorizedOperation",
  "UnauthorizedAccess",
  "AuthFailure",
]);
const THROTTLED = new Set([
  "Throttling",
  "ThrottlingException",
  "RequestLimitExceeded",
  "TooManyRequestsException",
  "PriorRequestNotComplete",
]);

/** Whose credentials signed a call: an account (from its role's ARN) and the role, for messages. */
export interface AwsAccountRef {
  /** The 12-digit account id, when known (from the role's ARN). */
  readonly account?: string;
  /** The role assumed for this account; absent = the bot's own credentials. */
  readonly role?: string;
  /** How messages name it: `the edge account 222222222222 (role arn:…)`. */
  readonly label: string;
}

/** The property under which a client's middleware hangs its `AwsAccountRef` on a failed call's error. */
export const AWS_ACCOUNT = "$unstuckAccount";

/** The account of an IAM role ARN (`arn:aws:iam::222222222222:role/x` → `222222222222`). */
export function accountOfRole(roleArn: string): string | undefined {
  return /^arn:aws[a-z-]*:iam::(\d{12}):role\//.exec(roleArn)?.[1];
}

/** A role of the chain could not be assumed: which one, with what, and STS's own answer. */
export class AssumeRoleFailed extends Error {
  public constructor(
    public readonly target: AwsAccountRef,
    public readonly by: AwsAccountRef,
    public readonly reason: unknown,
  ) {
    super(
      `cannot assume ${target.role ?? "the role"}: ${reason instanceof Error ? reason.message : String(reason)}`,
    );
    this.name = "AssumeRoleFailed";
  }

  /**
   * The error a credential provider of the chain throws. A link further up that already failed
   * keeps its own error (the first role that could not be assumed is the one named), and no base
   * credentials at all stays the SDK's `CredentialsProviderError`.
   */
  public static wrap(err: unknown, target: AwsAccountRef, by: AwsAccountRef): Error {
    if (err instanceof AssumeRoleFailed) return err;
    if ((err as { name?: string } | null)?.name === "CredentialsProviderError" && err instanceof Error)
      return err;
    return new AssumeRoleFailed(target, by, err);
  }
}

/** The account a failed call was signed as, when a client's middleware named it. */
function accountOf(err: unknown): AwsAccountRef | undefined {
  if (err === null || typeof err !== "object") return undefined;
  return (err as Record<string, AwsAccountRef | undefined>)[AWS_ACCOUNT];
}

/** Account and role as error details (what the trace reports as structured data). */
function accountDetails(ref: AwsAccountRef | undefined): Record<string, string> {
  return {
    ...(ref?.account !== undefined ? { account: ref.account } : {}),
    ...(ref?.role !== undefined ? { role: ref.role } : {}),
  };
}

/** A role of the chain refused (or STS unreachable): named, with the credentials that asked. */
function assumeRoleError(err: AssumeRoleFailed): UnstuckError {
  const inner = err.reason as { name?: string; message?: string; code?: string } | undefined;
  const name = inner?.name ?? "Error";
  const message = inner?.message ?? String(err.reason);
  const details = { action: "sts:AssumeRole", awsError: name, ...accountDetails(err.target) };
  if (ACCESS_DENIED.has(name)) {
    return new UnstuckError(
      ErrorCode.Forbidden,
      `Cannot assume ${err.target.label} with ${err.by.label}: STS refused (${name}: ${message}). Its trust policy must trust ${err.by.role ?? "the bot's own role"} (with the external id, if it asks for one), and that one must be allowed sts:AssumeRole on it.`,
      details,
    );
  }
  if (
    (typeof inner?.code === "string" &&
      ["ECONNREFUSED", "ENOTFOUND", "ETIMEDOUT", "ECONNRESET"].includes(inner.code)) ||
    /ECONNREFUSED|ENOTFOUND|getaddrinfo/.test(message)
  ) {
    return new UnstuckError(
      ErrorCode.Unreachable,
      `Cannot reach STS to assume ${err.target.label}: ${message}`,
      details,
    );
  }
  return new UnstuckError(
    ErrorCode.Upstream,
    `Cannot assume ${err.target.label} with ${err.by.label} (${name}: ${message}).`,
    details,
  );
}

/** Map an SDK error to a coded, user-facing error naming the IAM action. Exported for tests. */
export function mapAwsError(err: unknown, action: string): UnstuckError {
  if (err instanceof UnstuckError) return err;
  if (err instanceof AssumeRoleFailed) return assumeRoleError(err);
  const ref = accountOf(err);
  const e = err as {
    name?: string;
    message?: string;
    code?: string;
    $metadata?: { httpStatusCode?: number };
  };
  const name = e.name ?? "Error";
  const message = e.message ?? String(err);
  if (name === "CredentialsProviderError") {
    // One message whatever the action, so a diagnosis lists it once.
    return new UnstuckError(
      ErrorCode.Unauthorized,
      "No AWS credentials for the bot: give it an IAM role (IRSA / Pod Identity), AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.",
      { awsError: name },
    );
  }
  if (ACCESS_DENIED.has(name)) {
    return ref?.role !== undefined
      ? new UnstuckError(
          ErrorCode.Forbidden,
          `Missing IAM permission ${action} in ${ref.label}: the role may not call it (${name}).`,
          { action, awsError: name, ...accountDetails(ref) },
        )
      : new UnstuckError(
          ErrorCode.Forbidden,
          `Missing IAM permission ${action}: the bot's AWS role may not call it (${name}).`,
          { action, awsError: name },
        );
  }
  if (THROTTLED.has(name)) {
    return new UnstuckError(ErrorCode.Throttled, `AWS throttled ${action} (${name}: ${message}).`, {
      action,
      awsError: name,
    });
  }
  const code = e.code;
  if (
    (typeof code === "string" && ["ECONNREFUSED", "ENOTFOUND", "ETIMEDOUT", "ECONNRESET"].includes(code)) ||
    /ECONNREFUSED|ENOTFOUND|getaddrinfo/.test(message)
  ) {
    return new UnstuckError(
      ErrorCode.Unreachable,
      `Cannot reach the AWS endpoint for ${action}: ${message}`,
      {
        action,
      },
    );
  }
  return new UnstuckError(ErrorCode.Upstream, `AWS ${action} failed (${name}): ${message}`, {
    action,
    awsError: name,
    ...(e.$metadata?.httpStatusCode !== undefined ? { status: e.$metadata.httpStatusCode } : {}),
  });
}

/** One SDK call, its failure mapped to an `UnstuckError` naming `action`. */
export async function aws<T>(action: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw mapAwsError(err, action);
  }
}

/** A conditional write refused because what it was conditioned on changed: STALE, nothing written. */
export function staleWrite(err: unknown, action: string, names: readonly string[], what: string): never {
  const name = (err as { name?: string } | null)?.name ?? "";
  if (names.includes(name)) {
    throw new UnstuckError(
      ErrorCode.Stale,
      `${what} (${name}: ${err instanceof Error ? err.message : String(err)}).`,
      { action, awsError: name },
    );
  }
  throw mapAwsError(err, action);
}

const GONE = new Set([
  "LoadBalancerNotFound",
  "LoadBalancerNotFoundException",
  "TargetGroupNotFound",
  "TargetGroupNotFoundException",
  "InvalidNetworkInterfaceID.NotFound",
  "InvalidGroup.NotFound",
]);
const IN_USE = new Set([
  "DependencyViolation",
  "ResourceInUse",
  "ResourceInUseException",
  "InvalidNetworkInterface.InUse",
]);

/** A delete: already gone is done; still in use is `Conflict` (nothing deleted); the rest as any call. */
export async function deletion(action: string, op: () => Promise<unknown>): Promise<void> {
  try {
    await op();
  } catch (err) {
    const name = (err as { name?: string } | null)?.name ?? "";
    if (GONE.has(name)) return;
    const message = err instanceof Error ? err.message : String(err);
    // EC2 says an attached interface is "currently in use" with a generic code.
    if (IN_USE.has(name) || (name === "InvalidParameterValue" && /in use/i.test(message))) {
      throw new UnstuckError(ErrorCode.Conflict, `${action} refused: still in use (${name}: ${message}).`, {
        action,
        awsError: name,
      });
    }
    throw mapAwsError(err, action);
  }
}

/** The client of an optional service (Route 53, CloudFront); absent → the read fails with a clear error. */
export function needs<T>(client: T | undefined, what: string): T {
  if (client === undefined) {
    throw new UnstuckError(ErrorCode.Upstream, `No ${what} client configured for the traffic path.`);
  }
  return client;
}

/** An API's `[{Key, Value}]` tag list as a map. */
export function tagMap(
  tags: readonly { Key?: string | undefined; Value?: string | undefined }[] | undefined,
): Tags {
  const out: Record<string, string> = {};
  for (const t of tags ?? []) if (t.Key !== undefined) out[t.Key] = t.Value ?? "";
  return out;
}
