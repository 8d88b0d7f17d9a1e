/**
 * Slack's readiness check for `/readyz`: `auth.test` with the bot token, bounded, without retries. A
 * passed check is trusted for a while (`auth.test` is rate-limited per workspace), and a rate-limited
 * answer counts as reachable. The Slack-facing roles run it as a check that degrades rather than
 * makes unready (`src/ops-target.ts`); workers do not run it.
 */
import { WebClient } from "@slack/web-api";
import type { SlackConfig } from "../config.js";
import type { ReadinessCheck } from "../ops/server.js";
import { slackErrorCode } from "./slack-errors.js";

export interface SlackReadinessOptions {
  /** Bound on one `auth.test`. */
  readonly timeoutMs: number;
  /** How long a passed check is trusted. */
  readonly cacheMs: number;
  readonly now: () => number;
}

export function slackReadinessCheck(slack: SlackConfig, options: SlackReadinessOptions): ReadinessCheck {
  const { now, cacheMs } = options;
  const client = new WebClient(slack.botToken, {
    ...(slack.apiUrl !== undefined ? { slackApiUrl: slack.apiUrl } : {}),
    retryConfig: { retries: 0 },
    timeout: options.timeoutMs,
    rejectRateLimitedCalls: true,
  });
  let passedAt: number | undefined;
  return {
    name: "slack",
    async run() {
      if (passedAt !== undefined && now() - passedAt < cacheMs) return;
      try {
        await client.auth.test();
      } catch (err) {
        // Rate limited: Slack answered, so it is reachable; anything else is not ready.
        const code = slackErrorCode(err);
        if ((err as { code?: unknown }).code !== "slack_webapi_rate_limited_error") {
          throw new Error(code !== undefined ? `auth.test: ${code}` : "Slack Web API unreachable", {
            cause: err,
          });
        }
      }
      passedAt = now();
    },
  };
}
