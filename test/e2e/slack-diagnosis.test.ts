/**
 * The incident, end to end: `/unstuck ns myapp`, signed, over HTTP, diagnosed by the real Kubernetes adapter
 * against the API-server simulator loaded with the seed incident, and posted into the channel where it was asked.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import { startKubeSim } from "../sim/kube/index.js";
import { diagnoseNamespace } from "../../src/diagnosis/diagnose.js";
import { DiagnosisActionId } from "../../src/slack/blocks/diagnosis.js";
import { registerDiagnosisActions } from "../../src/slack/diagnosis-actions.js";
import { lintMessage } from "../sim/slack/block-kit-lint.js";
import { messageText, startHarness, type Harness } from "./slack-harness.js";

const CHANNEL = "C0INCIDENT";
const SCENARIO = "test/fixtures/scenarios/seed-incident.yaml";

describe("/unstuck ns myapp against the seed incident", () => {
  let sim: Awaited<ReturnType<typeof startKubeSim>>;
  let h: Harness;

  beforeAll(async () => {
    sim = await startKubeSim({ scenario: SCENARIO });
    const kube = createKubeAdapter(sim.kubeconfig());
    h = await startHarness({ kube, channels: [CHANNEL] });
    registerDiagnosisActions(h.slack, {
      command: "/unstuck",
      diagnose: (ns) => diagnoseNamespace(kube, ns, { now: () => new Date() }),
    });
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
    // The notification text says what is wrong: verdict and cause.
    expect(post.body["text"]).toMatch(
      /^Namespace myapp: BLOCKED .*Ingress myapp\/myapp-worker-ingress keeps its finalizer ingress\.k8s\.aws\/resources/,
    );
    expect(messageText(post.body)).toContain("myapp");

    // Both controllers, each by name, are in the Details reply (the card keeps to verdict, cause, action).
    const details = findButtons(blocks as unknown[]).find((b) => b.action_id === DiagnosisActionId.Details);
    expect(details).toBeDefined();
    const click = await h.action({
      actionId: DiagnosisActionId.Details,
      ...(details?.value !== undefined ? { value: details.value } : {}),
      channelId: CHANNEL,
      userId: "U0ONCALL2",
      blocks: blocks as unknown[],
    });
    expect(click.status).toBe(200);
    const reply = await h.fake.waitFor(
      "chat.postMessage",
      (c) => c.body["channel"] === CHANNEL && c.body["thread_ts"] !== undefined,
      20_000,
    );
    const detailText = JSON.stringify(reply.body["blocks"]);
    // The plain one must appear on its own, not only inside the prefixed one.
    expect(detailText).toMatch(/(?<!myapp-)aws-load-balancer-controller/);
    expect(detailText).toContain("myapp-aws-load-balancer-controller");
    expect(detailText).toContain("Next steps");

    // A read is answered in the channel only; the requester gets no duplicate.
    expect(h.fake.responses().filter((r) => r.id === sent.responseId)).toEqual([]);
    expect(h.kubeCalls()).toContain("getNamespace");
    expect(h.kubeCalls()).not.toContain("removeFinalizers");
  });

  it("a namespace that does not exist (a typo) is answered to the requester only, not the channel", async () => {
    const before = h.fake.calls().filter((c) => c.method === "chat.postMessage").length;
    const sent = await h.command("ns myap", { channelId: CHANNEL });
    expect(sent.status).toBe(200);
    const reply = await h.fake.waitForResponse((r) => r.id === sent.responseId, 20_000);
    expect(reply.body["response_type"]).toBe("ephemeral");
    expect(JSON.stringify(reply.body)).toContain("myap");
    expect(h.fake.calls().filter((c) => c.method === "chat.postMessage").length).toBe(before);
  });

  it("acks a click on the message's own button at once and changes nothing in the cluster by itself", async () => {
    const post = await h.fake.waitFor("chat.postMessage", (c) => c.body["channel"] === CHANNEL, 20_000);
    const blocks = post.body["blocks"] as unknown[];
    const buttons = findButtons(blocks);
    expect(buttons.length).toBeGreaterThan(0);
    const button = buttons[0]!;

    const click = await h.action({
      actionId: button.action_id,
      ...(button.value !== undefined ? { value: button.value } : {}),
      channelId: CHANNEL,
      userId: "U0ONCALL2",
      blocks,
    });
    expect(click.status).toBe(200);
    expect(click.elapsedMs).toBeLessThan(3_000);
    // A later request being answered is the barrier: by then the click has been handled.
    const barrier = await h.command("help", { channelId: CHANNEL });
    await h.fake.waitForResponse((r) => r.id === barrier.responseId);
    // A click is at most a request for approval; only an approved job may remove a finalizer.
    expect(h.kubeCalls()).not.toContain("removeFinalizers");
  });

  it("summarises a namespace of 1,200 objects with finalizers in the card and its Details, within Block Kit's limits", async () => {
    // A big result: three pages of ConfigMaps, each held by a finalizer, in a Terminating namespace.
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "bigns" } });
    for (let i = 0; i < 1200; i++)
      sim.store.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `cm-${String(i)}`, namespace: "bigns", finalizers: ["example.com/hold"] },
      });
    sim.store.delete("v1", "Namespace", undefined, "bigns");
    await sim.reconcileNow();

    const sent = await h.command("ns bigns", { channelId: CHANNEL });
    expect(sent.status).toBe(200);
    const post = await h.fake.waitFor(
      "chat.postMessage",
      (c) => c.body["channel"] === CHANNEL && JSON.stringify(c.body["blocks"]).includes("bigns"),
      60_000,
    );
    const blocks = post.body["blocks"] as unknown[];
    expect(lintMessage({ blocks }).filter((p) => p.severity === "error")).toEqual([]);
    expect(JSON.stringify(blocks)).toContain("1,200 objects remain (configmaps 1,200)");

    const details = findButtons(blocks).find((b) => b.action_id === DiagnosisActionId.Details);
    expect(details).toBeDefined();
    const click = await h.action({
      actionId: DiagnosisActionId.Details,
      ...(details?.value !== undefined ? { value: details.value } : {}),
      channelId: CHANNEL,
      userId: "U0ONCALL2",
      blocks,
    });
    expect(click.status).toBe(200);
    const reply = await h.fake.waitFor(
      "chat.postMessage",
      (c) =>
        c.body["channel"] === CHANNEL &&
        c.body["thread_ts"] !== undefined &&
        JSON.stringify(c.body["blocks"]).includes("bigns"),
      60_000,
    );
    const replyBlocks = reply.body["blocks"] as unknown[];
    expect(replyBlocks.length).toBeLessThanOrEqual(50);
    expect(lintMessage({ blocks: replyBlocks }).filter((p) => p.severity === "error")).toEqual([]);
    const text = JSON.stringify(replyBlocks);
    expect(text).toContain("*1,200 objects with finalizers*");
    expect(text).toContain("_by type:_ configmaps 1,200");
    expect(text).toContain("_by finalizer:_ example.com/hold 1,200");
    expect(text.match(/finalizers: `example.com\/hold`/g)).toHaveLength(20);
    expect(text).toContain("…and 1,180 more objects with finalizers");
    expect(text).toContain("ns bigns --all");
  });
});

/** Every button in a Block Kit message (actions blocks and section accessories). */
function findButtons(blocks: unknown[]): { action_id: string; value?: string }[] {
  const found: { action_id: string; value?: string }[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (typeof node !== "object" || node === null) return;
    const element = node as Record<string, unknown>;
    if (element["type"] === "button" && typeof element["action_id"] === "string") {
      found.push({
        action_id: element["action_id"],
        ...(typeof element["value"] === "string" ? { value: element["value"] } : {}),
      });
    }
    Object.values(element).forEach(visit);
  };
  visit(blocks);
  return found;
}
