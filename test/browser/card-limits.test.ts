/**
 * Every card the bot posts, checked against Slack's Block Kit limits by the console's linter
 * (test/sim/slack/block-kit-lint.ts: 50 blocks per message, 100 per modal, 3,000 characters per
 * section text, 2,000 per button value, 75 per button text, …). The bot runs whole (runtime, Redis,
 * workers) against the largest scenarios — the seed incident, and the recovered seed with its six
 * re-created load balancers — and is asked everything it answers; each message, edit, ephemeral
 * answer and modal is one entry of a snapshot-style table (command → surface → problems) that
 * must list no error.
 */
import { afterEach, describe, expect, it } from "vitest";
import { destroyAwsClients } from "../../src/aws/clients.js";
import { createAwsAdapter } from "../../src/aws/sdk-adapter.js";
import { loadConfig } from "../../src/config.js";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import { buttonValue } from "../e2e/block-kit.js";
import { botEnv, simAwsClients, startRuntime } from "../e2e/bot-env.js";
import { deletePrefix, uniquePrefix } from "../helpers/redis.js";
import { lintMessage, lintView, type LintProblem } from "../sim/slack/block-kit-lint.js";
import {
  blockActionsBody,
  postSigned,
  slashCommandBody,
  startFakeSlack,
  viewSubmissionBody,
  type FakeSlack,
} from "../sim/slack/index.js";
import { startWorld } from "../sim/world.js";
import { eventuallyTrue } from "../helpers/eventually.js";

const SECRET = "card-limits-secret";
const TOKEN = "xoxb-card-limits";
const CHANNEL = "C0INCIDENT";
const REQUESTER = "U0ONCALL1";
const APPROVER = "U0APPROVER1";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function bot(scenario: string): Promise<{ fake: FakeSlack; events: string }> {
  const world = await startWorld({ scenario: `test/fixtures/scenarios/${scenario}` });
  const fake = await startFakeSlack({ token: TOKEN });
  const prefix = uniquePrefix("cards");
  const config = loadConfig(
    botEnv(
      { token: TOKEN, secret: SECRET, slackUrl: fake.url, prefix },
      {
        ...world.aws.env(),
        UNSTUCK_APPROVERS: `${APPROVER},U0APPROVER2`,
        UNSTUCK_CHANNELS: CHANNEL,
        UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
        UNSTUCK_WAIT_INTERVAL_SECONDS: "1",
        UNSTUCK_DNS_RESOLVERS: world.dns.address,
        UNSTUCK_HTTP_PROBE_VIA: world.httpFront.url,
      },
    ),
  );
  const clients = simAwsClients(world.aws.url, 1);
  const { runtime, events } = await startRuntime(config, {
    kube: createKubeAdapter(world.kube.kubeconfig()),
    aws: { port: createAwsAdapter(clients), cluster: "prod-eks" },
  });
  cleanups.push(async () => {
    await runtime.stop();
    await deletePrefix(prefix);
    destroyAwsClients(clients);
    await fake.stop();
    await world.stop();
  });
  return { fake, events };
}

let counter = 0;
async function slash(b: { fake: FakeSlack; events: string }, text: string, user = REQUESTER): Promise<void> {
  counter += 1;
  const before = b.fake.calls().length + b.fake.responses().length;
  const res = await postSigned(
    b.events,
    SECRET,
    slashCommandBody({
      text,
      userId: user,
      channelId: CHANNEL,
      responseUrl: b.fake.responseUrl(`cards-${String(counter)}`),
      triggerId: `1337.${String(counter)}.cards`,
    }),
  );
  expect(res.status).toBe(200);
  await eventuallyTrue(
    () => b.fake.calls().length + b.fake.responses().length > before,
    30_000,
    `an answer to ${text}`,
  );
}

interface Card {
  readonly surface: string;
  readonly blocks: number;
  readonly problems: readonly LintProblem[];
}

/** Every surface the bot filled, linted, in order. */
function cards(fake: FakeSlack): Card[] {
  const out: Card[] = [];
  for (const c of fake.calls()) {
    if (c.response?.["ok"] !== true) continue;
    const blocks = Array.isArray(c.body["blocks"]) ? c.body["blocks"].length : 0;
    if (["chat.postMessage", "chat.update", "chat.postEphemeral"].includes(c.method)) {
      const header = JSON.stringify(c.body["text"] ?? "").slice(1, 60);
      out.push({ surface: `${c.method} ${header}`, blocks, problems: lintMessage(c.body) });
    } else if (c.method === "views.open") {
      const view = c.body["view"] as { blocks?: unknown[]; callback_id?: string };
      out.push({
        surface: `views.open ${String(view.callback_id)}`,
        blocks: view.blocks?.length ?? 0,
        problems: lintView(view),
      });
    }
  }
  for (const r of fake.responses()) {
    out.push({
      surface: `response_url ${JSON.stringify(r.body["text"] ?? "").slice(1, 60)}`,
      blocks: Array.isArray(r.body["blocks"]) ? r.body["blocks"].length : 0,
      problems: lintMessage(r.body),
    });
  }
  return out;
}

function expectNoErrors(all: Card[]): void {
  const table = all.map((c) => ({
    surface: c.surface,
    errors: c.problems.filter((p) => p.severity === "error"),
  }));
  expect(table).toEqual(all.map((c) => ({ surface: c.surface, errors: [] })));
}

describe("every card the bot posts fits Slack's Block Kit limits", () => {
  it("the seed incident: diagnosis, trace, orphans, preflight, help, the request through its modal, approval, waits", async () => {
    const b = await bot("seed-incident.yaml");
    for (const text of [
      "ns myapp",
      "trace ns myapp",
      "trace test.example.com",
      "orphans myapp",
      "preflight delete ns myapp",
      "help",
      "approvals",
      "audit 20",
      "ns myap",
      "watch myapp",
    ]) {
      await slash(b, text);
    }
    const diagnosis = await b.fake.waitFor("chat.postMessage", (c) =>
      JSON.stringify(c.body["blocks"] ?? "").includes("finalize:request"),
    );
    const target = buttonValue(diagnosis.body["blocks"], "finalize:request") ?? "";
    await postSigned(
      b.events,
      SECRET,
      blockActionsBody({
        actionId: "finalize:request",
        value: target,
        userId: REQUESTER,
        channelId: CHANNEL,
        messageTs: String(diagnosis.response?.["ts"]),
        responseUrl: b.fake.responseUrl("cards-click"),
        triggerId: "1337.99.form",
      }),
    );
    const opened = await b.fake.waitFor("views.open", (c) => c.body["trigger_id"] === "1337.99.form", 10_000);
    const view = opened.body["view"] as Record<string, unknown>;
    await postSigned(
      b.events,
      SECRET,
      viewSubmissionBody({
        callbackId: String(view["callback_id"]),
        privateMetadata: String(view["private_metadata"]),
        values: {
          reason: { reason: "Cause confirmed: the ENI holds the SG; recovery first." },
          // The three required statements, ticked as Slack sends checkboxes.
          ...Object.fromEntries(
            ["cause-confirmed", "recovery-first", "cleanup-plan"].map((id) => [
              id,
              { [id]: { selected: [id] } },
            ]),
          ),
        },
        userId: REQUESTER,
      }),
    );
    const request = await b.fake.waitFor(
      "chat.postMessage",
      (c) => JSON.stringify(c.body["blocks"] ?? "").includes("approval:approve"),
      20_000,
    );
    const id = buttonValue(request.body["blocks"], "approval:approve") ?? "";
    const ts = String(request.response?.["ts"]);
    await new Promise((r) => setTimeout(r, 500));
    for (const user of [REQUESTER, APPROVER]) {
      await postSigned(
        b.events,
        SECRET,
        blockActionsBody({
          actionId: "approval:approve",
          value: id,
          userId: user,
          channelId: CHANNEL,
          messageTs: ts,
          responseUrl: b.fake.responseUrl(`cards-vote-${user}`),
        }),
      );
    }
    await eventuallyTrue(
      () =>
        b.fake.thread(CHANNEL, ts).some((m) => /is gone/.test(m.text ?? "")) ||
        b.fake.calls().some((c) => /Namespace myapp is gone/.test(String(c.body["text"]))),
      60_000,
      "the namespace gone",
    );
    await slash(b, "orphans myapp");
    await slash(b, "audit 50");
    const all = cards(b.fake);
    expect(all.length).toBeGreaterThan(15);
    expectNoErrors(all);
  }, 120_000);

  it("the recovered seed (six re-created load balancers): trace, the repair plan and its request", async () => {
    const b = await bot("seed-recovered.yaml");
    await slash(b, "trace ns myapp");
    await slash(b, "trace test.example.com");
    await slash(b, "repoint ns myapp");
    await slash(b, 'repoint ns myapp --reason "test.example.com is 502: the origin names the deleted ALB"');
    await slash(b, "orphans");
    await b.fake.waitFor(
      "chat.postMessage",
      (c) => JSON.stringify(c.body["blocks"] ?? "").includes("approval:approve"),
      30_000,
    );
    const all = cards(b.fake);
    expect(all.length).toBeGreaterThan(4);
    expectNoErrors(all);
  }, 120_000);
});
