/**
 * Fifty signed approve clicks at once from several approvers: one vote wins, one execution job runs, and
 * exactly one PATCH reaches the API server. Everyone else is told why their click did nothing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { eventuallyTrue } from "../helpers/eventually.js";
import { APPROVE, BOB, CAROL, CHANNEL, DAVE, startFixture, type Fixture } from "./approval-fixture.js";

let fixture: Fixture | undefined;
afterEach(async () => {
  await fixture?.stop();
  fixture = undefined;
});

describe("approval race", () => {
  it("50 concurrent approve clicks from three approvers → one vote, one PATCH, finalizer gone, DONE", async () => {
    const f = await startFixture();
    fixture = f;
    const { request, ts } = await f.postRequest();
    const approvers = [BOB, CAROL, DAVE];

    const clicks = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        f.click(APPROVE, request.id, approvers[i % approvers.length]!, ts),
      ),
    );
    expect(clicks.every((c) => c.status === 200)).toBe(true);

    const done = await f.settled(request.id);
    expect(done.state).toBe("DONE");
    expect(done.votes).toHaveLength(1);
    expect(done.executionAttempts).toBe(1);
    expect(f.patches()).toHaveLength(1);
    expect(f.patches()[0]?.status).toBeLessThan(300);
    const ingress = f.sim.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress");
    expect(ingress?.metadata?.finalizers ?? []).not.toContain("ingress.k8s.aws/resources");

    // Every losing click got an ephemeral answer; waiting for all 49 also proves all 50 were handled.
    const ids = new Set(clicks.map((c) => c.responseId));
    await eventuallyTrue(
      () => f.h.fake.responses().filter((r) => ids.has(r.id)).length >= 49,
      15_000,
      "every losing click answered",
    );
    const answers = f.h.fake.responses().filter((r) => ids.has(r.id));
    expect(answers).toHaveLength(49);
    expect(answers.every((a) => a.body["response_type"] === "ephemeral")).toBe(true);
    expect(f.patches()).toHaveLength(1);

    // The message ends showing DONE (never painted back to APPROVED by a slower notification).
    await eventuallyTrue(() => (f.message(ts).text ?? "").includes("[DONE]"), 10_000, "the message DONE", {
      state: () => `message: ${f.message(ts).text ?? ""}`,
    });
    const audit = await f.audit.forRequest(request.id);
    expect(audit.filter((e) => e.event === "vote.approve")).toHaveLength(1);
    expect(f.h.fake.thread(CHANNEL, ts).filter((m) => m.text?.includes("approved") === true)).toHaveLength(1);
  });
});
