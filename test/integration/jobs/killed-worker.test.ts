import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { Worker } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import { createQueues, executionEnqueuer, JobName } from "../../../src/jobs/queues.js";
import { createActionsWorker } from "../../../src/jobs/workers.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { startKubeSim } from "../../sim/kube/index.js";
import { bob, createHarness, requestRemoval, type Harness } from "../approvals/helpers/harness.js";
import { TEST_BOT_KEY, TEST_WORKER_KEY } from "../../helpers/keys.js";
import { eventually, pause } from "../../helpers/eventually.js";
import { connect, REDIS_URL, uniquePrefix } from "../../helpers/redis.js";

const CHILD = fileURLToPath(new URL("./fixtures/actions-worker.ts", import.meta.url));
const LOCK_MS = 1000;
const STALLED_MS = 250;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** Resolves with the first stdout line of `child` that starts with `prefix`. */
function lineFrom(child: ChildProcess, prefix: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      const line = buffer.split("\n").find((l) => l.startsWith(prefix));
      if (line) {
        child.stdout?.off("data", onData);
        resolve(line);
      }
    };
    child.stdout?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`worker exited (${code}) before printing ${prefix}`)));
  });
}

/** What the restarted worker was asked to follow up, per request id. */
type FollowUps = string[];

async function scenario(
  pauseAt: "afterClaim" | "afterPatch" | "afterOutcome",
  maxStalledCount?: number,
  followUps?: FollowUps,
) {
  const prefix = uniquePrefix("killed");
  const bullPrefix = `${prefix}:bull`;
  const bull = connect();
  const queues = createQueues({ connection: bull, prefix: bullPrefix });
  const sim = await startKubeSim({
    scenario: "test/fixtures/scenarios/seed-incident.yaml",
    controllerIntervalMs: 50,
  });
  const dir = await mkdtemp(join(tmpdir(), "unstuck-killed-"));
  const kubeconfigPath = join(dir, "kubeconfig");
  await sim.writeKubeconfig(kubeconfigPath);
  const kube = createKubeAdapter(sim.kubeconfig());
  const h: Harness = createHarness({ prefix, kube, enqueue: executionEnqueuer(queues.actions) });
  const workers: Worker[] = [];
  const proc: { child?: ChildProcess } = {};
  cleanups.push(async () => {
    const child = proc.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await once(child, "exit");
    }
    await Promise.all(workers.map((w) => w.close()));
    await queues.close();
    await bull.quit();
    await h.close();
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const req = await requestRemoval(h, undefined, { finalizer: "ingress.k8s.aws/resources" });
  // `node --import tsx`, not the `tsx` CLI: the CLI runs the script in a grandchild that a
  // SIGKILL of the CLI would leave alive (still renewing the job lock).
  const child = spawn(process.execPath, ["--import", "tsx", CHILD], {
    env: {
      ...process.env,
      REDIS_URL,
      BULL_PREFIX: bullPrefix,
      STORE_PREFIX: `${prefix}:approvals`,
      AUDIT_KEY: `${prefix}:audit`,
      WORKER_KEY: TEST_WORKER_KEY.privateKey,
      BOT_PUBLIC_KEY: TEST_BOT_KEY.publicKey,
      WORKER_PUBLIC_KEY: TEST_WORKER_KEY.publicKey,
      APPROVERS: bob.userId,
      KUBECONFIG_PATH: kubeconfigPath,
      LOCK_MS: String(LOCK_MS),
      STALLED_MS: String(STALLED_MS),
      PAUSE_AT: pauseAt,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  proc.child = child;
  await lineFrom(child, "READY");
  const paused = lineFrom(child, "PAUSED");
  await h.workflow.vote(req.id, bob, "approve");
  expect(await paused).toBe(`PAUSED ${req.id}`);

  child.kill("SIGKILL");
  await once(child, "exit");
  const interrupted = await h.store.get(req.id);
  expect(interrupted?.state).toBe(pauseAt === "afterOutcome" ? "DONE" : "EXECUTING");
  const patches = () =>
    sim
      .requests()
      .filter(
        (r) =>
          r.method === "PATCH" &&
          r.path === "/apis/networking.k8s.io/v1/namespaces/myapp/ingresses/myapp-worker-ingress",
      );
  const patchesBeforeRestart = patches().length;

  // A fresh worker: BullMQ's stalled-job check finds the dead worker's job once its lock expires.
  workers.push(
    createActionsWorker(
      {
        connection: bull,
        prefix: bullPrefix,
        lockDuration: LOCK_MS,
        stalledInterval: STALLED_MS,
        ...(maxStalledCount !== undefined ? { maxStalledCount } : {}),
      },
      {
        store: h.store,
        signer: h.signer,
        policy: h.policy,
        kube,
        audit: h.audit,
        now: () => new Date(),
        ...(followUps !== undefined
          ? {
              afterDone: (request) => {
                followUps.push(request.id);
                return Promise.resolve();
              },
            }
          : {}),
      },
      { followUpGraceMs: 0 },
    ),
  );
  // The sweep (every 30 s in production) runs follow-ups left behind; here at once.
  if (followUps !== undefined) await queues.actions.add(JobName.Sweep, {});
  const final = await eventually(
    async () => {
      const r = await h.store.get(req.id);
      return r && r.state !== "EXECUTING" ? r : undefined;
    },
    20_000,
    "the re-delivered job to finish the request",
  );
  return { h, sim, req, final, patchesBeforeRestart, patches };
}

describe("a worker killed mid-execution (kube simulator, real adapter)", () => {
  it("after claiming: the next worker applies the patch exactly once", async () => {
    const { h, sim, final, patchesBeforeRestart, patches } = await scenario("afterClaim");
    expect(patchesBeforeRestart).toBe(0);
    expect(final.state).toBe("DONE");
    expect(final.executionAttempts).toBe(2);
    expect(patches()).toHaveLength(1);
    expect(patches()[0]?.status).toBe(200);
    expect(sim.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress")).toBeUndefined();
    const events = (await h.audit.forRequest(final.id)).map((e) => e.event);
    expect(events).toEqual(
      expect.arrayContaining(["execution.claimed", "execution.resumed", "execution.done"]),
    );
  });

  it("after patching: the next worker sees it done and sends no second patch", async () => {
    const { final, patchesBeforeRestart, patches } = await scenario("afterPatch");
    expect(patchesBeforeRestart).toBe(1);
    expect(final.state).toBe("DONE");
    expect(final.executionAttempts).toBe(2);
    expect(final.result?.message).toContain("Completed by the interrupted attempt");
    expect(patches()).toHaveLength(1);
  });

  it("after recording DONE, before what follows: the next worker runs the follow-up once", async () => {
    const followUps: FollowUps = [];
    const { h, req, final, patches } = await scenario("afterOutcome", undefined, followUps);
    expect(final.state).toBe("DONE");
    expect(patches()).toHaveLength(1);
    await eventually(() => (followUps.length > 0 ? true : undefined), 20_000, "the follow-up to run");
    // The re-delivered job and the sweep both find the outbox entry; only one runs it.
    await pause(1_500);
    expect(followUps).toEqual([req.id]);
    expect(await h.store.followUpPending("", req.id)).toBe(false);
  });

  it("after recording DONE, its job then failed by BullMQ without running: the sweep runs the follow-up", async () => {
    const followUps: FollowUps = [];
    const { h, req, patches } = await scenario("afterOutcome", 0, followUps);
    await eventually(
      () => (followUps.length > 0 ? true : undefined),
      20_000,
      "the sweep to run the follow-up",
    );
    await pause(1_500);
    expect(followUps).toEqual([req.id]);
    expect(patches()).toHaveLength(1);
    expect(await h.store.followUpPending("", req.id)).toBe(false);
  });

  it("stalled beyond BullMQ's limit (failed without running): the request still ends definite, one patch", async () => {
    const { final, patches } = await scenario("afterClaim", 0);
    expect(final.state).toBe("DONE");
    expect(patches()).toHaveLength(1);
    expect(patches()[0]?.status).toBe(200);
  });
});
