/**
 * Benchmarks for approvals (issue: two-person approval), through the product's own runtime:
 * - ack latency of button clicks, p50/p99, with 50 concurrent signed approve clicks (target p99 < 300 ms),
 *   and how many executions they caused (must be 1);
 * - 10,000 pending requests: Redis memory per request, and `/unstuck approvals` time (the store's
 *   page read, and the whole signed slash command until Slack has the answer).
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Redis } from "ioredis";
import { pino } from "pino";
import { ApprovalSigner, randomApprovalKey } from "../src/approvals/integrity.js";
import { ApprovalStore } from "../src/approvals/store.js";
import { newRequestId, type ApprovalRequest } from "../src/approvals/types.js";
import { loadConfig } from "../src/config.js";
import { resolveResourceType } from "../src/diagnosis/removal-plan.js";
import { createKubeAdapter } from "../src/kube/client-node-adapter.js";
import { createRuntime } from "../src/runtime.js";
import { startKubeSim } from "../test/sim/kube/index.js";
import { until } from "../test/sim/kube/testing.js";
import { blockActionsBody, postSigned, slashCommandBody, startFakeSlack } from "../test/sim/slack/index.js";
import { deleteKeysWithPrefix } from "../test/sim/redis.js";

const SECRET = "bench-signing-secret";
const TOKEN = "xoxb-bench";
const CHANNEL = "C0BENCH";
const CLICKS = 50;
const PENDING = 10_000;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info("memory");
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
}

export async function benchApprovals(): Promise<{ name: string; lines: string[]; ok: boolean }> {
  const prefix = `unstuck-bench-${randomBytes(4).toString("hex")}`;
  const approvers = Array.from({ length: CLICKS }, (_, i) => `U0APPR${String(i).padStart(4, "0")}`);
  const sim = await startKubeSim({
    scenario: "test/fixtures/scenarios/seed-incident.yaml",
    controllerIntervalMs: 1000,
  });
  const fake = await startFakeSlack({ token: TOKEN });
  const log = pino({ level: "silent" });
  const approvalKey = randomApprovalKey();
  const signer = new ApprovalSigner(approvalKey);
  const config = loadConfig({
    SLACK_BOT_TOKEN: TOKEN,
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: fake.url,
    PORT: "0",
    UNSTUCK_REDIS_PREFIX: prefix,
    UNSTUCK_APPROVERS: approvers.join(","),
    UNSTUCK_APPROVAL_KEY: approvalKey,
  });
  const kube = createKubeAdapter(sim.kubeconfig());
  const runtime = await createRuntime({ config, log, services: { kube, now: () => new Date(), log } });
  const redis = new Redis(config.redisUrl);
  try {
    const { port } = await runtime.start();
    const events = `http://127.0.0.1:${String(port)}/slack/events`;

    // One real request for the seed's stuck Ingress, then 50 approvers click Approve at once.
    const type = resolveResourceType((await kube.discover()).resources, "ingress");
    const request = await runtime.workflow.requestFinalizerRemoval({
      type,
      namespace: "myapp",
      name: "myapp-worker-ingress",
      reason: "benchmark: cause confirmed, recovery first",
      requester: { userId: "U0REQUESTER", teamId: "T00000001" },
      channelId: CHANNEL,
    });
    const posted = await fetch(`${fake.url}chat.postMessage`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ channel: CHANNEL, text: "request" }),
    });
    const { ts } = (await posted.json()) as { ts: string };
    await runtime.workflow.attachMessage(request.id, { channel: CHANNEL, ts });
    sim.resetRequests();
    const acks = await Promise.all(
      approvers.map(async (userId) => {
        const body = blockActionsBody({
          actionId: "approval:approve",
          value: request.id,
          userId,
          channelId: CHANNEL,
          messageTs: ts,
          responseUrl: fake.responseUrl(`bench-${userId}`),
        });
        const t0 = performance.now();
        const res = await postSigned(events, SECRET, body);
        if (res.status !== 200) throw new Error(`click answered ${String(res.status)}`);
        return performance.now() - t0;
      }),
    );
    acks.sort((a, b) => a - b);
    await until(
      async () => ((await runtime.workflow.get(request.id)).state === "DONE" ? true : undefined),
      20_000,
    );
    const patches = sim.requests().filter((r) => r.method === "PATCH").length;

    // 10,000 pending requests of the same size in a separate prefix.
    const store = new ApprovalStore(redis, { prefix: `${prefix}:mass`, signer });
    const template = await runtime.workflow.get(request.id);
    const before = await usedMemory(redis);
    const now = Date.now();
    const batch = 500;
    for (let i = 0; i < PENDING; i += batch) {
      await Promise.all(
        Array.from({ length: Math.min(batch, PENDING - i) }, (_, j) =>
          store.create(pendingCopy(template, newRequestId(), now + (i + j) * 1000)),
        ),
      );
    }
    const after = await usedMemory(redis);
    const perRequest = (after - before) / PENDING;
    const reads: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      const page = await store.listPending(new Date(), { limit: 50 });
      reads.push(performance.now() - t0);
      if (page.length !== 50) throw new Error(`expected a page of 50, got ${String(page.length)}`);
    }
    reads.sort((a, b) => a - b);

    // The whole command over HTTP, against the runtime's own store (10,000 more pending there).
    const own = new ApprovalStore(redis, { prefix: `${prefix}:approvals`, signer });
    for (let i = 0; i < PENDING; i += batch) {
      await Promise.all(
        Array.from({ length: Math.min(batch, PENDING - i) }, (_, j) =>
          own.create(pendingCopy(template, newRequestId(), now + (i + j) * 1000)),
        ),
      );
    }
    fake.clear();
    const t0 = performance.now();
    const res = await postSigned(
      events,
      SECRET,
      slashCommandBody({
        text: "approvals",
        channelId: CHANNEL,
        responseUrl: fake.responseUrl("bench-list"),
      }),
    );
    if (res.status !== 200) throw new Error(`approvals answered ${String(res.status)}`);
    await fake.waitFor("chat.postMessage", undefined, 20_000);
    const command = performance.now() - t0;

    const p50 = percentile(acks, 50);
    const p99 = percentile(acks, 99);
    const ok = p99 < 300 && patches === 1;
    return {
      name: "approvals",
      ok,
      lines: [
        `${CLICKS} concurrent signed approve clicks: ack p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${(acks.at(-1) ?? 0).toFixed(0)} ms   target p99 < 300 ms`,
        `executions caused: ${patches} PATCH   target exactly 1`,
        `${PENDING} pending requests: ${(perRequest / 1024).toFixed(2)} KiB of Redis memory per request (used_memory delta)`,
        `listPending page of 50 among ${PENDING}: p50 ${percentile(reads, 50).toFixed(1)} ms, max ${(reads.at(-1) ?? 0).toFixed(1)} ms`,
        `/unstuck approvals (signed HTTP → posted answer) with ${PENDING} pending: ${command.toFixed(0)} ms`,
      ],
    };
  } finally {
    await runtime.stop();
    await deleteKeysWithPrefix(redis, prefix);
    await redis.quit();
    await fake.stop();
    await sim.stop();
  }
}

/**
 * A pending copy of a real request, with its own id and expiry and its own object (one pending request
 * per object), so about the same size in Redis.
 */
function pendingCopy(
  r: ApprovalRequest,
  id: string,
  expiresAtMs: number,
): Parameters<ApprovalStore["create"]>[0] {
  return {
    id,
    action: {
      ...r.action,
      target: { ...r.action.target, name: `${r.action.target.name}-${id.slice(0, 8)}` },
    },
    requester: r.requester,
    channelId: r.channelId,
    reason: r.reason,
    evidence: r.evidence,
    cleanupPlan: r.cleanupPlan,
    createdAt: new Date().toISOString(),
    expiresAt: new Date(expiresAtMs + 3_600_000).toISOString(),
    approvalsRequired: r.approvalsRequired,
  };
}
