/**
 * A test bot runtime: the environment it starts from (fake Slack, the test Redis (`REDIS_URL`), this
 * test process's keys), AWS clients on the simulated account, and the runtime built and started as
 * the end-to-end tests run it.
 */
import { pino } from "pino";
import { createAwsClients, type AwsClients } from "../../src/aws/clients.js";
import type { Config } from "../../src/config.js";
import { createRuntime, type Runtime, type RuntimeOptions } from "../../src/runtime.js";
import { REDIS_URL } from "../helpers/redis.js";
import { keyEnv } from "../helpers/keys.js";

export interface BotEnvBase {
  readonly token: string;
  readonly secret: string;
  /** The fake Slack's Web API URL. */
  readonly slackUrl: string;
  /** Redis key prefix of this test (unique per test). */
  readonly prefix: string;
}

function roleOf(role: string | undefined): "all" | "bot" | "worker" {
  return role === "bot" || role === "worker" ? role : "all";
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
    REDIS_URL,
    UNSTUCK_REDIS_PREFIX: base.prefix,
    ...keyEnv(roleOf(extra["UNSTUCK_ROLE"])),
    ...extra,
  };
}

/** SDK clients on a simulated AWS account (the world's `aws.url`), with the bot's test credentials. */
export function simAwsClients(endpoint: string, maxAttempts: number): AwsClients {
  return createAwsClients({
    region: "ap-northeast-2",
    endpoint,
    credentials: { accessKeyId: "AKIAUNSTUCKTEST00001", secretAccessKey: "x" },
    maxAttempts,
  });
}

export interface StartedRuntime {
  readonly runtime: Runtime;
  /** Its Slack request URL (`/slack/events` on the port it listens on). */
  readonly events: string;
}

/**
 * `createRuntime` with a silent log, the wall clock and the given kube (and AWS), started;
 * `options` are further runtime options (shorter timings).
 */
export async function startRuntime(
  config: Config,
  services: Pick<NonNullable<RuntimeOptions["services"]>, "kube" | "aws">,
  options: Omit<RuntimeOptions, "config" | "log" | "services"> = {},
): Promise<StartedRuntime> {
  const log = pino({ level: "silent" });
  const runtime = await createRuntime({
    config,
    log,
    services: { ...services, now: () => new Date(), log },
    ...options,
  });
  const { port } = await runtime.start();
  return { runtime, events: `http://127.0.0.1:${String(port)}/slack/events` };
}
