/**
 * The incident, end to end: `/unstuck ns myapp`, signed, over HTTP, diagnosed by the real Kubernetes adapter
 * against the API-server simulator loaded with the seed incident, and posted into the channel where it was asked.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import { startKubeSim } from "../sim/kube/index.js";
import { messageText, startHarness, type Harness } from "./slack-harness.js";

const CHANNEL = "C0INCIDENT";
const SCENARIO = "test/fixtures/scenarios/seed-incident.yaml";

describe("/unstuck ns myapp against the seed incident", () => {
  let sim: Awaited<ReturnType<typeof startKubeSim>>;
  let h: Harness;

  beforeAll(async () => {
    sim = await startKubeSim({ scenario: SCENARIO });
    h = await startHarness({ kube: createKubeAdapter(sim.kubeconfig()), channels: [CHANNEL] });
  });
  afterAll(async () => {
    await h.stop();
    await sim.stop();
  });

  it("acks at once, then posts the blocking Ingress, its finalizer and both controllers into the channel", async () => {
    const sent = await h.command("ns myapp", { channelId: CHANNEL });
    expect(sent.status).toBe(200);
    expect(sent.text).toBe("");
    expect(sent.elapsedMs).toBeLessThan(3_000);

    const post = await h.fake.waitFor("chat.postMessage", (c) => c.body["channel"] === CHANNEL, 20_000);
    const blocks = post.body["blocks"];
    expect(Array.isArray(blocks)).toBe(true);
    const text = JSON.stringify(blocks);
    expect(text).toContain("myapp-worker-ingress");
    expect(text).toContain("ingress.k8s.aws/resources");
    // Both controllers, each by name: the plain one must appear on its own, not only inside the prefixed one.
    expect(text).toMatch(/(?<!myapp-)aws-load-balancer-controller/);
    expect(text).toContain("myapp-aws-load-balancer-controller");
    expect(typeof post.body["text"]).toBe("string");
    expect(messageText(post.body)).toContain("myapp");

    // A read is answered in the channel only; the requester gets no duplicate.
    expect(h.fake.responses().filter((r) => r.id === sent.responseId)).toEqual([]);
    expect(h.kubeCalls()).toContain("getNamespace");
    expect(h.kubeCalls()).not.toContain("removeFinalizers");
  });
});
