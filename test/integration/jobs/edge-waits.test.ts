/**
 * Edge waits against real Redis and BullMQ, the AWS simulator through the real SDK,
 * the world's DNS server (Node's resolver) and its HTTP front: CloudFront InProgress → Deployed,
 * Route 53 PENDING → INSYNC, an old load balancer name going NXDOMAIN, a URL going 502 → 200 once
 * the repointed distribution is Deployed. Each wait owns one status message edited in place, holds
 * no worker slot between checks, joins an identical wait, and survives a killed worker.
 */
import { fileURLToPath } from "node:url";
import { GetDistributionConfigCommand, UpdateDistributionCommand } from "@aws-sdk/client-cloudfront";
import type { Worker } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import { createAwsClients, destroyAwsClients, type AwsClients } from "../../../src/aws/clients.js";
import type { AwsPort } from "../../../src/aws/port.js";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import { createEdgeProbe } from "../../../src/net/probe.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import {
  edgeWaitJobId,
  enqueueEdgeWait,
  type EdgeWaitDeps,
  type EdgeWaitRequest,
  type EdgeWaitTarget,
} from "../../../src/jobs/edge-waits.js";
import { createQueues, type Queues } from "../../../src/jobs/queues.js";
import type { ThreadReporter } from "../../../src/jobs/waits.js";
import { createWaitsWorker, type WorkerSetup } from "../../../src/jobs/workers.js";
import { startWorld, type World } from "../../sim/world.js";
import { FakeKube } from "../approvals/helpers/fake-kube.js";
import { eventually } from "../../helpers/eventually.js";
import { connect, deleteKeys, uniquePrefix } from "../../helpers/redis.js";
import { testWaitSeal, testWaits } from "../../helpers/keys.js";

const SEED = fileURLToPath(new URL("../../fixtures/scenarios/seed-incident.yaml", import.meta.url));
const DIST = "E2MYAPPTEST0001";
const ZONE = "Z0EXAMPLE7MYAPP0001";
const THREAD = "1699999999.000100";

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
  /** Every message posted in one thread, in order. */
  public inThread(threadTs: string): Message[] {
    return [...this.messages.values()].filter((m) => m.threadTs === threadTs);
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

interface Rig {
  readonly world: World;
  readonly clients: AwsClients;
  readonly aws: AwsPort;
  readonly queues: Queues;
  readonly reporter: RecordingReporter;
  readonly edge: EdgeWaitDeps;
  /** Moves the world's clock (CloudFront deployments, Route 53 sync) forward. */
  advance(ms: number): void;
  startWorker(setup?: Partial<WorkerSetup>, edge?: EdgeWaitDeps | null): Worker;
  start(target: EdgeWaitTarget, opts?: Partial<EdgeWaitRequest>): Promise<string>;
  /** UpdateDistribution through the SDK: the default origin becomes the live payments ALB. */
  repoint(): Promise<void>;
}

async function rig(options: { cloudFrontDeployMs?: number; route53SyncMs?: number } = {}): Promise<Rig> {
  let offset = 0;
  const world = await startWorld({
    scenario: SEED,
    lbc: false,
    now: () => new Date(Date.now() + offset),
    cloudFrontDeployMs: options.cloudFrontDeployMs ?? 1500,
    route53SyncMs: options.route53SyncMs ?? 800,
  });
  const clients = createAwsClients({
    region: "ap-northeast-2",
    endpoint: world.aws.url,
    credentials: { accessKeyId: "AKIAUNSTUCKTEST00001", secretAccessKey: "x" },
    maxAttempts: 1,
  });
  const aws = createAwsAdapter(clients);
  const prefix = uniquePrefix("edge-waits");
  const redis = connect();
  const queues = createQueues({ connection: redis, prefix });
  const reporter = new RecordingReporter();
  const edge: EdgeWaitDeps = {
    aws,
    reporter,
    probe: createEdgeProbe({ resolvers: [world.dns.address], httpVia: world.httpFront.url, timeoutMs: 2000 }),
    now: () => new Date(),
  };
  const workers: Worker[] = [];
  cleanups.push(async () => {
    await Promise.all(workers.map((w) => w.close(true)));
    await queues.close();
    await deleteKeys(redis, prefix);
    await redis.quit();
    destroyAwsClients(clients);
    await world.stop();
  });
  return {
    world,
    clients,
    aws,
    queues,
    reporter,
    edge,
    advance: (ms) => {
      offset += ms;
    },
    startWorker: (setup = {}, withEdge) => {
      const w = createWaitsWorker(
        { connection: redis, prefix, concurrency: 1, ...setup },
        {
          seal: testWaitSeal(),
          kube: new FakeKube(),
          reporter,
          describeBlockers: () => Promise.resolve([]),
          now: () => new Date(),
          ...(withEdge === null ? {} : { edge: withEdge ?? edge }),
        },
      );
      workers.push(w);
      return w;
    },
    start: (target, opts = {}) =>
      enqueueEdgeWait(
        testWaits(queues.waits),
        {
          target,
          cluster: "prod-eks",
          channel: "COPS",
          threadTs: THREAD,
          timeoutMs: 30_000,
          intervalMs: 100,
          maxIntervalMs: 300,
          ...opts,
        },
        new Date(),
      ),
    repoint: async () => {
      const live = [...world.aws.world.loadBalancers.values()].find((lb) => lb.state === "active");
      if (!live) throw new Error("the seed has a live load balancer (payments)");
      const got = await clients.cloudfront.send(new GetDistributionConfigCommand({ Id: DIST }));
      const config = got.DistributionConfig;
      const origin = config?.Origins?.Items?.[0];
      if (!config || !origin) throw new Error("the distribution has an origin");
      origin.DomainName = live.dnsName;
      await clients.cloudfront.send(
        new UpdateDistributionCommand({ Id: DIST, IfMatch: got.ETag, DistributionConfig: config }),
      );
    },
  };
}

const isFinal = (text: string | undefined): boolean =>
  text !== undefined && (text.startsWith("✅") || text.startsWith("⌛") || text.startsWith("❌"));

/** The one status message of a thread once it holds a result (fails if there are two). */
async function finished(r: Rig, threadTs = THREAD, timeoutMs = 15_000): Promise<Message> {
  return eventually(
    () => {
      const status = r.reporter.inThread(threadTs)[0];
      return status && isFinal(status.texts.at(-1)) ? status : undefined;
    },
    timeoutMs,
    `a result in thread ${threadTs}`,
  );
}

describe("edge waits", () => {
  it("CloudFront InProgress → Deployed: one status message edited in place, then the result", async () => {
    const r = await rig({ cloudFrontDeployMs: 1500 });
    await r.repoint();
    r.startWorker();
    const id = await r.start({ kind: "cloudfront-deployed", distributionId: DIST });
    expect(id).toBe(edgeWaitJobId({ kind: "cloudfront-deployed", distributionId: DIST }, "COPS", THREAD));

    const status = await finished(r);
    expect(status.threadTs).toBe(THREAD);
    expect(status.texts.length).toBeGreaterThanOrEqual(3);
    expect(status.texts[0]).toMatch(
      /^⏳ CloudFront E2MYAPPTEST0001 is InProgress for \d+ms \(check 1, next in 100ms\)$/,
    );
    // The pause grows by half each check up to the ceiling.
    expect(status.texts[1]).toContain("(check 2, next in 150ms)");
    expect(status.texts[2]).toContain("(check 3, next in 225ms)");
    expect(status.texts.at(-2)).toContain("next in 300ms");
    expect(status.texts.at(-1)).toMatch(/^✅ CloudFront E2MYAPPTEST0001 is Deployed after \d+(ms|s)\.$/);
    // The status message is the wait's only message: its result is an edit, never a second reply.
    expect(r.reporter.inThread(THREAD)).toHaveLength(1);
    await eventually(async () => ((await r.queues.waits.getJob(id)) ? undefined : true), 5000, "job removal");
  });

  it("started staggered: each wait posts its own status message, in the order started, then edits it to its result", async () => {
    const r = await rig({ cloudFrontDeployMs: 600, route53SyncMs: 300 });
    await r.repoint();
    const cf: EdgeWaitTarget = { kind: "cloudfront-deployed", distributionId: DIST };
    const http: EdgeWaitTarget = { kind: "http-ok", url: "https://test.example.com/" };
    await r.start(cf, {});
    await r.start(http, { firstCheckInMs: 300 });
    // Nothing is posted until a wait's first check runs: the wait posts its own message.
    expect(r.reporter.inThread(THREAD)).toHaveLength(0);
    // The same wait asked for again while it runs joins it.
    await r.start(cf, {});
    r.startWorker({ concurrency: 4 });
    await eventually(
      () => (r.reporter.inThread(THREAD).length === 2 ? true : undefined),
      10_000,
      "two posts",
    );
    const before = r.reporter.inThread(THREAD);
    expect(before[0]?.texts[0]).toMatch(/CloudFront E2MYAPPTEST0001/);
    expect(before[1]?.texts[0]).toMatch(/test\.example\.com/);
    r.advance(600_000);
    await eventually(
      () => (r.reporter.inThread(THREAD).every((m) => isFinal(m.texts.at(-1))) ? true : undefined),
      15_000,
      "both results",
    );
    const after = r.reporter.inThread(THREAD);
    expect(after).toHaveLength(2);
    expect(after[0]?.texts.at(-1)).toMatch(/^✅ CloudFront E2MYAPPTEST0001 is Deployed/);
    expect(after[1]?.texts.at(-1)).toMatch(/^✅ test\.example\.com answers 200/);
  });

  it("a target already there answers in one message, with no second post", async () => {
    const r = await rig();
    r.startWorker();
    await r.start({ kind: "cloudfront-deployed", distributionId: DIST });
    const status = await finished(r);
    expect(status.texts).toHaveLength(1);
    expect(status.texts[0]).toMatch(/^✅ CloudFront E2MYAPPTEST0001 is Deployed after/);
    expect(r.reporter.inThread(THREAD)).toHaveLength(1);
  });

  it("Route 53 change PENDING → INSYNC", async () => {
    const r = await rig({ route53SyncMs: 800 });
    const { changeId, status: first } = await r.aws.changeRecordSets(
      ZONE,
      [
        {
          action: "CREATE",
          record: { zoneId: ZONE, name: "later.example.com", type: "A", ttl: 60, values: ["203.0.113.7"] },
        },
      ],
      "unstuck edge wait test",
    );
    expect(first).toBe("PENDING");
    r.startWorker();
    await r.start({ kind: "route53-insync", changeId, zoneName: "example.com" });
    const status = await finished(r);
    expect(status.texts[0]).toContain(`⏳ Route 53 change ${changeId} (zone example.com) is PENDING for`);
    expect(status.texts.at(-1)).toMatch(
      new RegExp(`^✅ Route 53 change ${changeId} \\(zone example.com\\) is INSYNC after`),
    );
  });

  it("an old load balancer name: resolves through the world's DNS, then NXDOMAIN once it is deleted", async () => {
    const r = await rig();
    const lb = [...r.world.aws.world.loadBalancers.values()].find((x) => x.state === "active");
    if (!lb) throw new Error("live ALB");
    r.startWorker();
    await r.start({ kind: "dns-nxdomain", name: lb.dnsName }, { maxIntervalMs: 100 });
    await eventually(() => ((r.reporter.inThread(THREAD)[0]?.texts.length ?? 0) >= 2 ? true : undefined));
    const waiting = r.reporter.inThread(THREAD)[0]?.texts[0] ?? "";
    expect(waiting).toMatch(
      new RegExp(`^⏳ ${lb.dnsName.replaceAll(".", "\\.")} still resolves \\(3\\.\\d+`),
    );

    r.world.aws.world.deleteLoadBalancer(lb.arn);
    const status = await finished(r);
    expect(status.texts.at(-1)).toMatch(
      new RegExp(`^✅ ${lb.dnsName.replaceAll(".", "\\.")} no longer resolves \\(NXDOMAIN\\) after`),
    );
  });

  it("HTTP 502 while the origin is the deleted ALB, 200 once the repointed distribution is Deployed", async () => {
    const r = await rig({ cloudFrontDeployMs: 600_000 });
    r.startWorker();
    const url = "https://test.example.com/readyz";
    await r.start({ kind: "http-ok", url }, { maxIntervalMs: 100 });
    await eventually(() => ((r.reporter.inThread(THREAD)[0]?.texts.length ?? 0) >= 2 ? true : undefined));

    // Updated but not yet Deployed: the edges still forward to the deleted ALB.
    await r.repoint();
    const before = (r.reporter.inThread(THREAD)[0]?.texts.length ?? 0) + 2;
    await eventually(() =>
      (r.reporter.inThread(THREAD)[0]?.texts.length ?? 0) >= before ? true : undefined,
    );
    const status = r.reporter.inThread(THREAD)[0];
    expect(isFinal(status?.texts.at(-1))).toBe(false);
    expect(status?.texts.at(-1)).toContain(`⏳ test.example.com answers 502 (GET ${url}) for`);

    r.advance(600_000);
    const done = await finished(r);
    expect(done.texts.at(-1)).toMatch(
      /^✅ test\.example\.com answers 200 \(GET https:\/\/test\.example\.com\/readyz\) after/,
    );
  });

  it("says at the deadline that the distribution is still InProgress and what to check", async () => {
    const r = await rig({ cloudFrontDeployMs: 600_000 });
    await r.repoint();
    r.startWorker();
    await r.start({ kind: "cloudfront-deployed", distributionId: DIST }, { timeoutMs: 600 });
    const status = await finished(r);
    expect(status.texts.length).toBeGreaterThan(2);
    const last = status.texts.at(-1) ?? "";
    expect(last).toMatch(
      /^⌛ CloudFront E2MYAPPTEST0001 is still InProgress at the deadline \(\d\d:\d\d:\d\dZ, after /,
    );
    expect(last).toContain("`aws cloudfront get-distribution --id E2MYAPPTEST0001");
    expect(last).toContain("CloudFront console");
  });

  it("keeps waiting through a failed read and says so; a distribution that does not exist fails at once", async () => {
    const r = await rig();
    let failures = 1;
    const flaky: EdgeWaitDeps = {
      ...r.edge,
      aws: {
        distributionStatus: (id) => {
          if (failures-- > 0) {
            return Promise.reject(
              new UnstuckError(ErrorCode.Throttled, "Rate exceeded (cloudfront:GetDistribution)"),
            );
          }
          return r.aws.distributionStatus(id);
        },
        changeStatus: (id) => r.aws.changeStatus(id),
      },
    };
    r.startWorker({}, flaky);
    await r.start({ kind: "cloudfront-deployed", distributionId: DIST });
    const status = await finished(r);
    expect(status.texts[0]).toBe(
      "⏳ CloudFront E2MYAPPTEST0001: check 1 failed (Rate exceeded (cloudfront:GetDistribution)); retrying in 100ms.",
    );
    expect(status.texts.at(-1)).toMatch(/^✅ CloudFront E2MYAPPTEST0001 is Deployed/);

    const other = "1699999999.000200";
    const id = await r.start(
      { kind: "cloudfront-deployed", distributionId: "E0NOSUCHDIST01" },
      { threadTs: other },
    );
    const failed = await finished(r, other);
    expect(failed.texts.at(-1)).toMatch(/^❌ CloudFront E0NOSUCHDIST01 cannot be checked: /);
    const job = await eventually(async () => {
      const j = await r.queues.waits.getJob(id);
      return j?.failedReason && (await j.isFailed()) ? j : undefined;
    });
    expect(job.attemptsMade).toBe(1);
  });

  it("fails an edge wait unrecoverably on a worker built without the edge dependencies", async () => {
    const r = await rig();
    r.startWorker({}, null);
    const id = await r.start({ kind: "cloudfront-deployed", distributionId: DIST });
    const job = await eventually(async () => {
      const j = await r.queues.waits.getJob(id);
      return j?.failedReason && (await j.isFailed()) ? j : undefined;
    });
    expect(job.failedReason).toContain("needs the edge wait dependencies");
    expect(job.attemptsMade).toBe(1);
    expect(r.reporter.messages.size).toBe(0);
  });

  it("joins an identical wait (one job, one status message); another thread gets its own", async () => {
    const r = await rig({ cloudFrontDeployMs: 600_000 });
    await r.repoint();
    const target: EdgeWaitTarget = { kind: "cloudfront-deployed", distributionId: DIST };
    const a = await r.start(target);
    const b = await r.start(target);
    expect(a).toBe(b);
    expect(await r.queues.waits.getJobCountByTypes("active", "delayed", "wait")).toBe(1);
    const c = await r.start(target, { threadTs: "1699999999.000300" });
    expect(c).not.toBe(a);
    r.startWorker();
    await eventually(() => ((r.reporter.inThread(THREAD)[0]?.texts.length ?? 0) >= 2 ? true : undefined));
    r.advance(600_000);
    await finished(r);
    await finished(r, "1699999999.000300");
    // One status message per thread, edited to the result: no reply repeats it.
    expect(r.reporter.inThread(THREAD)).toHaveLength(1);
    expect(r.reporter.inThread("1699999999.000300")).toHaveLength(1);
    expect(r.reporter.messages.size).toBe(2);
  });

  it("holds no worker slot while waiting: 50 CloudFront waits progress on one slot", async () => {
    const r = await rig({ cloudFrontDeployMs: 600_000 });
    await r.repoint();
    const threads = Array.from({ length: 50 }, (_, i) => `1699999999.${String(1000 + i).padStart(6, "0")}`);
    for (const threadTs of threads) {
      await r.start(
        { kind: "cloudfront-deployed", distributionId: DIST },
        { threadTs, intervalMs: 200, maxIntervalMs: 2000 },
      );
    }
    r.startWorker({ concurrency: 1 });
    await eventually(
      () => threads.every((t) => (r.reporter.inThread(t)[0]?.texts.length ?? 0) >= 3) || undefined,
      30_000,
      "every wait to be checked three times",
    );
    // Between checks every wait is a delayed entry in Redis and no slot is taken.
    await eventually(
      async () => {
        const [active, delayed] = await Promise.all([
          r.queues.waits.getActiveCount(),
          r.queues.waits.getDelayedCount(),
        ]);
        return active === 0 && delayed === 50 ? true : undefined;
      },
      10_000,
      "all 50 waits delayed with no active job",
    );
    r.advance(600_000);
    await eventually(
      () => threads.every((t) => r.reporter.inThread(t)[0]?.texts.at(-1)?.startsWith("✅")) || undefined,
      30_000,
      "every wait to finish",
    );
    for (const t of threads) expect(r.reporter.inThread(t)).toHaveLength(1);
  });

  it("loses no wait when its worker is killed mid-check: a new worker picks it up and edits the same message", async () => {
    const r = await rig({ cloudFrontDeployMs: 600_000 });
    await r.repoint();
    let hang = false;
    let hung = 0;
    const hanging: EdgeWaitDeps = {
      ...r.edge,
      aws: {
        distributionStatus: (id) => {
          if (hang) {
            hung += 1;
            return new Promise<never>(() => undefined);
          }
          return r.aws.distributionStatus(id);
        },
        changeStatus: (id) => r.aws.changeStatus(id),
      },
    };
    const first = r.startWorker({ lockDuration: 1000, stalledInterval: 300 }, hanging);
    const id = await r.start({ kind: "cloudfront-deployed", distributionId: DIST });
    await eventually(() => ((r.reporter.inThread(THREAD)[0]?.texts.length ?? 0) >= 2 ? true : undefined));
    hang = true;
    await eventually(() => (hung > 0 ? true : undefined), 5000, "a check in flight");
    expect(await r.queues.waits.getActiveCount()).toBe(1);
    await first.close(true);

    const texts = r.reporter.inThread(THREAD)[0]?.texts.length ?? 0;
    r.startWorker({ lockDuration: 1000, stalledInterval: 300 });
    // The stalled job is delivered again and carries on with the same status message.
    await eventually(
      () => ((r.reporter.inThread(THREAD)[0]?.texts.length ?? 0) > texts ? true : undefined),
      10_000,
      "the wait to resume on the new worker",
    );
    r.advance(600_000);
    const status = await finished(r);
    expect(status.texts.at(-1)).toMatch(/^✅ CloudFront E2MYAPPTEST0001 is Deployed/);
    expect(r.reporter.inThread(THREAD)).toHaveLength(1);
    await eventually(async () => ((await r.queues.waits.getJob(id)) ? undefined : true), 5000, "job removal");
  });
});

describe("edge probe", () => {
  it("resolves through the given servers: addresses, NXDOMAIN, and no answer as an error", async () => {
    const world = await startWorld({ scenario: SEED, lbc: false });
    cleanups.push(() => world.stop());
    const probe = createEdgeProbe({ resolvers: [world.dns.address], timeoutMs: 1000 });
    const pay = await probe.resolve("pay.example.com");
    expect(pay.kind).toBe("addresses");
    expect(await probe.resolve("api.example.com.")).toEqual({ kind: "nxdomain" });
    // A server that does not answer is not evidence that a name is gone.
    const silent = createEdgeProbe({ resolvers: ["127.0.0.1:9"], timeoutMs: 300 });
    expect((await silent.resolve("pay.example.com")).kind).toBe("error");
  });

  it("sends HTTP through `httpVia` with the probed host; a refused connection is an error, not a status", async () => {
    const world = await startWorld({ scenario: SEED, lbc: false });
    cleanups.push(() => world.stop());
    const probe = createEdgeProbe({ httpVia: world.httpFront.url, timeoutMs: 2000 });
    expect(await probe.http("https://pay.example.com/readyz")).toEqual({ status: 200 });
    expect(await probe.http("https://test.example.com/")).toEqual({ status: 502 });
    const refused = await createEdgeProbe({ timeoutMs: 1000 }).http("http://127.0.0.1:9/readyz");
    expect(refused).toMatchObject({ error: expect.stringContaining("ECONNREFUSED") as unknown });
    expect(await probe.http("ftp://example.com/")).toEqual({
      error: "not an http(s) URL: ftp://example.com/",
    });
  });
});
