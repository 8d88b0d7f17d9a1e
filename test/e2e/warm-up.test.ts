/**
 * The bot warms its command path before it listens: by the time `start()` resolves, it has read
 * discovery and run `ns default` through the registry (one namespace read), so the first burst of
 * commands after start-up does not pay for that first use. A warm-up that fails does not stop the
 * start. No timing is asserted: what is checked is that the reads happened, and when.
 */
import type { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../src/kube/port.js";
import { warmUp, WARM_UP_NAMESPACE } from "../../src/wiring/warm-up.js";
import { startTestWorld, type TestWorld, type WorldRuntime } from "../helpers/world.js";
import type { KubeSim } from "../sim/kube/index.js";
import type { FakeSlack } from "../sim/slack/index.js";

const SECRET = "warm-up-signing-secret";
const TOKEN = "xoxb-warm-up-token";

let w: TestWorld;
let sim: KubeSim;
let fake: FakeSlack;
let redis: Redis;
let prefix: string;
let runtime: WorldRuntime | undefined;

beforeAll(async () => {
  w = await startTestWorld({
    token: TOKEN,
    secret: SECRET,
    label: "warm-up",
    kube: {},
    role: "bot",
    env: { UNSTUCK_ALLOW_VOLATILE_REDIS: "true" },
    boot: false,
  });
  if (w.kube === undefined) throw new Error("the world has a kube simulator");
  sim = w.kube;
  ({ fake, redis, prefix } = w);
});

afterEach(async () => {
  await runtime?.stop();
  runtime = undefined;
});

afterAll(async () => {
  await w.stop();
});

async function startBot(kube: KubePort, log = pino({ level: "silent" })): Promise<void> {
  runtime = await w.boot({ services: { kube }, log });
}

describe("the bot's warm-up", () => {
  it("reads discovery and runs ns default before it listens", async () => {
    sim.resetRequests();
    await startBot(createKubeAdapter(sim.kubeconfig()));
    const paths = sim.requests().map((r) => `${r.method} ${r.path}`);
    expect(paths).toContain("GET /apis");
    expect(paths).toContain(`GET /api/v1/namespaces/${WARM_UP_NAMESPACE}`);
    // Read-only: nothing written.
    expect(sim.requests().filter((r) => r.method !== "GET")).toEqual([]);
    // Nor recorded: no observation of it in the audit log, so no incident's timeline names it.
    const streams = (await redis.keys(`${prefix}*`)).filter((k) => k.endsWith(":audit"));
    expect(streams.length).toBeLessThanOrEqual(1);
    for (const key of streams) {
      const entries = await redis.xrange(key, "-", "+");
      expect(JSON.stringify(entries)).not.toContain(WARM_UP_NAMESPACE);
    }
  });

  it("warms the ack path once it listens: one signed click on no button, acknowledged, nothing posted", async () => {
    const lines: Record<string, unknown>[] = [];
    const log = pino(
      { level: "debug" },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    fake.clear();
    await startBot(createKubeAdapter(sim.kubeconfig()), log);
    const warmed = lines.find((l) => l["msg"] === "ack path warmed");
    // Signed with the bot's own secret, so Bolt verified it and the fallback acknowledged it.
    expect(warmed?.["status"]).toBe(200);
    // Nothing reached Slack but the start's own token check.
    expect(fake.calls().map((c) => c.method)).toEqual(["auth.test"]);
    expect(fake.responses()).toEqual([]);
  });

  it("does not stop the start when it fails", async () => {
    const failing = createKubeAdapter(sim.kubeconfig());
    const kube: KubePort = {
      ...failing,
      discover: () => Promise.reject(new Error("discovery unavailable")),
      getNamespace: () => Promise.reject(new Error("namespace unavailable")),
    };
    await expect(startBot(kube)).resolves.toBeUndefined();
  });

  it("resolves when the work does not finish within its bound", async () => {
    const never = new Promise<never>(() => undefined);
    const rendered: unknown[] = [];
    await warmUp({
      registry: { dispatch: () => never },
      services: { kube: { discover: () => Promise.resolve({ resources: [] }) } } as never,
      command: "unstuck",
      render: (r) => rendered.push(r),
      log: pino({ level: "silent" }),
      timeoutMs: 1,
    });
    expect(rendered).toEqual([]);
  });
});
