/**
 * Start-up fails fast and clearly: the real entry point, as a process, against an unreachable Redis,
 * an unreachable API server and a Redis unfit to keep approvals. Each exits non-zero with one line on
 * stderr naming what is wrong; nothing retries in the background.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REDIS_URL } from "../helpers/redis.js";
import { startKubeSim, type KubeSim } from "../sim/kube/index.js";
import { eventually } from "../helpers/eventually.js";
import { startFakeSlack, type FakeSlack } from "../sim/slack/index.js";
import { freePort, runMain, startPrivateRedis, type PrivateRedis } from "./helpers.js";
import { keyEnv } from "../helpers/keys.js";

const TOKEN = "xoxb-startup-test-token";

describe("start-up checks of the real entry point", () => {
  let fake: FakeSlack;
  let sim: KubeSim;
  let dir: string;
  let kubeconfig: string;
  let base: Record<string, string>;

  beforeAll(async () => {
    fake = await startFakeSlack({ token: TOKEN });
    sim = await startKubeSim({ scenario: "test/fixtures/scenarios/seed-incident.yaml" });
    dir = await mkdtemp(join(tmpdir(), "unstuck-startup-"));
    kubeconfig = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kubeconfig);
    base = {
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_SIGNING_SECRET: "startup-signing-secret",
      SLACK_API_URL: fake.url,
      KUBECONFIG: kubeconfig,
      PORT: "0",
      ...keyEnv(),
      UNSTUCK_STARTUP_TIMEOUT_SECONDS: "5",
      UNSTUCK_REDIS_PREFIX: `unstuck-startup-${String(process.pid)}`,
    };
  });
  afterAll(async () => {
    await fake.stop();
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("exits non-zero with one line naming Redis when REDIS_URL points at a closed port", async () => {
    const port = await freePort();
    const run = runMain({ ...base, REDIS_URL: `redis://127.0.0.1:${String(port)}` });
    const { code, elapsedMs } = await run.exited;
    expect(code).not.toBe(0);
    expect(elapsedMs).toBeLessThan(15_000);
    const lines = run.stderr().trim().split("\n");
    expect(lines).toEqual([
      `unstuck: cannot start: Redis at 127.0.0.1:${String(port)} is unreachable (ECONNREFUSED)`,
    ]);
    expect(run.stdout()).toBe("");
  });

  it("a SIGTERM while start-up still waits on a dependency stops it at once, cleanly, before it takes work", async () => {
    // Slack's auth.test answers only when released: start-up is held in its checks.
    const held = fake.hold("auth.test");
    const run = runMain({ ...base, REDIS_URL, UNSTUCK_ALLOW_VOLATILE_REDIS: "true" });
    try {
      await held.arrived;
      run.child.kill("SIGTERM");
      const { code, signal, elapsedMs } = await run.exited;
      // Handled, not the default action: exit 0, and within the start-up check's own bound (5 s).
      expect(signal).toBeNull();
      expect(code).toBe(0);
      expect(elapsedMs).toBeLessThan(20_000);
      expect(run.stdout()).toContain("stopped during start-up, before the bot took any work");
      expect(run.stdout()).not.toContain("unstuck is running");
    } finally {
      held.release();
      if (run.child.exitCode === null) run.child.kill("SIGKILL");
    }
  });

  it("names the Kubernetes API server when it is unreachable, in the same single line", async () => {
    const port = await freePort();
    const dead = join(dir, "dead-kubeconfig");
    const { writeFile, readFile } = await import("node:fs/promises");
    const text = await readFile(kubeconfig, "utf8");
    await writeFile(dead, text.replace(/server: \S+/, `server: http://127.0.0.1:${String(port)}`));
    const run = runMain({
      ...base,
      KUBECONFIG: dead,
      // The shared Redis persists nothing: allowed here, so that only the fault under test fails.
      REDIS_URL,
      UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
    });
    const { code } = await run.exited;
    expect(code).not.toBe(0);
    const lines = run.stderr().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^unstuck: cannot start: the Kubernetes API at http:\/\/127\.0\.0\.1:\d+ is unreachable \(ECONNREFUSED\)$/,
    );
  });

  it("names Slack when auth.test rejects the token, without printing the token", async () => {
    const run = runMain({
      ...base,
      SLACK_BOT_TOKEN: "xoxb-revoked-startup-token",
      // The shared Redis persists nothing: allowed here, so that only the fault under test fails.
      REDIS_URL,
      UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
    });
    const { code } = await run.exited;
    expect(code).not.toBe(0);
    const lines = run.stderr().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^unstuck: cannot start: Slack .* rejected SLACK_BOT_TOKEN in auth\.test \(invalid_auth\)/,
    );
    expect(run.stderr()).not.toContain("xoxb-revoked-startup-token");
  });

  it("names Slack when it is unreachable, in one line: the check's WebClient prints nothing of its own", async () => {
    const port = await freePort();
    const run = runMain({
      ...base,
      SLACK_API_URL: `http://127.0.0.1:${String(port)}/api/`,
      REDIS_URL,
      UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
    });
    const { code } = await run.exited;
    expect(code).not.toBe(0);
    const lines = run.stderr().trim().split("\n");
    expect(lines).toEqual([expect.stringMatching(/^unstuck: cannot start: Slack .* is unreachable/)]);
    expect(run.stdout()).not.toMatch(/web-api|http request failed/);
  });

  describe("a Redis that evicts keys and persists nothing", () => {
    let volatile: PrivateRedis;

    beforeAll(async () => {
      volatile = await startPrivateRedis([
        "--maxmemory-policy",
        "allkeys-lru",
        "--save",
        "",
        "--appendonly",
        "no",
      ]);
    });
    afterAll(async () => {
      await volatile.stop();
    });

    it("is refused, naming the policy and the missing persistence", async () => {
      const run = runMain({ ...base, REDIS_URL: volatile.url });
      const { code } = await run.exited;
      expect(code).not.toBe(0);
      const lines = run.stderr().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`Redis at 127.0.0.1:${String(volatile.port)}`);
      expect(lines[0]).toContain("maxmemory-policy is allkeys-lru");
      expect(lines[0]).toContain("no persistence");
      expect(lines[0]).toContain("UNSTUCK_ALLOW_VOLATILE_REDIS=true");
    });

    it("is accepted with UNSTUCK_ALLOW_VOLATILE_REDIS=true (with a warning), and SIGTERM stops the bot", async () => {
      const run = runMain({
        ...base,
        REDIS_URL: volatile.url,
        UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
        UNSTUCK_SHUTDOWN_TIMEOUT_SECONDS: "5",
      });
      try {
        await eventually(
          () => (run.stdout().includes("unstuck is running") ? true : undefined),
          20_000,
          "bot running",
        );
        expect(run.stdout()).toContain("started anyway: UNSTUCK_ALLOW_VOLATILE_REDIS=true");
        // The start-up check's WebClient logs through pino (debug), not its own console logger.
        expect(`${run.stdout()}${run.stderr()}`).not.toMatch(/\[(WARN|INFO|ERROR)\]\s+web-api/);
      } finally {
        run.child.kill("SIGTERM");
      }
      const { code, elapsedMs } = await run.exited;
      expect(code).toBe(0);
      expect(elapsedMs).toBeLessThan(30_000);
    });
  });
});
