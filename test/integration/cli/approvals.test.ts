/**
 * The terminal reads the bot's approvals and audit log from Redis (no kubeconfig needed), and
 * refuses to request a change.
 */
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, deleteKeysWithPrefix, REDIS_URL, uniquePrefix } from "../../helpers/redis.js";
import { testSigner } from "../approvals/helpers/harness.js";
import { ApprovalStore } from "../../../src/approvals/store.js";
import { newRequestId } from "../../../src/requests/model.js";
import { buildFinalizerPatch } from "../../../src/approvals/workflow.js";
import { AuditLog } from "../../../src/audit/log.js";
import { runCli } from "../../../src/cli.js";
import { BOT, parsePrivateKey, publicKeyText, SigningKey } from "../../../src/trust/keys.js";
import { defaultRegistry } from "../../../commands/index.js";
import { pino } from "pino";
import { WORKER_INGRESS } from "../../unit/approvals/fixtures.js";
import { linesIo } from "../../helpers/cli-io.js";

const prefix = uniquePrefix("cli");
const env = { REDIS_URL, UNSTUCK_REDIS_PREFIX: prefix, HOME: "/nonexistent-home" };
let redis: Redis;
const id = newRequestId();

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runCli(args, env, linesIo(lines));
  return { code, out: lines.join("\n") };
}

beforeAll(async () => {
  redis = client();
  const precondition = { resourceVersion: "1009", finalizers: ["ingress.k8s.aws/resources"] };
  const now = new Date();
  // The bot signs what it writes; the terminal only reads, with no key.
  await new ApprovalStore(redis, { prefix: `${prefix}:approvals`, signer: testSigner }).create({
    id,
    action: {
      type: "remove-finalizer",
      target: WORKER_INGRESS,
      precondition,
      remove: precondition.finalizers,
      patch: buildFinalizerPatch(precondition, precondition.finalizers),
    },
    requester: { userId: "U0ONCALL1", teamId: "T1" },
    channelId: "C0INCIDENT",
    reason: "cause confirmed, recovery first",
    evidence: [],
    cleanupPlan: [],
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + 1_800_000).toISOString(),
    approvalsRequired: 1,
  });
  await new AuditLog(redis, { key: `${prefix}:audit` }).append({
    at: now.toISOString(),
    actor: { kind: "user", userId: "U0ONCALL1", teamId: "T1" },
    event: "request.created",
    requestId: id,
    action: "remove-finalizer",
    target: "Ingress myapp/myapp-worker-ingress",
    after: "PENDING",
  });
});

afterAll(async () => {
  await deleteKeysWithPrefix(redis, prefix);
  await redis.quit();
});

describe("the terminal's approval reads", () => {
  it("lists pending requests as JSON without any kubeconfig", async () => {
    const { code, out } = await cli(["approvals", "--json"]);
    expect(code).toBe(0);
    const listed = JSON.parse(out) as { id: string; state: string }[];
    expect(listed.map((r) => r.id)).toEqual([id]);
    expect(listed[0]?.state).toBe("PENDING");
  });

  it("shows the audit log", async () => {
    const { code, out } = await cli(["audit", "5"]);
    expect(code).toBe(0);
    expect(out).toContain("request.created");
    expect(out).toContain("Ingress myapp/myapp-worker-ingress");
  });

  it("refuses to request a change, and says where to do it", async () => {
    const { code, out } = await cli([
      "finalize",
      "ingress/myapp-worker-ingress",
      "-n",
      "myapp",
      "--reason",
      "cause confirmed here",
    ]);
    expect(code).toBe(1);
    expect(out).toMatch(/in Slack/);
  });

  it("says when the bot's Redis cannot be reached", async () => {
    const lines: string[] = [];
    const code = await runCli(["approvals"], { ...env, REDIS_URL: "redis://127.0.0.1:1" }, linesIo(lines));
    expect(code).toBe(1);
    expect(lines.join("\n")).toMatch(/Cannot reach the bot's Redis at REDIS_URL/);
  });
});

describe("`unstuck keys`: a key pair to configure a signer with, in the terminal only", () => {
  it("prints a private key and its public key, which belong together", async () => {
    const { code, out } = await cli(["keys", "--json"]);
    expect(code).toBe(0);
    const pair = JSON.parse(out) as { privateKey: string; publicKey: string };
    const signing = new SigningKey(parsePrivateKey(pair.privateKey, "test"), BOT);
    expect(publicKeyText(signing.publicKey)).toBe(pair.publicKey);
    const text = await cli(["keys"]);
    expect(text.out).toMatch(/private key .*:\s+[A-Za-z0-9_-]{43}\n.*public key .*:\s+[A-Za-z0-9_-]{43}/);
    expect(text.out).toContain("UNSTUCK_BOT_PUBLIC_KEYS");
  });

  it("is no Slack command: a private key is never posted in a channel", async () => {
    const result = await defaultRegistry("/unstuck").dispatch("keys", {
      actor: { userId: "U0ONCALL1", teamId: "T1", channelId: "C0INCIDENT", surface: "slack" },
      services: { kube: {} as never, now: () => new Date(), log: pino({ level: "silent" }) },
    });
    expect(result.type).toBe("error");
    expect(JSON.stringify(result)).not.toMatch(/[A-Za-z0-9_-]{43}/);
  });
});
