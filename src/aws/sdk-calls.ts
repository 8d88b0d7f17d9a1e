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

/** Map an SDK error to a coded, user-facing error naming the IAM action. Exported for tests. */
export function mapAwsError(err: unknown, action: string): UnstuckError {
  if (err instanceof UnstuckError) return err;
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
    return new UnstuckError(
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
