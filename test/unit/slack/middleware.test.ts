import { Writable } from "node:stream";
import { LogLevel } from "@slack/bolt";
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import { REDACT_PATHS, type Logger } from "../../../src/log.js";
import { boltLogger, scrubSecrets } from "../../../src/slack/bolt-logger.js";
import {
  ackFirst,
  channelAllowList,
  identityOf,
  isChannelAllowed,
  requestScope,
  scopeOf,
} from "../../../src/slack/middleware.js";
import { blockActionsBody, slashCommandBody } from "../../sim/slack/signing.js";

const BOT_TOKEN = "xoxb-1111-2222-secretbottoken";
const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";

/** A logger configured like the product's (same redaction), writing JSON lines into memory. */
function memoryLogger(): { log: Logger; lines: () => string[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString("utf8"));
      done();
    },
  });
  const log = pino({ level: "debug", redact: { paths: REDACT_PATHS, censor: "[redacted]" } }, stream);
  return { log, lines: () => chunks.join("").split("\n").filter(Boolean) };
}

/** The decoded form body Bolt hands to listeners for a slash command. */
function commandBody(channelId: string): Record<string, string> {
  return Object.fromEntries(
    new URLSearchParams(slashCommandBody({ text: "ns myapp", responseUrl: "http://x/r", channelId })),
  );
}

function actionBody(channelId: string): unknown {
  const payload = new URLSearchParams(
    blockActionsBody({
      actionId: "approval:approve",
      responseUrl: "http://x/r",
      channelId,
      userId: "U0APPROVER",
    }),
  ).get("payload");
  return JSON.parse(payload ?? "{}");
}

/** Run one middleware with hand-made Bolt arguments; returns what it did. */
async function run(
  middleware: (args: never) => Promise<void>,
  body: unknown,
  context: Record<string, unknown> = {},
): Promise<{ order: string[]; respond: ReturnType<typeof vi.fn>; context: Record<string, unknown> }> {
  const order: string[] = [];
  const respond = vi.fn(() => {
    order.push("respond");
    return Promise.resolve();
  });
  const args = {
    body,
    context,
    respond,
    ack: () => {
      order.push("ack");
      return Promise.resolve();
    },
    next: () => {
      order.push("next");
      return Promise.resolve();
    },
  };
  await middleware(args as never);
  return { order, respond, context };
}

describe("identityOf", () => {
  it("reads user, team and channel from a slash command", () => {
    const id = identityOf(commandBody("C0INCIDENT"));
    expect(id).toMatchObject({ kind: "command", subject: "/unstuck", channelId: "C0INCIDENT" });
    expect(id.userId).toMatch(/^U/);
    expect(id.teamId).toMatch(/^T/);
  });

  it("reads the nested fields of a block_actions payload", () => {
    const id = identityOf(actionBody("C0OTHER"));
    expect(id).toMatchObject({
      kind: "action",
      subject: "approval:approve",
      userId: "U0APPROVER",
      channelId: "C0OTHER",
    });
  });

  it("returns nothing for a body that is not an object", () => {
    expect(identityOf("nope")).toEqual({ kind: "other" });
  });
});

describe("channel allow-list", () => {
  it("allows every channel when the list is empty", () => {
    expect(isChannelAllowed(new Set(), "C1")).toBe(true);
    expect(isChannelAllowed(new Set(), undefined)).toBe(true);
  });

  it("allows only listed channels otherwise", () => {
    const allowed = new Set(["C1", "C2"]);
    expect(isChannelAllowed(allowed, "C2")).toBe(true);
    expect(isChannelAllowed(allowed, "C3")).toBe(false);
    expect(isChannelAllowed(allowed, undefined)).toBe(false);
  });

  it("refuses a disallowed channel ephemerally, naming it, and stops the chain", async () => {
    const { log } = memoryLogger();
    const body = commandBody("C0RANDOM");
    const context: Record<string, unknown> = {};
    await run(requestScope(log), body, context);
    const { order, respond } = await run(channelAllowList(["C0INCIDENT"]), body, context);
    expect(order).toEqual(["respond"]);
    expect(respond).toHaveBeenCalledTimes(1);
    const answer = respond.mock.calls[0]?.[0] as { response_type: string; text: string };
    expect(answer.response_type).toBe("ephemeral");
    expect(answer.text).toContain("C0RANDOM");
  });

  it("lets an allowed channel through without answering", async () => {
    const body = commandBody("C0INCIDENT");
    const { order } = await run(channelAllowList(["C0INCIDENT"]), body);
    expect(order).toEqual(["next"]);
  });
});

describe("ackFirst", () => {
  it("acknowledges before anything else runs", async () => {
    const { order } = await run(ackFirst(), commandBody("C1"));
    expect(order).toEqual(["ack", "next"]);
  });

  it("acknowledges a request still being read before the work of an acknowledged one starts", async () => {
    const order: string[] = [];
    const middleware = ackFirst();
    const request = (n: number): Promise<void> =>
      middleware({
        body: commandBody("C1"),
        respond: () => Promise.resolve(),
        ack: () => {
          order.push(`ack ${String(n)}`);
          return Promise.resolve();
        },
        next: () => {
          order.push(`work ${String(n)}`);
          return Promise.resolve();
        },
      } as never);
    // The second request is still being parsed (Bolt's reading and verifying is a chain of promise
    // hops) when the first is acknowledged; the first one's work must wait for it.
    const second = (async () => {
      for (let i = 0; i < 50; i++) await Promise.resolve();
      await request(2);
    })();
    await Promise.all([request(1), second]);
    expect(order).toEqual(["ack 1", "ack 2", "work 1", "work 2"]);
  });
});

describe("requestScope", () => {
  it("binds request id, user, team and channel to every line, and a distinct id per request", async () => {
    const { log, lines } = memoryLogger();
    let n = 0;
    const ids = () => `req-${++n}`;
    const first = await run(requestScope(log, ids), commandBody("C0INCIDENT"));
    const second = await run(requestScope(log, ids), actionBody("C0INCIDENT"));
    scopeOf(first.context).log.info("from the listener");

    const a = scopeOf(first.context);
    const b = scopeOf(second.context);
    expect(a.requestId).not.toBe(b.requestId);
    expect(a.actor).toMatchObject({ surface: "slack", channelId: "C0INCIDENT" });
    expect(b.actor.userId).toBe("U0APPROVER");

    const records = lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    const listenerLine = records.find((r) => r["msg"] === "from the listener");
    expect(listenerLine).toMatchObject({
      requestId: a.requestId,
      userId: a.actor.userId,
      teamId: a.actor.teamId,
      channelId: "C0INCIDENT",
    });
    expect(records.every((r) => typeof r["requestId"] === "string")).toBe(true);
  });

  it("never writes the bot token, the signing secret or Slack's verification token", async () => {
    const { log, lines } = memoryLogger();
    const body = { ...commandBody("C0INCIDENT"), token: "legacy-verification-token" };
    // Bolt's context carries the bot token; a careless `log.info({context})` would leak it.
    const context: Record<string, unknown> = { botToken: BOT_TOKEN };
    await run(requestScope(log), body, context);
    const scope = scopeOf(context);
    scope.log.info({ botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET }, "config echo");
    await run(channelAllowList(["C0ELSEWHERE"]), body, context);

    const output = lines().join("\n");
    expect(lines().length).toBeGreaterThanOrEqual(3);
    expect(output).not.toContain(BOT_TOKEN);
    expect(output).not.toContain(SIGNING_SECRET);
    expect(output).not.toContain("legacy-verification-token");
  });

  it("throws a clear error when a listener runs without the scope", () => {
    expect(() => scopeOf({})).toThrow(/requestScope/);
  });
});

describe("bolt logger adapter", () => {
  it("scrubs secrets and token-shaped strings out of free-form Bolt messages", () => {
    const { log, lines } = memoryLogger();
    const bolt = boltLogger(log, [BOT_TOKEN, SIGNING_SECRET]);
    bolt.warn("http request failed", { headers: { Authorization: `Bearer ${BOT_TOKEN}` } });
    bolt.error(new Error(`bad secret ${SIGNING_SECRET}`));
    bolt.info("other token xoxp-9999-8888-userstuff seen");
    const output = lines().join("\n");
    expect(lines()).toHaveLength(3);
    expect(output).not.toContain(BOT_TOKEN);
    expect(output).not.toContain(SIGNING_SECRET);
    expect(output).not.toContain("xoxp-9999");
  });

  it("honours the level Bolt sets", () => {
    const { log, lines } = memoryLogger();
    const bolt = boltLogger(log, []);
    bolt.setLevel(bolt.getLevel());
    bolt.debug("visible at debug");
    bolt.setLevel(LogLevel.ERROR);
    bolt.warn("hidden");
    expect(lines().map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(["visible at debug"]);
  });

  it("leaves text without secrets unchanged", () => {
    expect(scrubSecrets("nothing to hide here", [BOT_TOKEN])).toBe("nothing to hide here");
  });
});
