/**
 * The fake Slack's external file upload, driven by the real `files.uploadV2` of the WebClient Bolt uses
 * (getUploadURLExternal → POST of the bytes to the upload URL → completeUploadExternal), and by hand where
 * the client would never send what Slack refuses (a wrong size, a missing length).
 */
import { webApi } from "@slack/bolt";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeSlack, type FakeSlack } from "../../sim/slack/index.js";

describe("fake Slack: external file upload", () => {
  let fake: FakeSlack;
  let client: webApi.WebClient;

  beforeAll(async () => {
    fake = await startFakeSlack({ token: "xoxb-files-token" });
    client = new webApi.WebClient(fake.token, { slackApiUrl: fake.url, retryConfig: { retries: 0 } });
  });
  afterAll(async () => {
    await fake.stop();
  });
  beforeEach(() => {
    fake.clear();
    fake.setScopes(undefined);
  });

  it("uploadV2 shares the bytes into a thread with the initial comment, as Slack does", async () => {
    const parent = await client.chat.postMessage({ channel: "C0FILES1", text: "incident" });
    const content = "# Incident — 2026-02-12\n\nnon-ASCII: 한국어 ✓\n";
    const res = await client.files.uploadV2({
      channel_id: "C0FILES1",
      thread_ts: parent.ts ?? "",
      filename: "postmortem-2026-02-12.md",
      title: "Post-mortem draft",
      content,
      initial_comment: "the draft",
    });
    expect(res.ok).toBe(true);

    const asked = await fake.waitFor("files.getUploadURLExternal");
    expect(asked.body["filename"]).toBe("postmortem-2026-02-12.md");
    // The length is the byte count, not the character count.
    expect(Number(asked.body["length"])).toBe(Buffer.byteLength(content, "utf8"));
    const completed = await fake.waitFor("files.completeUploadExternal");
    expect(completed.body["channel_id"]).toBe("C0FILES1");
    expect(completed.body["thread_ts"]).toBe(parent.ts);
    expect(completed.body["initial_comment"]).toBe("the draft");
    expect(completed.body["files"]).toEqual([
      { id: asked.response?.["file_id"], title: "Post-mortem draft" },
    ]);

    const [file] = fake.files();
    expect(file).toMatchObject({
      filename: "postmortem-2026-02-12.md",
      title: "Post-mortem draft",
      completed: true,
      channel: "C0FILES1",
      threadTs: parent.ts,
    });
    expect(file?.content?.toString("utf8")).toBe(content);
    const replies = fake.thread("C0FILES1", parent.ts ?? "");
    expect(replies).toHaveLength(1);
    expect(replies[0]?.files).toEqual([file?.id]);
    expect(replies[0]?.text).toBe("the draft");
  });

  it("without channel_id the file is uploaded but shared nowhere", async () => {
    await client.files.uploadV2({ filename: "private.md", content: "x" });
    const [file] = fake.files().slice(-1);
    expect(file?.completed).toBe(true);
    expect(file?.channel).toBeUndefined();
  });

  it("missing files:write: getUploadURLExternal answers missing_scope and nothing is uploaded", async () => {
    fake.setScopes(["chat:write", "commands"]);
    const before = fake.files().length;
    await expect(
      client.files.uploadV2({ channel_id: "C0FILES1", filename: "a.md", content: "abc" }),
    ).rejects.toMatchObject({
      data: { ok: false, error: "missing_scope", needed: "files:write", provided: "chat:write,commands" },
    });
    expect(fake.files()).toHaveLength(before);
    expect(fake.calls().some((c) => c.method === "files.completeUploadExternal")).toBe(false);
  });

  it("an invalid channel or a channel the bot is not in fails the completion", async () => {
    await expect(
      client.files.uploadV2({ channel_id: "not-a-channel", filename: "a.md", content: "abc" }),
    ).rejects.toMatchObject({ data: { error: "invalid_channel" } });
    fake.setChannel("C0OUTSIDE", { isMember: false });
    await expect(
      client.files.uploadV2({ channel_id: "C0OUTSIDE", filename: "a.md", content: "abc" }),
    ).rejects.toMatchObject({ data: { error: "not_in_channel" } });
    expect(fake.files().filter((f) => f.channel === "C0OUTSIDE")).toEqual([]);
  });

  it("getUploadURLExternal refuses a missing filename or length, and a zero length", async () => {
    await expect(client.files.getUploadURLExternal({ filename: "a.md" } as never)).rejects.toMatchObject({
      data: { error: "invalid_arguments" },
    });
    await expect(client.files.getUploadURLExternal({ length: 3 } as never)).rejects.toMatchObject({
      data: { error: "invalid_arguments" },
    });
    await expect(client.files.getUploadURLExternal({ filename: "a.md", length: 0 })).rejects.toMatchObject({
      data: { error: "missing_argument" },
    });
  });

  it("the upload URL refuses bytes of another size than declared, a second upload and unknown URLs", async () => {
    const got = await client.files.getUploadURLExternal({ filename: "b.md", length: 5 });
    const url = got.upload_url ?? "";
    const wrong = await fetch(url, { method: "POST", body: "too long!" });
    expect(wrong.status).toBe(400);
    // Nothing was taken, so the completion finds no file.
    await expect(
      client.files.completeUploadExternal({ files: [{ id: got.file_id ?? "" }] }),
    ).rejects.toMatchObject({ data: { error: "file_not_found" } });
    const right = await fetch(url, { method: "POST", body: "12345" });
    expect(right.status).toBe(200);
    const again = await fetch(url, { method: "POST", body: "12345" });
    expect(again.status).toBe(409);
    const unknown = await fetch(url.replace(/[0-9a-f]+$/, "00"), { method: "POST", body: "12345" });
    expect(unknown.status).toBe(404);
    const done = await client.files.completeUploadExternal({ files: [{ id: got.file_id ?? "" }] });
    expect(done.files?.[0]?.id).toBe(got.file_id);
    // A completed file cannot be completed again.
    await expect(
      client.files.completeUploadExternal({ files: [{ id: got.file_id ?? "" }] }),
    ).rejects.toMatchObject({ data: { error: "file_not_found" } });
  });

  it("uploadV2 rejects when the upload URL refuses the bytes (the client checks the status)", async () => {
    // A client that sends a different length than it uploads: the upload URL answers 400.
    const got = await client.files.getUploadURLExternal({ filename: "c.md", length: 2 });
    const form = new FormData();
    form.append("body", new Blob([new Uint8Array(Buffer.from("abc"))]), "c.md");
    const res = await fetch(got.upload_url ?? "", { method: "POST", body: form });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/declared 2, received 3/);
  });
});
