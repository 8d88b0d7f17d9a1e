import type { Worker } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import { createQueues, type Queues } from "../../../src/jobs/queues.js";
import {
  enqueueNamespaceGone,
  namespaceGoneJobId,
  startNamespaceGone,
  type ThreadReporter,
} from "../../../src/jobs/waits.js";
import { createWaitsWorker } from "../../../src/jobs/workers.js";
import { FakeKube } from "../approvals/helpers/fake-kube.js";
import { eventually } from "../../helpers/eventually.js";
import { connect, deleteKeys, uniquePrefix } from "../../helpers/redis.js";
import { testWaitSeal, testWaits } from "../../helpers/keys.js";

interface Message {
  readonly channel: string;
  readonly threadTs: string;
  readonly texts: string[];
}

class RecordingReporter implements ThreadReporter {
  public readonly messages = new Map<string, Message>();
  private seq = 0;
  public post(channel: string, threadTs: string, text: string): Promise<{ ts: string }> {
    this.seq += 1;
    const ts = `1700000000.${String(this.seq).padStart(6, "0")}`;
    this.messages.set(ts, { channel, threadTs, texts: [text] });
    return Promise.resolve({ ts });
  }
  public update(channel: string, ts: string, text: string): Promise<void> {
    const m = this.messages.get(ts);
    if (!m || m.channel !== channel) return Promise.reject(new Error(`message_not_found ${ts}`));
    m.texts.push(text);
    return Promise.resolve();
  }
  /** The one message about `ns` (fails the test if a wait posted more than one). */
  public about(ns: string): Message | undefined {
    const named = new RegExp(`Namespace ${ns}\\b`);
    const found = [...this.messages.values()].filter((m) => named.test(m.texts[0] ?? ""));
    expect(found.length).toBeLessThanOrEqual(1);
    return found[0];
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function rig(blockers: (ns: string) => readonly string[] = () => []) {
  const prefix = uniquePrefix("waits");
  const redis = connect();
  const queues: Queues = createQueues({ connection: redis, prefix });
  const kube = new FakeKube();
  const reporter = new RecordingReporter();
  const worker: Worker = createWaitsWorker(
    { connection: redis, prefix, concurrency: 1 },
    {
      seal: testWaitSeal(),
      kube,
      reporter,
      describeBlockers: (ns) => Promise.resolve(blockers(ns)),
      now: () => new Date(),
    },
  );
  cleanups.push(async () => {
    await worker.close();
    await queues.close();
    await deleteKeys(redis, prefix);
    await redis.quit();
  });
  const start = (namespace: string, timeoutMs: number, intervalMs: number, threadTs = "1699999999.000100") =>
    enqueueNamespaceGone(
      testWaits(queues.waits),
      {
        cluster: "prod-eks",
        namespace,
        channel: "COPS",
        threadTs,
        timeoutMs,
        intervalMs,
      },
      new Date(),
    );
  return { queues, kube, reporter, worker, start };
}

const finalText = (m: Message | undefined) => {
  const last = m?.texts.at(-1);
  return last && (last.startsWith("✅") || last.startsWith("⌛")) ? last : undefined;
};

describe("namespace-gone wait", () => {
  it("edits one status message while blocked and ends when the namespace is gone", async () => {
    const r = rig((ns) => [`Ingress ${ns}/myapp-worker-ingress (ingress.k8s.aws/resources)`]);
    r.kube.putNamespace("myapp");
    const id = await r.start("myapp", 30_000, 50);
    expect(id).toBe(namespaceGoneJobId("prod-eks", "myapp"));

    const msg = await eventually(() => {
      const m = r.reporter.about("myapp");
      return m && m.texts.length >= 3 ? m : undefined;
    });
    expect(msg.threadTs).toBe("1699999999.000100");
    expect(msg.texts[0]).toContain(
      "still Terminating, 1 blocker left: Ingress myapp/myapp-worker-ingress (ingress.k8s.aws/resources)",
    );
    r.kube.deleteNamespace("myapp");
    const last = await eventually(() => finalText(r.reporter.about("myapp")));
    expect(last).toContain("Namespace myapp is gone");
    expect(r.reporter.messages.size).toBe(1);
    await eventually(async () => ((await r.queues.waits.getJob(id)) ? undefined : true), 5000, "job removal");
  });

  it("reports what still blocks at the deadline", async () => {
    const r = rig(() => [
      "Ingress myapp/x (ingress.k8s.aws/resources)",
      "Service myapp/y (service.k8s.aws/resources)",
    ]);
    r.kube.putNamespace("myapp");
    await r.start("myapp", 400, 50);
    const last = await eventually(() => finalText(r.reporter.about("myapp")));
    expect(last).toContain("still Terminating at the deadline");
    expect(last).toContain("2 blockers left: Ingress myapp/x (ingress.k8s.aws/resources), Service myapp/y");
    expect(r.reporter.about("myapp")!.texts.length).toBeGreaterThan(2);
  });

  it("keeps waiting through a failed read and says so", async () => {
    const r = rig();
    r.kube.putNamespace("myapp");
    r.kube.failNext("getNamespace", new UnstuckError(ErrorCode.Unreachable, "API server unreachable"));
    await r.start("myapp", 30_000, 50);
    await eventually(() => (r.reporter.about("myapp")?.texts.length ?? 0) >= 2 || undefined);
    expect(r.reporter.about("myapp")!.texts[0]).toContain(
      "could not read the cluster (API server unreachable)",
    );
    r.kube.deleteNamespace("myapp");
    expect(await eventually(() => finalText(r.reporter.about("myapp")))).toContain("is gone");
  });

  it("joins an existing wait for the same namespace instead of adding another", async () => {
    const r = rig();
    r.kube.putNamespace("myapp");
    const a = await r.start("myapp", 30_000, 50);
    const b = await r.start("myapp", 30_000, 50);
    expect(a).toBe(b);
    expect(await r.queues.waits.getJobCountByTypes("active", "delayed", "wait")).toBe(1);
    r.kube.deleteNamespace("myapp");
    await eventually(() => finalText(r.reporter.about("myapp")));
    expect(r.reporter.messages.size).toBe(1);
  });

  it("one wait per namespace: a request from another thread joins the running wait and learns its thread", async () => {
    const r = rig();
    r.kube.putNamespace("myapp");
    const request = (threadTs: string) => ({
      cluster: "prod-eks",
      namespace: "myapp",
      channel: "COPS",
      threadTs,
      timeoutMs: 30_000,
      intervalMs: 50,
    });
    const a = await startNamespaceGone(testWaits(r.queues.waits), request("1700000000.000001"), new Date());
    const b = await startNamespaceGone(testWaits(r.queues.waits), request("1700000000.000002"), new Date());
    expect(a).toMatchObject({ joined: false, threadTs: "1700000000.000001" });
    expect(b).toEqual({ id: a.id, joined: true, channel: "COPS", threadTs: "1700000000.000001" });
    r.kube.deleteNamespace("myapp");
    await eventually(() => finalText(r.reporter.about("myapp")));
    expect([...r.reporter.messages.values()].map((m) => m.threadTs)).toEqual(["1700000000.000001"]);
    await eventually(
      async () => ((await r.queues.waits.getJob(a.id)) ? undefined : true),
      5000,
      "job removal",
    );

    // The episode is over: the next request starts a wait of its own, in its own thread.
    r.kube.putNamespace("myapp");
    const c = await startNamespaceGone(testWaits(r.queues.waits), request("1700000000.000003"), new Date());
    expect(c).toMatchObject({ joined: false, threadTs: "1700000000.000003" });
  });

  it("holds no worker slot while delayed: 20 waits all progress on one slot", async () => {
    const r = rig((ns) => [`Ingress ${ns}/web (ingress.k8s.aws/resources)`]);
    const names = Array.from({ length: 20 }, (_, i) => `ns-${i}`);
    for (const ns of names) r.kube.putNamespace(ns);
    for (const ns of names) await r.start(ns, 60_000, 100);

    // Every wait gets checked again and again while none of them is done.
    await eventually(
      () => names.every((ns) => (r.reporter.about(ns)?.texts.length ?? 0) >= 3) || undefined,
      20_000,
      "every wait to make progress",
    );
    expect(await r.queues.waits.getActiveCount()).toBeLessThanOrEqual(1);
    expect(await r.queues.waits.getDelayedCount()).toBeGreaterThan(1);

    for (const ns of names) r.kube.deleteNamespace(ns);
    await eventually(
      () => names.every((ns) => finalText(r.reporter.about(ns))?.includes("is gone")) || undefined,
      20_000,
      "every wait to finish",
    );
    expect(r.reporter.messages.size).toBe(20);
  });
});
