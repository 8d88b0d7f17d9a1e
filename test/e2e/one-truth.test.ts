/**
 * One truth per thing (docs/design.md), through the product's own wiring (`createRuntime`): signed
 * slash commands over HTTP, the fake Slack Web API, real Redis and BullMQ, the kube simulator.
 * A diagnosis card and a "Watching…" message are recorded when posted; once the namespace is gone,
 * the card is repainted GONE without buttons and the watch message done. One wait per namespace: a
 * second `watch` links to the running wait's thread, and only one "gone" is posted.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import type { Runtime } from "../../src/runtime.js";
import { deletePrefix, uniquePrefix } from "../helpers/redis.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import { postSigned, slashCommandBody, startFakeSlack, type FakeSlack } from "../sim/slack/index.js";
import type { SlackCall } from "../sim/slack/index.js";
import { buttonIds } from "./approval-fixture.js";
import { botEnv, startRuntime } from "./bot-env.js";
import { eventually } from "../helpers/eventually.js";

const SECRET = "e2e-signing-secret";
const TOKEN = "xoxb-e2e-one-truth";
const CHANNEL = "C0INCIDENT";

const blocksOf = (c: { body: Record<string, unknown> }): string => JSON.stringify(c.body["blocks"] ?? []);
const tsOf = (c: SlackCall): string => (c.response as { ts?: string } | undefined)?.ts ?? "";

describe("one truth per namespace: repainted when it is gone, one wait", () => {
  let sim: KubeSim;
  let fake: FakeSlack;
  let runtime: Runtime;
  let events: string;
  const prefix = uniquePrefix("e2e-truth");

  beforeAll(async () => {
    sim = await startKubeSim({
      scenario: "test/fixtures/scenarios/seed-incident.yaml",
      controllerIntervalMs: 100,
    });
    fake = await startFakeSlack({ token: TOKEN });
    const config = loadConfig(
      botEnv(
        { token: TOKEN, secret: SECRET, slackUrl: fake.url, prefix },
        { UNSTUCK_CHANNELS: CHANNEL, UNSTUCK_WAIT_INTERVAL_SECONDS: "1", UNSTUCK_CLUSTER_NAME: "prod-eks" },
      ),
    );
    ({ runtime, events } = await startRuntime(config, { kube: createKubeAdapter(sim.kubeconfig()) }));
  });

  afterAll(async () => {
    await runtime.stop();
    await deletePrefix(prefix);
    await fake.stop();
    await sim.stop();
  });

  const command = async (text: string, userId: string): Promise<void> => {
    const res = await postSigned(
      events,
      SECRET,
      slashCommandBody({
        text,
        userId,
        channelId: CHANNEL,
        responseUrl: fake.responseUrl(randomBytes(4).toString("hex")),
      }),
    );
    expect(res.status).toBe(200);
  };
  const posted = (predicate: (c: SlackCall) => boolean): SlackCall[] =>
    fake.calls().filter((c) => c.method === "chat.postMessage" && predicate(c));

  it("diagnosis card → GONE without buttons, watch → done, a second watch links to the first, one 'gone'", async () => {
    await command("ns myapp", "U0ONCALL1");
    const card = await eventually(
      () => posted((c) => c.body["thread_ts"] === undefined && blocksOf(c).includes("BLOCKED"))[0],
      20_000,
      "the diagnosis card",
    );
    const cardTs = tsOf(card);
    expect(buttonIds(card.body["blocks"]).length).toBeGreaterThan(0);

    await command("watch ns myapp", "U0ONCALL1");
    const watch = await eventually(
      () => posted((c) => blocksOf(c).includes(":eyes: Watching"))[0],
      20_000,
      "the watch message",
    );
    const watchTs = tsOf(watch);
    // Its wait reports in its thread.
    await eventually(
      () => (fake.thread(CHANNEL, watchTs).length > 0 ? true : undefined),
      20_000,
      "the wait's status",
    );

    // A second `watch` (someone else, later) joins the running wait: its message links to that thread.
    await command("watch ns myapp", "U0ONCALL2");
    const second = await eventually(
      () => posted((c) => blocksOf(c).includes(":eyes: Watching") && tsOf(c) !== watchTs)[0],
      20_000,
      "the second watch message",
    );
    const secondTs = tsOf(second);
    const link = `https://slack.com/archives/${CHANNEL}/p${watchTs.replace(".", "")}`;
    await eventually(
      () => (JSON.stringify(fake.message(CHANNEL, secondTs)?.blocks ?? []).includes(link) ? true : undefined),
      20_000,
      "the second watch message linking to the running wait",
    );
    expect(JSON.stringify(fake.message(CHANNEL, secondTs)?.blocks)).toContain("already being watched");
    expect(fake.thread(CHANNEL, secondTs)).toEqual([]);

    // The stuck Ingress lets go; the namespace controller finishes; the namespace is gone.
    const ing = sim.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress");
    if (ing === undefined) throw new Error("no seed Ingress");
    sim.store.update({ ...ing, metadata: { ...ing.metadata, finalizers: [] } });
    await eventually(
      () => (sim.store.get("v1", "Namespace", undefined, "myapp") === undefined ? true : undefined),
      20_000,
      "the namespace gone",
    );

    // The diagnosis card: GONE, no buttons, its findings kept.
    const repainted = await eventually(
      () => {
        const m = fake.message(CHANNEL, cardTs);
        return m && JSON.stringify(m.blocks ?? []).includes("myapp: GONE") ? m : undefined;
      },
      20_000,
      "the card repainted GONE",
    );
    expect(buttonIds(repainted.blocks)).toEqual([]);
    expect(repainted.text).toContain("gone");
    // The watch message, and the one that joined it: done, no buttons.
    for (const ts of [watchTs, secondTs]) {
      const m = await eventually(
        () => {
          const msg = fake.message(CHANNEL, ts);
          return msg && JSON.stringify(msg.blocks ?? []).includes("*Done*") ? msg : undefined;
        },
        20_000,
        `watch message ${ts} done`,
      );
      expect(buttonIds(m.blocks)).toEqual([]);
      expect(JSON.stringify(m.blocks)).toContain("myapp: GONE");
    }
    // Exactly one "gone", in the running wait's thread.
    const gone = (ts: string): number =>
      fake.thread(CHANNEL, ts).filter((m) => (m.text ?? "").includes("Namespace myapp is gone")).length;
    expect(gone(watchTs)).toBe(1);
    expect(gone(secondTs)).toBe(0);
    expect(gone(cardTs)).toBe(0);
  }, 60_000);
});
