/**
 * Error mapping: whatever a Kubernetes request rejects with — client-node's `ApiException`, an
 * undici socket error, our own deadline firing — becomes a coded, user-facing `UnstuckError`
 * that names the call (`CallContext`), so a 403 can say exactly which permission is missing.
 * Owns only the translation: retrying and the decisions built on these codes are the adapter's.
 */
import { ApiException } from "@kubernetes/client-node";
import { ErrorCode, type ErrorDetails, UnstuckError } from "../errors.js";
import { obj } from "./decode.js";
import { DEFAULT_KUBE_TIMEOUT_MS } from "./transport.js";

/** What a call was doing, so that a 403 can say exactly which permission is missing. */
export interface CallContext {
  readonly verb: string;
  readonly resource: string;
  readonly group?: string;
  readonly namespace?: string;
  readonly name?: string;
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

function bodyMessage(body: unknown): string | undefined {
  if (typeof body === "string") {
    try {
      const parsed: unknown = JSON.parse(body);
      return bodyMessage(parsed);
    } catch {
      return body.length > 0 ? body.slice(0, 500) : undefined;
    }
  }
  if (body && typeof body === "object" && "message" in body) {
    const status = obj(body);
    const message = typeof status.message === "string" ? status.message : JSON.stringify(status.message);
    // A generic 422 ("the server rejected our request…") carries the real reason in its causes,
    // e.g. a JSON-patch `test` that failed.
    const causes = obj(status.details).causes;
    const reasons = (Array.isArray(causes) ? causes : [])
      .map((c) => obj(c).message)
      .filter((m): m is string => typeof m === "string" && m !== message);
    return reasons.length > 0 ? `${message}: ${reasons.join("; ")}` : message;
  }
  return undefined;
}

/** Socket-level failures: the API server (or the way to it) is not answering. */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "ETIMEDOUT",
  "ECONNRESET",
  "EHOSTUNREACH",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CLOSED",
]);

/** fetch and request reject with `AbortError`/`TimeoutError` when the request's signal fires (our deadline). */
function isAbort(err: unknown): boolean {
  const { name, type } = obj(err);
  return name === "AbortError" || name === "TimeoutError" || type === "aborted";
}

function headerValue(headers: unknown, name: string): string | undefined {
  for (const [k, v] of Object.entries(obj(headers))) if (k.toLowerCase() === name) return String(v);
  return undefined;
}

export function describeTarget(ctx: CallContext): string {
  const res = ctx.group ? `${ctx.resource}.${ctx.group}` : ctx.resource;
  return `${ctx.verb} ${res}${ctx.namespace ? ` in namespace "${ctx.namespace}"` : ""}`;
}

/**
 * What the API server says when a JSON patch does not apply to the object as it is now (a `test`
 * that failed, a path that is no longer there): a 422 built without a resource, a name or causes
 * (`NewGenericServerResponse` in the apiserver's patch handler), so this sentence is all it sends.
 */
const PATCH_DID_NOT_APPLY = "the server rejected our request due to an error in our request";

/**
 * A 409, or a 422 from a JSON patch that no longer applies: the object moved on since it was read
 * (approved). Every patch this adapter sends pins what it read with `test` operations, so a patch
 * that does not apply means exactly that. Recognised from the bare 422 the real API server sends,
 * and from the evanphx/json-patch wording where a server passes it on. Any other refusal (an
 * admission webhook, validation: a 422 naming the object, with causes) is what it says.
 */
export function isPreconditionRefusal(err: unknown): err is UnstuckError {
  if (!(err instanceof UnstuckError)) return false;
  if (err.details.status === 409) return true;
  if (err.details.status !== 422) return false;
  const text = err.message.trim();
  return text === PATCH_DID_NOT_APPLY || /testing value .* failed|test failed|test operation/i.test(text);
}

/** The details every mapped error carries: the call, its resource (`resource.group`) and target. */
interface CallDetails extends ErrorDetails {
  readonly verb: string;
  readonly resource: string;
}

/** The {@link CallDetails} of a call, as the mapped error reports them. */
function callDetails(ctx: CallContext): CallDetails {
  return {
    verb: ctx.verb,
    resource: ctx.group ? `${ctx.resource}.${ctx.group}` : ctx.resource,
    ...(ctx.namespace !== undefined ? { namespace: ctx.namespace } : {}),
    ...(ctx.name !== undefined ? { name: ctx.name } : {}),
  };
}

/** An HTTP refusal from the API server, coded by its status (a 403 names the missing permission). */
function fromApiException(err: ApiException<unknown>, ctx: CallContext, details: CallDetails): UnstuckError {
  const status = err.code;
  const message = bodyMessage(err.body) ?? `HTTP ${status}`;
  switch (status) {
    case 401:
      return new UnstuckError(
        ErrorCode.Unauthorized,
        `The Kubernetes API rejected the bot's credentials: ${message}`,
        {
          ...details,
          status,
        },
      );
    case 403:
      return new UnstuckError(
        ErrorCode.Forbidden,
        `Missing RBAC permission: the bot cannot ${describeTarget(ctx)}. Grant verb "${ctx.verb}" on ` +
          `"${details.resource}" to the bot's service account (API server said: ${message})`,
        { ...details, status },
      );
    case 404:
      return new UnstuckError(ErrorCode.NotFound, message, { ...details, status });
    case 409:
      return new UnstuckError(ErrorCode.Conflict, message, { ...details, status });
    case 422:
      return new UnstuckError(ErrorCode.BadInput, message, { ...details, status });
    case 429: {
      const ra = Number(headerValue(err.headers, "retry-after"));
      return new UnstuckError(ErrorCode.Throttled, `The Kubernetes API is throttling requests: ${message}`, {
        ...details,
        status,
        ...(Number.isFinite(ra) ? { retryAfterSeconds: ra } : {}),
      });
    }
    default:
      return new UnstuckError(
        ErrorCode.Upstream,
        `The Kubernetes API failed to ${describeTarget(ctx)} (HTTP ${status}): ${message}`,
        { ...details, status },
      );
  }
}

/**
 * Anything that is not an HTTP answer: a socket-level failure (the server is unreachable), or an
 * unexpected error passed on as an upstream failure with its cause.
 */
function fromTransportError(
  err: unknown,
  ctx: CallContext,
  server: string,
  details: CallDetails,
): UnstuckError {
  // Node's client (the adapter's requests to a cluster it reaches directly) rejects with the socket
  // error itself (`ECONNREFUSED`, `ECONNRESET`, …); undici's request (through a proxy) with its own
  // (`UND_ERR_SOCKET` "other side closed", `UND_ERR_CONNECT_TIMEOUT`, …); undici's fetch (a watch)
  // with `TypeError: fetch failed`, the socket error as its cause. All are the same outage.
  const code = obj(err).code ?? obj(obj(err).cause).code;
  const text = err instanceof Error ? err.message : String(err);
  if (typeof code === "string" && UNREACHABLE_CODES.has(code)) {
    return new UnstuckError(
      ErrorCode.Unreachable,
      `Cannot reach the Kubernetes API server at ${server} (${code.startsWith("UND_ERR_") ? `${code}: ${text}` : code}).`,
      details,
    );
  }
  if (/ECONNREFUSED|ENOTFOUND|ETIMEDOUT|socket hang up|fetch failed|network/i.test(text)) {
    return new UnstuckError(
      ErrorCode.Unreachable,
      `Cannot reach the Kubernetes API server at ${server}: ${text}`,
      details,
    );
  }
  return new UnstuckError(
    ErrorCode.Upstream,
    `Kubernetes request failed (${describeTarget(ctx)}): ${text}`,
    details,
    {
      cause: err,
    },
  );
}

/** Map a client error to a coded, user-facing error. */
export function mapKubeError(
  err: unknown,
  ctx: CallContext,
  server: string,
  timeoutMs: number = DEFAULT_KUBE_TIMEOUT_MS,
): UnstuckError {
  if (err instanceof UnstuckError) return err;
  const details = callDetails(ctx);
  if (isAbort(err)) {
    // Not retried by `call`: for a write the outcome is unknown (the server may have applied it),
    // and for a read the caller's own deadline is the better judge of whether to try again.
    return new UnstuckError(
      ErrorCode.Upstream,
      `The Kubernetes API server at ${server} did not answer in time (${describeTarget(ctx)}: no answer within ${formatSeconds(timeoutMs)}).`,
      { ...details, timedOut: true, timeoutMs },
      { cause: err },
    );
  }
  if (err instanceof ApiException) return fromApiException(err, ctx, details);
  return fromTransportError(err, ctx, server, details);
}
