/**
 * How much a person must read to live through the seed incident in the channel, measured on the whole
 * flow as an on-call engineer walks it: `ns myapp`, the finalizer removed through an approval, the
 * namespace gone, Argo CD re-creating it, *Fix the path* approved, the waits answering 200.
 *
 * Measured over every message the bot leaves in the channel, as it reads at the end (see
 * `thread-reading.ts`). Before the cards were cut down: 19 messages, 18,748 characters; the longest (the
 * trace after the namespace was gone) 8,202 characters, one 40-word sentence in it six times; each
 * approval card 26–29 lines above its buttons. After: 5,987 characters, the longest 1,254, the approval
 * cards 7 lines above their buttons, no sentence said twice within a message.
 */
import { describe, expect, it } from "vitest";
import { REPAIR_PATH_ACTION } from "../../src/slack/blocks/trace.js";
import { eventually, pause } from "../helpers/eventually.js";
import { recreateSeed } from "../sim/argo-sync.js";
import { buttonValue } from "./block-kit.js";
import {
  APPROVE,
  APPROVER,
  CHANNEL,
  REQUESTER,
  askRepair,
  askSeedRemoval,
  click,
  setup,
  slash,
} from "./edge-runtime.js";
import { channelMessages, repeatedSentences } from "./thread-reading.js";

/** The whole thread before the cards were cut down, in characters (see above). */
const BEFORE_TOTAL = 18_748;

describe("the seed incident's thread, as read", () => {
  it("the whole thread is under half of what it was, no message over 1,500 characters or saying a sentence twice, each approval card ≤ 8 lines above its buttons", async () => {
    const s = await setup("seed-incident.yaml");
    await slash(s, "ns myapp", REQUESTER, "ns");
    await s.fake.waitFor("chat.postMessage", (c) => c.body["channel"] === CHANNEL, 20_000);
    const { id, ts } = await askSeedRemoval(s);
    await click(s, APPROVE, id, APPROVER, ts);
    await eventually(
      () =>
        s.fake.thread(CHANNEL, ts).some((m) => /Waiting for the controller to re-create/.test(m.text ?? ""))
          ? true
          : undefined,
      30_000,
      "the re-check waiting",
    );
    await recreateSeed(s.world, ["myapp-worker-ingress"]);
    const offer = await eventually(
      () =>
        s.fake.thread(CHANNEL, ts).find((m) => JSON.stringify(m.blocks ?? "").includes(REPAIR_PATH_ACTION)),
      30_000,
      "the card with Fix the path",
    );
    await eventually(
      () => s.fake.thread(CHANNEL, ts).find((m) => /After the re-creation/.test(m.text ?? "")),
      10_000,
      "the orphan check after the re-creation",
    );
    const { id: rid, ts: rts } = await askRepair(
      s,
      { ts: offer.ts, value: buttonValue(offer.blocks, REPAIR_PATH_ACTION) ?? "" },
      "worker.example.com and test.example.com still name the deleted ALBs",
      "seed.repair",
    );
    const requestCard = channelMessages(s.fake, CHANNEL).find((m) => m.id === ts);
    const repairCard = channelMessages(s.fake, CHANNEL).find((m) => m.id === rts);
    await click(s, APPROVE, rid, APPROVER, rts);
    await eventually(
      () =>
        s.fake.thread(CHANNEL, rts).filter((m) => /answers 200/.test(m.text ?? "")).length >= 4
          ? true
          : undefined,
      30_000,
      "both names answering on both paths",
    );
    await pause(1_500);

    const read = channelMessages(s.fake, CHANNEL);
    const total = read.reduce((n, m) => n + m.text.length, 0);
    const sizes = read.map((m) => `${String(m.text.length)} ${m.text.slice(0, 60)}`).join("\n");
    // The flow happened: both cards, the path card, the orphans, every wait.
    expect(read.length, sizes).toBeGreaterThanOrEqual(15);
    expect(total, sizes).toBeLessThan(BEFORE_TOTAL / 2);
    for (const m of read) {
      expect(m.text.length, m.text).toBeLessThanOrEqual(1_500);
      expect([...repeatedSentences(m.text).keys()], m.text).toEqual([]);
    }
    // Each request card as its approver first saw it.
    for (const card of [requestCard, repairCard]) {
      expect(card?.linesAboveButtons, card?.text).toBeLessThanOrEqual(8);
      expect(card?.text).toMatch(/\*Changes\*: .*\n\*Why\*: .*\n\*Leaves behind\*: .*\n\*Asked by\* /);
    }
  }, 180_000);
});
