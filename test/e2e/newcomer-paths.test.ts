/**
 * Newcomer paths and incident channels over signed HTTP against the fake Slack (docs/design.md, Newcomers):
 * "did you mean" with the missing sub-word, errors and not-found answers only to the one who typed
 * them, the missing AWS region stated on the card, and channels allowed by name pattern
 * (conversations.info, cached) besides fixed ids, with a refusal that says how to enable a channel.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { KubePort } from "../../src/kube/port.js";
import type { NamespaceSnapshot } from "../../src/kube/types.js";
import { messageText, startHarness, type Harness } from "./slack-harness.js";

const CHANNEL = "C0INCIDENT";

function stubKube(namespaces: Record<string, NamespaceSnapshot>): KubePort {
  const unexpected = (method: string) => () => Promise.reject(new Error(`unexpected kube call ${method}`));
  return {
    getNamespace: (name) => Promise.resolve(namespaces[name] ?? null),
    discover: unexpected("discover"),
    listObjects: unexpected("listObjects"),
    getObject: unexpected("getObject"),
    listDeployments: unexpected("listDeployments"),
    listPods: unexpected("listPods"),
    podLog: unexpected("podLog"),
    listEvents: unexpected("listEvents"),
    listApiServices: unexpected("listApiServices"),
    listArgoApplications: unexpected("listArgoApplications"),
    getServiceEndpoints: unexpected("getServiceEndpoints"),
    removeFinalizers: unexpected("removeFinalizers"),
  };
}

const ACTIVE: NamespaceSnapshot = {
  name: "myapp",
  phase: "Active",
  specFinalizers: ["kubernetes"],
  finalizers: [],
  conditions: [],
  labels: {},
  annotations: {},
};

function posts(h: Harness): string[] {
  return h.fake
    .calls()
    .filter((c) => c.method === "chat.postMessage")
    .map((c) => messageText(c.body));
}

describe("newcomer paths", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ kube: stubKube({ myapp: ACTIVE }) });
  });
  afterAll(async () => {
    await h.stop();
  });
  beforeEach(() => {
    h.fake.clear();
  });

  it("`preflight myapp` answers, only to the one who typed it, with the full command it meant", async () => {
    const sent = await h.command("preflight myapp", { channelId: CHANNEL });
    const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
    expect(answer.body["response_type"]).toBe("ephemeral");
    expect(messageText(answer.body)).toContain("Did you mean `preflight delete ns myapp`?");
    expect(posts(h)).toEqual([]);
  });

  it("a mistyped verb with the sub-word missing: `wach myapp` → `watch ns myapp`, ephemeral", async () => {
    const sent = await h.command("wach myapp", { channelId: CHANNEL });
    const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
    expect(answer.body["response_type"]).toBe("ephemeral");
    expect(messageText(answer.body)).toContain("Did you mean `watch ns myapp`?");
    expect(posts(h)).toEqual([]);
  });

  it("a namespace that does not exist is answered privately, for `ns` and for `watch` alike", async () => {
    for (const text of ["ns myap", "watch myap", "watch ns myap"]) {
      const sent = await h.command(text, { channelId: CHANNEL });
      const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
      expect(answer.body["response_type"]).toBe("ephemeral");
      expect(messageText(answer.body)).toContain("myap");
    }
    expect(posts(h)).toEqual([]);
  });

  it("an error (bad name) is ephemeral to the requester, never in the channel", async () => {
    const sent = await h.command("ns Not_A_Name", { channelId: CHANNEL });
    const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
    expect(answer.body["response_type"]).toBe("ephemeral");
    expect(posts(h)).toEqual([]);
  });

  it("without an AWS region, the card in the channel says AWS was not checked", async () => {
    await h.command("ns myapp", { channelId: CHANNEL });
    const post = await h.fake.waitFor("chat.postMessage", (c) => c.body["channel"] === CHANNEL);
    expect(messageText(post.body)).toContain("AWS not checked: no region configured");
  });
});

describe("incident channels allowed by name pattern", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      kube: stubKube({ myapp: ACTIVE }),
      channels: [CHANNEL],
      channelPatterns: ["inc-*", "incident-*"],
    });
    h.fake.setChannel("C0INC0001", { name: "inc-2031-db-down" });
    h.fake.setChannel("C0INC0002", { name: "incident-77" });
    h.fake.setChannel("C0RANDOM", { name: "random" });
    h.fake.setChannel("C0PRIVINC", { name: "inc-secret", isPrivate: true });
  });
  afterAll(async () => {
    await h.stop();
  });
  beforeEach(() => {
    h.fake.clear();
    h.fake.setScopes(undefined);
  });

  const infoCalls = (channel: string): number =>
    h.fake.calls().filter((c) => c.method === "conversations.info" && c.body["channel"] === channel).length;

  it("serves a channel whose name matches, reading the name once and caching it", async () => {
    await h.command("ns myapp", { channelId: "C0INC0001" });
    await h.fake.waitFor("chat.postMessage", (c) => c.body["channel"] === "C0INC0001");
    const second = await h.command("ns myapp", { channelId: "C0INC0001" });
    expect(second.status).toBe(200);
    const deadline = Date.now() + 5_000;
    while (posts(h).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(posts(h)).toHaveLength(2);
    expect(infoCalls("C0INC0001")).toBe(1);
  });

  it("serves the second pattern too, and a fixed id without any lookup", async () => {
    await h.command("ns myapp", { channelId: "C0INC0002" });
    await h.fake.waitFor("chat.postMessage", (c) => c.body["channel"] === "C0INC0002");
    await h.command("ns myapp", { channelId: CHANNEL });
    await h.fake.waitFor("chat.postMessage", (c) => c.body["channel"] === CHANNEL);
    expect(infoCalls(CHANNEL)).toBe(0);
  });

  it("refuses a channel whose name does not match, ephemerally, saying how to enable it", async () => {
    const sent = await h.command("ns myapp", { channelId: "C0RANDOM" });
    const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
    expect(answer.body["response_type"]).toBe("ephemeral");
    const text = messageText(answer.body);
    expect(text).toContain("C0RANDOM");
    expect(text).toContain("UNSTUCK_CHANNELS");
    expect(text).toContain("UNSTUCK_CHANNEL_PATTERNS (inc-*, incident-*)");
    expect(posts(h)).toEqual([]);
    expect(h.kubeCalls()).not.toContain("listObjects");
  });

  it("a private incident channel needs groups:read: without it the name is unknown and the channel refused", async () => {
    h.fake.setScopes(["commands", "chat:write", "channels:read"]);
    const sent = await h.command("ns myapp", { channelId: "C0PRIVINC" });
    const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
    expect(answer.body["response_type"]).toBe("ephemeral");
    expect(messageText(answer.body)).toContain("UNSTUCK_CHANNEL_PATTERNS");
    expect(h.fake.calls().find((c) => c.method === "conversations.info")?.response).toMatchObject({
      ok: false,
      error: "missing_scope",
      needed: "groups:read",
    });
    expect(h.logs()).toContain("missing_scope");
    // With the scope, the same channel is served (the failure was not cached).
    h.fake.setScopes(["commands", "chat:write", "channels:read", "groups:read"]);
    await h.command("ns myapp", { channelId: "C0PRIVINC" });
    await h.fake.waitFor("chat.postMessage", (c) => c.body["channel"] === "C0PRIVINC");
  });
});
