/**
 * The Slack Web API clients of a running bot: one with the Web API's own retries for everything
 * else, and one without for the notifier, which retries by itself.
 */
import { WebClient } from "@slack/web-api";
import type { Config, Role, SlackConfig } from "../config.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { Logger } from "../log.js";
import { boltLogger } from "../slack/bolt-logger.js";
import { countedRetries, countRateLimits } from "../slack/web-metrics.js";

/** The Slack configuration this role needs: a bot token, and a way to receive unless it is a worker. */
export function requireSlack(config: Config, role: Role): SlackConfig {
  const slackConfig = config.slack;
  if (!slackConfig || (role !== "worker" && slackConfig.signingSecret === "" && !slackConfig.appToken)) {
    throw new UnstuckError(
      ErrorCode.Config,
      `Slack is not configured: set ${config.missingSlack.join(" and ")}.`,
      {
        variable: config.missingSlack[0],
      },
    );
  }
  return slackConfig;
}

export interface SlackClients {
  /** Replies, cards, lookups: with the Web API's own retries. */
  readonly client: WebClient;
  /** The notifier's: no retries of its own, rate-limited calls rejected. */
  readonly notifierClient: WebClient;
  /**
   * The waits' status messages': a few seconds of retries, rate-limited calls rejected, so a burst of
   * 429s costs a wait one check, never minutes (the wait says it again at its next check).
   */
  readonly statusClient: WebClient;
}

export function createSlackClients(slackConfig: SlackConfig, log: Logger): SlackClients {
  const clientOptions = {
    // Through pino, with the token and secrets scrubbed, like Bolt's own client.
    logger: boltLogger(log.child({ component: "web-api" }), [
      slackConfig.botToken,
      slackConfig.signingSecret,
      slackConfig.appToken ?? "",
    ]),
    ...(slackConfig.apiUrl !== undefined ? { slackApiUrl: slackConfig.apiUrl } : {}),
    retryConfig: countedRetries(),
  };
  const client = countRateLimits(new WebClient(slackConfig.botToken, clientOptions));
  // The notifier retries by itself, re-reading the stored request before each attempt; this client's
  // own retries would re-send a stale body (and wait up to 30 minutes), so it has none.
  const notifierClient = countRateLimits(
    new WebClient(slackConfig.botToken, {
      ...clientOptions,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
    }),
  );
  const statusClient = countRateLimits(
    new WebClient(slackConfig.botToken, {
      ...clientOptions,
      retryConfig: { retries: 2, factor: 2, minTimeout: 500, maxTimeout: 2_000 },
      rejectRateLimitedCalls: true,
    }),
  );
  return { client, notifierClient, statusClient };
}
