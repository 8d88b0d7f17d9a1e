/**
 * The traffic-path card a repair was asked from (`src/jobs/repair-cards.ts`), on real Redis, and its
 * repaint once the repair is made (`src/app/repair-card.ts` with the Slack presenter): taken once, so a
 * request handled again repaints nothing twice; a request asked by command has no card; a Redis that
 * fails never stops what follows the repair.
 */
import type { KnownBlock } from "@slack/types";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { repaintRepairedCard } from "../../../src/app/repair-card.js";
import type { ApprovalRequest } from "../../../src/approvals/types.js";
import { RepairCards } from "../../../src/jobs/repair-cards.js";
import { REPAIR_PATH_ACTION, renderTraceNothingToRepair } from "../../../src/slack/blocks/trace.js";
import { slackRepairCard } from "../../../src/wiring/slack-presenters.js";
import { lintMessage } from "../../sim/slack/block-kit-lint.js";
import { connect, deleteKeys, uniquePrefix } from "../../helpers/redis.js";

const log = pino({ level: "silent" });
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function redisCards(): { cards: RepairCards; prefix: string; count: () => Promise<number> } {
  const prefix = uniquePrefix("repair-cards");
  const redis = connect();
  cleanups.push(async () => {
    await deleteKeys(redis, prefix);
    await redis.quit();
  });
  return {
    cards: new RepairCards(redis, prefix),
    prefix,
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

describe("the card a repair was asked from", () => {
  it("is taken once by the request linked to it, and repainted without its button", async () => {
    const { cards: store, count } = redisCards();
    await store.remember({ channel: "C0INCIDENT", ts: "1770889000.000100", blocks: CARD });
    await store.link("req1", { channel: "C0INCIDENT", ts: "1770889000.000100" });
    const edits: { channel: string; ts: string; blocks: readonly unknown[]; key: string }[] = [];
    const repaint = repaintRepairedCard({
      cards: store,
      queueEdit: (edit, key) => {
        edits.push({ ...edit, key });
        return Promise.resolve();
      },
      present: slackRepairCard,
      now: () => new Date("2026-02-12T09:30:00Z"),
      log,
    });
    await repaint(request("req1"));
    await repaint(request("req1"));
    expect(edits).toHaveLength(1);
    const [edit] = edits;
    expect(edit?.channel).toBe("C0INCIDENT");
    expect(edit?.ts).toBe("1770889000.000100");
    expect(edit?.key).toBe("repaired:req1");
    const json = JSON.stringify(edit?.blocks);
    expect(json).not.toContain(REPAIR_PATH_ACTION);
    expect(json).toContain("Repaired");
    // The trace itself is kept: what the path was before the repair.
    expect(json).toContain("UpdateDistribution E2MYAPPTEST0001");
    expect(lintMessage({ text: "t", blocks: edit?.blocks }).filter((p) => p.severity === "error")).toEqual(
      [],
    );
    expect(await count()).toBe(0);
  });

  it("a request asked by command (no card) repaints nothing", async () => {
    const { cards: store } = redisCards();
    const edits: unknown[] = [];
    await repaintRepairedCard({
      cards: store,
      queueEdit: (edit) => {
        edits.push(edit);
        return Promise.resolve();
      },
      present: slackRepairCard,
      now: () => new Date(),
      log,
    })(request("req2"));
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
        present: slackRepairCard,
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
