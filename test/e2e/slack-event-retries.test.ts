/**
 * An event Slack delivers again is answered once. When an Events API delivery is acknowledged late,
 * Slack re-sends it up to three times with the same `event_id`: over HTTP with `X-Slack-Retry-Num`
 * 1–3, in Socket Mode with `retry_attempt` in the envelope. Two bot replicas (`createRuntime`, the
 * `bot` role, as `main.ts` builds them) on one real Redis and the fake Slack: `@unstuck timeline`
 * delivered four times — at once, spread over both replicas, or one after another — posts one card
 * and uploads one file; every delivery is acknowledged with 200. A Socket Mode bot does the same with
 * four envelopes, each acknowledged.
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_CLAIM_TTL_SECONDS } from "../../src/slack/event-dedupe.js";
import { eventually, pause } from "../helpers/eventually.js";
import { startTestWorld, type TestWorld } from "../helpers/world.js";
import { appMentionBody, postSignedJson, type FakeSlack } from "../sim/slack/index.js";
import { messageText } from "./slack-harness.js";

const SECRET = "event-retries-signing-secret";
const TOKEN = "xoxb-event-retries-token";
const CHANNEL = "C0INCIDENT";

let w: TestWorld;
let fake: FakeSlack;
let redis: Redis;
let prefix: string;
/** The `/slack/events` URL of each HTTP replica. */
const replicas: string[] = [];
let mentions = 0;

/** One more bot replica on the world (the `bot` role), started; `extra` adds to its env. */
async function bot(extra: Record<string, string> = {}): Promise<{ port?: number }> {
  const { port } = await w.boot({ env: extra });
  return port !== undefined ? { port } : {};
}

/** A fresh `@unstuck timeline` typed in an incident thread: the body every delivery of it repeats. */
function mention(): { body: string; eventId: string; threadTs: string } {
  mentions += 1;
  const threadTs = `1770886${String(mentions).padStart(3, "0")}.000100`;
  const body = appMentionBody({
    text: `<@${fake.botUserId}> timeline`,
    ts: `1770887${String(mentions).padStart(3, "0")}.000200`,
    threadTs,
    channelId: CHANNEL,
  });
  return { body, eventId: (JSON.parse(body) as { event_id: string }).event_id, threadTs };
}

/** What the bot answered in a thread: timeline cards posted, files asked for and shared there. */
function answersIn(threadTs: string): { cards: number; uploads: number; shared: number; files: number } {
  const calls = fake.calls().filter((c) => c.response?.["ok"] === true);
  return {
    cards: calls.filter(
      (c) =>
        c.method === "chat.postMessage" &&
        c.body["thread_ts"] === threadTs &&
        messageText(c.body).includes("Post-mortem draft"),
    ).length,
    uploads: calls.filter((c) => c.method === "files.getUploadURLExternal").length,
    shared: calls.filter(
      (c) => c.method === "files.completeUploadExternal" && c.body["thread_ts"] === threadTs,
    ).length,
    files: fake.files().filter((f) => f.threadTs === threadTs).length,
  };
}

/** Wait for the answer, then long enough for any second answer to show. */
async function answered(threadTs: string): Promise<ReturnType<typeof answersIn>> {
  await eventually(
    () => (answersIn(threadTs).shared > 0 ? true : undefined),
    20_000,
    "the timeline file shared",
  );
  await pause(1_500);
  return answersIn(threadTs);
}

const retryHeaders = (n: number): Record<string, string> =>
  n === 0 ? {} : { "X-Slack-Retry-Num": String(n), "X-Slack-Retry-Reason": "http_timeout" };

beforeAll(async () => {
  w = await startTestWorld({
    token: TOKEN,
    secret: SECRET,
    label: "event-retries",
    kube: { scenario: "test/fixtures/scenarios/seed-incident.yaml" },
    role: "bot",
    env: {
      UNSTUCK_CHANNELS: CHANNEL,
      UNSTUCK_APPROVERS: "U0APPROVER1",
      UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
    },
    boot: false,
  });
  ({ fake, redis, prefix } = w);
  for (let i = 0; i < 2; i++) {
    const { port } = await bot();
    replicas.push(`http://127.0.0.1:${String(port)}/slack/events`);
  }
}, 60_000);

afterAll(async () => {
  await w.stop();
}, 60_000);

describe("an event Slack delivers again is answered once", () => {
  it("four deliveries at once (retry 1–3, same event_id) over two replicas: 200 each, one card, one upload", async () => {
    const m = mention();
    const before = fake.files().length;
    const deliveries = await Promise.all(
      [0, 1, 2, 3].map((n) =>
        postSignedJson(replicas[n % 2] ?? "", SECRET, m.body, undefined, retryHeaders(n)),
      ),
    );
    expect(deliveries.map((d) => d.status)).toEqual([200, 200, 200, 200]);
    expect(await answered(m.threadTs)).toEqual({ cards: 1, uploads: 1, shared: 1, files: 1 });
    expect(fake.files().length).toBe(before + 1);
    // The claim lives under the bot's prefix, for an hour.
    const ttl = await redis.ttl(`${prefix}:slack-event:${m.eventId}`);
    expect(ttl).toBeGreaterThan(EVENT_CLAIM_TTL_SECONDS - 60);
    expect(ttl).toBeLessThanOrEqual(EVENT_CLAIM_TTL_SECONDS);
  });

  it("retries that come after the first delivery was answered post nothing; another event is answered", async () => {
    const m = mention();
    const first = await postSignedJson(replicas[0] ?? "", SECRET, m.body);
    expect(first.status).toBe(200);
    expect(await answered(m.threadTs)).toMatchObject({ cards: 1, shared: 1, files: 1 });
    const uploads = answersIn(m.threadTs).uploads;
    for (const n of [1, 2, 3]) {
      const retry = await postSignedJson(replicas[n % 2] ?? "", SECRET, m.body, undefined, retryHeaders(n));
      expect(retry.status).toBe(200);
    }
    await pause(1_500);
    expect(answersIn(m.threadTs)).toEqual({ cards: 1, uploads, shared: 1, files: 1 });

    // A new event (its own event_id) is a new question.
    const other = mention();
    expect((await postSignedJson(replicas[1] ?? "", SECRET, other.body)).status).toBe(200);
    expect(await answered(other.threadTs)).toMatchObject({ cards: 1, shared: 1, files: 1 });
  });

  it("Socket Mode: four envelopes of one event (retry_attempt 1–3) are each acked; one card, one upload", async () => {
    const before = fake.socketConnections();
    await bot({ SLACK_APP_TOKEN: fake.appToken });
    await fake.waitForSocket(before + 1, 15_000);
    const m = mention();
    const uploadsBefore = fake.calls().filter((c) => c.method === "files.getUploadURLExternal").length;
    const payload = JSON.parse(m.body) as Record<string, unknown>;
    const envelopes = [0, 1, 2, 3].map((n) => ({
      envelope_id: `env-${m.eventId}-${String(n)}-${randomBytes(3).toString("hex")}`,
      type: "events_api",
      payload,
      accepts_response_payload: false,
      retry_attempt: n,
      ...(n > 0 ? { retry_reason: "timeout" } : {}),
    }));
    for (const e of envelopes) fake.socketSend(e);
    for (const e of envelopes) await fake.waitForAck(e.envelope_id, 5_000);
    const got = await answered(m.threadTs);
    expect({ ...got, uploads: got.uploads - uploadsBefore }).toEqual({
      cards: 1,
      uploads: 1,
      shared: 1,
      files: 1,
    });
  });
});
