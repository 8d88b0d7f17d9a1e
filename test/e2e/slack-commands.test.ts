/**
 * The slash command surface, end to end over HTTP: signed requests in, Slack Web API calls and response_url posts
 * out. The cluster here is a tiny in-test KubePort, because these cases are about the Slack layer (ack, routing,
 * refusals, delivery); the real adapter against the simulator is in slack-diagnosis.test.ts.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import type { KubePort } from "../../src/kube/port.js";
import { namespaceOnlyKube } from "../helpers/namespace-only-kube.js";
import { pause } from "../helpers/eventually.js";
import type { NamespaceSnapshot } from "../../src/kube/types.js";
import type { ActionContext } from "../../src/slack/actions.js";
import { registerActions } from "../../src/slack/actions.js";
import { SHARE_ACTION } from "../../src/slack/command.js";
import { buttonValue } from "./block-kit.js";
import { deferred, messageText, startHarness, type Harness } from "./slack-harness.js";
import { postSigned, slashCommandBody } from "../sim/slack/signing.js";

/** Slack abandons a slash command that is not acknowledged within 3 seconds. */
const SLACK_ACK_LIMIT_MS = 3_000;
const CHANNEL = "C0INCIDENT";

/** A cluster where only `getNamespace` answers (via a swappable function); anything else is a test bug. */
function stubKube(getNamespace: { current: (name: string) => Promise<NamespaceSnapshot | null> }): KubePort {
  return namespaceOnlyKube((name) => getNamespace.current(name));
}

/**
 * An Active namespace: a diagnosis answered to the one who asked (a namespace that is not stuck
 * concerns only them), with *Share in channel* to post it.
 */
const ACTIVE: NamespaceSnapshot = {
  name: "myapp",
  phase: "Active",
  specFinalizers: ["kubernetes"],
  finalizers: [],
  conditions: [],
  labels: {},
  annotations: {},
};

/** Calls to the Web API other than the start-up token check. */
function apiCalls(h: Harness): string[] {
  return h.fake
    .calls()
    .map((c) => c.method)
    .filter((m) => m !== "auth.test");
}

describe("slash command over HTTP (all channels allowed)", () => {
  let h: Harness;
  const getNamespace: { current: (name: string) => Promise<NamespaceSnapshot | null> } = {
    current: () => Promise.resolve(ACTIVE),
  };

  beforeAll(async () => {
    h = await startHarness({ kube: stubKube(getNamespace) });
  });
  afterAll(async () => {
    await h.stop();
  });
  beforeEach(() => {
    getNamespace.current = () => Promise.resolve(ACTIVE);
    h.fake.clear();
  });

  it("answers GET /healthz with 200 ok", async () => {
    const res = await fetch(`${h.baseUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("ok");
  });

  it("`help` is acked at once and answered ephemerally with every command, including ns", async () => {
    const sent = await h.command("help", { channelId: CHANNEL });
    expect(sent.status).toBe(200);
    expect(sent.text).toBe("");
    expect(sent.elapsedMs).toBeLessThan(SLACK_ACK_LIMIT_MS);

    const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
    expect(answer.body["response_type"]).toBe("ephemeral");
    const text = messageText(answer.body);
    const help = h.registry.help();
    for (const entry of help.entries) {
      const verb = entry.usage.split(" ")[0] ?? "";
      expect(text).toContain(`${help.prefix} ${verb}`);
    }
    expect(text).toContain(`${help.prefix} ns`);
    expect(apiCalls(h)).not.toContain("chat.postMessage");
    expect(h.kubeCalls()).toEqual([]);
  });

  it("`help repoint` and `repoint --help` answer with that command alone, its examples included", async () => {
    for (const text of ["help repoint", "repoint --help"]) {
      const sent = await h.command(text, { channelId: CHANNEL });
      const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
      expect(answer.body["response_type"]).toBe("ephemeral");
      const body = messageText(answer.body);
      const prefix = h.registry.help().prefix;
      expect(body, text).toContain(`${prefix} repoint &lt;hostname&gt;`);
      expect(body, text).toContain(`${prefix} repoint ns &lt;namespace&gt;`);
      expect(body, text).toContain(`_e.g._ \`${prefix} repoint test.example.com\``);
      expect(body, text).not.toContain(`${prefix} ns &lt;namespace&gt;`);
      expect(body, text).not.toContain(`${prefix} trace`);
    }
    expect(h.kubeCalls()).toEqual([]);
  });

  it("a signed command whose response_url is not Slack's is acknowledged and answered nowhere", async () => {
    // Where a request chose to have its answer sent: a server that records what reaches it.
    const stolen: string[] = [];
    const trap = createServer((req, res) => {
      stolen.push(req.url ?? "");
      res.end("ok");
    });
    await new Promise<void>((resolve) => trap.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = trap.address() as AddressInfo;
      const body = slashCommandBody({
        text: "ns myapp",
        channelId: CHANNEL,
        responseUrl: `http://127.0.0.1:${String(port)}/steal`,
      });
      const sent = await postSigned(h.eventsUrl, h.signingSecret, body);
      expect(sent.status).toBe(200);
      await pause(500);
      expect(stolen).toEqual([]);
      expect(apiCalls(h)).toEqual([]);
      expect(h.kubeCalls()).toEqual([]);
      expect(h.logs()).toMatch(/refused a Slack request whose response URL is not Slack's/);
    } finally {
      await new Promise((resolve) => trap.close(resolve));
    }
  });

  it("an empty command shows the same help", async () => {
    const sent = await h.command("", { channelId: CHANNEL });
    expect(sent.status).toBe(200);
    const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
    expect(answer.body["response_type"]).toBe("ephemeral");
    expect(messageText(answer.body)).toContain(`${h.registry.help().prefix} ns`);
  });

  it("an unknown subcommand gets an ephemeral error naming it, plus the help", async () => {
    const sent = await h.command("frobnicate myapp", { channelId: CHANNEL });
    expect(sent.status).toBe(200);
    const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
    expect(answer.body["response_type"]).toBe("ephemeral");
    const text = messageText(answer.body);
    expect(text).toContain("frobnicate");
    expect(text).toContain(ErrorCode.UnknownCommand);
    expect(text).toContain(`${h.registry.help().prefix} ns`);
    expect(apiCalls(h)).toEqual([]);
    expect(h.kubeCalls()).toEqual([]);
  });

  it("an invalid namespace name is refused with a clear error and never reaches Kubernetes", async () => {
    const before = h.kubeCalls().length;
    const sent = await h.command("ns My_App", { channelId: CHANNEL });
    expect(sent.status).toBe(200);
    const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
    expect(answer.body["response_type"]).toBe("ephemeral");
    const text = messageText(answer.body);
    expect(text).toContain("My_App");
    expect(text).toContain("RFC 1123");
    expect(text).toContain(ErrorCode.InvalidName);
    expect(h.kubeCalls().length).toBe(before);
    expect(apiCalls(h)).toEqual([]);
  });

  it("a bad signature or a stale timestamp is answered 401 and nothing runs", async () => {
    const kubeBefore = h.kubeCalls().length;
    const forged = await h.command("ns myapp", { channelId: CHANNEL }, { secret: "not-the-signing-secret" });
    const staleTimestamp = Math.floor(Date.now() / 1000) - 6 * 60;
    const stale = await h.command("ns myapp", { channelId: CHANNEL }, { timestamp: staleTimestamp });
    expect([forged.status, stale.status]).toEqual([401, 401]);

    // A valid request afterwards is the barrier: once it is answered, the rejected ones had their chance to run.
    const valid = await h.command("help", { channelId: CHANNEL });
    await h.fake.waitForResponse((r) => r.id === valid.responseId);
    const rejectedIds = new Set([forged.responseId, stale.responseId]);
    expect(h.fake.responses().filter((r) => rejectedIds.has(r.id))).toEqual([]);
    expect(apiCalls(h)).toEqual([]);
    expect(h.kubeCalls().length).toBe(kubeBefore);
  });

  it("acks before the command's I/O finishes and posts nothing while it runs", async () => {
    const gate = deferred();
    const entered = deferred();
    getNamespace.current = async () => {
      entered.resolve();
      await gate.promise;
      return ACTIVE;
    };
    const sent = await h.command("ns myapp", { channelId: CHANNEL });
    // The HTTP answer came back while the cluster read is still held open.
    expect(sent.status).toBe(200);
    expect(sent.elapsedMs).toBeLessThan(SLACK_ACK_LIMIT_MS);
    await entered.promise;
    expect(apiCalls(h)).toEqual([]);
    expect(h.fake.responses().filter((r) => r.id === sent.responseId)).toEqual([]);

    gate.resolve();
    const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
    expect(messageText(answer.body)).toContain("myapp");
    expect(Array.isArray(answer.body["blocks"])).toBe(true);
    // One answer, to the requester (the namespace is not stuck); nothing in the channel.
    expect(apiCalls(h)).toEqual([]);
    expect(h.fake.responses().filter((r) => r.id === sent.responseId)).toHaveLength(1);
  });

  it("falls back to an ephemeral answer with an invite hint when the bot is not in the channel", async () => {
    const channel = "C0NOTMEMBER";
    h.fake.setChannel(channel, { isMember: false });
    const sent = await h.command("ns myapp", { channelId: channel });
    expect(sent.status).toBe(200);
    const privately = await h.fake.waitForResponse((r) => r.id === sent.responseId);
    // Shared from the private answer: the post fails, and the one who clicked is told why.
    const click = await h.action({
      actionId: SHARE_ACTION,
      value: buttonValue(privately.body["blocks"], SHARE_ACTION) ?? "",
      channelId: channel,
      messageTs: "1700000000.000001",
    });
    const answer = await h.fake.waitForResponse((r) => r.id === click.responseId);
    expect(answer.body["response_type"]).toBe("ephemeral");
    const text = messageText(answer.body);
    expect(text).toContain("/invite");
    expect(apiCalls(h)).toEqual(["chat.postMessage"]);
  });

  it("routes registered button actions with the signed user as actor, and acks unknown ones silently", async () => {
    const seen: ActionContext[] = [];
    const handled = deferred();
    registerActions(h.slack, [
      {
        actionId: "test:ping",
        handler: (ctx) => {
          seen.push(ctx);
          handled.resolve();
          return Promise.resolve();
        },
      },
    ]);
    expect(h.slack.actions.handles("test:ping")).toBe(true);
    expect(h.slack.actions.handles("nobody:home")).toBe(false);

    const unknown = await h.action({ actionId: "nobody:home", channelId: CHANNEL, userId: "U0SOMEONE" });
    expect(unknown.status).toBe(200);
    const click = await h.action({
      actionId: "test:ping",
      value: "req-123",
      channelId: CHANNEL,
      userId: "U0APPROVER",
      messageTs: "1700000000.000777",
    });
    expect(click.status).toBe(200);
    expect(click.elapsedMs).toBeLessThan(SLACK_ACK_LIMIT_MS);
    await handled.promise;
    expect(seen).toHaveLength(1);
    expect(seen[0]?.scope.actor).toMatchObject({
      userId: "U0APPROVER",
      channelId: CHANNEL,
      surface: "slack",
    });
    expect(seen[0]?.action).toMatchObject({ actionId: "test:ping", value: "req-123" });
    expect(seen[0]?.message).toEqual({ channelId: CHANNEL, ts: "1700000000.000777" });
    expect(apiCalls(h)).toEqual([]);
  });

  it("never writes the bot token or the signing secret to the log", async () => {
    const sent = await h.command("ns My_App", { channelId: CHANNEL });
    await h.fake.waitForResponse((r) => r.id === sent.responseId);
    const logs = h.logs();
    expect(logs).toContain("requestId");
    expect(logs).not.toContain(h.botToken);
    expect(logs).not.toContain(h.signingSecret);
    expect(logs).not.toContain("legacy-verification-token");
  });
});

describe("slash command over HTTP (channel allow-list)", () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({
      kube: stubKube({ current: () => Promise.resolve(ACTIVE) }),
      channels: [CHANNEL],
    });
  });
  afterAll(async () => {
    await h.stop();
  });

  it("refuses a channel outside UNSTUCK_CHANNELS ephemerally, naming it, and runs nothing", async () => {
    const sent = await h.command("ns myapp", { channelId: "C0RANDOM" });
    expect(sent.status).toBe(200);
    const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
    expect(answer.body["response_type"]).toBe("ephemeral");
    expect(messageText(answer.body)).toContain("C0RANDOM");
    expect(h.kubeCalls()).toEqual([]);
    expect(apiCalls(h)).toEqual([]);
    expect(h.fake.responses().filter((r) => r.id === sent.responseId)).toHaveLength(1);
  });

  it("refuses a button click from a channel outside the allow-list before its handler runs", async () => {
    const seen: string[] = [];
    registerActions(h.slack, [
      {
        actionId: "test:guarded",
        handler: (ctx) => {
          seen.push(ctx.scope.actor.userId);
          return Promise.resolve();
        },
      },
    ]);
    const click = await h.action({ actionId: "test:guarded", channelId: "C0RANDOM", userId: "U0APPROVER" });
    expect(click.status).toBe(200);
    const answer = await h.fake.waitForResponse((r) => r.id === click.responseId);
    expect(answer.body["response_type"]).toBe("ephemeral");
    expect(messageText(answer.body)).toContain("C0RANDOM");
    expect(seen).toEqual([]);
  });

  it("serves a listed channel", async () => {
    const sent = await h.command("ns myapp", { channelId: CHANNEL });
    expect(sent.status).toBe(200);
    const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
    expect(messageText(answer.body)).toContain("myapp");
    expect(messageText(answer.body)).not.toContain("UNSTUCK_CHANNELS");
    expect(h.kubeCalls()).toContain("getNamespace");
  });
});
