/**
 * The fake Slack Web API must behave like Slack where the bot depends on it; it is exercised here with the
 * same WebClient Bolt uses, so a mismatch shows up as a failure of the fake, not as a puzzling e2e failure.
 */
import { webApi } from "@slack/bolt";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeSlack, type FakeSlack } from "../../sim/slack/index.js";

describe("fake Slack Web API", () => {
  let fake: FakeSlack;
  let client: webApi.WebClient;

  beforeAll(async () => {
    fake = await startFakeSlack({ token: "xoxb-test-token" });
    // No retries: a failure must surface at once.
    client = new webApi.WebClient(fake.token, { slackApiUrl: fake.url, retryConfig: { retries: 0 } });
  });
  afterAll(async () => {
    await fake.stop();
  });
  beforeEach(() => {
    fake.clear();
  });

  it("answers auth.test with the bot's identity", async () => {
    const res = await client.auth.test();
    expect(res.ok).toBe(true);
    expect(res.user_id).toBe(fake.botUserId);
    expect(res.team_id).toBe(fake.teamId);
  });

  it("rejects a wrong token with invalid_auth and a missing one with not_authed", async () => {
    const wrong = new webApi.WebClient("xoxb-wrong", { slackApiUrl: fake.url, retryConfig: { retries: 0 } });
    await expect(wrong.auth.test()).rejects.toMatchObject({ data: { error: "invalid_auth" } });
    const res = await fetch(`${fake.url}auth.test`, { method: "POST" });
    expect(await res.json()).toEqual({ ok: false, error: "not_authed" });
  });

  it("gives each posted message a unique, increasing ts and records decoded blocks", async () => {
    const blocks = [{ type: "section", text: { type: "mrkdwn", text: "hello" } }];
    const first = await client.chat.postMessage({ channel: "C1", text: "one", blocks });
    const second = await client.chat.postMessage({ channel: "C1", text: "two" });
    expect(first.channel).toBe("C1");
    expect(Number(second.ts)).toBeGreaterThan(Number(first.ts));
    const call = await fake.waitFor("chat.postMessage", (c) => c.body["text"] === "one");
    expect(call.body["blocks"]).toEqual(blocks);
    expect(call.body).not.toHaveProperty("token");
  });

  it("accepts JSON bodies too", async () => {
    const res = await fetch(`${fake.url}chat.postMessage`, {
      method: "POST",
      headers: { authorization: `Bearer ${fake.token}`, "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({ channel: "C2", text: "json", blocks: [] }),
    });
    const body = (await res.json()) as { ok: boolean; ts?: string };
    expect(body.ok).toBe(true);
    expect(typeof body.ts).toBe("string");
    const call = await fake.waitFor("chat.postMessage", (c) => c.body["channel"] === "C2");
    expect(call.body["blocks"]).toEqual([]);
  });

  it("updates only messages it knows", async () => {
    const posted = await client.chat.postMessage({ channel: "C1", text: "status: waiting" });
    const updated = await client.chat.update({ channel: "C1", ts: posted.ts ?? "", text: "status: done" });
    expect(updated.ts).toBe(posted.ts);
    await expect(client.chat.update({ channel: "C1", ts: "1.000001", text: "x" })).rejects.toMatchObject({
      data: { error: "message_not_found" },
    });
  });

  it("fails a method on demand and refuses posts to channels the bot is not in", async () => {
    fake.setFailure("chat.postEphemeral", "user_not_in_channel");
    await expect(client.chat.postEphemeral({ channel: "C1", user: "U1", text: "x" })).rejects.toMatchObject({
      data: { error: "user_not_in_channel" },
    });
    fake.setFailure("chat.postEphemeral", undefined);
    const ok = await client.chat.postEphemeral({ channel: "C1", user: "U1", text: "x" });
    expect(ok.ok).toBe(true);

    fake.setChannel("C9", { name: "private-ops", isMember: false });
    await expect(client.chat.postMessage({ channel: "C9", text: "x" })).rejects.toMatchObject({
      data: { error: "not_in_channel" },
    });
    const info = await client.conversations.info({ channel: "C9" });
    expect(info.channel).toMatchObject({ id: "C9", name: "private-ops", is_member: false });
  });

  it("serves configured user groups and user info", async () => {
    fake.setUsergroup("S0APPROVERS", ["U1", "U2"]);
    const members = await client.usergroups.users.list({ usergroup: "S0APPROVERS" });
    expect(members.users).toEqual(["U1", "U2"]);
    await expect(client.usergroups.users.list({ usergroup: "S0NONE" })).rejects.toMatchObject({
      data: { error: "no_such_subteam" },
    });
    const user = await client.users.info({ user: "U1" });
    expect(user.user).toMatchObject({ id: "U1", team_id: fake.teamId });
  });

  it("records response_url posts and rejects a wait that times out", async () => {
    const url = fake.responseUrl("abc");
    const waiting = fake.waitForResponse((r) => r.id === "abc");
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ response_type: "ephemeral", text: "hi" }),
    });
    expect(res.status).toBe(200);
    expect((await waiting).body).toEqual({ response_type: "ephemeral", text: "hi" });
    await expect(fake.waitFor("chat.update", () => true, 50)).rejects.toThrow(/no matching chat.update/);
  });

  it("tells a watcher of each call and response_url post as it arrives, until it stops watching", async () => {
    const seen: string[] = [];
    const stop = fake.watch((a) =>
      seen.push(
        a.kind === "call" ? `call ${a.call.method} ${String(a.call.body["text"])}` : `post ${a.post.id}`,
      ),
    );
    await client.chat.postMessage({ channel: "C1", text: "one" });
    await fetch(fake.responseUrl("r1"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text: "two" }),
    });
    stop();
    await client.chat.postMessage({ channel: "C1", text: "three" });
    expect(seen).toEqual(["call chat.postMessage one", "post r1"]);
  });
});
