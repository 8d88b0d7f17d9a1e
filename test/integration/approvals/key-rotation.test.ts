/**
 * Rotating the bot's and a cluster's workers' keys. A rotated key's public half stays in every
 * keyring (`UNSTUCK_BOT_PUBLIC_KEYS`, the cluster's `publicKeys`) while anything it signed is live: a
 * request asked and approved under the bot's old key is executed by workers that verify with both, and
 * everything signed from then on is signed with the new keys. A public key dropped too early leaves such
 * a record unverifiable: a vote on it is refused, and its execution is refused as tampering that names
 * the key id (a key the keyring does not hold could as well be a forger's). Real Redis, the Kubernetes
 * simulator through the real adapter, the executor.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { executeApproved } from "../../../src/actions/execute.js";
import { ApprovalSigner } from "../../../src/approvals/integrity.js";
import { ApprovalPolicy } from "../../../src/approvals/policy.js";
import { ApprovalStore } from "../../../src/approvals/store.js";
import type { ApprovalRequest, Vote } from "../../../src/requests/model.js";
import { ApprovalWorkflow } from "../../../src/approvals/workflow.js";
import { AuditLog } from "../../../src/audit/log.js";
import { LOCAL_CLUSTER } from "../../../src/config.js";
import { ErrorCode } from "../../../src/errors.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../../src/kube/port.js";
import {
  BOT,
  clusterOwner,
  generateKeyText,
  keyIdOfSignature,
  Keyring,
  parsePrivateKey,
  SigningKey,
} from "../../../src/trust/keys.js";
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

const botKey = () => new SigningKey(parsePrivateKey(generateKeyText().privateKey, "V"), BOT);
const workerKey = () =>
  new SigningKey(parsePrivateKey(generateKeyText().privateKey, "V"), clusterOwner(LOCAL_CLUSTER));

/** A keyring as configured: the bot's public keys listed, the workers' listed. */
function keyringOf(bots: readonly SigningKey[], workers: readonly SigningKey[]): Keyring {
  return new Keyring([
    ...bots.map((k) => ({ key: k.publicKey, owner: BOT })),
    ...workers.map((k) => ({ key: k.publicKey, owner: clusterOwner(LOCAL_CLUSTER) })),
  ]);
}

interface World {
  readonly sim: KubeSim;
  readonly kube: KubePort;
  /** The bot (it asks and votes) signing with `key`, verifying with `keyring`, on the shared prefix. */
  bot(key: SigningKey, keyring: Keyring): Side;
  /** A worker (it executes) signing with `key`. */
  worker(key: SigningKey, keyring: Keyring): Side;
}

interface Side {
  readonly store: ApprovalStore;
  readonly audit: AuditLog;
  readonly workflow: ApprovalWorkflow;
  readonly notifier: RecordingNotifier;
  execute(id: string): ReturnType<typeof executeApproved>;
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
  const side = (signer: ApprovalSigner): Side => {
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
        executeApproved({ store, signer, policy, kube, audit, now, notifier }, id, {
          token: randomUUID(),
          finalAttempt: true,
        }),
    };
  };
  return {
    sim,
    kube,
    bot: (key, keyring) => side(new ApprovalSigner({ bot: key, keyring, localCluster: LOCAL_CLUSTER })),
    worker: (key, keyring) => side(new ApprovalSigner({ worker: key, keyring, localCluster: LOCAL_CLUSTER })),
  };
}

function request(side: Side, finalizer?: string): Promise<ApprovalRequest> {
  return side.workflow.requestFinalizerRemoval({
    type: INGRESS,
    namespace: "myapp",
    name: "myapp-worker-ingress",
    ...(finalizer !== undefined ? { finalizer } : {}),
    reason: "SG deletion blocked by DependencyViolation; recovery first",
    requester: alice,
    channelId: CHANNEL,
  });
}

describe("rotating the keys", () => {
  it("the bot's old public key kept in the keyring: a request asked under it is approved under the new key and executed", async () => {
    const w = await world();
    const [oldBot, newBot, oldWorker, newWorker] = [botKey(), botKey(), workerKey(), workerKey()];
    const before = w.bot(oldBot, keyringOf([oldBot], [oldWorker]));
    const pending = await request(before);

    // Both keys rotated; the old public halves are still listed.
    const ring = keyringOf([newBot, oldBot], [newWorker, oldWorker]);
    const bot = w.bot(newBot, ring);
    const vote = await bot.workflow.vote(pending.id, bob, "approve", { channelId: CHANNEL });
    expect(vote.request.state).toBe("APPROVED");
    const worker = w.worker(newWorker, ring);
    expect(await worker.execute(pending.id)).toMatchObject({ kind: "finished", state: "DONE" });
    expect(w.sim.requests().filter((r) => r.method === "PATCH" && r.path === INGRESS_PATH)).toHaveLength(1);

    const record = await worker.store.getSigned(pending.id);
    expect(keyIdOfSignature(record?.docMac)).toBe(oldBot.keyId);
    expect(keyIdOfSignature((record?.request.votes[0] as Vote).mac)).toBe(newBot.keyId);
    expect(record?.state.state).toBe("DONE");
    expect(keyIdOfSignature(record?.state.mac)).toBe(newWorker.keyId);
    expect((await worker.audit.forRequest(pending.id)).map((e) => e.event)).not.toContain(
      "approval.tampered",
    );
    // What the old worker key signed stays verifiable with its public half listed, and only with it.
    expect(await bot.store.checkIntegrity(pending.id)).toEqual({ ok: true });
  });

  it("a public key dropped while its records live: a vote is refused, an approval is refused as tampering naming the key id", async () => {
    const w = await world();
    const [oldBot, newBot, worker] = [botKey(), botKey(), workerKey()];
    const before = w.bot(oldBot, keyringOf([oldBot], [worker]));
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

    const ring = keyringOf([newBot], [worker]);
    const after = w.bot(newBot, ring);
    await expect(
      after.workflow.vote(pending.id, carol, "approve", { channelId: CHANNEL }),
    ).rejects.toMatchObject({
      code: ErrorCode.InvalidState,
      message: expect.stringContaining(`signed by an unknown key (key id ${oldBot.keyId})`) as unknown,
    });
    expect(after.notifier.replies).toEqual([]);
    const stillPending = await after.workflow.get(pending.id);
    expect([stillPending.state, stillPending.votes.length]).toEqual(["PENDING", 0]);

    const executor = w.worker(worker, ring);
    expect(await executor.execute(approvedBefore.id)).toMatchObject({ kind: "finished", state: "TAMPERED" });
    const ended = await executor.workflow.get(approvedBefore.id);
    expect(ended.result?.message).toContain(`unknown key (key id ${oldBot.keyId})`);
    expect((await executor.audit.forRequest(approvedBefore.id)).map((e) => e.event)).toContain(
      "approval.tampered",
    );
    expect(w.sim.requests().filter((r) => r.method === "PATCH")).toHaveLength(0);
  });
});
