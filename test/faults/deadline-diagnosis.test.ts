/**
 * Deadlines on the read path: an API server that accepts requests and never answers them. Each
 * request has its own timeout (a coded error, never retried blindly), and a diagnosis has an
 * overall deadline after which it returns what it has, marked partial, naming what did not answer.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { diagnoseNamespace } from "../../src/diagnosis/diagnose.js";
import { ErrorCode, UnstuckError } from "../../src/errors.js";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";

const SEED = "test/fixtures/scenarios/seed-incident.yaml";
const INGRESSES = "/apis/networking.k8s.io/v1/namespaces/myapp/ingresses";

describe("diagnosis against a hanging API server", () => {
  let sim: KubeSim;

  beforeAll(async () => {
    sim = await startKubeSim({ scenario: SEED, controllerIntervalMs: 100 });
  });
  afterAll(async () => {
    await sim.stop();
  });
  afterEach(() => sim.setFaults({}));

  it("returns within its deadline, marked partial, naming the list that hung", async () => {
    // Per-request timeout far beyond the deadline: only the diagnosis deadline can end this.
    const kube = createKubeAdapter(sim.kubeconfig(), { maxAttempts: 1, requestTimeoutMs: 60_000 });
    const healthy = await diagnoseNamespace(kube, "myapp", { now: () => new Date() });
    expect(healthy.blockers.map((b) => b.name)).toContain("myapp-worker-ingress");

    sim.setFaults({ hang: { pathPrefix: INGRESSES } });
    const deadlineMs = 1500;
    const started = Date.now();
    const d = await diagnoseNamespace(kube, "myapp", { now: () => new Date(), deadlineMs });
    const elapsed = Date.now() - started;

    expect(elapsed).toBeGreaterThanOrEqual(deadlineMs - 50);
    expect(elapsed).toBeLessThan(deadlineMs + 2000);
    // The namespace itself was read; the hung list is named, not silently treated as empty.
    expect(d.phase).toBe("Terminating");
    const partial = d.warnings.find((w) => w.startsWith("Partial result"));
    expect(partial).toBeDefined();
    expect(partial).toContain("list ingresses.networking.k8s.io in myapp");
    // What answered before the deadline is not named with what did not.
    expect(partial).not.toContain("get namespace myapp");
    expect(partial).not.toContain("API discovery");
    expect(partial).not.toContain("list configmaps");
    expect(d.warnings.some((w) => w.includes("Could not list") && w.includes("ingresses"))).toBe(true);
    expect(d.blockers.map((b) => b.name)).not.toContain("myapp-worker-ingress");
  });

  it("a hanging request times out on its own as a coded, named error that becomes a warning", async () => {
    const kube = createKubeAdapter(sim.kubeconfig(), { maxAttempts: 4, requestTimeoutMs: 400 });
    sim.setFaults({ hang: { pathPrefix: INGRESSES } });
    const started = Date.now();
    const err = await kube
      .listObjects(
        {
          group: "networking.k8s.io",
          version: "v1",
          apiVersion: "networking.k8s.io/v1",
          kind: "Ingress",
          resource: "ingresses",
          namespaced: true,
          verbs: ["list"],
        },
        "myapp",
      )
      .catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect(err).toBeInstanceOf(UnstuckError);
    const e = err as UnstuckError;
    expect(e.code).toBe(ErrorCode.Upstream);
    expect(e.details.timedOut).toBe(true);
    expect(e.message).toContain("did not answer in time");
    expect(e.message).toContain("ingresses.networking.k8s.io");
    // One attempt only: after a timeout the outcome of a request is unknown, so it is not repeated.
    // (a second attempt alone would take another 400 ms plus its backoff)
    expect(elapsed).toBeLessThan(850);

    const d = await diagnoseNamespace(kube, "myapp", { now: () => new Date(), deadlineMs: 10_000 });
    expect(d.warnings.some((w) => w.includes("ingresses") && w.includes("did not answer in time"))).toBe(
      true,
    );
    // Cut by the request timeout, not by the diagnosis deadline.
    expect(d.warnings.some((w) => w.startsWith("Partial result: the diagnosis deadline"))).toBe(false);
  });

  it("a whole API server that hangs ends the diagnosis with an error within the deadline", async () => {
    const kube = createKubeAdapter(sim.kubeconfig(), { maxAttempts: 1, requestTimeoutMs: 60_000 });
    sim.setFaults({ hang: {} });
    const started = Date.now();
    const err = await diagnoseNamespace(kube, "myapp", { now: () => new Date(), deadlineMs: 800 }).catch(
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeLessThan(800 + 2000);
    expect(err).toBeInstanceOf(UnstuckError);
    expect((err as UnstuckError).message).toContain("get namespace myapp");
  });
});
