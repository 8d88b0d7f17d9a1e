/**
 * Ask for less (docs/design.md): a wait check asks only what it needs. Each check of a "namespace
 * gone" wait is one GET of the namespace; the blockers are described (a whole diagnosis) on the first
 * check and again only when the namespace's own status says what remains has changed — against the
 * simulated API server, through the real adapter, counted in the server's request log.
 */
import type { Worker } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import { createQueues, type Queues } from "../../../src/jobs/queues.js";
import { enqueueNamespaceGone, type ThreadReporter } from "../../../src/jobs/waits.js";
import { createWaitsWorker } from "../../../src/jobs/workers.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { eventually } from "../../helpers/eventually.js";
import { connect, deleteKeys, uniquePrefix } from "../../helpers/redis.js";
import { testWaitSeal, testWaits } from "../../helpers/keys.js";

const NS = "waiting";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function world(): Promise<KubeSim> {
  const sim = await startKubeSim({ controllerIntervalMs: 50 });
  cleanups.push(() => sim.stop());
  sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  for (const name of ["a", "b"]) {
    sim.store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace: NS, finalizers: ["example.com/hold"] },
    });
  }
  sim.store.delete("v1", "Namespace", undefined, NS);
  await sim.reconcileNow();
  return sim;
}

function dropFinalizer(sim: KubeSim, name: string): void {
  const cm = sim.store.get("v1", "ConfigMap", NS, name);
  if (cm === undefined) throw new Error(`no ConfigMap ${name}`);
  sim.store.update({ ...cm, metadata: { ...cm.metadata, finalizers: [] } });
}

describe("namespace-gone wait reads", () => {
  it("checks with one GET of the namespace and describes blockers only when what remains changed", async () => {
    const sim = await world();
    const kube = createKubeAdapter(sim.kubeconfig());
    let descriptions = 0;
    const prefix = uniquePrefix("wait-reads");
    const redis = connect();
    const queues: Queues = createQueues({ connection: redis, prefix });
    /** The status message's versions: the post, then every edit. */
    const texts: string[] = [];
    const reporter: ThreadReporter = {
      post: (_channel, _threadTs, text) => {
        texts.push(text);
        return Promise.resolve({ ts: "1700000000.000001" });
      },
      update: (_channel, _ts, text) => {
        texts.push(text);
        return Promise.resolve();
      },
    };
    const worker: Worker = createWaitsWorker(
      { connection: redis, prefix, concurrency: 1 },
      {
        seal: testWaitSeal(),
        kube,
        reporter,
        describeBlockers: async (ns) => {
          descriptions += 1;
          return (await diagnoseNamespace(kube, ns, { now: () => new Date() })).blockers.map(
            (b) => `${b.kind} ${b.namespace}/${b.name} (${b.finalizers.join(", ")})`,
          );
        },
        now: () => new Date(),
      },
    );
    cleanups.push(async () => {
      await worker.close();
      await queues.close();
      await deleteKeys(redis, prefix);
      await redis.quit();
    });

    await enqueueNamespaceGone(
      testWaits(queues.waits),
      {
        cluster: "sim",
        namespace: NS,
        channel: "COPS",
        threadTs: "1699999999.000100",
        timeoutMs: 60_000,
        intervalMs: 30,
      },
      new Date(),
    );
    await eventually(() => (texts.length >= 1 ? true : undefined), 10_000, "first check");
    expect(texts[0]).toContain("2 blockers left");
    expect(descriptions).toBe(1);

    // Later checks while nothing changes: one namespace GET each, no description.
    sim.resetRequests();
    const before = texts.length;
    await eventually(() => (texts.length >= before + 8 ? true : undefined), 10_000, "eight more checks");
    const checked = texts.length - before;
    expect(descriptions).toBe(1);
    const requests = sim.requests();
    const nsGets = requests.filter((r) => r.method === "GET" && r.path === `/api/v1/namespaces/${NS}`);
    // Only namespace GETs reached the server (a check may be in flight at either end).
    expect(requests.filter((r) => r.path !== `/api/v1/namespaces/${NS}`)).toEqual([]);
    expect(Math.abs(nsGets.length - checked)).toBeLessThanOrEqual(1);
    expect(texts.at(-1)).toContain("2 blockers left");

    // One blocker goes: the namespace's conditions change, the next check describes again.
    dropFinalizer(sim, "a");
    await eventually(
      () => (texts.at(-1)?.includes("1 blocker left: ConfigMap waiting/b") ? true : undefined),
      10_000,
      "the report to follow the change",
    );
    expect(descriptions).toBe(2);

    dropFinalizer(sim, "b");
    await eventually(() => (texts.at(-1)?.includes(`Namespace ${NS} is gone`) ? true : undefined), 10_000);
    // At most one more: the controller may report "no content left" before the namespace goes.
    expect(descriptions).toBeLessThanOrEqual(3);
  });
});
