/**
 * A command longer than any Slack section is never cut: the card says where it is whole, and the
 * surface attaches the answer as the terminal prints it in the card's thread (through the real
 * `files.uploadV2` of the WebClient, against the fake Slack). An upload Slack refuses is said in the
 * thread, with why. A card without such a command gets no file.
 */
import { webApi } from "@slack/bolt";
import { pino } from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CommandResult } from "../../../src/command-result.js";
import { renderText } from "../../../src/render/text.js";
import { attachAnswerFile } from "../../../src/slack/answer-file.js";
import { answerFile, renderSlackMessage } from "../../../src/slack/blocks/index.js";
import { LONG_COMMAND_NOTE } from "../../../src/slack/blocks/text.js";
import { lintMessage } from "../../sim/slack/block-kit-lint.js";
import { startFakeSlack, type FakeSlack } from "../../sim/slack/index.js";

const log = pino({ level: "silent" });
const CHANNEL = "C0LONGCMD";

/** A revoke of 160 rules in one command: about 4,000 characters. */
const LONG = `aws ec2 revoke-security-group-ingress --group-id sg-0f1e2d3c4b5a69788 --security-group-rule-ids ${Array.from(
  { length: 160 },
  (_, i) => `sgr-${i.toString(16).padStart(17, "0")}`,
).join(" ")}`;

function preflight(reasons: readonly string[]): CommandResult {
  return {
    type: "preflight",
    report: {
      namespace: "myapp",
      verdict: "risky",
      reasons,
      finalizerObjects: [],
      awsDeleted: [],
      hostnames: [],
      warnings: [],
    },
  };
}

describe("a command longer than a Slack section", () => {
  let fake: FakeSlack;
  let client: webApi.WebClient;
  beforeAll(async () => {
    fake = await startFakeSlack({ token: "xoxb-long-command" });
    client = new webApi.WebClient(fake.token, { slackApiUrl: fake.url, retryConfig: { retries: 0 } });
  });
  afterAll(async () => {
    await fake.stop();
  });
  beforeEach(() => {
    fake.clear();
    fake.setScopes(undefined);
  });

  it("is never cut: the card says the file has it, and the file is the terminal's answer", () => {
    expect(LONG.length).toBeGreaterThan(3000);
    const result = preflight([`Revoke the rules first: \`${LONG}\``]);
    const card = renderSlackMessage(result);
    const json = JSON.stringify(card.blocks);
    expect(json).toContain(LONG_COMMAND_NOTE);
    // Nothing of the command is left half in the card: no part of it, no open code span.
    expect(json).not.toContain("sgr-00000000000000000 sgr");
    expect(lintMessage(card).filter((p) => p.severity === "error")).toEqual([]);
    const file = answerFile(result, card);
    expect(file?.content).toBe(renderText(result));
    expect(file?.content).toContain(LONG);
    expect(file?.filename).toBe("unstuck-preflight.txt");
  });

  it("a card whose commands all fit gets no file", () => {
    const result = preflight([
      "Argo CD Application myapp prunes it: `argocd app set myapp --sync-policy none`",
    ]);
    expect(answerFile(result, renderSlackMessage(result))).toBeUndefined();
  });

  it("the file goes into the card's thread, whole", async () => {
    const result = preflight([`Revoke the rules first: \`${LONG}\``]);
    const card = renderSlackMessage(result);
    const posted = await client.chat.postMessage({ channel: CHANNEL, text: card.text, blocks: card.blocks });
    const file = answerFile(result, card);
    if (file === undefined) throw new Error("expected a file");
    await attachAnswerFile(client, file, { channel: CHANNEL, threadTs: posted.ts ?? "" }, log);
    const shared = fake.files().filter((f) => f.threadTs === posted.ts);
    expect(shared).toHaveLength(1);
    expect(shared[0]?.content?.toString("utf8")).toContain(LONG);
  });

  it("an upload Slack refuses is said in the thread, with why and where the command is whole", async () => {
    fake.setScopes(["chat:write"]);
    const posted = await client.chat.postMessage({ channel: CHANNEL, text: "card" });
    await attachAnswerFile(
      client,
      { filename: "unstuck-preflight.txt", title: "t", content: LONG },
      { channel: CHANNEL, threadTs: posted.ts ?? "" },
      log,
    );
    const replies = fake.thread(CHANNEL, posted.ts ?? "");
    expect(replies).toHaveLength(1);
    expect(replies[0]?.text).toMatch(/could not be attached \(the app lacks the files:write scope/);
    expect(replies[0]?.text).toContain("npm run unstuck");
  });
});
