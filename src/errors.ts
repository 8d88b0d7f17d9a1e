/**
 * Coded errors. Every failure a user can see carries one of these codes; adapters map
 * Kubernetes `ApiException.code` and AWS `err.name` onto them so that no layer above the
 * adapters ever inspects a transport error.
 */
export const ErrorCode = {
  BadInput: "BAD_INPUT",
  UnknownCommand: "UNKNOWN_COMMAND",
  InvalidName: "INVALID_NAME",
  NotFound: "NOT_FOUND",
  Forbidden: "FORBIDDEN",
  Unauthorized: "UNAUTHORIZED",
  Conflict: "CONFLICT",
  Unreachable: "UNREACHABLE",
  Throttled: "THROTTLED",
  Upstream: "UPSTREAM",
  Config: "CONFIG",
  ChannelNotAllowed: "CHANNEL_NOT_ALLOWED",
  NotApprover: "NOT_APPROVER",
  SelfApproval: "SELF_APPROVAL",
  AlreadyVoted: "ALREADY_VOTED",
  InvalidState: "INVALID_STATE",
  Stale: "STALE",
  Expired: "EXPIRED",
  Internal: "INTERNAL",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Details that help a user act: which verb/resource was forbidden, which variable is missing … */
export interface ErrorDetails {
  readonly verb?: string;
  readonly resource?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly action?: string;
  readonly variable?: string;
  readonly status?: number;
  readonly retryAfterSeconds?: number;
  readonly [key: string]: unknown;
}

/** An error whose message is safe and useful to show to a user as is. */
export class UnstuckError extends Error {
  public readonly code: ErrorCode;
  public readonly details: ErrorDetails;

  public constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = "UnstuckError";
    this.code = code;
    this.details = details;
  }
}

export function isUnstuckError(err: unknown): err is UnstuckError {
  return err instanceof UnstuckError;
}

/** Errors that will not go away by retrying (BullMQ jobs turn these into UnrecoverableError). */
export function isPermanent(err: unknown): boolean {
  if (!isUnstuckError(err)) return false;
  const permanent: readonly ErrorCode[] = [
    ErrorCode.BadInput,
    ErrorCode.UnknownCommand,
    ErrorCode.InvalidName,
    ErrorCode.NotFound,
    ErrorCode.Forbidden,
    ErrorCode.Unauthorized,
    ErrorCode.Config,
    ErrorCode.ChannelNotAllowed,
    ErrorCode.NotApprover,
    ErrorCode.SelfApproval,
    ErrorCode.AlreadyVoted,
    ErrorCode.InvalidState,
    ErrorCode.Stale,
    ErrorCode.Expired,
  ];
  return permanent.includes(err.code);
}

/** Turn anything thrown into a user-facing `{code, message}` without leaking stack traces. */
export function toUserError(err: unknown): { code: ErrorCode; message: string; details: ErrorDetails } {
  if (isUnstuckError(err)) return { code: err.code, message: err.message, details: err.details };
  return {
    code: ErrorCode.Internal,
    message: "Internal error while handling the request; the details are in the bot's log.",
    details: {},
  };
}
