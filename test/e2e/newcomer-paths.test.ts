/**
 * Newcomer paths and incident channels over signed HTTP against the fake Slack (docs/design.md, Newcomers):
 * "did you mean" with the missing sub-word, errors and not-found answers only to the one who typed
 * them, the missing AWS region stated on the card, and channels allowed by name pattern
 * (conversations.info, cached) besides fixed ids, with a refusal that says how to enable a channel.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { KubePort } from "../../src/kube/port.js";
import { namespaceOnlyKube } from "../helpers/namespace-only-kube.js";
import type { NamespaceSnapshot } from "../../src/kube/types.js";
import { SHARE_ACTION } from "../../src/slack/command.js";
import { buttonValue } from "./block-kit.js";
import { messageText, startHarness, type Harness } from "./slack-harness.js";

const CHANNEL = "C0INCIDENT";

function stubKube(namespaces: Record<string, NamespaceSnapshot>): KubePort {
  return namespaceOnlyKube((name) => Promise.resolve(namespaces[name] ?? null));
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

/** Whether the command was run (its diagnosis came back to the asker), not refused for its channel. */
async function served(h: Harness, responseId: string): Promise<boolean> {
  const answer = await h.fake.waitForResponse((r) => r.id === responseId);
  const text = messageText(answer.body);
  return text.includes("myapp") && !text.includes("UNSTUCK_CHANNEL");
}

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

  it("a namespace that is not stuck is answered privately, with Share in channel: the click posts it, saying who shared it", async () => {
    const sent = await h.command("ns myapp", { channelId: CHANNEL, userId: "U0ASKER1" });
    const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
    expect(answer.body["response_type"]).toBe("ephemeral");
    // Without an AWS region the card says AWS was not checked.
    expect(messageText(answer.body)).toContain("AWS not checked: no region configured");
    expect(posts(h)).toEqual([]);
    const value = buttonValue(answer.body["blocks"], SHARE_ACTION);
    expect(value).toBe("ns myapp");
    const click = await h.action({
      actionId: SHARE_ACTION,
      value: value ?? "",
      userId: "U0ASKER1",
      channelId: CHANNEL,
      messageTs: "1700000000.000001",
    });
    const post = await h.fake.waitFor("chat.postMessage", (c) => c.body["channel"] === CHANNEL);
    expect(messageText(post.body)).toContain("AWS not checked: no region configured");
    expect(messageText(post.body)).toContain("Shared by <@U0ASKER1>");
    // The private copy goes once it is in the channel.
    const gone = await h.fake.waitForResponse((r) => r.id === click.responseId);
    expect(gone.body["delete_original"]).toBe(true);
  });

  it("Share in channel runs reads only: a forged value asking for a change is refused and posts nothing", async () => {
    const click = await h.action({
      actionId: SHARE_ACTION,
      value: 'finalize ingress/x -n myapp --reason "forged from a button value"',
      userId: "U0ASKER1",
      channelId: CHANNEL,
      messageTs: "1700000000.000001",
    });
    const answer = await h.fake.waitForResponse((r) => r.id === click.responseId);
    expect(String(answer.body["text"])).toMatch(/cannot be shared/);
    expect(posts(h)).toEqual([]);
  });

  it("a typo gets the suggestion and its one usage line, not the whole help", async () => {
    const sent = await h.command("nss myapp", { channelId: CHANNEL });
    const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
    expect(answer.body["response_type"]).toBe("ephemeral");
    const text = messageText(answer.body);
    expect(text).toContain("Did you mean `ns myapp`?");
    expect(text).toMatch(/Usage: `ns (<|&lt;)namespace(>|&gt;)/);
    // No other command's help came with it.
    expect(text).not.toContain("preflight delete ns");
    expect(text).not.toContain("commands");
    expect(posts(h)).toEqual([]);
  });

  it("the list of requests is answered privately", async () => {
    const sent = await h.command("approvals", { channelId: CHANNEL });
    const answer = await h.fake.waitForResponse((r) => r.id === sent.responseId);
    expect(answer.body["response_type"]).toBe("ephemeral");
    expect(posts(h)).toEqual([]);
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
    const first = await h.command("ns myapp", { channelId: "C0INC0001" });
    expect(await served(h, first.responseId)).toBe(true);
    const second = await h.command("ns myapp", { channelId: "C0INC0001" });
    expect(second.status).toBe(200);
    expect(await served(h, second.responseId)).toBe(true);
    expect(infoCalls("C0INC0001")).toBe(1);
  });

  it("serves the second pattern too, and a fixed id without any lookup", async () => {
    expect(await served(h, (await h.command("ns myapp", { channelId: "C0INC0002" })).responseId)).toBe(true);
    expect(await served(h, (await h.command("ns myapp", { channelId: CHANNEL })).responseId)).toBe(true);
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
    expect(await served(h, (await h.command("ns myapp", { channelId: "C0PRIVINC" })).responseId)).toBe(true);
  });
});
