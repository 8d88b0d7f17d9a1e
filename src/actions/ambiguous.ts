/**
 * Whether a failed write may still have been applied — the one rule both executors decide by before
 * they re-send anything: after an ambiguous failure they re-read first (a lost answer to a write
 * that went through is done, not to be repeated); any other failure is final as it is.
 */
import { ErrorCode, isUnstuckError } from "../errors.js";

/**
 * Ambiguous: the write may or may not have been applied.
 *
 * - Anything not coded by an adapter (`UnstuckError`), `Unreachable` (reset, refused mid-call) and
 *   `Internal`: nothing says the request did not go out.
 * - `Upstream` without an HTTP status (a deadline, an unrecognised failure) or with a 5xx.
 * - `Upstream` from AWS (`details.awsError`) whatever its status: an AWS error the adapter could not
 *   classify is no proof of refusal, as AWS answers some transient failures (RequestTimeout…) with a
 *   4xx. A Kubernetes 4xx, by contrast, is the API server refusing the request.
 *
 * Everything else was refused, nothing written: a refusal coded by the adapter (`Forbidden`,
 * `NotFound`, `Conflict`, `BadInput`, `Throttled`, `Stale`…).
 */
export function isAmbiguous(err: unknown): boolean {
  if (!isUnstuckError(err)) return true;
  switch (err.code) {
    case ErrorCode.Unreachable:
    case ErrorCode.Internal:
      return true;
    case ErrorCode.Upstream: {
      const status = err.details.status;
      return status === undefined || status >= 500 || err.details["awsError"] !== undefined;
    }
    default:
      return false;
  }
}
