/** The environment a test bot runtime starts from: fake Slack, the shared Redis, a random approval key. */
import { TEST_APPROVAL_KEY } from "../integration/approvals/helpers/harness.js";

export interface BotEnvBase {
  readonly token: string;
  readonly secret: string;
  /** The fake Slack's Web API URL. */
  readonly slackUrl: string;
  /** Redis key prefix of this test (unique per test). */
  readonly prefix: string;
}

/** `loadConfig` input for a bot under test; `extra` adds or overrides variables. */
export function botEnv(
  base: BotEnvBase,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return {
    SLACK_BOT_TOKEN: base.token,
    SLACK_SIGNING_SECRET: base.secret,
    SLACK_API_URL: base.slackUrl,
    PORT: "0",
    REDIS_URL: "redis://127.0.0.1:6379",
    UNSTUCK_REDIS_PREFIX: base.prefix,
    UNSTUCK_APPROVAL_KEY: TEST_APPROVAL_KEY,
    ...extra,
  };
}
