/**
 * `/metrics` after real work: a command dispatched through the registry, an AWS read the simulated
 * account denies (its error code), a Slack 429 from the fake Slack that the WebClient waits out and
 * retries, and the approval store's and BullMQ's state read at scrape time from a real Redis.
 */
import { readFile } from "node:fs/promises";
import { WebClient } from "@slack/web-api";
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultRegistry } from "../../../commands/index.js";
import type { CommandContext } from "../../../commands/types.js";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import { loadConfig } from "../../../src/config.js";
import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import { createQueues } from "../../../src/jobs/queues.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { runtimeTarget } from "../../../src/ops-target.js";
import { startOpsServer, type OpsServer } from "../../../src/ops/server.js";
import { boltLogger } from "../../../src/slack/bolt-logger.js";
import { countedRetries, countRateLimits } from "../../../src/slack/web-metrics.js";
import { connect } from "../../helpers/redis.js";
import { startFakeSlack, type FakeSlack } from "../../sim/slack/fake-slack.js";
import { openAwsWorld, type AwsWorld } from "../helpers/aws-world.js";
import { keyEnv } from "../../helpers/keys.js";

const log = pino({ level: "silent" });
const prefix = `unstuck-metrics-${String(process.pid)}-${String(Date.now())}`;

let server: OpsServer;
let world: AwsWorld;
let slack: FakeSlack;
let redis: Redis;
let queues: ReturnType<typeof createQueues>;

/** The value of one sample line `name{labels} value`, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries(
      [...(m[2] ?? "").matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

beforeAll(async () => {
  world = await openAwsWorld("seed-incident.yaml");
  slack = await startFakeSlack({ token: "xoxb-metrics-test" });
  redis = connect();
  queues = createQueues({ connection: redis, prefix: `${prefix}:bull` });
  server = await startOpsServer({ port: 0, host: "127.0.0.1", log, cacheMs: 0 });
  const kubeconfig = `/tmp/${prefix}.kubeconfig`;
  const { writeFile } = await import("node:fs/promises");
  await writeFile(kubeconfig, world.w.kube.kubeconfig());
  const config = loadConfig({
    SLACK_BOT_TOKEN: "xoxb-metrics-test",
    SLACK_SIGNING_SECRET: "metrics-signing-secret",
    SLACK_API_URL: slack.url,
    KUBECONFIG: kubeconfig,
    ...keyEnv(),
    UNSTUCK_REDIS_PREFIX: prefix,
  });
  server.attach(runtimeTarget(config, { redis, queues }, { slackCacheMs: 60_000 }));
}, 60_000);

afterAll(async () => {
  await server.close();
  await queues.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  await slack.stop();
  await world.close();
});

describe("/metrics", () => {
  it("counts a command's latency by verb, a denied AWS call by code, a Slack 429 and its retry, approvals and jobs by state", async () => {
    // A command, through the registry every surface dispatches to.
    const registry = defaultRegistry();
    const ctx = { services: { log } } as unknown as CommandContext;
    expect((await registry.dispatch("help", ctx)).type).toBe("help");
    expect((await registry.dispatch("no-such-verb", ctx)).type).toBe("error");

    // An AWS read the account denies: the diagnosis goes on, the call is counted with its code.
    world.w.aws.setFaults({ deny: ["DescribeNetworkInterfaces"] });
    await diagnoseNamespace(createKubeAdapter(world.w.kube.kubeconfig()), "myapp", {
      now: () => new Date(),
      aws: { port: createAwsAdapter(world.c) },
    });

    // A Kubernetes read of a namespace that does not exist: a 404, counted under its status.
    expect(await createKubeAdapter(world.w.kube.kubeconfig()).getNamespace("no-such-namespace")).toBeNull();

    // A Slack 429 (Retry-After 1 s) that the bot's WebClient waits out and retries once.
    slack.setFault("chat.postMessage", { kind: "rate-limited", retryAfterSeconds: 1, times: 1 });
    const client = countRateLimits(
      new WebClient("xoxb-metrics-test", {
        slackApiUrl: slack.url,
        retryConfig: countedRetries(),
        logger: boltLogger(log, []),
      }),
    );
    const posted = await client.chat.postMessage({ channel: "C0INCIDENT", text: "metrics" });
    expect(posted.ok).toBe(true);

    // State read at scrape time: a pending and an approved request in the store's indexes (one of
    // them past its expiry), two waiting action jobs.
    const now = Date.now();
    await redis.zadd(`${prefix}:approvals:pending`, now + 600_000, "A", now - 1_000, "B");
    await redis.zadd(`${prefix}:approvals:approved`, now, "C");
    await queues.actions.add("probe", {}, { jobId: "probe-1" });
    await queues.actions.add("probe", {}, { jobId: "probe-2" });

    const res = await fetch(`http://127.0.0.1:${String(server.port)}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();

    expect(sample(text, "unstuck_command_duration_seconds_count", { verb: "help", outcome: "ok" })).toBe(1);
    expect(
      sample(text, "unstuck_command_duration_seconds_count", { verb: "unparsed", outcome: "error" }),
    ).toBe(1);
    expect(
      sample(text, "unstuck_command_duration_seconds_bucket", { verb: "help", outcome: "ok", le: "+Inf" }),
    ).toBe(1);

    const denied = { service: "ec2", operation: "DescribeNetworkInterfaces", code: "UnauthorizedOperation" };
    expect(sample(text, "unstuck_cloud_api_errors_total", denied)).toBeGreaterThanOrEqual(1);
    expect(sample(text, "unstuck_cloud_api_calls_total", denied)).toBeGreaterThanOrEqual(1);
    // The seed's ALB is gone: ELB's own error code, counted as a call and an error; reads that worked are OK.
    const gone = {
      service: "elbv2",
      operation: "DescribeLoadBalancers",
      code: "LoadBalancerNotFoundException",
    };
    expect(sample(text, "unstuck_cloud_api_calls_total", gone)).toBe(1);
    expect(sample(text, "unstuck_cloud_api_errors_total", gone)).toBe(1);
    const ok = { service: "ec2", operation: "DescribeSecurityGroups", code: "OK" };
    expect(sample(text, "unstuck_cloud_api_calls_total", ok)).toBeGreaterThanOrEqual(1);
    expect(sample(text, "unstuck_cloud_api_errors_total", { service: "ec2", code: "OK" })).toBeUndefined();

    // The diagnosis' Kubernetes requests by verb and code, and their durations; the missing namespace's 404.
    expect(
      sample(text, "unstuck_kube_api_requests_total", { verb: "get", code: "OK" }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, "unstuck_kube_api_requests_total", { verb: "list", code: "OK" }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(text, "unstuck_kube_api_requests_total", { verb: "get", code: "404" })).toBe(1);
    expect(sample(text, "unstuck_kube_api_request_duration_seconds_count", { verb: "get" })).toBe(
      (sample(text, "unstuck_kube_api_requests_total", { verb: "get", code: "OK" }) ?? 0) + 1,
    );
    // Which build: package.json's version and this Node (the revision is the image's; see test/deploy).
    const { version } = JSON.parse(await readFile("package.json", "utf8")) as { version: string };
    expect(sample(text, "unstuck_build_info", { version, node_version: process.version })).toBe(1);

    expect(sample(text, "unstuck_slack_api_rate_limited_total", { method: "chat.postMessage" })).toBe(1);
    expect(sample(text, "unstuck_slack_api_retries_total", { reason: "rate_limited" })).toBe(1);

    expect(sample(text, "unstuck_approvals", { state: "PENDING" })).toBe(2);
    expect(sample(text, "unstuck_approvals", { state: "APPROVED" })).toBe(1);
    expect(sample(text, "unstuck_approvals_pending_overdue")).toBe(1);
    expect(sample(text, "unstuck_jobs", { queue: "actions", state: "waiting" })).toBe(2);
    expect(
      sample(text, "unstuck_job_oldest_age_seconds", { queue: "actions", state: "waiting" }),
    ).toBeGreaterThanOrEqual(0);
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(sample(text, "unstuck_metrics_source_errors")).toBe(0);
  }, 60_000);
});
