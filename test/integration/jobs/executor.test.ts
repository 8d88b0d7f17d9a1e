import { randomUUID } from "node:crypto";
import type { Job, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { executeApproved, type ExecutionOutcome } from "../../../src/actions/execute.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import type { KubePort } from "../../../src/kube/port.js";
import {
  createQueues,
  executionEnqueuer,
  executionJobId,
  legacyExecutionJobId,
  scheduleApprovalSweep,
  type Queues,
} from "../../../src/jobs/queues.js";
import { createActionsWorker, type ActionsWorkerExtras } from "../../../src/jobs/workers.js";
import type { ExecutionJobData } from "../../../src/jobs/queues.js";
import { INGRESS } from "../approvals/helpers/fake-kube.js";
import {
  alice,
  bob,
  carol,
  createHarness,
  dave,
  requestRemoval,
  seedIngress,
  type Harness,
} from "../approvals/helpers/harness.js";
import { eventually } from "../../helpers/eventually.js";
import { requestSettled } from "../../helpers/requests.js";
import { actionsExecuted } from "../../../src/ops/metrics.js";
import { connect, uniquePrefix } from "../../helpers/redis.js";

interface Rig {
  h: Harness;
  queues: Queues;
  bullConnection: Redis;
  startWorker(
    kube?: KubePort,
    extras?: ActionsWorkerExtras,
  ): Worker<ExecutionJobData, ExecutionOutcome | null>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function rig(options: { approvalsRequired?: number; attempts?: number; failEnqueues?: number } = {}): Rig {
  const prefix = uniquePrefix("jobs");
  const bullConnection = connect();
  const queues = createQueues({ connection: bullConnection, prefix: `${prefix}:bull` });
  const enqueue = executionEnqueuer(queues.actions, { attempts: options.attempts ?? 3, backoffMs: 20 });
  let failing = options.failEnqueues ?? 0;
  const h = createHarness({
    prefix,
    approvalsRequired: options.approvalsRequired ?? 1,
    enqueue: async (request) => {
      if (failing > 0) {
        failing -= 1;
        throw new Error("READONLY You can't write against a read only replica.");
      }
      await enqueue(request);
    },
  });
  const workers: Worker[] = [];
  cleanups.push(async () => {
    await Promise.all(workers.map((w) => w.close()));
    await queues.close();
    await bullConnection.quit();
    await h.close();
  });
  return {
    h,
    queues,
    bullConnection,
    startWorker(kube?: KubePort, extras?: ActionsWorkerExtras) {
      const worker = createActionsWorker(
        { connection: bullConnection, prefix: `${prefix}:bull` },
        {
          store: h.store,
          signer: h.signer,
          policy: h.policy,
          kube: kube ?? h.fake,
          audit: h.audit,
          now: () => new Date(),
          notifier: h.notifier,
        },
        extras,
      );
      workers.push(worker);
      return worker;
    },
  };
}

async function failedJob(r: Rig, id: string): Promise<Job> {
  return eventually(
    async () => {
      const job = await r.queues.actions.getJob(executionJobId(id));
      return job && (await job.isFailed()) ? job : undefined;
    },
    15_000,
    "the job to fail",
  );
}

describe("execution of approved requests", () => {
  it("applies the approved patch once and records DONE", async () => {
    const r = rig();
    r.startWorker();
    seedIngress(r.h, ["ingress.k8s.aws/resources", "example.com/keep"]);
    const req = await requestRemoval(r.h, alice, { finalizer: "ingress.k8s.aws/resources" });
    await r.h.workflow.vote(req.id, bob, "approve");
    const done = await requestSettled(r.h.store, req.id);
    expect(done.state).toBe("DONE");
    expect(done.result?.finalizersAfter).toEqual(["example.com/keep"]);
    expect(r.h.fake.applied).toHaveLength(1);
    // The write names the request it carries out (field manager and User-Agent, in the adapter).
    expect(r.h.fake.applied[0]?.requestId).toBe(req.id);
    expect(r.h.fake.peek(INGRESS, "myapp", "myapp-worker-ingress")?.finalizers).toEqual(["example.com/keep"]);
    const events = (await r.h.audit.forRequest(req.id)).map((e) => `${e.event}:${e.after ?? ""}`);
    expect(events).toEqual([
      "request.created:PENDING",
      "vote.approve:APPROVED",
      "execution.enqueued:APPROVED",
      "execution.claimed:EXECUTING",
      "execution.done:DONE",
    ]);
    await eventually(() => (r.h.notifier.updates.at(-1)?.state === "DONE" ? true : undefined));
    expect(r.h.notifier.replies.at(-1)).toContain("Removed [ingress.k8s.aws/resources]");
  });

  it("marks STALE and patches nothing when the object changed after approval", async () => {
    const r = rig();
    const before = seedIngress(r.h);
    const req = await requestRemoval(r.h);
    await r.h.workflow.vote(req.id, bob, "approve");
    const after = r.h.fake.edit(INGRESS, "myapp", "myapp-worker-ingress", [
      "ingress.k8s.aws/resources",
      "example.com/new",
    ]);
    r.startWorker();
    const done = await requestSettled(r.h.store, req.id);
    expect(done.state).toBe("STALE");
    expect(done.result?.message).toContain(
      `resourceVersion ${before.resourceVersion} → ${after.resourceVersion}`,
    );
    expect(done.result?.message).toContain(
      "finalizers [ingress.k8s.aws/resources] → [ingress.k8s.aws/resources, example.com/new]",
    );
    expect(r.h.fake.patchRequests).toBe(0);
  });

  it("marks STALE when the object is gone", async () => {
    const r = rig();
    seedIngress(r.h);
    const req = await requestRemoval(r.h);
    await r.h.workflow.vote(req.id, bob, "approve");
    r.h.fake.deleteObject(INGRESS, "myapp", "myapp-worker-ingress");
    r.startWorker();
    const done = await requestSettled(r.h.store, req.id);
    expect(done.state).toBe("STALE");
    expect(done.result?.message).toContain("object is gone");
  });

  it("marks STALE when the object changes between the check and the patch (API test op fails)", async () => {
    const r = rig();
    seedIngress(r.h);
    const req = await requestRemoval(r.h);
    await r.h.workflow.vote(req.id, bob, "approve");
    const fake = r.h.fake;
    // A controller writes to the object right after the executor read it.
    const racing: KubePort = {
      getNamespace: (n) => fake.getNamespace(n),
      discover: () => fake.discover(),
      listObjects: () => fake.listObjects(),
      listDeployments: () => fake.listDeployments(),
      listPods: () => fake.listPods(),
      podLog: () => fake.podLog(),
      listEvents: () => fake.listEvents(),
      listApiServices: () => fake.listApiServices(),
      listArgoApplications: () => fake.listArgoApplications(),
      getServiceEndpoints: () => fake.getServiceEndpoints(),
      listAdmissionWebhooks: () => fake.listAdmissionWebhooks(),
      serviceExists: () => fake.serviceExists(),
      getNode: () => fake.getNode(),
      listPodPlacements: () => fake.listPodPlacements(),
      annotateNamespace: () => fake.annotateNamespace(),
      listNamespaces: () => fake.listNamespaces(),
      removeNamespaceAnnotation: () => fake.removeNamespaceAnnotation(),
      close: () => fake.close(),
      removeFinalizers: (...args) => fake.removeFinalizers(...args),
      getObject: async (...args) => {
        const obj = await fake.getObject(...args);
        fake.edit(INGRESS, "myapp", "myapp-worker-ingress");
        return obj;
      },
    };
    r.startWorker(racing);
    const done = await requestSettled(r.h.store, req.id);
    expect(done.state).toBe("STALE");
    expect(done.result?.message).toContain("between the check and the patch");
    expect(fake.patchRequests).toBe(1);
    expect(fake.applied).toHaveLength(0);
  });

  it("retries throttling with backoff, re-reads after a reset patch and then succeeds", async () => {
    const r = rig({ attempts: 4 });
    seedIngress(r.h);
    const req = await requestRemoval(r.h);
    r.h.fake.failNext("getObject", new UnstuckError(ErrorCode.Throttled, "429"));
    r.h.fake.failNext("removeFinalizers", new UnstuckError(ErrorCode.Unreachable, "connection reset"));
    r.startWorker();
    await r.h.workflow.vote(req.id, bob, "approve");
    const done = await requestSettled(r.h.store, req.id);
    expect(done.state).toBe("DONE");
    // The throttled read costs one job attempt; the reset patch is resolved within the next one:
    // a re-read shows the object unchanged, so the same patch is sent again.
    expect(done.executionAttempts).toBe(2);
    expect(r.h.fake.patchRequests).toBe(2);
    expect(r.h.fake.applied).toHaveLength(1);
  });

  it("records FAILED with the reason once retries are exhausted", async () => {
    const r = rig({ attempts: 2 });
    seedIngress(r.h);
    const req = await requestRemoval(r.h);
    r.h.fake.failNext("getObject", new UnstuckError(ErrorCode.Unreachable, "API server unreachable"));
    r.h.fake.failNext("getObject", new UnstuckError(ErrorCode.Unreachable, "API server unreachable"));
    r.startWorker();
    await r.h.workflow.vote(req.id, bob, "approve");
    const done = await requestSettled(r.h.store, req.id);
    expect(done.state).toBe("FAILED");
    expect(done.result?.message).toContain("API server unreachable");
    expect((await failedJob(r, req.id)).attemptsMade).toBe(2);
    expect(r.h.fake.patchRequests).toBe(0);
  });

  it("fails permanent errors at once without retrying", async () => {
    const r = rig({ attempts: 5 });
    seedIngress(r.h);
    const req = await requestRemoval(r.h);
    r.h.fake.failNext(
      "removeFinalizers",
      new UnstuckError(ErrorCode.Forbidden, "cannot patch ingresses in myapp", { verb: "patch" }),
    );
    r.startWorker();
    await r.h.workflow.vote(req.id, bob, "approve");
    const done = await requestSettled(r.h.store, req.id);
    expect(done.state).toBe("FAILED");
    expect(done.result?.message).toContain("cannot patch ingresses");
    const job = await failedJob(r, req.id);
    expect(job.attemptsMade).toBe(1);
    expect(job.failedReason).toContain("cannot patch ingresses");
  });

  it("50 concurrent approvals through the real queue produce exactly one patch", async () => {
    const r = rig({ approvalsRequired: 2 });
    r.startWorker();
    r.startWorker();
    seedIngress(r.h);
    const req = await requestRemoval(r.h);
    const voters = [bob, carol, dave];
    await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => r.h.workflow.vote(req.id, voters[i % 3]!, "approve")),
    );
    // A retried Slack request enqueueing again must collapse into the same job.
    await executionEnqueuer(r.queues.actions)((await r.h.store.get(req.id))!);
    const done = await requestSettled(r.h.store, req.id);
    expect(done.state).toBe("DONE");
    expect(r.h.fake.applied).toHaveLength(1);
    expect(r.h.fake.patchRequests).toBe(1);
    expect(
      await r.queues.actions.getJobCountByTypes("completed", "failed", "active", "wait", "delayed"),
    ).toBe(1);
  });

  it("a duplicate delivery after the request finished does nothing", async () => {
    const r = rig();
    r.startWorker();
    seedIngress(r.h);
    const req = await requestRemoval(r.h);
    await r.h.workflow.vote(req.id, bob, "approve");
    await requestSettled(r.h.store, req.id);
    const again = await executeApproved(
      {
        store: r.h.store,
        signer: r.h.signer,
        policy: r.h.policy,
        kube: r.h.fake,
        audit: r.h.audit,
        now: () => new Date(),
      },
      req.id,
      { token: randomUUID(), finalAttempt: true },
    );
    expect(again).toEqual({ kind: "skipped", state: "DONE" });
    expect(r.h.fake.patchRequests).toBe(1);
  });

  it("refuses to execute a request that was never approved", async () => {
    const r = rig();
    seedIngress(r.h);
    const req = await requestRemoval(r.h);
    await expect(
      executeApproved(
        {
          store: r.h.store,
          signer: r.h.signer,
          policy: r.h.policy,
          kube: r.h.fake,
          audit: r.h.audit,
          now: () => new Date(),
        },
        req.id,
        { token: randomUUID(), finalAttempt: true },
      ),
    ).rejects.toMatchObject({ code: ErrorCode.InvalidState });
    expect((await r.h.store.get(req.id))?.state).toBe("PENDING");
    expect(r.h.fake.patchRequests).toBe(0);
  });

  it("keeps an approval whose enqueue failed, and the sweep enqueues it", async () => {
    const r = rig({ failEnqueues: 1 });
    r.startWorker();
    seedIngress(r.h);
    const req = await requestRemoval(r.h);
    const vote = await r.h.workflow.vote(req.id, bob, "approve");
    expect(vote.request.state).toBe("APPROVED");
    expect(await r.h.workflow.requeueApproved(60_000)).toEqual([]); // still within the grace period
    r.h.clock.advance(60_000);
    expect(await r.h.workflow.requeueApproved(30_000)).toEqual([req.id]);
    expect((await requestSettled(r.h.store, req.id)).state).toBe("DONE");
    expect(await r.h.workflow.requeueApproved(0)).toEqual([]);
    const events = (await r.h.audit.forRequest(req.id)).map((e) => e.event);
    expect(events).toEqual(
      expect.arrayContaining(["execution.enqueue-failed", "execution.requeued", "execution.done"]),
    );
    expect(r.h.fake.applied).toHaveLength(1);
  });

  it("runs a job an earlier release enqueued under the old id, once, and adds none beside it", async () => {
    const r = rig({ failEnqueues: 1 });
    seedIngress(r.h);
    const req = await requestRemoval(r.h);
    expect((await r.h.workflow.vote(req.id, bob, "approve")).request.state).toBe("APPROVED");
    // An older bot enqueued every kind as `remove-finalizer.<id>`; that job is still waiting.
    await r.queues.actions.add(
      req.action.type,
      { requestId: req.id },
      { jobId: legacyExecutionJobId(req.id) },
    );
    r.h.clock.advance(60_000);
    await r.h.workflow.requeueApproved(30_000);
    expect(await r.queues.actions.getJob(executionJobId(req.id))).toBeUndefined();
    expect(await r.queues.actions.count()).toBe(1);
    r.startWorker();
    expect((await requestSettled(r.h.store, req.id)).state).toBe("DONE");
    // Once ended, the sweep still finds it under the old id and adds nothing.
    await r.h.workflow.requeueApproved(0);
    expect(await r.queues.actions.getJob(executionJobId(req.id))).toBeUndefined();
    expect(r.h.fake.applied).toHaveLength(1);
  });

  it("counts each action that ran to an end by kind and outcome, once; a duplicate delivery counts nothing", async () => {
    const count = async (outcome: string): Promise<number> =>
      (await actionsExecuted.get()).values.find(
        (v) => v.labels.kind === "remove-finalizer" && v.labels.outcome === outcome,
      )?.value ?? 0;
    const [done0, stale0] = [await count("done"), await count("stale")];
    const r = rig();
    r.startWorker();
    seedIngress(r.h, ["ingress.k8s.aws/resources"]);
    const req = await requestRemoval(r.h);
    await r.h.workflow.vote(req.id, bob, "approve");
    expect((await requestSettled(r.h.store, req.id)).state).toBe("DONE");
    await eventually(async () => ((await count("done")) === done0 + 1 ? true : undefined), 5000, "the count");
    // The same job delivered again finds the request ended: nothing runs, nothing is counted.
    await r.queues.actions.add(req.action.type, { requestId: req.id }, { jobId: `again.${req.id}` });
    await eventually(
      async () =>
        ((await r.queues.actions.getJobCounts("completed")).completed ?? 0) >= 2 ? true : undefined,
      5000,
      "the second delivery",
    );
    expect(await count("done")).toBe(done0 + 1);
    expect(await count("stale")).toBe(stale0);
  });

  it("the scheduled sweep expires overdue requests and tells the notifier", async () => {
    const r = rig();
    seedIngress(r.h);
    const req = await requestRemoval(r.h);
    r.h.clock.advance(1800 * 1000);
    r.startWorker(undefined, { sweep: () => r.h.workflow.sweep() });
    await scheduleApprovalSweep(r.queues.actions, 100);
    await eventually(async () => ((await r.h.store.get(req.id))?.state === "EXPIRED" ? true : undefined));
    await eventually(() =>
      r.h.notifier.updates.some((u) => u.id === req.id && u.state === "EXPIRED") ? true : undefined,
    );
    expect(r.h.notifier.replies).toContain("The request expired without enough approvals.");
    await r.queues.actions.removeJobScheduler("approvals-sweep");
  });
});
