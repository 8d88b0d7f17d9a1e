/**
 * Rotating `UNSTUCK_APPROVAL_KEY`. With the old key as `UNSTUCK_APPROVAL_KEY_PREVIOUS`, a request
 * pending across the rotation is voted on and executed as usual, and everything signed from then on is
 * signed with the new key. Without it, such a request can never execute: a vote on it is refused with
 * that reason (not thanked), and an approval made before the rotation ends FAILED saying the record was
 * signed with a retired key — not TAMPERED, not blaming an intruder. Real Redis, the Kubernetes
 * simulator through the real adapter, the executor.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { executeRemoveFinalizer } from "../../../src/actions/remove-finalizer.js";
import { ApprovalSigner, randomApprovalKey } from "../../../src/approvals/integrity.js";
import { ApprovalPolicy } from "../../../src/approvals/policy.js";
import { ApprovalStore } from "../../../src/approvals/store.js";
import type { ApprovalRequest, Vote } from "../../../src/approvals/types.js";
import { ApprovalWorkflow } from "../../../src/approvals/workflow.js";
import { AuditLog } from "../../../src/audit/log.js";
import { ErrorCode } from "../../../src/errors.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../../src/kube/port.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { INGRESS } from "./helpers/fake-kube.js";
import { alice, bob, carol, CHANNEL, RecordingNotifier } from "./helpers/harness.js";
import { connect, deleteKeys, uniquePrefix } from "../../helpers/redis.js";

const SEED = "test/fixtures/scenarios/seed-incident.yaml";
const INGRESS_PATH = "/apis/networking.k8s.io/v1/namespaces/myapp/ingresses/myapp-worker-ingress";

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()?.();
});

interface World {
  readonly sim: KubeSim;
  readonly kube: KubePort;
  /** The bot as configured with `signer`, on the one Redis prefix every configuration shares. */
  bot(signer: ApprovalSigner): Bot;
}

interface Bot {
  readonly store: ApprovalStore;
  readonly audit: AuditLog;
  readonly workflow: ApprovalWorkflow;
  readonly notifier: RecordingNotifier;
  execute(id: string): ReturnType<typeof executeRemoveFinalizer>;
}

async function world(): Promise<World> {
  const sim = await startKubeSim({ scenario: SEED, controllerIntervalMs: 50 });
  const kube = createKubeAdapter(sim.kubeconfig());
  const redis = connect();
  const prefix = uniquePrefix("rotation");
  stops.push(async () => {
    await sim.stop();
    await deleteKeys(redis, prefix);
    await redis.quit();
  });
  const now = () => new Date();
  const policy = new ApprovalPolicy({ channels: [CHANNEL], approvers: [bob.userId, carol.userId], now });
  return {
    sim,
    kube,
    bot(signer) {
      const store = new ApprovalStore(redis, {
        prefix: `${prefix}:approvals`,
        signer,
        auditKey: `${prefix}:audit`,
      });
      const audit = new AuditLog(redis, { key: `${prefix}:audit` });
      const notifier = new RecordingNotifier();
      const workflow = new ApprovalWorkflow({
        store,
        policy,
        audit,
        kube,
        enqueueExecution: () => Promise.resolve(),
        now,
        approvalsRequired: 1,
        requestTtlSeconds: 1800,
        notifier,
      });
      return {
        store,
        audit,
        workflow,
        notifier,
        execute: (id) =>
          executeRemoveFinalizer({ store, signer, policy, kube, audit, now, notifier }, id, {
            token: randomUUID(),
            finalAttempt: true,
          }),
      };
    },
  };
}

function request(bot: Bot, finalizer?: string): Promise<ApprovalRequest> {
  return bot.workflow.requestFinalizerRemoval({
    type: INGRESS,
    namespace: "myapp",
    name: "myapp-worker-ingress",
    ...(finalizer !== undefined ? { finalizer } : {}),
    reason: "SG deletion blocked by DependencyViolation; recovery first",
    requester: alice,
    channelId: CHANNEL,
  });
}

const keyIdOf = (mac: unknown) => ApprovalSigner.keyIdOf(mac);

describe("rotating the approval key", () => {
  it("with the old key as UNSTUCK_APPROVAL_KEY_PREVIOUS a pending request is voted on and executed; new MACs use the new key", async () => {
    const w = await world();
    const oldKey = randomApprovalKey();
    const before = w.bot(new ApprovalSigner(oldKey));
    const pending = await request(before);

    const rotated = new ApprovalSigner(randomApprovalKey(), { previous: oldKey });
    const after = w.bot(rotated);
    const vote = await after.workflow.vote(pending.id, bob, "approve", { channelId: CHANNEL });
    expect(vote.request.state).toBe("APPROVED");
    expect(after.notifier.replies).toContain(`<@${bob.userId}> approved.`);
    expect(await after.execute(pending.id)).toMatchObject({ kind: "finished", state: "DONE" });
    expect(w.sim.requests().filter((r) => r.method === "PATCH" && r.path === INGRESS_PATH)).toHaveLength(1);

    const record = await after.store.getSigned(pending.id);
    expect(keyIdOf(record?.docMac)).toBe(new ApprovalSigner(oldKey).keyId);
    expect(keyIdOf((record?.request.votes[0] as Vote).mac)).toBe(rotated.keyId);
    expect(record?.state.state).toBe("DONE");
    expect(keyIdOf(record?.state.mac)).toBe(rotated.keyId);
    expect((await after.audit.forRequest(pending.id)).map((e) => e.event)).not.toContain("approval.tampered");
  });

  it("without it: a vote is refused as signed with a retired key, and an earlier approval ends FAILED, not TAMPERED", async () => {
    const w = await world();
    const before = w.bot(new ApprovalSigner(randomApprovalKey()));
    const approvedBefore = await request(before, "ingress.k8s.aws/resources");
    await before.workflow.vote(approvedBefore.id, bob, "approve", { channelId: CHANNEL });
    expect((await before.workflow.get(approvedBefore.id)).state).toBe("APPROVED");
    // A second object's request, still pending when the key changes.
    w.sim.store.create({
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: "other", namespace: "payments", finalizers: ["ingress.k8s.aws/resources"] },
      spec: { ingressClassName: "alb" },
    });
    const pending = await before.workflow.requestFinalizerRemoval({
      type: INGRESS,
      namespace: "payments",
      name: "other",
      reason: "stuck as well; recovery first, clean-up after",
      requester: alice,
      channelId: CHANNEL,
    });

    const after = w.bot(new ApprovalSigner(randomApprovalKey()));
    await expect(
      after.workflow.vote(pending.id, carol, "approve", { channelId: CHANNEL }),
    ).rejects.toMatchObject({
      code: ErrorCode.InvalidState,
      message: expect.stringMatching(
        /can no longer be executed: it was signed with a retired approval key/,
      ) as unknown,
    });
    expect(after.notifier.replies).toEqual([]);
    const stillPending = await after.workflow.get(pending.id);
    expect([stillPending.state, stillPending.votes.length]).toEqual(["PENDING", 0]);
    expect((await after.audit.forRequest(pending.id)).map((e) => e.event)).toEqual(["request.created"]);

    const outcome = await after.execute(approvedBefore.id);
    expect(outcome).toMatchObject({ kind: "finished", state: "FAILED" });
    const ended = await after.workflow.get(approvedBefore.id);
    expect(ended.state).toBe("FAILED");
    expect(ended.result?.message).toMatch(/signed with a retired approval key \(key id [A-Za-z0-9_-]{11}/);
    expect(ended.result?.message).not.toMatch(/tamper|failed verification|written to the bot's Redis/i);
    const events = (await after.audit.forRequest(approvedBefore.id)).map((e) => e.event);
    expect(events).toContain("approval.retired-key");
    expect(events).not.toContain("approval.tampered");
    expect(after.notifier.replies.at(-1)).toMatch(/retired approval key/);
    expect(w.sim.requests().filter((r) => r.method === "PATCH")).toHaveLength(0);
  });
});
