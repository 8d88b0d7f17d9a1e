/**
 * The Slack ports of the approval engine, driven through the real WebClient against the fake Slack Web API.
 */
import { webApi } from "@slack/bolt";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildFinalizerPatch } from "../../../src/approvals/workflow.js";
import type { ApprovalRequest } from "../../../src/requests/model.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import {
  createSlackApprovalNotifier,
  createSlackAuditMirror,
  createSlackDirectory,
  createSlackThreadReporter,
} from "../../../src/slack/notifier.js";
import { parseFinalizer, parseModalMetadata, parseRemovalTarget } from "../../../src/slack/finalize-form.js";
import { startFakeSlack, type FakeSlack } from "../../sim/slack/index.js";
import { WORKER_INGRESS } from "../approvals/fixtures.js";

const NOW = new Date("2026-02-12T08:50:00Z");
const log = pino({ level: "silent" });

let fake: FakeSlack;
let client: webApi.WebClient;
beforeEach(async () => {
  fake = await startFakeSlack({ token: "xoxb-unit" });
  // No retries: a failure in these tests must surface at once.
  client = new webApi.WebClient("xoxb-unit", { slackApiUrl: fake.url, retryConfig: { retries: 0 } });
});
afterEach(async () => {
  await fake.stop();
});

function request(overrides: Partial<ApprovalRequest> = {}): ApprovalRequest {
  const precondition = { resourceVersion: "4711", finalizers: ["ingress.k8s.aws/resources"] };
  return {
    id: "abcdefghijklmnopqrstuvwxyz",
    action: {
      type: "remove-finalizer",
      target: WORKER_INGRESS,
      precondition,
      remove: ["ingress.k8s.aws/resources"],
      patch: buildFinalizerPatch(precondition, ["ingress.k8s.aws/resources"]),
    },
    requester: { userId: "UALICE", teamId: "T1" },
    channelId: "COPS",
    reason: "recovery first",
    evidence: ["e"],
    cleanupPlan: ["c"],
    createdAt: "2026-02-12T08:45:00Z",
    expiresAt: "2026-02-12T09:15:00Z",
    updatedAt: "2026-02-12T08:45:00Z",
    approvalsRequired: 1,
    state: "PENDING",
    votes: [],
    executionAttempts: 0,
    ...overrides,
  };
}

async function postedMessage(): Promise<{ channel: string; ts: string }> {
  const res = await client.chat.postMessage({ channel: "COPS", text: "request" });
  return { channel: "COPS", ts: res.ts ?? "" };
}

describe("createSlackApprovalNotifier", () => {
  it("re-renders the original message with the current state and replies in its thread", async () => {
    const message = await postedMessage();
    const notifier = createSlackApprovalNotifier({ client, now: () => NOW, log });
    const denied = request({
      message,
      state: "DENIED",
      votes: [{ voter: { userId: "UBOB", teamId: "T1" }, decision: "deny", at: "2026-02-12T08:46:00Z" }],
    });
    await notifier.requestUpdated(denied);
    await notifier.threadReply(denied, { kind: "vote", voter: "UBOB", decision: "deny" });
    const m = fake.message(message.channel, message.ts);
    expect(m?.updates).toBe(1);
    expect(m?.text).toContain("[DENIED]");
    expect(fake.thread(message.channel, message.ts).map((r) => r.text)).toEqual(["<@UBOB> denied."]);
  });

  it("does nothing for a request without a message", async () => {
    const notifier = createSlackApprovalNotifier({ client, now: () => NOW, log });
    await notifier.requestUpdated(request());
    await notifier.threadReply(request(), { kind: "expired" });
    expect(fake.calls()).toEqual([]);
  });

  it("never paints an older state over a newer one, whatever order notifications arrive in", async () => {
    const message = await postedMessage();
    const notifier = createSlackApprovalNotifier({ client, now: () => NOW, log });
    const vote = {
      voter: { userId: "UBOB", teamId: "T1" },
      decision: "approve" as const,
      at: "2026-02-12T08:46:00Z",
    };
    const done = request({
      message,
      state: "DONE",
      votes: [vote],
      executionAttempts: 1,
      result: { outcome: "done", message: "finalizer removed", at: "2026-02-12T08:47:00Z" },
    });
    const approved = request({ message, state: "APPROVED", votes: [vote] });
    await Promise.all([notifier.requestUpdated(done), notifier.requestUpdated(approved)]);
    expect(fake.message(message.channel, message.ts)?.text).toContain("[DONE]");
    expect(fake.message(message.channel, message.ts)?.updates).toBe(1);
  });

  it("renders the stored state when it can read it", async () => {
    const message = await postedMessage();
    const stored = request({ message, state: "EXPIRED" });
    const notifier = createSlackApprovalNotifier({
      client,
      now: () => NOW,
      log,
      current: () => Promise.resolve(stored),
    });
    await notifier.requestUpdated(request({ message }));
    expect(fake.message(message.channel, message.ts)?.text).toContain("[EXPIRED]");
  });

  it("surfaces a Slack failure to the caller (the engine's notifySafely logs it)", async () => {
    const notifier = createSlackApprovalNotifier({ client, now: () => NOW, log });
    await expect(
      notifier.requestUpdated(request({ message: { channel: "COPS", ts: "9.999999" } })),
    ).rejects.toThrow(/message_not_found/);
  });
});

describe("thread reporter, audit mirror, directory", () => {
  it("posts a status in the thread and edits it in place", async () => {
    const parent = await postedMessage();
    const reporter = createSlackThreadReporter(client);
    const { ts } = await reporter.post(parent.channel, parent.ts, "still Terminating");
    await reporter.update(parent.channel, ts, "✅ Namespace myapp is gone");
    const replies = fake.thread(parent.channel, parent.ts);
    expect(replies).toHaveLength(1);
    expect(replies[0]?.text).toBe("✅ Namespace myapp is gone");
  });

  it("mirrors audit entries to the audit channel: the voter is mentioned, the reason cannot ping", async () => {
    await createSlackAuditMirror(client, "CAUDIT").postEntry?.({
      at: "2026-02-12T08:50:00Z",
      actor: { kind: "user", userId: "UBOB", teamId: "T1" },
      event: "request.created",
      requestId: "r1",
      action: "remove-finalizer",
      target: "Ingress myapp/x",
      result: "<!channel> <https://evil.example|click> recovery first",
    });
    const call = await fake.waitFor("chat.postMessage");
    expect(call.body["channel"]).toBe("CAUDIT");
    const text = String(call.body["text"]);
    expect(text).toContain("<@UBOB>");
    expect(text).toContain("&lt;!channel&gt;");
    expect(text).not.toContain("<!channel>");
    expect(text).not.toContain("<https://");
  });

  it("treats a pre-formatted audit line as text", async () => {
    await createSlackAuditMirror(client, "CAUDIT").postToChannel("vote.approve by <!here>");
    const call = await fake.waitFor("chat.postMessage");
    expect(call.body["text"]).toBe("vote.approve by &lt;!here&gt;");
  });

  it("lists user-group members and turns Slack errors into coded errors", async () => {
    fake.setUsergroup("S0ONCALL", ["UBOB", "UCAROL"]);
    const directory = createSlackDirectory(client);
    expect(await directory.usergroupMembers("S0ONCALL")).toEqual(["UBOB", "UCAROL"]);
    const err = await directory.usergroupMembers("S0NOPE").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnstuckError);
    expect((err as UnstuckError).code).toBe(ErrorCode.Upstream);
    expect((err as UnstuckError).message).toContain("no_such_subteam");
  });
});

describe("targets from buttons and modals", () => {
  const target = {
    resource: "ingresses",
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    namespace: "myapp",
    name: "myapp-worker-ingress",
  };

  it("accepts a well-formed target and drops anything extra", () => {
    expect(parseRemovalTarget({ ...target, extra: "x" })).toEqual(target);
    expect(
      parseRemovalTarget({ ...target, apiVersion: "v1", resource: "configmaps", kind: "ConfigMap" }),
    ).toMatchObject({ apiVersion: "v1" });
  });

  it.each([
    ["resource", "Ingresses!"],
    ["apiVersion", "networking.k8s.io/v1/../x"],
    ["kind", "<script>"],
    ["namespace", "MyApp"],
    ["name", "a/b"],
    ["namespace", 42],
  ])("refuses a target with a bad %s", (field, value) => {
    expect(() => parseRemovalTarget({ ...target, [field]: value })).toThrow(UnstuckError);
  });

  it("refuses non-objects and bad metadata", () => {
    for (const raw of [null, "x", [target]]) expect(() => parseRemovalTarget(raw)).toThrow(UnstuckError);
    expect(() => parseModalMetadata("{")).toThrow(UnstuckError);
    expect(() => parseModalMetadata(JSON.stringify({ target, channelId: "#ops" }))).toThrow(UnstuckError);
    expect(parseModalMetadata(JSON.stringify({ target, channelId: "COPS" }))).toEqual({
      target,
      channelId: "COPS",
    });
  });

  it("validates an optional finalizer name", () => {
    expect(parseFinalizer("  ")).toBeUndefined();
    expect(parseFinalizer(null)).toBeUndefined();
    expect(parseFinalizer("ingress.k8s.aws/resources")).toBe("ingress.k8s.aws/resources");
    expect(parseFinalizer("kubernetes")).toBe("kubernetes");
    expect(() => parseFinalizer("rm -rf /")).toThrow(UnstuckError);
  });
});
