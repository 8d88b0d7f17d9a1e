/**
 * The slash command's `afterPost` hook, which the runtime uses to attach an approval request to its message
 * and to start a namespace wait in a message's thread: it runs once a result is in the channel, with that
 * message's ts, and never for private answers or failed posts; its errors are logged and swallowed.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { CommandResult } from "../../commands/types.js";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import { eventuallyTrue } from "../helpers/eventually.js";
import { SEED } from "./approval-fixture.js";
import { deferred, startHarness, type Harness } from "./slack-harness.js";

const CHANNEL = "C0INCIDENT";

let sim: KubeSim | undefined;
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  await sim?.stop();
  h = undefined;
  sim = undefined;
});

type Seen = { result: CommandResult; posted: { channel: string; ts: string } };

async function setup(
  afterPost: (result: CommandResult, posted: { channel: string; ts: string }) => Promise<void>,
) {
  sim = await startKubeSim({ scenario: SEED });
  h = await startHarness({ kube: createKubeAdapter(sim.kubeconfig()), channels: [CHANNEL], afterPost });
  return h;
}

describe("afterPost", () => {
  it("runs after the result is posted, with the channel and the ts of that message", async () => {
    const seen = deferred<Seen>();
    const harness = await setup((result, posted) => {
      seen.resolve({ result, posted });
      return Promise.resolve();
    });
    await harness.command("ns myapp", { channelId: CHANNEL });
    const { result, posted } = await seen.promise;
    expect(result.type).toBe("diagnosis");
    expect(posted.channel).toBe(CHANNEL);
    const message = harness.fake.message(CHANNEL, posted.ts);
    expect(message?.text).toContain("myapp");
  });

  it("is not called for private answers or when the post fails", async () => {
    const calls: CommandResult[] = [];
    const harness = await setup((result) => {
      calls.push(result);
      return Promise.resolve();
    });
    const help = await harness.command("help", { channelId: CHANNEL });
    await harness.fake.waitForResponse((r) => r.id === help.responseId);
    harness.fake.setChannel(CHANNEL, { isMember: false });
    const failed = await harness.command("ns myapp", { channelId: CHANNEL });
    // The requester gets the answer privately with the hint; by then the listener is done.
    await harness.fake.waitForResponse((r) => r.id === failed.responseId, 20_000);
    expect(calls).toEqual([]);
  });

  it("logs and swallows its errors; the answer stays in the channel and nothing is sent to the requester", async () => {
    const thrown = deferred();
    const harness = await setup(() => {
      thrown.resolve();
      return Promise.reject(new Error("attach failed"));
    });
    const sent = await harness.command("ns myapp", { channelId: CHANNEL });
    await thrown.promise;
    await eventuallyTrue(
      () => harness.logs().includes("after-post step failed"),
      10_000,
      "the failure logged",
    );
    expect(harness.fake.calls().filter((c) => c.method === "chat.postMessage")).toHaveLength(1);
    expect(harness.fake.responses().filter((r) => r.id === sent.responseId)).toEqual([]);
  });
});
