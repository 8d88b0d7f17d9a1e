/**
 * `ns` asked where a user starts: the terminal (`npm run unstuck -- …`, its services built from the
 * environment) and `/unstuck ns` in Slack (a runtime started from configuration alone, answering a
 * signed slash command through the fake Slack). The test Redis keys of each Slack run are removed.
 */
import { pino } from "pino";
import type { Redis } from "ioredis";
import { expect } from "vitest";
import { runCli } from "../../src/cli.js";
import { loadConfig } from "../../src/config.js";
import { createRuntime } from "../../src/runtime.js";
import { client, deleteKeysWithPrefix, uniquePrefix } from "../helpers/redis.js";
import { eventually } from "../helpers/eventually.js";
import { postSigned, slashCommandBody, startFakeSlack } from "../sim/slack/index.js";
import { botEnv } from "./bot-env.js";

const TOKEN = "xoxb-ask-ns-token";
const SECRET = "ask-ns-signing-secret";
export const CHANNEL = "C0INCIDENT";

/** The terminal form: what it prints (stdout and stderr, in order) and its exit code. */
export async function askTerminal(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<{ code: number; text: string }> {
  const lines: string[] = [];
  const code = await runCli([...args], { ...env }, { out: (s) => lines.push(s), err: (s) => lines.push(s) });
  return { code, text: lines.join("\n") };
}

let redis: Redis | undefined;

/** Closes the Redis client the Slack runs used (call once, after all). */
export async function closeAskRedis(): Promise<void> {
  await redis?.quit();
  redis = undefined;
}

/**
 * `/unstuck ns <ns>` from U0ONCALL1 in the incident channel: the answer's text and blocks — the
 * card posted in the channel, or, for an answer with nothing to act on, the reply to the asker.
 */
export async function askSlack(
  ns: string,
  kubeconfig: string,
  env: Readonly<Record<string, string>> = {},
): Promise<string> {
  const fake = await startFakeSlack({ token: TOKEN });
  const prefix = uniquePrefix("ask-ns");
  const config = loadConfig(
    botEnv(
      { token: TOKEN, secret: SECRET, slackUrl: fake.url, prefix },
      {
        KUBECONFIG: kubeconfig,
        UNSTUCK_APPROVERS: "U0APPROVER1",
        UNSTUCK_CHANNELS: CHANNEL,
        UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
        ...env,
      },
    ),
  );
  const runtime = await createRuntime({ config, log: pino({ level: "silent" }) });
  try {
    const { port } = await runtime.start();
    const res = await postSigned(
      `http://127.0.0.1:${String(port)}/slack/events`,
      SECRET,
      slashCommandBody({
        text: `ns ${ns}`,
        userId: "U0ONCALL1",
        channelId: CHANNEL,
        responseUrl: fake.responseUrl("ns"),
      }),
    );
    expect(res.status).toBe(200);
    const answer = await eventually(
      () =>
        fake.calls().find((c) => c.method === "chat.postMessage" && c.body["channel"] === CHANNEL)?.body ??
        fake.responses()[0]?.body,
      30_000,
    );
    return `${String(answer["text"])}\n${JSON.stringify(answer["blocks"])}`;
  } finally {
    await runtime.stop();
    redis ??= client();
    await deleteKeysWithPrefix(redis, prefix);
    await fake.stop();
  }
}
