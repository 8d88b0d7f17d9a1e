/**
 * The finalizer PATCH is never retried blindly. Against the Kubernetes simulator's "lost response" fault (the
 * write is applied, then the answer is a 500 or a dropped connection) and its "500 before apply" variant, the
 * executor re-reads the object and decides: finalizer gone → DONE, confirmed by re-read, after exactly one
 * effective change; unchanged → the same patch again; changed otherwise → STALE.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { KubePort } from "../../src/kube/port.js";
import { eventually } from "../helpers/eventually.js";
import {
  APPROVE,
  BOB,
  CHANNEL,
  INGRESS_PATH,
  startFixture,
  WORKER_INGRESS,
  type Fixture,
  type FixtureOptions,
} from "../e2e/approval-fixture.js";

const FINALIZER = "ingress.k8s.aws/resources";

const fixtures: Fixture[] = [];
afterEach(async () => {
  while (fixtures.length > 0) await fixtures.pop()?.stop();
});

async function setup(options: FixtureOptions = {}): Promise<Fixture> {
  const f = await startFixture(options);
  fixtures.push(f);
  return f;
}

function ingress(f: Fixture) {
  return f.sim.store.get(
    WORKER_INGRESS.apiVersion,
    WORKER_INGRESS.kind,
    WORKER_INGRESS.namespace,
    WORKER_INGRESS.name,
  );
}

async function approveAndSettle(f: Fixture) {
  const { request, ts } = await f.postRequest();
  await f.click(APPROVE, request.id, BOB, ts);
  return { final: await f.settled(request.id, ["DONE", "FAILED", "STALE"], 20_000), ts };
}

async function executionEvents(f: Fixture, id: string): Promise<string[]> {
  return (await f.audit.forRequest(id)).map((e) => e.event).filter((e) => e.startsWith("execution."));
}

describe("an ambiguous PATCH failure is resolved by re-reading the object", () => {
  for (const mode of ["500", "reset"] as const) {
    it(`lost response after apply (${mode}): DONE, confirmed by re-read, exactly one effective change`, async () => {
      const f = await setup();
      f.sim.setFaults({ lostResponse: { pathPrefix: INGRESS_PATH, mode } });
      const { final, ts } = await approveAndSettle(f);
      expect(final.state).toBe("DONE");
      expect(final.result?.message).toMatch(/confirmed by re-read/);
      // One PATCH reached the simulator, and the adapter did not send it again.
      const patches = f.patches();
      expect(patches).toHaveLength(1);
      expect(patches[0]?.status).toBe(mode === "500" ? 500 : 0);
      // The finalizer is gone (the last one: the namespace controller may already have deleted the object).
      expect(ingress(f)?.metadata?.finalizers ?? []).not.toContain(FINALIZER);
      const events = await executionEvents(f, final.id);
      expect(events.filter((e) => e === "execution.done")).toHaveLength(1);
      expect(events).not.toContain("execution.failed");
      expect(events).not.toContain("execution.stale");
      await eventually(
        () =>
          f.h.fake.thread(CHANNEL, ts).some((m) => /confirmed by re-read/.test(m.text ?? ""))
            ? true
            : undefined,
        10_000,
        "the outcome in the thread",
      );
    });
  }

  it("a 500 whose write was not applied: the object is unchanged, so the same patch is sent again → DONE", async () => {
    const f = await setup();
    f.sim.setFaults({ lostResponse: { pathPrefix: INGRESS_PATH, apply: false } });
    const { final } = await approveAndSettle(f);
    expect(final.state).toBe("DONE");
    expect(final.result?.message).toMatch(/^Removed \[ingress\.k8s\.aws\/resources\]/);
    expect(f.patches().map((p) => p.status)).toEqual([500, 200]);
    expect(ingress(f)?.metadata?.finalizers ?? []).not.toContain(FINALIZER);
  });

  it("a 500 after which the object changed otherwise: STALE, nothing removed", async () => {
    const running: { f?: Fixture } = {};
    // Someone else edits the Ingress (a label: finalizers cannot be added while it is deleted) while the
    // PATCH's answer is in doubt.
    const racing = (kube: KubePort): KubePort => ({
      ...kube,
      removeFinalizers: async (...args) => {
        try {
          return await kube.removeFinalizers(...args);
        } catch (err) {
          const f = running.f;
          const current = f && ingress(f);
          const sim = f?.sim;
          if (sim && current) {
            sim.store.update({
              ...current,
              metadata: {
                ...current.metadata,
                labels: { ...current.metadata?.labels, edited: "by-someone-else" },
              },
            });
          }
          throw err;
        }
      },
    });
    const f = await setup({ executorKube: racing });
    running.f = f;
    f.sim.setFaults({ lostResponse: { pathPrefix: INGRESS_PATH, apply: false } });
    const { final } = await approveAndSettle(f);
    expect(final.state).toBe("STALE");
    expect(final.result?.message).toMatch(/had changed/);
    expect(f.patches()).toHaveLength(1);
    expect(ingress(f)?.metadata?.finalizers).toEqual([FINALIZER]);
    expect(ingress(f)?.metadata?.labels?.["edited"]).toBe("by-someone-else");
  });

  it("a PATCH that keeps failing is retried a bounded number of times and ends FAILED, nothing applied", async () => {
    const f = await setup();
    f.sim.setFaults({ lostResponse: { pathPrefix: INGRESS_PATH, apply: false, count: 1000 } });
    const { final } = await approveAndSettle(f);
    expect(final.state).toBe("FAILED");
    // 3 patches per job attempt, 2 job attempts (the fixture's queue setting).
    expect(f.patches().length).toBeLessThanOrEqual(6);
    expect(f.patches().every((p) => p.status === 500)).toBe(true);
    expect(ingress(f)?.metadata?.finalizers).toEqual([FINALIZER]);
  });
});
