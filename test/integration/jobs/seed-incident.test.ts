/**
 * The seed incident's recovery step end to end, against the Kubernetes API simulator through the
 * real client-node adapter: request → second-person approval → one guarded JSON patch → the
 * Ingress goes, the namespace controller finishes, and the "namespace gone" wait reports it.
 */
import { finalizerRemoval } from "../../../src/requests/model.js";
import type { Worker } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../../src/kube/port.js";
import { createQueues, executionEnqueuer } from "../../../src/jobs/queues.js";
import { enqueueNamespaceGone, type ThreadReporter } from "../../../src/jobs/waits.js";
import { createActionsWorker, createWaitsWorker } from "../../../src/jobs/workers.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { INGRESS } from "../approvals/helpers/fake-kube.js";
import { bob, createHarness, requestRemoval, type Harness } from "../approvals/helpers/harness.js";
import { eventually } from "../../helpers/eventually.js";
import { requestSettled } from "../../helpers/requests.js";
import { connect, uniquePrefix } from "../../helpers/redis.js";
import { testWaitSeal, testWaits } from "../../helpers/keys.js";

const SEED = "test/fixtures/scenarios/seed-incident.yaml";
const INGRESS_PATH = "/apis/networking.k8s.io/v1/namespaces/myapp/ingresses/myapp-worker-ingress";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function setup() {
  const sim: KubeSim = await startKubeSim({ scenario: SEED, controllerIntervalMs: 50 });
  const kube = createKubeAdapter(sim.kubeconfig());
  const prefix = uniquePrefix("seed");
  const bull = connect();
  const queues = createQueues({ connection: bull, prefix: `${prefix}:bull` });
  const h: Harness = createHarness({ prefix, kube, enqueue: executionEnqueuer(queues.actions) });
  const workers: Worker[] = [];
  cleanups.push(async () => {
    await Promise.all(workers.map((w) => w.close()));
    await queues.close();
    await bull.quit();
    await h.close();
    await sim.stop();
  });
  const startActions = (port: KubePort = kube) => {
    workers.push(
      createActionsWorker(
        { connection: bull, prefix: `${prefix}:bull` },
        {
          store: h.store,
          signer: h.signer,
          policy: h.policy,
          kube: port,
          audit: h.audit,
          now: () => new Date(),
          notifier: h.notifier,
        },
      ),
    );
  };
  const patches = () => sim.requests().filter((r) => r.method === "PATCH" && r.path === INGRESS_PATH);
  const settled = (id: string) => requestSettled(h.store, id);
  return { sim, kube, h, queues, bull, prefix, workers, startActions, patches, settled };
}

describe("seed incident: forced finalizer removal with two-person approval", () => {
  it("removes ingress.k8s.aws/resources once; the Ingress and then the namespace go away", async () => {
    const s = await setup();
    const texts: string[] = [];
    const reporter: ThreadReporter = {
      post: (_c, _t, text) => {
        texts.push(text);
        return Promise.resolve({ ts: "1700000000.000200" });
      },
      update: (_c, _ts, text) => {
        texts.push(text);
        return Promise.resolve();
      },
    };
    s.workers.push(
      createWaitsWorker(
        { connection: s.bull, prefix: `${s.prefix}:bull` },
        {
          seal: testWaitSeal(),
          kube: s.kube,
          reporter,
          now: () => new Date(),
          describeBlockers: async (ns) =>
            (await s.kube.listObjects(INGRESS, ns))
              .filter((o) => o.finalizers.length > 0)
              .map((o) => `Ingress ${ns}/${o.name} (${o.finalizers.join(", ")})`),
        },
      ),
    );
    s.startActions();

    const req = await requestRemoval(s.h, undefined, { finalizer: "ingress.k8s.aws/resources" });
    expect(finalizerRemoval(req.action).precondition.finalizers).toEqual(["ingress.k8s.aws/resources"]);
    await enqueueNamespaceGone(
      testWaits(s.queues.waits),
      {
        cluster: "prod-eks",
        namespace: "myapp",
        channel: "COPS",
        threadTs: "1700000000.000100",
        timeoutMs: 30_000,
        intervalMs: 100,
      },
      new Date(),
    );
    await eventually(() => (texts.length > 0 ? true : undefined));
    expect(texts[0]).toContain(
      "still Terminating, 1 blocker left: Ingress myapp/myapp-worker-ingress (ingress.k8s.aws/resources)",
    );

    await s.h.workflow.vote(req.id, bob, "approve");
    const done = await s.settled(req.id);
    expect(done.state).toBe("DONE");
    expect(s.patches()).toHaveLength(1);
    expect(
      s.sim.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress"),
    ).toBeUndefined();

    const last = await eventually(() => (texts.at(-1)?.startsWith("✅") ? texts.at(-1) : undefined), 15_000);
    expect(last).toContain("Namespace myapp is gone");
    expect(s.sim.store.get("v1", "Namespace", undefined, "myapp")).toBeUndefined();
  });

  it("an edit after approval (new resourceVersion) makes it STALE and sends no patch", async () => {
    const s = await setup();
    const req = await requestRemoval(s.h, undefined, { finalizer: "ingress.k8s.aws/resources" });
    await s.h.workflow.vote(req.id, bob, "approve");
    // Argo CD re-syncs a label meanwhile: the object is no longer the one that was approved.
    const cur = s.sim.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress")!;
    const edited = s.sim.store.update({
      ...cur,
      metadata: { ...cur.metadata, labels: { ...(cur.metadata?.labels ?? {}), resynced: "true" } },
    });
    s.startActions();
    const done = await s.settled(req.id);
    expect(done.state).toBe("STALE");
    expect(done.result?.message).toContain(
      `resourceVersion ${finalizerRemoval(req.action).precondition.resourceVersion} → ${edited.metadata?.resourceVersion ?? "?"}`,
    );
    expect(s.patches()).toHaveLength(0);
    expect(
      s.sim.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress")?.metadata
        ?.finalizers,
    ).toEqual(["ingress.k8s.aws/resources"]);
  });

  it("a change between the check and the patch is refused by the API server's test op → STALE", async () => {
    const s = await setup();
    const req = await requestRemoval(s.h, undefined, { finalizer: "ingress.k8s.aws/resources" });
    await s.h.workflow.vote(req.id, bob, "approve");
    const racing: KubePort = {
      ...s.kube,
      getObject: async (type, ns, name) => {
        const obj = await s.kube.getObject(type, ns, name);
        const cur = s.sim.store.get("networking.k8s.io/v1", "Ingress", ns, name)!;
        s.sim.store.update({ ...cur, metadata: { ...cur.metadata, annotations: { touched: "yes" } } });
        return obj;
      },
    };
    s.startActions(racing);
    const done = await s.settled(req.id);
    expect(done.state).toBe("STALE");
    expect(done.result?.message).toContain("between the check and the patch");
    const sent = s.patches();
    expect(sent).toHaveLength(1);
    expect(sent[0]?.status).toBe(422);
    expect(
      s.sim.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress")?.metadata
        ?.finalizers,
    ).toEqual(["ingress.k8s.aws/resources"]);
  });
});
