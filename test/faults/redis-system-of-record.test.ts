/**
 * Redis as a system of record: the sweep schedule is upserted at every start, so a Redis that lost
 * everything (FLUSHDB, a restart without persistence) gets it back when the bot restarts; and the
 * durability check tells a managed Redis without CONFIG apart from a misconfigured one. Runs on a
 * private redis-server: the shared one is never flushed.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { KubePort } from "../../src/kube/port.js";
import type { Runtime } from "../../src/runtime.js";
import { redisDurability } from "../../src/startup.js";
import { startFakeSlack, type FakeSlack } from "../sim/slack/index.js";
import { startPrivateRedis, type PrivateRedis } from "./helpers.js";
import { keyEnv } from "../helpers/keys.js";
import { bootRuntime } from "../helpers/world.js";

const TOKEN = "xoxb-redis-sor-token";

/** The runtime never reaches the cluster in these tests. */
const noKube = new Proxy({} as KubePort, {
  get: (_t, p) => () => Promise.reject(new Error(`unexpected kube call ${String(p)}`)),
});

describe("Redis as a system of record", () => {
  let fake: FakeSlack;
  let redis: PrivateRedis;

  beforeAll(async () => {
    fake = await startFakeSlack({ token: TOKEN });
    redis = await startPrivateRedis(["--save", "", "--appendonly", "no"]);
  });
  afterAll(async () => {
    await fake.stop();
    await redis.stop();
  });

  async function startRuntime(): Promise<Runtime> {
    const config = loadConfig({
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_SIGNING_SECRET: "redis-sor-secret",
      SLACK_API_URL: fake.url,
      PORT: "0",
      REDIS_URL: redis.url,
      UNSTUCK_REDIS_PREFIX: "sor",
      ...keyEnv(),
    });
    // On its own redis-server (to restart it), not the test Redis a world shares: a config of its own.
    const { runtime } = await bootRuntime({ config, services: { kube: noKube } });
    return runtime;
  }

  it("re-creates the sweep schedule after FLUSHDB and a restart of the runtime", async () => {
    const first = await startRuntime();
    const before = await first.queues.actions.getJobSchedulers();
    expect(before.map((s) => s.key)).toContain("approvals-sweep");
    await first.stop();

    const admin = new Redis(redis.url);
    try {
      await admin.flushdb();
      expect(await admin.dbsize()).toBe(0);
    } finally {
      await admin.quit();
    }

    const second = await startRuntime();
    try {
      const after = await second.queues.actions.getJobSchedulers();
      expect(after.map((s) => s.key)).toContain("approvals-sweep");
    } finally {
      await second.stop();
    }
  });

  it("reports an evicting, non-persistent Redis as two problems", async () => {
    const admin = new Redis(redis.url);
    try {
      await admin.config("SET", "maxmemory-policy", "allkeys-lru");
      const report = await redisDurability(admin);
      expect(report.problems).toHaveLength(2);
      expect(report.problems[0]).toContain("allkeys-lru");
      expect(report.problems[1]).toContain("no persistence");

      await admin.config("SET", "maxmemory-policy", "noeviction");
      await admin.config("SET", "appendonly", "yes");
      expect(await redisDurability(admin)).toEqual({ problems: [], warnings: [] });
      await admin.config("SET", "appendonly", "no");
    } finally {
      await admin.quit();
    }
  });

  it("says so, and continues, when CONFIG is disabled as on managed Redis", async () => {
    const managed = await startPrivateRedis(["--rename-command", "CONFIG", ""]);
    const client = new Redis(managed.url);
    try {
      const report = await redisDurability(client);
      expect(report.problems).toEqual([]);
      expect(report.warnings).toHaveLength(1);
      expect(report.warnings[0]).toContain("CONFIG is not available");
      expect(report.warnings[0]).toContain("noeviction");
    } finally {
      await client.quit();
      await managed.stop();
    }
  });
});
