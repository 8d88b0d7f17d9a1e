/**
 * A wait's outcome is said once, in its own status message, even when the job that said it runs
 * again. Two worker processes' runtimes (`createRuntime`, `UNSTUCK_ROLE=worker`, as `main.ts` builds
 * them) on one real Redis, the fake Slack, and the simulated world after a repair: CloudFront
 * InProgress → Deployed, test.example.com 502 → 200. The first worker edits both status messages to
 * their results; Slack is slow to answer (the fake holds its answers), and the worker is stopped
 * meanwhile: past its shutdown bound it hands both jobs back, unfinished, as it does on SIGTERM. The
 * second worker runs them again — the distribution is Deployed, the name answers 200 — and edits the
 * same messages again (an edit is idempotent) instead of posting anything. Each status message was
 * posted once and edited in place; no result is posted as a reply of its own.
 */
import { GetDistributionConfigCommand, UpdateDistributionCommand } from "@aws-sdk/client-cloudfront";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AwsClients } from "../../src/aws/clients.js";
import { enqueueEdgeWait, edgeWaitJobId, type EdgeWaitTarget } from "../../src/jobs/edge-waits.js";
import { eventually, pause } from "../helpers/eventually.js";
import { testWaits } from "../helpers/keys.js";
import { startTestWorld, type TestWorld, type WorldRuntime } from "../helpers/world.js";
import type { FakeSlack, SlackCall } from "../sim/slack/index.js";
import type { World } from "../sim/world.js";

const TOKEN = "xoxb-wait-handover-token";
const CHANNEL = "C0INCIDENT";
const THREAD = "1770888000.000100";
const DIST = "E2MYAPPTEST0001";
const URL_OK = "https://test.example.com/readyz";
const DEPLOYED = /^✅ CloudFront E2MYAPPTEST0001 is Deployed after/;
const ANSWERS = /^✅ test\.example\.com answers 200 \(GET https:\/\/test\.example\.com\/readyz\) after/;

let tw: TestWorld;
let world: World;
let clients: AwsClients;
let fake: FakeSlack;

/** One more worker process on the world, started. */
async function worker(): Promise<WorldRuntime> {
  return tw.boot({ role: "worker" });
}

/** The repair's CloudFront change: the default origin becomes the live payments ALB (InProgress). */
async function repoint(): Promise<void> {
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
}

const text = (c: SlackCall): string => (typeof c.body["text"] === "string" ? c.body["text"] : "");
const inThread = (c: SlackCall): boolean => c.body["thread_ts"] === THREAD && c.response?.["ok"] === true;
/** Thread replies posted (not edits) whose text matches. */
const posts = (re: RegExp): SlackCall[] =>
  fake.calls().filter((c) => c.method === "chat.postMessage" && inThread(c) && re.test(text(c)));
/** Edits of one message whose text matches. */
const edits = (ts: string, re: RegExp): number =>
  fake.calls().filter((c) => c.method === "chat.update" && c.body["ts"] === ts && re.test(text(c))).length;

beforeAll(async () => {
  tw = await startTestWorld({
    token: TOKEN,
    label: "wait-handover",
    sim: {
      scenario: "test/fixtures/scenarios/seed-incident.yaml",
      lbc: false,
      cloudFrontDeployMs: 1_500,
    },
    env: {
      UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
      // A stop gives running jobs 1.5 s, then hands them back for another worker.
      UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS: "2",
    },
    boot: false,
  });
  if (tw.sim === undefined || tw.aws === undefined) throw new Error("the world has its simulators");
  world = tw.sim;
  clients = tw.aws;
  fake = tw.fake;
}, 60_000);

afterAll(async () => {
  await tw.stop();
}, 60_000);

describe("a wait whose job runs again after it said its outcome", () => {
  it("CloudFront Deployed and the name answering 200 end their one status message each, across a hand-over to another worker", async () => {
    // Slack answers both final edits late: they are made, their callers wait.
    const deployed = fake.hold("chat.update", (c) => DEPLOYED.test(text(c)));
    const answers = fake.hold("chat.update", (c) => ANSWERS.test(text(c)));

    const first = await worker();
    await repoint();
    const targets: EdgeWaitTarget[] = [
      { kind: "cloudfront-deployed", distributionId: DIST },
      { kind: "http-ok", url: URL_OK },
    ];
    for (const target of targets) {
      await enqueueEdgeWait(
        testWaits(first.runtime.queues.waits),
        {
          target,
          cluster: "prod-eks",
          channel: CHANNEL,
          threadTs: THREAD,
          intervalMs: 200,
          maxIntervalMs: 400,
          timeoutMs: 60_000,
        },
        new Date(),
      );
    }
    // Both results are in their status messages; the first worker has not heard back from Slack.
    await Promise.all([deployed.arrived, answers.arrived]);
    const statusOf = (re: RegExp): string => {
      const status = fake
        .calls()
        .find((c) => c.method === "chat.postMessage" && inThread(c) && re.test(text(c)));
      return String(status?.response?.["ts"]);
    };
    const cloudFrontStatus = statusOf(/^⏳ CloudFront E2MYAPPTEST0001 is InProgress/);
    const hostStatus = statusOf(/^⏳ test\.example\.com answers 502/);
    expect(edits(cloudFrontStatus, DEPLOYED)).toBe(1);
    expect(edits(hostStatus, ANSWERS)).toBe(1);

    // The first worker is stopped: past its bound it hands both running jobs back, unfinished.
    const stopping = first.stop();
    const ids = targets.map((t) => edgeWaitJobId(t, CHANNEL, THREAD));

    // Another worker runs both checks again: the distribution is Deployed, the name answers 200.
    const second = await worker();
    await eventually(
      () => (edits(cloudFrontStatus, DEPLOYED) >= 2 && edits(hostStatus, ANSWERS) >= 2 ? true : undefined),
      15_000,
      "the second worker re-ran both checks (each status edited to its result again)",
    );
    // Slack's answers reach the first worker at last.
    deployed.release();
    answers.release();
    await stopping;
    await eventually(
      async () => {
        const states = await Promise.all(ids.map((id) => second.runtime.queues.waits.getJobState(id)));
        return states.every((s) => s === "unknown" || s === "completed") ? true : undefined;
      },
      15_000,
      "both waits finished",
    );
    await pause(1_000);

    // Each wait's one status message, posted once, ends on its result; no result is posted again.
    expect(posts(DEPLOYED)).toHaveLength(0);
    expect(posts(ANSWERS)).toHaveLength(0);
    expect(posts(/CloudFront E2MYAPPTEST0001/)).toHaveLength(1);
    expect(posts(/test\.example\.com/)).toHaveLength(1);
    expect(fake.message(CHANNEL, cloudFrontStatus)?.text).toMatch(DEPLOYED);
    expect(fake.message(CHANNEL, hostStatus)?.text).toMatch(ANSWERS);
  }, 60_000);
});
