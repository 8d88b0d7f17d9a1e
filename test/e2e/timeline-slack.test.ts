/**
 * `timeline` in Slack, end to end: the real Bolt app over signed HTTP, the approval engine and the audit
 * stream on real Redis, the fake Slack's external upload. The card is posted and the whole draft lands in
 * its thread as `postmortem-<date>.md` (files.uploadV2); without `files:write` the card says why; typed in
 * an incident thread (`@unstuck timeline`), the draft covers that thread only.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { auditObserver } from "../../src/audit/observe.js";
import { ObservationKind } from "../../src/audit/observation.js";
import { INGRESS } from "../integration/approvals/helpers/fake-kube.js";
import {
  alice,
  bob,
  CHANNEL,
  createHarness,
  seedIngress,
  type Harness as ApprovalHarness,
} from "../integration/approvals/helpers/harness.js";
import { appMentionBody, postSignedJson } from "../sim/slack/index.js";
import { messageText, startHarness, type Harness } from "./slack-harness.js";

const HOSTILE = "recovery first <!channel> <https://evil.example|runbook> `x`";

let h: ApprovalHarness;
let s: Harness;
/** The parents of two incident threads (messages the bot posted). */
let threadA: string;
let threadB: string;

beforeEach(async () => {
  h = createHarness({ approvalsRequired: 1 });
  seedIngress(h);
  h.fake.putObject(INGRESS, "other", "api-ingress", {
    finalizers: ["ingress.k8s.aws/resources"],
    deleting: true,
  });
  s = await startHarness({ kube: h.fake, approvals: () => ({ workflow: h.workflow, audit: h.audit }) });
  // Two incidents, each in its own thread: a request's message is its thread's parent.
  const a = await h.workflow.requestFinalizerRemoval({
    type: INGRESS,
    namespace: "myapp",
    name: "myapp-worker-ingress",
    reason: HOSTILE,
    evidence: [],
    cleanupPlan: [],
    requester: alice,
    channelId: CHANNEL,
  });
  threadA = "1770885540.000100";
  await h.workflow.attachMessage(a.id, { channel: CHANNEL, ts: threadA });
  await h.workflow.vote(a.id, bob, "approve");
  const b = await h.workflow.requestFinalizerRemoval({
    type: INGRESS,
    namespace: "other",
    name: "api-ingress",
    reason: "the other incident",
    evidence: [],
    cleanupPlan: [],
    requester: alice,
    channelId: CHANNEL,
  });
  threadB = "1770885999.000200";
  await h.workflow.attachMessage(b.id, { channel: CHANNEL, ts: threadB });
  // The bot's own observations, each in its thread (as the waits record them).
  const observe = auditObserver(h.audit, () => new Date());
  await observe({
    kind: ObservationKind.WaitFinished,
    component: "waits",
    target: "namespace myapp",
    result: "✅ Namespace myapp is gone <@U0EVIL>",
    channel: CHANNEL,
    threadTs: threadA,
  });
  await observe({
    kind: ObservationKind.WaitFinished,
    component: "waits",
    target: "namespace other",
    result: "gone in thread B",
    channel: CHANNEL,
    threadTs: threadB,
  });
});

afterEach(async () => {
  await s.stop();
  await h.close();
});

function draftOf(fileId: string | undefined): string {
  const file = s.fake.files().find((f) => f.id === fileId);
  return file?.content?.toString("utf8") ?? "";
}

describe("timeline in Slack", () => {
  it("posts the card and uploads the whole draft into its thread as postmortem-<date>.md", async () => {
    await s.command("timeline", { channelId: CHANNEL });
    const card = await s.fake.waitFor("chat.postMessage", (c) =>
      messageText(c.body).includes("Post-mortem draft"),
    );
    const cardTs = String(card.response?.["ts"]);
    const done = await s.fake.waitFor("files.completeUploadExternal");
    expect(done.body["channel_id"]).toBe(CHANNEL);
    expect(done.body["thread_ts"]).toBe(cardTs);
    const date = new Date().toISOString().slice(0, 10);
    const [file] = s.fake.files();
    expect(file).toMatchObject({
      filename: `postmortem-${date}.md`,
      completed: true,
      channel: CHANNEL,
      threadTs: cardTs,
    });
    expect(s.fake.thread(CHANNEL, cardTs).some((m) => m.files?.includes(file?.id ?? ""))).toBe(true);
    expect(messageText(card.body)).toContain(`postmortem-${date}.md`);

    const md = draftOf(file?.id);
    // The window covers both incidents and both observations.
    expect(md).toContain("namespace myapp");
    expect(md).toContain("the other incident");
    expect(md).toContain("finished waiting: `namespace myapp`");
    for (const heading of [
      "## What happened",
      "## Timeline (UTC)",
      "## Recovery",
      "## Cause",
      "## Lessons",
    ]) {
      expect(md).toContain(heading);
    }
    // What users and the cluster wrote is text: no Slack control sequence, no mention, no code fence break.
    expect(md).not.toMatch(/<!channel>|<https?:|<@U0EVIL>/);
    expect(md).toContain("‹!channel›");
    expect(messageText(card.body)).not.toContain("<!channel>");
  });

  it("without files:write the upload fails with missing_scope and the card says why", async () => {
    s.fake.setScopes(["commands", "chat:write", "usergroups:read"]);
    await s.command("timeline", { channelId: CHANNEL });
    const card = await s.fake.waitFor("chat.postMessage", (c) =>
      messageText(c.body).includes("Post-mortem draft"),
    );
    const update = await s.fake.waitFor("chat.update", (c) => c.body["ts"] === card.response?.["ts"]);
    expect(messageText(update.body)).toContain("files:write");
    expect(messageText(update.body)).toContain("could not attach the draft as a file");
    const asked = await s.fake.waitFor("files.getUploadURLExternal");
    expect(asked.response).toMatchObject({ ok: false, error: "missing_scope", needed: "files:write" });
    expect(s.fake.files()).toEqual([]);
    // The card still holds the draft.
    expect(messageText(update.body)).toContain("## Timeline (UTC)");
  });

  it("@unstuck timeline in an incident thread covers that thread only, answered in the thread", async () => {
    const mentionTs = "1770886500.000300";
    const res = await postSignedJson(
      s.eventsUrl,
      s.signingSecret,
      appMentionBody({
        text: `<@${s.fake.botUserId}> timeline`,
        ts: mentionTs,
        threadTs: threadA,
        channelId: CHANNEL,
      }),
    );
    expect(res.status).toBe(200);
    const card = await s.fake.waitFor("chat.postMessage", (c) =>
      messageText(c.body).includes("Post-mortem draft"),
    );
    expect(card.body["thread_ts"]).toBe(threadA);
    const done = await s.fake.waitFor("files.completeUploadExternal");
    expect(done.body["thread_ts"]).toBe(threadA);
    const md = draftOf(s.fake.files()[0]?.id);
    expect(md).toContain(`the Slack thread \`${CHANNEL}:${threadA}\``);
    expect(md).toContain("Ingress myapp/myapp-worker-ingress");
    expect(md).toContain("finished waiting: `namespace myapp`");
    // Thread B's request and observation are another incident.
    expect(md).not.toContain("the other incident");
    expect(md).not.toContain("api-ingress");
    expect(md).not.toContain("gone in thread B");
  });

  it("a mention asking for anything but timeline gets a hint, only for the one who asked", async () => {
    await postSignedJson(
      s.eventsUrl,
      s.signingSecret,
      appMentionBody({ text: `<@${s.fake.botUserId}> ns myapp`, ts: "1770886600.000400", threadTs: threadA }),
    );
    const hint = await s.fake.waitFor("chat.postEphemeral");
    expect(String(hint.body["text"])).toContain("timeline");
    expect(s.fake.calls().some((c) => c.method === "files.getUploadURLExternal")).toBe(false);
  });

  it("a mention from a channel the bot is not enabled in passes the shared chain: scoped, refused there, nothing run", async () => {
    const gated = await startHarness({ kube: h.fake, channels: [CHANNEL] });
    try {
      await postSignedJson(
        gated.eventsUrl,
        gated.signingSecret,
        appMentionBody({
          text: `<@${gated.fake.botUserId}> timeline`,
          ts: "1770886700.000500",
          channelId: "C0ELSEWHERE1",
        }),
      );
      const refusal = await gated.fake.waitFor("chat.postEphemeral");
      expect(refusal.body["channel"]).toBe("C0ELSEWHERE1");
      expect(String(refusal.body["text"])).toContain("not enabled in <#C0ELSEWHERE1>");
      expect(gated.fake.calls().some((c) => c.method === "chat.postMessage")).toBe(false);
      // The same request scope as a slash command or a click: one request id on every line of it.
      const lines = gated
        .logs()
        .split("\n")
        .filter((l) => l.includes('"requestId"'))
        .map((l) => JSON.parse(l) as { msg: string; kind?: string; requestId: string; channelId?: string });
      const scoped = lines.find((l) => l.msg === "slack request" && l.kind === "mention");
      expect(scoped?.channelId).toBe("C0ELSEWHERE1");
      expect(lines.find((l) => l.msg.includes("outside the allow-list"))?.requestId).toBe(scoped?.requestId);
    } finally {
      await gated.stop();
    }
  });
});
