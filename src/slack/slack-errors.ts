/**
 * The Web API client throws coded errors (`slack_webapi_platform_error` with `data.error` holding Slack's own
 * code such as `not_in_channel`). Listeners only need Slack's code, so it is read here, in one place.
 */
import { webApi } from "@slack/bolt";

/** Slack's error code (`not_in_channel`, `invalid_auth` …) for a platform error; `undefined` otherwise. */
export function slackErrorCode(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const { code, data } = err as { code?: unknown; data?: unknown };
  if (code !== webApi.ErrorCode.PlatformError) return undefined;
  const error = typeof data === "object" && data !== null ? (data as { error?: unknown }).error : undefined;
  return typeof error === "string" ? error : undefined;
}
