/**
 * Redis gone for a while under a running bot (`UNSTUCK_ROLE=all`: queues, workers, the Slack
 * receiver): every line it writes stays one structured JSON record (no raw stack trace from a
 * client without a listener), the outage is said once per connection rather than once per
 * reconnect attempt, and its end is said too. Runs on a private redis-server, stopped and started
 * again on the same port.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import { startFakeSlack, type FakeSlack } from "../sim/slack/index.js";
import { eventually, pause } from "../helpers/eventually.js";
import { keyEnv } from "../helpers/keys.js";
import {
  freePort,
  runMain,
  startPrivateRedis,
  stopChild,
  type MainRun,
  type PrivateRedis,
} from "./helpers.js";

const TOKEN = "xoxb-redis-outage-token";
const OUTAGE_MS = 12_000;

interface Record_ {
  readonly level?: unknown;
  readonly msg?: unknown;
}

describe("a Redis outage under a running bot", () => {
  let fake: FakeSlack;
  let sim: KubeSim;
  let dir: string;
  let redis: PrivateRedis;
  let run: MainRun | undefined;

  beforeAll(async () => {
    fake = await startFakeSlack({ token: TOKEN });
    sim = await startKubeSim({ scenario: "test/fixtures/scenarios/seed-incident.yaml" });
    dir = await mkdtemp(join(tmpdir(), "unstuck-redis-outage-"));
    await sim.writeKubeconfig(join(dir, "kubeconfig"));
    redis = await startPrivateRedis(["--save", "", "--appendonly", "no"]);
  });
  afterAll(async () => {
    if (run) await stopChild(run.child);
    await redis.stop();
    await fake.stop();
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("writes only JSON lines, says the outage once per connection, and says when Redis is back", async () => {
    run = runMain({
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_SIGNING_SECRET: "redis-outage-secret",
      SLACK_API_URL: fake.url,
      PORT: String(await freePort()),
      KUBECONFIG: join(dir, "kubeconfig"),
      REDIS_URL: redis.url,
      UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
      ...keyEnv(),
      UNSTUCK_CHANNELS: "C0INCIDENT",
      UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS: "3",
      UNSTUCK_LOG_LEVEL: "info",
    });
    const current = run;
    await eventually(
      () => (current.stdout().includes("unstuck is running") ? true : undefined),
      30_000,
      `the bot started (stderr: ${current.stderr()})`,
    );
    const before = current.stdout().length;
    await redis.stop();
    await pause(OUTAGE_MS);
    const duringOut = current.stdout().slice(before);
    const duringErr = current.stderr();
    redis = await startPrivateRedis(["--save", "", "--appendonly", "no"], redis.port);
    const lines = duringOut.split("\n").filter((l) => l !== "");
    // Nothing outside the structured log (a client without a listener prints raw stacks to stderr).
    expect(duringErr).toBe("");
    const records = lines.map((l) => JSON.parse(l) as Record_);
    for (const r of records) expect(["debug", "info", "warn", "error", "fatal"]).toContain(r.level);
    // Every client of Redis lost its connection and retried many times; the log says so once.
    expect(records.map((r) => r.msg)).toEqual(["redis unreachable"]);

    const after = await eventually(
      () => {
        const back = current
          .stdout()
          .slice(before + duringOut.length)
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l) as Record_ & { downSeconds?: number });
        return back.some((r) => r.msg === "redis connection restored") ? back : undefined;
      },
      20_000,
      "the bot said Redis is back",
    );
    const restored = after.filter((r) => r.msg === "redis connection restored");
    expect(restored).toHaveLength(1);
    expect(restored[0]?.downSeconds).toBeGreaterThanOrEqual(OUTAGE_MS / 1000 - 1);
    expect(current.stderr()).toBe("");
  }, 90_000);
});
