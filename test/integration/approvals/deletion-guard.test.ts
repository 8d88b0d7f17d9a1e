/**
 * `approve-delete ns` end to end below Slack: the command (preflight attached) makes a two-person
 * request in real Redis; the requester cannot approve it; a second person's approval runs the real
 * actions worker, which sets `unstuck.dev/deletion-approved=<request id>` on the namespace in the
 * kube simulator through the real adapter and schedules the close on the waits queue; the waits
 * worker takes it off at the end of the (short) window — never another request's id. A re-created
 * or changed namespace is STALE; a missing or Terminating one is refused before anything is stored.
 */
import type { Worker } from "bullmq";
import type { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { approveDeleteCommand } from "../../../commands/approve-delete.js";
import { defaultRegistry } from "../../../commands/index.js";
import type { CommandContext } from "../../../commands/types.js";
import { DELETION_APPROVED_ANNOTATION, type ApprovalRequest } from "../../../src/approvals/types.js";
import { ApprovalWorkflow } from "../../../src/approvals/workflow.js";
import { ErrorCode, isUnstuckError } from "../../../src/errors.js";
import { enqueueGuardClose, guardCloseJobId } from "../../../src/jobs/deletion-guard.js";
import { createQueues, executionEnqueuer, type Queues } from "../../../src/jobs/queues.js";
import type { ThreadReporter } from "../../../src/jobs/waits.js";
import { closeWorker, createActionsWorker, createWaitsWorker } from "../../../src/jobs/workers.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../../src/kube/port.js";
import { silentLogger } from "../../../src/log.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { alice, bob, CHANNEL, createHarness, type Harness } from "./helpers/harness.js";
import { connect, eventually, uniquePrefix } from "./helpers/redis.js";

const KEY = DELETION_APPROVED_ANNOTATION;
const THREAD = { channel: CHANNEL, ts: "1700000000.000100" };

class RecordingReporter implements ThreadReporter {
  public readonly posts: { channel: string; threadTs: string; text: string }[] = [];
  public post(channel: string, threadTs: string, text: string): Promise<{ ts: string }> {
    this.posts.push({ channel, threadTs, text });
    return Promise.resolve({ ts: `${String(this.posts.length)}.0` });
  }
  public update(): Promise<void> {
    return Promise.resolve();
  }
}

interface Rig {
  sim: KubeSim;
  kube: KubePort;
  h: Harness;
  workflow: ApprovalWorkflow;
  queues: Queues;
  reporter: RecordingReporter;
  ctx(userId?: string): CommandContext;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function rig(windowSeconds: number): Promise<Rig> {
  const sim = await startKubeSim({ controllerIntervalMs: 100 });
  const kube = createKubeAdapter(sim.kubeconfig(), { maxAttempts: 1 });
  const prefix = uniquePrefix("deletion-guard");
  const bull: Redis = connect();
  const queues = createQueues({ connection: bull, prefix: `${prefix}:bull` });
  const h = createHarness({ prefix, kube });
  const reporter = new RecordingReporter();
  const now = () => new Date();
  const workflow = new ApprovalWorkflow({
    store: h.store,
    policy: h.policy,
    audit: h.audit,
    kube,
    enqueueExecution: executionEnqueuer(queues.actions, { attempts: 2, backoffMs: 20 }),
    now,
    approvalsRequired: 1,
    requestTtlSeconds: 1800,
    notifier: h.notifier,
    deletionWindowSeconds: windowSeconds,
  });
  const setup = { connection: bull, prefix: `${prefix}:bull` };
  const workers: Worker[] = [
    createActionsWorker(setup, {
      store: h.store,
      signer: h.signer,
      policy: h.policy,
      kube,
      audit: h.audit,
      now,
      notifier: h.notifier,
      scheduleGuardClose: async (data, delayMs) => {
        await enqueueGuardClose(queues.waits, data, delayMs);
      },
    }),
    createWaitsWorker(setup, {
      kube,
      reporter,
      describeBlockers: () => Promise.resolve([]),
      now,
      deletionGuard: { kube, audit: h.audit, reporter, now },
    }),
  ];
  cleanups.push(async () => {
    await Promise.all(workers.map((w) => closeWorker(w)));
    await queues.close();
    await bull.quit();
    await h.close();
    await sim.stop();
  });
  const log = silentLogger();
  return {
    sim,
    kube,
    h,
    workflow,
    queues,
    reporter,
    ctx: (userId = alice.userId) => ({
      actor: { userId, teamId: alice.teamId, channelId: CHANNEL, surface: "slack" },
      services: { kube, now, log, approvals: { workflow, audit: h.audit } },
    }),
  };
}

function createNamespace(sim: KubeSim, name: string, extra: Record<string, unknown> = {}): void {
  sim.store.create({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: { team: "shop" }, ...extra },
  });
}

function annotationOf(sim: KubeSim, name: string): string | undefined {
  return sim.store.get("v1", "Namespace", undefined, name)?.metadata?.annotations?.[KEY];
}

async function requestFor(r: Rig, namespace: string): Promise<ApprovalRequest> {
  const result = await approveDeleteCommand.run(
    { namespace, reason: "duplicate of the platform app; cause confirmed" },
    r.ctx(),
  );
  if (result.type !== "approval-request")
    throw new Error(`expected a request, got ${JSON.stringify(result)}`);
  await r.workflow.attachMessage(result.request.id, THREAD);
  return result.request;
}

async function settled(r: Rig, id: string): Promise<ApprovalRequest> {
  return eventually(
    async () => {
      const req = await r.h.store.get(id);
      return req && ["DONE", "FAILED", "STALE"].includes(req.state) ? req : undefined;
    },
    15_000,
    `request ${id} to finish`,
  );
}

async function closeJobDone(r: Rig, id: string): Promise<void> {
  await eventually(
    async () => {
      const job = await r.queues.waits.getJob(guardCloseJobId(id));
      return job && (await job.isCompleted()) ? true : undefined;
    },
    15_000,
    "the close job to complete",
  );
}

describe("approve-delete: the deletion guard the bot opens", () => {
  it("request with the preflight → self-approval refused → a second person approves → annotation set → taken off at the end of the window", async () => {
    const r = await rig(2);
    createNamespace(r.sim, "shop");
    const request = await requestFor(r, "shop");
    expect(request.state).toBe("PENDING");
    expect(request.action).toMatchObject({
      type: "open-deletion-guard",
      namespace: "shop",
      windowSeconds: 2,
      precondition: { uid: r.sim.store.get("v1", "Namespace", undefined, "shop")?.metadata?.uid },
    });
    if (request.action.type !== "open-deletion-guard") throw new Error("wrong action");
    expect(["safe", "risky", "blocked"]).toContain(request.action.preflight.verdict);
    expect(request.evidence[0]).toBe(`preflight: ${request.action.preflight.verdict.toUpperCase()}`);

    // A second request for the same namespace while one is pending is refused.
    await expect(requestFor(r, "shop")).rejects.toMatchObject({ code: ErrorCode.Conflict });
    const self = await r.workflow.vote(request.id, alice, "approve").catch((e: unknown) => e);
    expect(isUnstuckError(self) && self.code).toBe(ErrorCode.SelfApproval);
    expect(annotationOf(r.sim, "shop")).toBeUndefined();

    await r.workflow.vote(request.id, bob, "approve", { channelId: CHANNEL });
    const done = await settled(r, request.id);
    expect(done.state, done.result?.message).toBe("DONE");
    expect(done.result?.message).toContain(`${KEY}=${request.id}`);
    // Opened: the annotation carries this request's id (until the close job runs two seconds later).
    const opened = await eventually(
      () => annotationOf(r.sim, "shop") ?? (r.reporter.posts.length > 0 ? "closed already" : undefined),
      5_000,
      "the annotation",
    );
    expect(opened).toBe(request.id);
    expect(r.h.notifier.replies.join("\n")).toContain(`${KEY}=${request.id}`);

    await closeJobDone(r, request.id);
    expect(annotationOf(r.sim, "shop")).toBeUndefined();
    expect(r.sim.store.get("v1", "Namespace", undefined, "shop")?.metadata?.labels).toMatchObject({
      team: "shop",
    });
    expect(r.reporter.posts).toEqual([
      {
        channel: THREAD.channel,
        threadTs: THREAD.ts,
        text: expect.stringMatching(/Closed the deletion guard of namespace shop/),
      },
    ]);
    const events = (await r.h.audit.latest(50)).filter((e) => e.requestId === request.id).map((e) => e.event);
    expect(events).toEqual(
      expect.arrayContaining(["request.created", "vote.approve", "execution.done", "deletion-guard.closed"]),
    );
  });

  it("leaves another request's id alone at the end of the window", async () => {
    const r = await rig(2);
    createNamespace(r.sim, "shop");
    const request = await requestFor(r, "shop");
    await r.workflow.vote(request.id, bob, "approve", { channelId: CHANNEL });
    expect((await settled(r, request.id)).state).toBe("DONE");
    // Another (later) opening replaced it before this one's window ended.
    const ns = r.sim.store.get("v1", "Namespace", undefined, "shop");
    if (!ns?.metadata) throw new Error("no namespace");
    expect(ns.metadata.annotations?.[KEY]).toBe(request.id);
    r.sim.store.update({ ...ns, metadata: { ...ns.metadata, annotations: { [KEY]: "anotherrequestid" } } });

    await closeJobDone(r, request.id);
    expect(annotationOf(r.sim, "shop")).toBe("anotherrequestid");
    expect(r.reporter.posts.map((p) => p.text)).toEqual([
      expect.stringMatching(/another request's; left alone/),
    ]);
    const events = (await r.h.audit.latest(50)).filter((e) => e.requestId === request.id).map((e) => e.event);
    expect(events).toContain("deletion-guard.left-alone");
  });

  it("STALE when the namespace was re-created (another uid) or changed after the request; nothing set", async () => {
    const r = await rig(60);
    createNamespace(r.sim, "shop");
    createNamespace(r.sim, "cart");
    const recreated = await requestFor(r, "shop");
    const changed = await requestFor(r, "cart");
    r.sim.store.delete("v1", "Namespace", undefined, "shop");
    await eventually(
      () => (r.sim.store.get("v1", "Namespace", undefined, "shop") ? undefined : true),
      10_000,
      "shop gone",
    );
    createNamespace(r.sim, "shop");
    const cart = r.sim.store.get("v1", "Namespace", undefined, "cart");
    if (!cart?.metadata) throw new Error("no cart");
    r.sim.store.update({ ...cart, metadata: { ...cart.metadata, labels: { team: "checkout" } } });

    await r.workflow.vote(recreated.id, bob, "approve", { channelId: CHANNEL });
    await r.workflow.vote(changed.id, bob, "approve", { channelId: CHANNEL });
    const a = await settled(r, recreated.id);
    expect(a.state).toBe("STALE");
    expect(a.result?.message).toMatch(/different namespace now \(re-created/);
    const b = await settled(r, changed.id);
    expect(b.state).toBe("STALE");
    expect(b.result?.message).toMatch(/changed since approval \(resourceVersion/);
    expect(annotationOf(r.sim, "shop")).toBeUndefined();
    expect(annotationOf(r.sim, "cart")).toBeUndefined();
    expect(await r.queues.waits.getJob(guardCloseJobId(recreated.id))).toBeUndefined();
  });

  it("refuses a namespace that does not exist or is already Terminating, storing nothing", async () => {
    const r = await rig(60);
    createNamespace(r.sim, "dying", { finalizers: ["example.com/hold"] });
    r.sim.store.delete("v1", "Namespace", undefined, "dying");
    expect(r.sim.store.get("v1", "Namespace", undefined, "dying")?.metadata?.deletionTimestamp).toBeDefined();
    const registry = defaultRegistry();
    const missing = await registry.dispatch(
      'approve-delete ns ghost --reason "nobody owns it any more"',
      r.ctx(),
    );
    expect(missing).toMatchObject({ type: "error", error: { code: ErrorCode.NotFound } });
    if (missing.type !== "error") throw new Error("expected an error");
    expect(missing.error.message).toBe("Namespace ghost does not exist, so there is nothing to approve.");
    const dying = await registry.dispatch(
      'approve-delete ns dying --reason "nobody owns it any more"',
      r.ctx(),
    );
    expect(dying).toMatchObject({ type: "error", error: { code: ErrorCode.BadInput } });
    if (dying.type !== "error") throw new Error("expected an error");
    expect(dying.error.message).toMatch(/^Namespace dying is already being deleted \(Terminating since /);
    expect(await r.workflow.listPending()).toEqual([]);
    expect(annotationOf(r.sim, "dying")).toBeUndefined();
  });
});
