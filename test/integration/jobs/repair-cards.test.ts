/**
 * The traffic-path card a repair was asked from (`src/jobs/repair-cards.ts`), on real Redis, and its
 * repaint once the repair is made (`src/app/repair-card.ts` and the Slack editor): taken once, so a
 * request handled again repaints nothing twice; a request asked by command has no card; records the
 * bot did not sign are no card; the repaint is rendered from the signed request, never from anything
 * stored; a Redis that fails never stops what follows the repair.
 */
import type { KnownBlock } from "@slack/types";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { QueueEdit } from "../../../src/app/namespace-gone.js";
import { repaintRepairedCard } from "../../../src/app/repair-card.js";
import type { ApprovalRequest } from "../../../src/requests/model.js";
import type { MessageEdit } from "../../../src/jobs/notify.js";
import { RepairCards } from "../../../src/jobs/repair-cards.js";
import {
  renderPathRepaired,
  renderTraceNothingToRepair,
  REPAIR_PATH_ACTION,
} from "../../../src/slack/blocks/trace.js";
import { lintMessage } from "../../sim/slack/block-kit-lint.js";
import { connect, deleteKeys, uniquePrefix } from "../../helpers/redis.js";
import { testProcessKeys } from "../../helpers/keys.js";

const log = pino({ level: "silent" });
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

const keys = testProcessKeys();

function redisCards(): {
  cards: RepairCards;
  prefix: string;
  redis: ReturnType<typeof connect>;
  count: () => Promise<number>;
} {
  const prefix = uniquePrefix("repair-cards");
  const redis = connect();
  cleanups.push(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
  });
  return {
    // The bot remembers and links (its key); a worker takes (it verifies with the keyring).
    cards: new RepairCards(redis, prefix, { ...(keys.bot ? { key: keys.bot } : {}), keyring: keys.keyring }),
    prefix,
    redis,
    count: async () => (await redis.keys(`${prefix}:*`)).length,
  };
}

/** A trace card as the bot posts it: headline, a path, the plan and *Fix the path*. */
const CARD: KnownBlock[] = [
  {
    type: "section",
    text: {
      type: "mrkdwn",
      text: ":red_circle: *Traffic path of namespace myapp is broken: test.example.com.*",
    },
  },
  { type: "section", text: { type: "mrkdwn", text: ":red_circle: *test.example.com*" } },
  {
    type: "section",
    text: { type: "mrkdwn", text: "```\ncloudfront UpdateDistribution E2MYAPPTEST0001\n```" },
  },
  {
    type: "actions",
    block_id: "path-repair",
    elements: [
      {
        type: "button",
        action_id: REPAIR_PATH_ACTION,
        text: { type: "plain_text", text: "Fix the path" },
        value: '{"ns":"myapp"}',
      },
    ],
  },
];

const request = (id: string): ApprovalRequest => ({ id }) as ApprovalRequest;

function recordingEdits(): { edits: (MessageEdit & { key: string })[]; queueEdit: QueueEdit } {
  const edits: (MessageEdit & { key: string })[] = [];
  return {
    edits,
    queueEdit: (edit, key) => {
      edits.push({ ...edit, key });
      return Promise.resolve();
    },
  };
}

describe("the card a repair was asked from", () => {
  it("is taken once by the request linked to it, and queued as an edit named by ids only", async () => {
    const { cards: store, count } = redisCards();
    await store.remember({ channel: "C0INCIDENT", ts: "1770889000.000100" });
    await store.link("req1", { channel: "C0INCIDENT", ts: "1770889000.000100" });
    const { edits, queueEdit } = recordingEdits();
    const repaint = repaintRepairedCard({
      cards: store,
      queueEdit,
      now: () => new Date("2026-02-12T09:30:00Z"),
      log,
    });
    await repaint(request("req1"));
    await repaint(request("req1"));
    expect(edits).toEqual([
      {
        kind: "repaired-card",
        requestId: "req1",
        channel: "C0INCIDENT",
        ts: "1770889000.000100",
        at: "2026-02-12T09:30:00.000Z",
        key: "repaired:req1",
      },
    ]);
    expect(await count()).toBe(0);
  });

  it("a card or link written into Redis by anyone but the bot is no card: nothing is repainted", async () => {
    const { cards: store, prefix, redis } = redisCards();
    // Pointed at another message, unsigned: the shape of before, with the blocks it would paint.
    await redis.set(
      `${prefix}:repair-card-of:req4`,
      JSON.stringify({ channel: "C0INCIDENT", ts: "1770889999.000100" }),
    );
    await redis.set(
      `${prefix}:repair-card:C0INCIDENT:1770889999.000100`,
      JSON.stringify({
        channel: "C0INCIDENT",
        ts: "1770889999.000100",
        blocks: [{ type: "section", text: { type: "mrkdwn", text: "<!channel>" } }],
      }),
    );
    const { edits, queueEdit } = recordingEdits();
    await repaintRepairedCard({ cards: store, queueEdit, now: () => new Date(), log })(request("req4"));
    expect(edits).toEqual([]);
    // A real link of another request does not stand for this one either.
    await store.remember({ channel: "C0INCIDENT", ts: "1770889000.000200" });
    await store.link("req5", { channel: "C0INCIDENT", ts: "1770889000.000200" });
    await redis.set(
      `${prefix}:repair-card-of:req6`,
      (await redis.get(`${prefix}:repair-card-of:req5`)) ?? "",
    );
    await repaintRepairedCard({ cards: store, queueEdit, now: () => new Date(), log })(request("req6"));
    expect(edits).toEqual([]);
  });

  it("the repaint says repaired first, from the signed request: what changed, who asked and approved", () => {
    const repaired = renderPathRepaired(
      {
        id: "abcdefghijklmnopqrstuvwxyz",
        action: { type: "repoint-path", hostnames: ["test.example.com"], steps: [] },
        requester: { userId: "U0ONCALL1", teamId: "T1" },
        votes: [
          {
            requestId: "abcdefghijklmnopqrstuvwxyz",
            voter: { userId: "U0APPROVER1", teamId: "T1" },
            decision: "approve",
            at: "",
            mac: "",
          },
        ],
        message: { channel: "C0INCIDENT", ts: "1.2" },
      } as unknown as ApprovalRequest,
      new Date("2026-02-12T09:30:00Z"),
    );
    const json = JSON.stringify(repaired.blocks);
    expect(json).toMatch(/Repaired\* — the traffic path of test.example.com/);
    expect(json).toContain("<@U0ONCALL1>");
    expect(json).toContain("<@U0APPROVER1>");
    expect(json).not.toContain(REPAIR_PATH_ACTION);
    expect(lintMessage(repaired).filter((p) => p.severity === "error")).toEqual([]);
  });

  it("a request asked by command (no card) repaints nothing", async () => {
    const { cards: store } = redisCards();
    const { edits, queueEdit } = recordingEdits();
    await repaintRepairedCard({ cards: store, queueEdit, now: () => new Date(), log })(request("req2"));
    expect(edits).toEqual([]);
  });

  it("a Redis that fails is logged, never thrown: the waits after the repair still start", async () => {
    const failing = {
      take: () => Promise.reject(new Error("READONLY You can't write against a read only replica.")),
    };
    await expect(
      repaintRepairedCard({
        cards: failing,
        queueEdit: () => Promise.resolve(),
        now: () => new Date(),
        log,
      })(request("req3")),
    ).resolves.toBeUndefined();
  });

  it("nothing left to repair: the button goes, the card says who checked, every other block stays", () => {
    const painted = renderTraceNothingToRepair(
      CARD,
      "Nothing to repair on the traffic path of namespace <myapp> now.",
      "U0ONCALL1",
      new Date("2026-02-12T09:30:00Z"),
    );
    const json = JSON.stringify(painted.blocks);
    expect(json).not.toContain(REPAIR_PATH_ACTION);
    expect(json).toContain("<@U0ONCALL1>");
    // What the check said is escaped like anything else that reaches Slack.
    expect(json).toContain("&lt;myapp&gt;");
    expect(painted.blocks).toHaveLength(CARD.length);
    expect(painted.text).toMatch(/^Traffic path of namespace myapp is broken/);
  });
});
