/**
 * A wait is never blocked by Slack: a burst of 429s (Retry-After a minute) on every post costs a
 * wait its status line for those checks, not minutes. A worker process's runtime (`createRuntime`,
 * `UNSTUCK_ROLE=worker`), the fake Slack and the simulated world after a repair: the CloudFront wait
 * keeps checking while Slack refuses, posts its one status message as soon as Slack takes it, and
 * ends on its result, long before the Retry-After Slack asked for has passed.
 */
import { GetDistributionConfigCommand, UpdateDistributionCommand } from "@aws-sdk/client-cloudfront";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AwsClients } from "../../src/aws/clients.js";
import { enqueueEdgeWait, edgeWaitJobId, type EdgeWaitTarget } from "../../src/jobs/edge-waits.js";
import { eventually } from "../helpers/eventually.js";
import { testWaits } from "../helpers/keys.js";
import { startTestWorld, type TestWorld, type WorldRuntime } from "../helpers/world.js";
import type { FakeSlack, SlackCall } from "../sim/slack/index.js";
import type { World } from "../sim/world.js";

const TOKEN = "xoxb-wait-429-token";
const CHANNEL = "C0INCIDENT";
const THREAD = "1770888000.000100";
const DIST = "E2MYAPPTEST0001";
const DEPLOYED = /^✅ CloudFront E2MYAPPTEST0001 is Deployed after/;

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

beforeAll(async () => {
  tw = await startTestWorld({
    token: TOKEN,
    label: "wait-slack-429",
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

describe("a wait while Slack answers 429", () => {
  it("keeps checking, posts its status message once Slack takes it, and ends on its result", async () => {
    // Slack refuses the next 6 posts with a minute's Retry-After.
    fake.setFault("chat.postMessage", { kind: "rate-limited", retryAfterSeconds: 60, times: 6 });
    const w = await worker();
    await repoint();
    const started = Date.now();
    const target: EdgeWaitTarget = { kind: "cloudfront-deployed", distributionId: DIST };
    await enqueueEdgeWait(
      testWaits(w.runtime.queues.waits),
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
    const id = edgeWaitJobId(target, CHANNEL, THREAD);
    await eventually(
      async () => ((await w.runtime.queues.waits.getJobState(id)) === "unknown" ? true : undefined),
      20_000,
      "the wait to finish",
    );
    // Far less than the minute Slack asked to wait: the wait never sat out the Retry-After.
    expect(Date.now() - started).toBeLessThan(20_000);
    const refused = fake.calls().filter((c) => c.method === "chat.postMessage" && c.fault !== undefined);
    expect(refused.length).toBeGreaterThan(0);
    // One status message (whatever check Slack first took it from), ending on the result.
    const status = posts(/CloudFront E2MYAPPTEST0001/);
    expect(status).toHaveLength(1);
    const ts = String(status[0]?.response?.["ts"]);
    expect(fake.message(CHANNEL, ts)?.text).toMatch(DEPLOYED);
  }, 60_000);
});
