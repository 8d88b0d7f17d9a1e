/**
 * One check of an edge wait with injected ports and a stand-in job: what each kind says while
 * waiting, when done and at the deadline; how the pause grows; what is retried and what is not.
 */
import { DelayedError, type Job } from "bullmq";
import { describe, expect, it } from "vitest";
import type { EdgeProbe, HttpResult, ResolveResult } from "../../../src/net/port.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import {
  checkEdgeWait,
  duration,
  edgeWaitJobId,
  type EdgeWaitData,
  type EdgeWaitDeps,
  type EdgeWaitResult,
  type EdgeWaitTarget,
} from "../../../src/jobs/edge-waits.js";

const T0 = Date.parse("2026-02-12T08:40:00Z");

interface Stand {
  job: Job<EdgeWaitData, EdgeWaitResult>;
  data(): EdgeWaitData;
  delayedUntil(): number | undefined;
}

function standIn(target: EdgeWaitTarget, over: Partial<EdgeWaitData> = {}): Stand {
  let data: EdgeWaitData = {
    target,
    cluster: "prod-eks",
    channel: "COPS",
    threadTs: "1.2",
    startedAt: T0,
    deadline: T0 + 45 * 60_000,
    intervalMs: 20_000,
    maxIntervalMs: 60_000,
    checks: 0,
    ...over,
  };
  let until: number | undefined;
  const job = {
    id: "job-1",
    get data() {
      return data;
    },
    updateData: (d: EdgeWaitData) => {
      data = d;
      return Promise.resolve();
    },
    moveToDelayed: (at: number) => {
      until = at;
      return Promise.resolve();
    },
  };
  return {
    job: job as unknown as Job<EdgeWaitData, EdgeWaitResult>,
    data: () => data,
    delayedUntil: () => until,
  };
}

function deps(
  at: number,
  answers: {
    cf?: () => Promise<string>;
    r53?: () => Promise<string>;
    dns?: () => ResolveResult;
    http?: () => HttpResult;
  },
) {
  const posted: string[] = [];
  const edited: string[] = [];
  const probe: EdgeProbe = {
    resolve: () => Promise.resolve(answers.dns?.() ?? { kind: "nxdomain" }),
    http: () => Promise.resolve(answers.http?.() ?? { status: 200 }),
  };
  const d: EdgeWaitDeps = {
    aws: {
      distributionStatus: async () => ({
        status: await (answers.cf?.() ?? Promise.resolve("Deployed")),
        etag: "E1",
      }),
      changeStatus: () => answers.r53?.() ?? Promise.resolve("INSYNC"),
    },
    reporter: {
      post: (_c, _t, text) => {
        posted.push(text);
        return Promise.resolve({ ts: `9.${posted.length}` });
      },
      update: (_c, _ts, text) => {
        edited.push(text);
        return Promise.resolve();
      },
    },
    probe,
    now: () => new Date(at),
    // No jitter drawn: each pause exactly as nominal.
    random: () => 0,
  };
  return { d, posted, edited };
}

async function delayed(p: Promise<unknown>): Promise<void> {
  await expect(p).rejects.toBeInstanceOf(DelayedError);
}

describe("duration", () => {
  it("reads like a clock for people, in ms below a second", () => {
    expect(duration(40_000)).toBe("40s");
    expect(duration(192_000)).toBe("3m12s");
    expect(duration(362_000)).toBe("6m02s");
    expect(duration(3_900_000)).toBe("1h05m00s");
    expect(duration(150)).toBe("150ms");
  });
});

describe("edgeWaitJobId", () => {
  it("is one id per target and thread, with ':' kept out of BullMQ's way", () => {
    const a = edgeWaitJobId({ kind: "dns-nxdomain", name: "K8S-Old.elb.amazonaws.com." }, "C", "1.2");
    const b = edgeWaitJobId({ kind: "dns-nxdomain", name: "k8s-old.elb.amazonaws.com" }, "C", "1.2");
    expect(a).toBe(b);
    expect(edgeWaitJobId({ kind: "dns-nxdomain", name: "k8s-old.elb.amazonaws.com" }, "C", "1.3")).not.toBe(
      a,
    );
    expect(edgeWaitJobId({ kind: "route53-insync", changeId: "/change/C1" }, "C", "1.2")).toBe(
      edgeWaitJobId({ kind: "route53-insync", changeId: "C1" }, "C", "1.2"),
    );
    expect(
      edgeWaitJobId({ kind: "http-ok", url: "https://test.example.com/readyz" }, "C", "1.2"),
    ).not.toContain(":");
  });
});

describe("checkEdgeWait", () => {
  it("CloudFront: posts the status, re-delays with a growing pause, then edits in the result (no second reply)", async () => {
    const s = standIn({ kind: "cloudfront-deployed", distributionId: "E2MYAPPTEST0001" });
    const first = deps(T0 + 192_000, { cf: () => Promise.resolve("InProgress") });
    await delayed(checkEdgeWait(s.job, "tok", first.d));
    expect(first.posted).toEqual([
      "⏳ CloudFront E2MYAPPTEST0001 is InProgress for 3m12s (check 1, next in 20s)",
    ]);
    expect(s.delayedUntil()).toBe(T0 + 192_000 + 20_000);
    expect(s.data()).toMatchObject({ checks: 1, statusTs: "9.1", intervalMs: 30_000 });

    const pauses: string[] = [];
    for (let i = 0; i < 4; i++) {
      const again = deps(T0 + 240_000, { cf: () => Promise.resolve("InProgress") });
      await delayed(checkEdgeWait(s.job, "tok", again.d));
      pauses.push(/next in (\w+)\)/.exec(again.edited[0] ?? "")?.[1] ?? "");
    }
    expect(pauses).toEqual(["30s", "45s", "1m00s", "1m00s"]);

    const last = deps(T0 + 362_000, {});
    const result = await checkEdgeWait(s.job, "tok", last.d);
    expect(result).toEqual({
      outcome: "done",
      checks: 6,
      text: "✅ CloudFront E2MYAPPTEST0001 is Deployed after 6m02s.",
    });
    expect(last.edited).toEqual([result.text]);
    // The edited status message is the wait's only message: the result is not posted again.
    expect(last.posted).toEqual([]);
  });

  it("Route 53: INSYNC, PENDING, and the deadline with the command to run", async () => {
    const target: EdgeWaitTarget = { kind: "route53-insync", changeId: "C123", zoneName: "example.com" };
    const pending = deps(T0 + 5000, { r53: () => Promise.resolve("PENDING") });
    await delayed(checkEdgeWait(standIn(target, { intervalMs: 5000 }).job, "t", pending.d));
    expect(pending.posted[0]).toBe(
      "⏳ Route 53 change C123 (zone example.com) is PENDING for 5s (check 1, next in 5s)",
    );

    const late = deps(T0 + 700_000, { r53: () => Promise.resolve("PENDING") });
    const r = await checkEdgeWait(standIn(target, { deadline: T0 + 600_000 }).job, "t", late.d);
    expect(r.outcome).toBe("timed-out");
    expect(r.text).toBe(
      "⌛ Route 53 change C123 (zone example.com) is still PENDING at the deadline (08:50:00Z, after 11m40s); check `aws route53 get-change --id C123` and the Route 53 Health Dashboard (changes normally sync within 60 s).",
    );

    const done = deps(T0 + 40_000, {});
    expect((await checkEdgeWait(standIn(target).job, "t", done.d)).text).toBe(
      "✅ Route 53 change C123 (zone example.com) is INSYNC after 40s: every Route 53 name server answers with it.",
    );
  });

  it("DNS: still resolving, the deadline names the load balancer to look up, NXDOMAIN is done", async () => {
    const name = "k8s-myapp-myappwor-0733a56cbb-1559597038.ap-northeast-2.elb.amazonaws.com";
    const target: EdgeWaitTarget = { kind: "dns-nxdomain", name };
    const resolving = (): ResolveResult => ({
      kind: "addresses",
      addresses: ["3.34.1.1", "3.35.2.2", "3.34.3.3", "3.35.4.4"],
    });
    const w = deps(T0 + 10_000, { dns: resolving });
    await delayed(checkEdgeWait(standIn(target, { intervalMs: 10_000 }).job, "t", w.d));
    expect(w.posted[0]).toBe(
      `⏳ ${name} still resolves (3.34.1.1, 3.35.2.2, 3.34.3.3, +1 more) for 10s (check 1, next in 10s)`,
    );

    const late = deps(T0 + 46 * 60_000, { dns: resolving });
    const r = await checkEdgeWait(standIn(target).job, "t", late.d);
    expect(r.text).toContain(`⌛ ${name} still resolves`);
    expect(r.text).toContain(`\`dig ${name}\``);
    expect(r.text).toContain("`aws elbv2 describe-load-balancers --names k8s-myapp-myappwor-0733a56cbb`");

    const done = deps(T0 + 20_000, { dns: () => ({ kind: "nxdomain" }) });
    expect((await checkEdgeWait(standIn(target).job, "t", done.d)).text).toBe(
      `✅ ${name} no longer resolves (NXDOMAIN) after 20s.`,
    );

    // A lookup that got no answer is not NXDOMAIN: reported and retried.
    const flaky = deps(T0 + 1000, { dns: () => ({ kind: "error", message: "queryA ETIMEOUT" }) });
    await delayed(checkEdgeWait(standIn(target).job, "t", flaky.d));
    expect(flaky.posted[0]).toBe(
      `⏳ ${name}: check 1 failed (could not resolve ${name}: queryA ETIMEOUT); retrying in 20s.`,
    );
  });

  it("HTTP: a 502 keeps waiting, no answer keeps waiting, 2xx is done; the deadline explains a 502", async () => {
    const url = "https://test.example.com/readyz";
    const target: EdgeWaitTarget = { kind: "http-ok", url };
    const bad = deps(T0 + 10_000, { http: () => ({ status: 502 }) });
    await delayed(checkEdgeWait(standIn(target, { intervalMs: 10_000 }).job, "t", bad.d));
    expect(bad.posted[0]).toBe(`⏳ test.example.com answers 502 (GET ${url}) for 10s (check 1, next in 10s)`);

    const none = deps(T0 + 10_000, { http: () => ({ error: "connect ECONNREFUSED 127.0.0.1:443" }) });
    await delayed(checkEdgeWait(standIn(target).job, "t", none.d));
    expect(none.posted[0]).toContain(
      "test.example.com gives no answer (GET https://test.example.com/readyz: connect ECONNREFUSED",
    );

    const late = deps(T0 + 46 * 60_000, { http: () => ({ status: 502 }) });
    const r = await checkEdgeWait(standIn(target).job, "t", late.d);
    expect(r.outcome).toBe("timed-out");
    expect(r.text).toContain(`⌛ test.example.com still answers 502 (GET ${url}) at the deadline`);
    expect(r.text).toContain("CloudFront 502");

    const ok = deps(T0 + 130_000, { http: () => ({ status: 204 }) });
    expect((await checkEdgeWait(standIn(target).job, "t", ok.d)).text).toBe(
      `✅ test.example.com answers 204 (GET ${url}) after 2m10s.`,
    );
  });

  it("a transient AWS error at the deadline ends the wait saying the last check failed", async () => {
    const target: EdgeWaitTarget = { kind: "cloudfront-deployed", distributionId: "E1" };
    const late = deps(T0 + 46 * 60_000, {
      cf: () => Promise.reject(new UnstuckError(ErrorCode.Throttled, "Rate exceeded")),
    });
    const r = await checkEdgeWait(standIn(target).job, "t", late.d);
    expect(r).toMatchObject({ outcome: "timed-out", checks: 1 });
    expect(r.text).toBe(
      "⌛ CloudFront E1: could not confirm by the deadline (09:25:00Z, after 46m00s); last check failed: Rate exceeded",
    );
  });

  it("a permanent error is reported in the status message and thrown, not retried", async () => {
    const target: EdgeWaitTarget = { kind: "cloudfront-deployed", distributionId: "E1" };
    const denied = deps(T0, {
      cf: () =>
        Promise.reject(
          new UnstuckError(ErrorCode.Forbidden, "not allowed: cloudfront:GetDistribution", {
            action: "cloudfront:GetDistribution",
          }),
        ),
    });
    await expect(checkEdgeWait(standIn(target).job, "t", denied.d)).rejects.toMatchObject({
      code: ErrorCode.Forbidden,
    });
    expect(denied.posted).toEqual([
      "❌ CloudFront E1 cannot be checked: not allowed: cloudfront:GetDistribution",
    ]);

    const missing = deps(T0, {
      cf: () =>
        Promise.reject(
          new UnstuckError(ErrorCode.Upstream, "no such distribution", { awsError: "NoSuchDistribution" }),
        ),
    });
    await expect(checkEdgeWait(standIn(target).job, "t", missing.d)).rejects.toMatchObject({
      code: ErrorCode.NotFound,
    });
  });
});
