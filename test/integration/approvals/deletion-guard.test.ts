/**
 * `approve-delete ns` end to end below Slack: the command (preflight attached) makes a two-person
 * request in real Redis; the requester cannot approve it; a second person's approval runs the real
 * actions worker, which sets `unstuck.dev/deletion-approved` — signed, with the request id and the
 * end of the window — on the namespace in the kube simulator through the real adapter and schedules
 * the close on the waits queue; the waits worker takes it off at the end of the (short) window —
 * never another request's value. A re-created or changed namespace is STALE; a missing or
 * Terminating one is refused before anything is stored.
 *
 * The reconcile loop (`jobs/guard-reconcile.ts`, started as every worker process starts it) closes
 * the guard within its bound when the close job is deleted from Redis or Redis loses the test's
 * data, takes off at once a value the bot did not sign for that namespace, and never a newer one.
 * The runtime runs it on a worker, not on a bot-only process.
 */
import type { Worker } from "bullmq";
import type { Redis } from "ioredis";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { guardRequestId, parseGuardValue } from "../../../src/approvals/deletion-guard-token.js";
import { loadConfig } from "../../../src/config.js";
import { startGuardReconciler, type GuardReconciler } from "../../../src/jobs/guard-reconcile.js";
import { createServices } from "../../../src/services.js";
import { startFakeSlack } from "../../sim/slack/index.js";
import { approveDeleteCommand } from "../../../commands/approve-delete.js";
import { defaultRegistry } from "../../../commands/index.js";
import type { CommandContext } from "../../../commands/types.js";
import { DELETION_APPROVED_ANNOTATION, type ApprovalRequest } from "../../../src/requests/model.js";
import { ApprovalWorkflow } from "../../../src/approvals/workflow.js";
import { ErrorCode, isUnstuckError } from "../../../src/errors.js";
import { enqueueGuardClose, guardCloseJobId } from "../../../src/jobs/deletion-guard.js";
import { createQueues, executionEnqueuer, type Queues } from "../../../src/jobs/queues.js";
import type { ThreadReporter } from "../../../src/jobs/waits.js";
import { closeWorker, createActionsWorker, createWaitsWorker } from "../../../src/jobs/workers.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../../src/kube/port.js";
import { silentLogger } from "../../../src/log.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { alice, bob, CHANNEL, createHarness, type Harness } from "./helpers/harness.js";
import { keyEnv, strangerGuardSigner, testGuardSigner, testWaitSeal, testWaits } from "../../helpers/keys.js";
import { eventually, pause } from "../../helpers/eventually.js";
import { requestSettled } from "../../helpers/requests.js";
import { connect, deleteKeys, REDIS_URL, uniquePrefix } from "../../helpers/redis.js";
import { bootRuntime } from "../../helpers/world.js";

const KEY = DELETION_APPROVED_ANNOTATION;
const THREAD = { channel: CHANNEL, ts: "1700000000.000100" };
/** The signer every worker of this test process holds (`UNSTUCK_WORKER_SIGNING_KEY`). */
const guardSigner = testGuardSigner();
/** The reconcile loop's timing in these tests: a pass every 250 ms, no grace past `until`. */
const RECONCILE = { everyMs: 250, graceMs: 0 };

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
  prefix: string;
  bull: Redis;
  workflow: ApprovalWorkflow;
  queues: Queues;
  reporter: RecordingReporter;
  ctx(userId?: string): CommandContext;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function rig(
  windowSeconds: number,
  opts: { reconcile?: boolean; workerClockAheadMs?: number } = {},
): Promise<Rig> {
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
      // The executing worker's clock, which may run ahead of the bot's.
      now: () => new Date(Date.now() + (opts.workerClockAheadMs ?? 0)),
      notifier: h.notifier,
      scheduleGuardClose: async (data, delayMs) => {
        await enqueueGuardClose(testWaits(queues.waits), data, delayMs);
      },
      guardSigner,
    }),
    createWaitsWorker(setup, {
      seal: testWaitSeal(),
      kube,
      reporter,
      describeBlockers: () => Promise.resolve([]),
      now,
      deletionGuard: { kube, audit: h.audit, reporter, now },
    }),
  ];
  // Redis keys deleted under running workers (the lost-data test) are reported, not thrown.
  for (const w of workers) w.on("error", () => undefined);
  // As every worker process runs it (runtime.ts), with the test's short timing.
  const reconciler: GuardReconciler | undefined = opts.reconcile
    ? startGuardReconciler(
        {
          kube,
          signer: guardSigner,
          now,
          audit: h.audit,
          graceMs: RECONCILE.graceMs,
          windowMs: windowSeconds * 1000,
        },
        RECONCILE,
      )
    : undefined;
  cleanups.push(async () => {
    await reconciler?.stop();
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
    prefix,
    bull,
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
    const done = await requestSettled(r.h.store, request.id);
    expect(done.state, done.result?.message).toBe("DONE");
    expect(done.result?.message).toContain(`${KEY} for request ${request.id}`);
    // Opened: the annotation carries this request's id and window, signed for this namespace (until
    // the close job runs two seconds later).
    const opened = await eventually(
      () => annotationOf(r.sim, "shop") ?? (r.reporter.posts.length > 0 ? "closed already" : undefined),
      5_000,
      "the annotation",
    );
    const uid = r.sim.store.get("v1", "Namespace", undefined, "shop")?.metadata?.uid ?? "";
    const verified = guardSigner.verify(opened, { namespace: "shop", uid });
    expect(verified?.requestId).toBe(request.id);
    expect(Math.abs((verified?.until.getTime() ?? 0) - (Date.now() + 2_000))).toBeLessThan(3_000);
    // Bound to this namespace: the same value does not verify for another name or uid.
    expect(guardSigner.verify(opened, { namespace: "cart", uid })).toBeUndefined();
    expect(guardSigner.verify(opened, { namespace: "shop", uid: "another-uid" })).toBeUndefined();
    expect(r.h.notifier.replies.join("\n")).toContain(`${KEY} for request ${request.id}`);

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

  it("the window runs from the approving vote: a worker clock a day fast opens nothing, one a little fast opens no longer", async () => {
    const fast = await rig(60, { workerClockAheadMs: 86_400_000 });
    createNamespace(fast.sim, "shop");
    const request = await requestFor(fast, "shop");
    await fast.workflow.vote(request.id, bob, "approve", { channelId: CHANNEL });
    const ended = await requestSettled(fast.h.store, request.id);
    expect(ended.state).toBe("STALE");
    expect(ended.result?.message).toMatch(/approved window of 60 s .* has passed/);
    expect(annotationOf(fast.sim, "shop")).toBeUndefined();

    const ahead = await rig(60, { workerClockAheadMs: 30_000 });
    createNamespace(ahead.sim, "cart");
    const second = await requestFor(ahead, "cart");
    await ahead.workflow.vote(second.id, bob, "approve", { channelId: CHANNEL });
    expect((await requestSettled(ahead.h.store, second.id)).state).toBe("DONE");
    const voted = (await ahead.h.store.get(second.id))?.votes.find((v) => v.decision === "approve")?.at ?? "";
    const uid = ahead.sim.store.get("v1", "Namespace", undefined, "cart")?.metadata?.uid ?? "";
    const until = guardSigner.verify(annotationOf(ahead.sim, "cart"), { namespace: "cart", uid })?.until;
    // Not the worker's now + 60 s (90 s after the vote): the vote's time + 60 s.
    expect((until?.getTime() ?? 0) - Date.parse(voted)).toBeLessThanOrEqual(60_000);
  });

  it("leaves another request's id alone at the end of the window", async () => {
    const r = await rig(2);
    createNamespace(r.sim, "shop");
    const request = await requestFor(r, "shop");
    await r.workflow.vote(request.id, bob, "approve", { channelId: CHANNEL });
    expect((await requestSettled(r.h.store, request.id)).state).toBe("DONE");
    // Another (later) opening replaced it before this one's window ended.
    const ns = r.sim.store.get("v1", "Namespace", undefined, "shop");
    if (!ns?.metadata) throw new Error("no namespace");
    expect(guardRequestId(ns.metadata.annotations?.[KEY])).toBe(request.id);
    const another = guardSigner.sign(
      { namespace: "shop", uid: ns.metadata.uid ?? "" },
      "bbbbbbbbbbbbbbbbbbbbbbbbbb",
      new Date(Date.now() + 60_000),
    );
    r.sim.store.update({ ...ns, metadata: { ...ns.metadata, annotations: { [KEY]: another } } });

    await closeJobDone(r, request.id);
    expect(annotationOf(r.sim, "shop")).toBe(another);
    expect(r.reporter.posts.map((p) => p.text)).toEqual([
      expect.stringMatching(/for request b{26}, another request's; left alone/),
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
    const a = await requestSettled(r.h.store, recreated.id);
    expect(a.state).toBe("STALE");
    expect(a.result?.message).toMatch(/different namespace now \(re-created/);
    const b = await requestSettled(r.h.store, changed.id);
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

  /** Approve a deletion of `name` and wait until the bot has opened its guard; its value. */
  async function opened(
    r: Rig,
    name: string,
  ): Promise<{ request: ApprovalRequest; value: string; until: Date }> {
    const request = await requestFor(r, name);
    await r.workflow.vote(request.id, bob, "approve", { channelId: CHANNEL });
    const done = await requestSettled(r.h.store, request.id);
    expect(done.state, done.result?.message).toBe("DONE");
    const value = annotationOf(r.sim, name);
    const until = parseGuardValue(value)?.until;
    if (value === undefined || until === undefined)
      throw new Error(`no guard value on ${name}: ${String(value)}`);
    expect(guardRequestId(value)).toBe(request.id);
    return { request, value, until };
  }

  /** When the annotation left `name` (polled every 25 ms), or a timeout. */
  async function closedAt(r: Rig, name: string): Promise<number> {
    return eventually(
      () => (annotationOf(r.sim, name) === undefined ? Date.now() : undefined),
      15_000,
      `${KEY} off ${name}`,
    );
  }

  /** The bound on an open guard: `until` + grace + one period, plus a list and a patch (slack 1.5 s). */
  const BOUND_MS = RECONCILE.graceMs + RECONCILE.everyMs + 1_500;

  it("closes the guard within the reconcile loop's bound when its close job is deleted from Redis", async () => {
    const r = await rig(2, { reconcile: true });
    createNamespace(r.sim, "shop");
    const { request, until } = await opened(r, "shop");
    const job = await r.queues.waits.getJob(guardCloseJobId(request.id));
    expect(job, "the close job was scheduled").toBeDefined();
    await job?.remove();
    expect(await r.queues.waits.getJob(guardCloseJobId(request.id))).toBeUndefined();

    const at = await closedAt(r, "shop");
    expect(at).toBeGreaterThanOrEqual(until.getTime());
    expect(at - until.getTime()).toBeLessThanOrEqual(BOUND_MS);
    // Nobody else closed it: no job ran, so nothing was posted in the thread.
    expect(r.reporter.posts).toEqual([]);
    expect(r.sim.store.get("v1", "Namespace", undefined, "shop")?.metadata?.labels).toMatchObject({
      team: "shop",
    });
    // The loop audits after its patch lands, so the record may trail the annotation's removal.
    await eventually(
      async () => {
        const events = (await r.h.audit.latest(50)).filter((e) => e.requestId === request.id);
        return events.some((e) => e.event === "deletion-guard.reconciled-expired") ? true : undefined;
      },
      5_000,
      "the reconcile loop's audit record",
    );
  });

  it("closes the guard within the bound when Redis lost everything the bot kept (every key of the test's prefix deleted)", async () => {
    const r = await rig(2, { reconcile: true });
    createNamespace(r.sim, "shop");
    const { until } = await opened(r, "shop");
    await deleteKeys(r.bull, r.prefix);
    expect(await r.queues.waits.getDelayedCount()).toBe(0);

    const at = await closedAt(r, "shop");
    expect(at - until.getTime()).toBeLessThanOrEqual(BOUND_MS);
    expect(r.reporter.posts).toEqual([]);
  });

  it("takes off at once a value the bot did not sign for that namespace, leaves an open window alone, and never undoes a newer value", async () => {
    const r = await rig(60, { reconcile: true });
    for (const name of ["forged", "copied", "garbage", "expired", "open", "too-long"]) {
      createNamespace(r.sim, name, { annotations: { "example.com/owner": name } });
    }
    const uidOf = (name: string): string =>
      r.sim.store.get("v1", "Namespace", undefined, name)?.metadata?.uid ?? "";
    const set = (name: string, value: string): void => {
      const ns = r.sim.store.get("v1", "Namespace", undefined, name);
      if (!ns?.metadata) throw new Error(name);
      r.sim.store.update({
        ...ns,
        metadata: { ...ns.metadata, annotations: { ...ns.metadata.annotations, [KEY]: value } },
      });
    };
    const later = new Date(Date.now() + 3_600_000);
    const request = "cccccccccccccccccccccccccc";
    const forger = strangerGuardSigner();
    set("forged", forger.sign({ namespace: "forged", uid: uidOf("forged") }, request, later));
    set("copied", guardSigner.sign({ namespace: "open", uid: uidOf("open") }, request, later));
    set("garbage", "yes");
    set(
      "expired",
      guardSigner.sign(
        { namespace: "expired", uid: uidOf("expired") },
        request,
        new Date(Date.now() - 1_000),
      ),
    );
    // Signed by this install's key, but open far longer than the 60 s window (a worker clock a day fast).
    set(
      "too-long",
      guardSigner.sign(
        { namespace: "too-long", uid: uidOf("too-long") },
        request,
        new Date(Date.now() + 86_400_000),
      ),
    );
    const open = guardSigner.sign(
      { namespace: "open", uid: uidOf("open") },
      request,
      new Date(Date.now() + 50_000),
    );
    set("open", open);

    for (const name of ["forged", "copied", "garbage", "expired", "too-long"]) await closedAt(r, name);
    // Only the annotation went; the namespaces' own annotations stay.
    for (const name of ["forged", "copied", "garbage", "expired", "too-long"]) {
      expect(r.sim.store.get("v1", "Namespace", undefined, name)?.metadata?.annotations).toEqual({
        "example.com/owner": name,
      });
    }
    // A few passes later the open window is still open.
    await pause(4 * RECONCILE.everyMs);
    expect(annotationOf(r.sim, "open")).toBe(open);
    const events = (await r.h.audit.latest(50)).map((e) => `${e.event} ${e.target}`);
    expect(events).toEqual(
      expect.arrayContaining([
        "deletion-guard.reconciled-invalid deletion guard of namespace forged",
        "deletion-guard.reconciled-invalid deletion guard of namespace garbage",
        "deletion-guard.reconciled-invalid deletion guard of namespace too-long",
        "deletion-guard.reconciled-expired deletion guard of namespace expired",
      ]),
    );

    // A pass that read an expired value just before a re-approval wrote a new one: its patch `test`s
    // the value it read, so the API server refuses it and the new value stays.
    const expiredValue = guardSigner.sign(
      { namespace: "open", uid: uidOf("open") },
      "dddddddddddddddddddddddddd",
      new Date(Date.now() - 1_000),
    );
    const stale = {
      listNamespaces: async () =>
        ((await r.kube.listNamespaces?.()) ?? []).map((ns) =>
          ns.name === "open" ? { ...ns, annotations: { ...ns.annotations, [KEY]: expiredValue } } : ns,
        ),
      removeNamespaceAnnotation: r.kube.removeNamespaceAnnotation?.bind(r.kube),
    };
    const { reconcileDeletionGuards } = await import("../../../src/jobs/guard-reconcile.js");
    const report = await reconcileDeletionGuards({
      kube: stale,
      signer: guardSigner,
      now: () => new Date(),
      graceMs: 0,
    });
    expect(report.removed).toEqual([]);
    expect(report.failed).toEqual([]);
    expect(annotationOf(r.sim, "open")).toBe(open);
    expect(
      await r.kube.removeNamespaceAnnotation?.("open", KEY, { uid: uidOf("open"), value: expiredValue }),
    ).toBe("changed");
    expect(await r.kube.removeNamespaceAnnotation?.("open", KEY, { uid: "another-uid", value: open })).toBe(
      "changed",
    );
    expect(await r.kube.removeNamespaceAnnotation?.("ghost", KEY, { uid: "x", value: open })).toBe("gone");
    expect(annotationOf(r.sim, "open")).toBe(open);
  });
});

describe("the reconcile loop in the runtime", () => {
  it("runs on a worker process (not on a bot-only one), through the services the runtime builds from the config", async () => {
    const sim = await startKubeSim({ controllerIntervalMs: 100 });
    const slack = await startFakeSlack({ token: "xoxb-guard-reconcile" });
    const dir = await mkdtemp(join(tmpdir(), "unstuck-guard-"));
    const prefix = uniquePrefix("guard-reconcile");
    const admin = connect();
    cleanups.push(async () => {
      await deleteKeys(admin, prefix);
      await admin.quit();
      await slack.stop();
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    });
    await sim.writeKubeconfig(join(dir, "kubeconfig"));
    createNamespace(sim, "shop");
    const uid = sim.store.get("v1", "Namespace", undefined, "shop")?.metadata?.uid ?? "";
    const expired = guardSigner.sign(
      { namespace: "shop", uid },
      "eeeeeeeeeeeeeeeeeeeeeeeeee",
      new Date(Date.now() - 1_000),
    );
    const ns = sim.store.get("v1", "Namespace", undefined, "shop");
    if (!ns?.metadata) throw new Error("no shop");
    sim.store.update({ ...ns, metadata: { ...ns.metadata, annotations: { [KEY]: expired } } });

    const log = pino({ level: "silent" });
    const start = async (role: "bot" | "worker") => {
      const config = loadConfig({
        SLACK_BOT_TOKEN: "xoxb-guard-reconcile",
        SLACK_SIGNING_SECRET: "guard-reconcile-secret",
        SLACK_API_URL: slack.url,
        PORT: "0",
        REDIS_URL,
        UNSTUCK_REDIS_PREFIX: prefix,
        ...keyEnv(role),
        KUBECONFIG: join(dir, "kubeconfig"),
        UNSTUCK_ROLE: role,
      });
      // No `services`: the runtime builds them from the config, as in production.
      const { runtime } = await bootRuntime({ config, log, runtime: { role, guardReconcile: RECONCILE } });
      return runtime;
    };

    const bot = await start("bot");
    try {
      await pause(6 * RECONCILE.everyMs);
      expect(annotationOf(sim, "shop")).toBe(expired);
    } finally {
      await bot.stop();
    }
    const worker = await start("worker");
    try {
      await eventually(
        () => (annotationOf(sim, "shop") === undefined ? true : undefined),
        10_000,
        "the loop",
      );
      // The services built from the config carry the guard's writes (the executor opens guards with them).
      const services = createServices(loadConfig({ KUBECONFIG: join(dir, "kubeconfig") }), log);
      const seen = await services.kube.getNamespace("shop");
      if (!seen?.uid || !seen.resourceVersion) throw new Error("no shop");
      const value = guardSigner.sign(
        { namespace: "shop", uid: seen.uid },
        "ffffffffffffffffffffffffff",
        new Date(Date.now() + 60_000),
      );
      await services.kube.annotateNamespace?.("shop", KEY, value, {
        uid: seen.uid,
        resourceVersion: seen.resourceVersion,
        annotations: seen.annotations,
      });
      expect(annotationOf(sim, "shop")).toBe(value);
      expect((await services.kube.listNamespaces?.())?.find((n) => n.name === "shop")?.annotations[KEY]).toBe(
        value,
      );
      expect(await services.kube.removeNamespaceAnnotation?.("shop", KEY, { uid: seen.uid, value })).toBe(
        "removed",
      );
      expect(annotationOf(sim, "shop")).toBeUndefined();
      await services.kube.close?.();
    } finally {
      await worker.stop();
    }
  });
});
