/**
 * Socket Mode, end to end: with `SLACK_APP_TOKEN` set (and no signing secret) the real Bolt app opens a
 * connection with `apps.connections.open` on the fake Slack, is greeted with `hello` over the WebSocket, and
 * answers slash-command envelopes: it acks each over the socket at once, posts `/unstuck ns myapp` (diagnosed
 * by the real Kubernetes adapter against the seed incident) in the channel, and answers `/unstuck help`
 * ephemerally through the envelope's `response_url`.
 *
 * `SLACK_API_URL` must reach the SocketModeReceiver's own client too: {@link routeSlackComTo} records (and
 * reroutes) any call that still goes to https://slack.com/api/, and a test asserts there is none.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultRegistry, type Registry } from "../../commands/index.js";
import { loadConfig } from "../../src/config.js";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../src/kube/port.js";
import { silentLogger } from "../../src/log.js";
import { createSlackApp, type SlackApp } from "../../src/slack/app.js";
import { startKubeSim } from "../sim/kube/index.js";
import {
  interactiveEnvelope,
  slashCommandEnvelope,
  startFakeSlack,
  type FakeSlack,
} from "../sim/slack/index.js";
import { SHARE_ACTION } from "../../src/slack/command.js";
import { buttonValue } from "./block-kit.js";
import { messageText } from "./slack-harness.js";
import { eventuallyTrue } from "../helpers/eventually.js";

const CHANNEL = "C0SOCKET1";
const SCENARIO = "test/fixtures/scenarios/seed-incident.yaml";
const SLACK_COM_API = "https://slack.com/api/";

let envelopeCounter = 0;
const nextEnvelopeId = (): string => `env-${++envelopeCounter}-${randomBytes(4).toString("hex")}`;

/**
 * Replace `globalThis.fetch` while `build` runs (the Web API clients capture it when constructed), so that calls
 * to slack.com go to `apiUrl` instead; each such call's method is pushed to `routed`.
 */
function routeSlackComTo<T>(apiUrl: string, routed: string[], build: () => T): T {
  const original = globalThis.fetch;
  const routing: typeof fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith(SLACK_COM_API)) return original(input, init);
    routed.push(url.slice(SLACK_COM_API.length));
    return original(`${apiUrl}${url.slice(SLACK_COM_API.length)}`, init);
  };
  globalThis.fetch = routing;
  try {
    return build();
  } finally {
    globalThis.fetch = original;
  }
}

/** Cluster access where a test never reaches a command is a bug. */
const noKube = new Proxy({} as KubePort, {
  get: (_target, property) => () => Promise.reject(new Error(`unexpected kube call ${String(property)}`)),
});

/** The product's app in Socket Mode: bot token + app token, no signing secret, Web API on the fake. */
function socketApp(fake: FakeSlack, appToken: string, kube: KubePort, routed: string[]) {
  const log = silentLogger();
  const config = loadConfig({
    SLACK_BOT_TOKEN: fake.token,
    SLACK_APP_TOKEN: appToken,
    SLACK_API_URL: fake.url,
    PORT: "0",
    UNSTUCK_CHANNELS: CHANNEL,
  });
  const registry = defaultRegistry(config.command);
  const services = { kube, now: () => new Date(), log };
  const slack = routeSlackComTo(fake.url, routed, () => createSlackApp({ config, registry, services, log }));
  return { slack, registry };
}

describe("Socket Mode against the fake Slack and the seed incident", () => {
  let sim: Awaited<ReturnType<typeof startKubeSim>>;
  let fake: FakeSlack;
  let slack: SlackApp;
  let registry: Registry;
  const routed: string[] = [];

  beforeAll(async () => {
    sim = await startKubeSim({ scenario: SCENARIO });
    fake = await startFakeSlack({
      token: `xoxb-${randomBytes(6).toString("hex")}-${randomBytes(12).toString("hex")}`,
      appToken: `xapp-1-A0UNSTUCK-${randomBytes(6).toString("hex")}-${randomBytes(16).toString("hex")}`,
    });
    ({ slack, registry } = socketApp(fake, fake.appToken, createKubeAdapter(sim.kubeconfig()), routed));
    expect(slack.mode).toBe("socket");
    // Resolves only once the client saw `hello` on the socket.
    await slack.start();
  });

  afterAll(async () => {
    await slack.stop();
    // Bolt's stop() does not wait for the close handshake; wait for the fake to see the socket go.
    await eventuallyTrue(() => fake.socketConnections() === 0, 5_000, "the Socket Mode connection to close");
    await fake.stop();
    await sim.stop();
  });

  it("opens one connection with the app-level token and checks the bot token once", () => {
    const methods = fake.calls().map((c) => c.method);
    expect(methods.filter((m) => m === "apps.connections.open")).toHaveLength(1);
    expect(methods.filter((m) => m === "auth.test")).toHaveLength(1);
    expect(fake.calls().find((c) => c.method === "apps.connections.open")?.response).toMatchObject({
      ok: true,
    });
    expect(fake.socketConnections()).toBe(1);
  });

  it("acks a `/unstuck ns myapp` envelope at once and posts the blocking Ingress in the channel", async () => {
    const envelope = slashCommandEnvelope(nextEnvelopeId(), {
      text: "ns myapp",
      channelId: CHANNEL,
      responseUrl: fake.responseUrl("ns-myapp"),
    });
    const sentAt = Date.now();
    fake.socketSend(envelope);

    const ack = await fake.waitForAck(envelope.envelope_id, 3_000);
    expect(Date.now() - sentAt).toBeLessThan(3_000);
    // A bare ack: the answer goes to the channel, not into the ack.
    expect(ack.payload).toEqual({});

    const post = await fake.waitFor("chat.postMessage", (c) => c.body["channel"] === CHANNEL, 20_000);
    expect(messageText(post.body)).toContain("myapp-worker-ingress");
    expect(messageText(post.body)).toContain("myapp");
    // A read is answered in the channel only; the requester gets no duplicate through the response_url.
    expect(fake.responses().filter((r) => r.id === "ns-myapp")).toEqual([]);
    // Exactly one ack per envelope.
    expect(fake.socketAcks().filter((a) => a.envelopeId === envelope.envelope_id)).toHaveLength(1);
  });

  it("acks a `/unstuck help` envelope and answers ephemerally through its response_url", async () => {
    const envelope = slashCommandEnvelope(nextEnvelopeId(), {
      text: "help",
      channelId: CHANNEL,
      responseUrl: fake.responseUrl("help-1"),
    });
    const postsBefore = fake.calls().filter((c) => c.method === "chat.postMessage").length;
    fake.socketSend(envelope);

    await fake.waitForAck(envelope.envelope_id, 3_000);
    const answer = await fake.waitForResponse((r) => r.id === "help-1");
    expect(answer.body["response_type"]).toBe("ephemeral");
    const text = messageText(answer.body);
    const help = registry.help();
    expect(text).toContain(`${help.prefix} ns`);
    for (const entry of help.entries) {
      expect(text).toContain(`${help.prefix} ${entry.usage.split(" ")[0] ?? ""}`);
    }
    // Nothing was posted in the channel for help.
    expect(fake.calls().filter((c) => c.method === "chat.postMessage")).toHaveLength(postsBefore);
  });

  it("a private answer's *Share in channel* works over the socket: posted in the channel, the private copy withdrawn", async () => {
    const envelope = slashCommandEnvelope(nextEnvelopeId(), {
      text: "ns payments",
      channelId: CHANNEL,
      userId: "U0SHARER1",
      responseUrl: fake.responseUrl("ns-payments"),
    });
    fake.socketSend(envelope);
    await fake.waitForAck(envelope.envelope_id, 3_000);
    // Not stuck: only the asker sees it, with the button.
    const answer = await fake.waitForResponse((r) => r.id === "ns-payments", 20_000);
    expect(answer.body["response_type"]).toBe("ephemeral");
    const value = buttonValue(answer.body["blocks"], SHARE_ACTION);
    expect(value).toBe("ns payments");

    const click = interactiveEnvelope(nextEnvelopeId(), {
      actionId: SHARE_ACTION,
      value: value ?? "",
      userId: "U0SHARER1",
      channelId: CHANNEL,
      responseUrl: fake.responseUrl("share-payments"),
    });
    fake.socketSend(click);
    await fake.waitForAck(click.envelope_id, 3_000);
    const shared = await fake.waitFor(
      "chat.postMessage",
      (c) => c.body["channel"] === CHANNEL && JSON.stringify(c.body["blocks"] ?? "").includes("Shared by"),
      20_000,
    );
    expect(messageText(shared.body)).toContain("payments");
    expect(JSON.stringify(shared.body["blocks"])).toContain("<@U0SHARER1>");
    const withdrawn = await fake.waitForResponse((r) => r.id === "share-payments", 10_000);
    expect(withdrawn.body["delete_original"]).toBe(true);
    expect(fake.socketAcks().filter((a) => a.envelopeId === click.envelope_id)).toHaveLength(1);
  });

  it("reconnects when Slack asks it to, and keeps acking on the new connection", async () => {
    const opensBefore = fake.calls().filter((c) => c.method === "apps.connections.open").length;
    fake.socketDisconnect("refresh_requested");
    await eventuallyTrue(
      () =>
        fake.calls().filter((c) => c.method === "apps.connections.open").length > opensBefore &&
        fake.socketConnections() === 1,
      15_000,
      "a new Socket Mode connection",
    );
    const envelope = slashCommandEnvelope(nextEnvelopeId(), {
      text: "help",
      channelId: CHANNEL,
      responseUrl: fake.responseUrl("help-2"),
    });
    fake.socketSend(envelope);
    await fake.waitForAck(envelope.envelope_id, 3_000);
    await fake.waitForResponse((r) => r.id === "help-2");
  });

  it("opens the connection on SLACK_API_URL, never on slack.com", () => {
    expect(routed).toEqual([]);
  });
});

describe("Socket Mode with an app-level token Slack rejects", () => {
  it("fails to start with invalid_auth, opens no connection, and leaks no token", async () => {
    const fake = await startFakeSlack();
    const routed: string[] = [];
    const wrong = `xapp-1-A0UNSTUCK-1-${randomBytes(16).toString("hex")}`;
    const { slack } = socketApp(fake, wrong, noKube, routed);
    try {
      const failure = await slack.start().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(Error);
      expect(String(failure)).toContain("invalid_auth");
      expect(String(failure)).not.toContain(wrong);
      expect(fake.calls().filter((c) => c.method === "apps.connections.open")).toHaveLength(1);
      expect(fake.socketConnections()).toBe(0);
    } finally {
      // start() failed, so slack.stop() is a no-op; stop Bolt itself to close the health-check server.
      await slack.app.stop();
      await fake.stop();
    }
  });
});
