/**
 * Slack Web API figures for `/metrics`: every HTTP 429 a WebClient receives (its `rate_limited`
 * event, by method) and every attempt it retries (p-retry's `onFailedAttempt`, by reason).
 */
import { retryPolicies, type RetryOptions, type WebClient, WebClientEvent } from "@slack/web-api";
import { slackApiRateLimited, slackApiRetries } from "../ops/metrics.js";

/** The Web API method of a request URL (`…/api/chat.postMessage` → `chat.postMessage`). */
function methodOf(url: unknown): string {
  const last = typeof url === "string" ? (url.split("?")[0]?.split("/").pop() ?? "") : "";
  return /^[a-zA-Z]+(\.[a-zA-Z]+)+$/.test(last) ? last : "unknown";
}

function reasonOf(error: unknown): "rate_limited" | "http" | "network" {
  // The WebClient signals "retry after the 429's wait" with this message, wrapped in a request error.
  const message = error instanceof Error ? error.message : "";
  if (message.includes("A rate limit was exceeded")) return "rate_limited";
  return (error as { code?: unknown } | null)?.code === "slack_webapi_http_error" ? "http" : "network";
}

/**
 * A WebClient retry policy (default: the client's own, ten retries in about thirty minutes) that
 * counts each retried attempt. p-retry, which the WebClient runs its policy through, calls
 * `onFailedAttempt` once per failed attempt with `retriesLeft`; the last one is not a retry.
 */
export function countedRetries(
  base: RetryOptions = retryPolicies.tenRetriesInAboutThirtyMinutes,
): RetryOptions {
  const onFailedAttempt = (error: Error & { retriesLeft?: number }): void => {
    if ((error.retriesLeft ?? 0) > 0) slackApiRetries.inc({ reason: reasonOf(error) });
  };
  return { ...base, onFailedAttempt } as RetryOptions;
}

/** Count the client's HTTP 429 answers by method. */
export function countRateLimits<C extends WebClient>(client: C): C {
  client.on(WebClientEvent.RATE_LIMITED, (_retryAfterSeconds: number, request: { url?: unknown }) => {
    slackApiRateLimited.inc({ method: methodOf(request.url) });
  });
  return client;
}
