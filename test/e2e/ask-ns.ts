/**
 * `ns` asked where a user starts: the terminal (`npm run unstuck -- …`, its services built from the
 * environment) and `/unstuck ns` in Slack (a runtime started from configuration alone, answering a
 * signed slash command through the fake Slack, a world of `test/helpers/world.ts`). The test Redis keys
 * of each Slack run are removed with its world.
 */
import { expect } from "vitest";
import { runCli } from "../../src/cli.js";
import { eventually } from "../helpers/eventually.js";
import { startTestWorld } from "../helpers/world.js";
import { postSigned, slashCommandBody } from "../sim/slack/index.js";
import { linesIo } from "../helpers/cli-io.js";

const TOKEN = "xoxb-ask-ns-token";
const SECRET = "ask-ns-signing-secret";
export const CHANNEL = "C0INCIDENT";

/** The terminal form: what it prints (stdout and stderr, in order) and its exit code. */
export async function askTerminal(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<{ code: number; text: string }> {
  const lines: string[] = [];
  const code = await runCli([...args], { ...env }, linesIo(lines));
  return { code, text: lines.join("\n") };
}

/** The environment of a world whose bot builds its services from `kubeconfig` alone, in {@link CHANNEL}. */
export function fromConfigEnv(kubeconfig: string): Record<string, string> {
  return {
    KUBECONFIG: kubeconfig,
    UNSTUCK_APPROVERS: "U0APPROVER1",
    UNSTUCK_CHANNELS: CHANNEL,
    UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
  };
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
  // Its services built from the configuration alone (KUBECONFIG, the AWS env), as a user's would be.
  const w = await startTestWorld({
    token: TOKEN,
    secret: SECRET,
    label: "ask-ns",
    simServices: false,
    env: { ...fromConfigEnv(kubeconfig), ...env },
  });
  try {
    const { fake } = w;
    const res = await postSigned(
      w.events,
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
    await w.stop();
  }
}
