/**
 * Upgrading from the shared HMAC approval key. Requests written by the bot of before — their document,
 * state and votes signed with `UNSTUCK_APPROVAL_KEY`, which every pod held — are live in Redis when the
 * new bot starts with its Ed25519 keys and the old key still set. The bot ends each one before anyone
 * can vote on it or anything execute it: a pending one EXPIRED, an approved one FAILED, "signed with
 * the shared approval key of before the upgrade", audited; one the old key never signed (a forgery in
 * the old shape) is refused as tampering. A worker then finds nothing to execute: no PATCH. Requests
 * the new keys signed are left alone. Real Redis, the runtime as `npm start` builds it, the Kubernetes
 * simulator.
 */
import { createHmac } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApprovalStore } from "../../../src/approvals/store.js";
import { newRequestId } from "../../../src/requests/model.js";
import { buildFinalizerPatch } from "../../../src/kube/finalizer-patch.js";
import type { Runtime } from "../../../src/runtime.js";
import { eventually } from "../../helpers/eventually.js";
import { testSigner } from "../../helpers/keys.js";
import { uniquePrefix } from "../../helpers/redis.js";
import { startTestWorld, type TestWorld } from "../../helpers/world.js";
import type { KubeSim } from "../../sim/kube/index.js";

const OLD_KEY = "the-shared-approval-key-of-before-0123456789abcdef";

/** The HMAC of before: `<key id>.<HMAC-SHA256>` over a tagged JSON array, as the old bot wrote it. */
function oldMac(key: string, kind: string, fields: readonly string[]): string {
  const keyId = createHmac("sha256", key)
    .update("unstuck/approval/key-id")
    .digest()
    .subarray(0, 8)
    .toString("base64url");
  const mac = createHmac("sha256", key)
    .update(JSON.stringify(["unstuck/approval/v1", kind, ...fields]))
    .digest("base64url");
  return `${keyId}.${mac}`;
}

describe("upgrading from the shared approval key", () => {
  let w: TestWorld;
  let sim: KubeSim;
  let redis: Redis;
  let runtime: Runtime;
  let dir: string;
  const prefix = uniquePrefix("legacy");
  const approvals = `${prefix}:approvals`;
  const ids = {
    pending: newRequestId(),
    approved: newRequestId(),
    forged: newRequestId(),
    current: newRequestId(),
  };

  /** A request hash and its index entry, as the bot of before wrote them. */
  async function writeOld(
    id: string,
    state: "PENDING" | "APPROVED",
    key: string,
    name: string,
  ): Promise<void> {
    const now = new Date();
    const precondition = { resourceVersion: "1", finalizers: ["ingress.k8s.aws/resources"] };
    const doc = JSON.stringify({
      id,
      action: {
        type: "remove-finalizer",
        target: {
          apiVersion: "networking.k8s.io/v1",
          kind: "Ingress",
          resource: "ingresses",
          group: "networking.k8s.io",
          version: "v1",
          namespace: "myapp",
          name,
        },
        precondition,
        remove: precondition.finalizers,
        patch: buildFinalizerPatch(precondition, precondition.finalizers),
      },
      requester: { userId: "U0ONCALL1", teamId: "T1" },
      channelId: "C0INCIDENT",
      reason: "cause confirmed; recovery first",
      evidence: [],
      cleanupPlan: [],
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + 1_800_000).toISOString(),
      approvalsRequired: 1,
    });
    const docMac = oldMac(key, "request", [id, doc]);
    const at = now.toISOString();
    await redis.hset(`${approvals}:req:${id}`, {
      doc,
      docMac,
      state,
      stateMac: oldMac(key, "state", [id, docMac, state, at]),
      requester: "U0ONCALL1",
      expiresAtMs: String(now.getTime() + 1_800_000),
      approvalsRequired: "1",
      approvals: state === "APPROVED" ? "1" : "0",
      execAttempts: "0",
      updatedAt: at,
    });
    if (state === "PENDING") await redis.zadd(`${approvals}:pending`, now.getTime() + 1_800_000, id);
    else await redis.zadd(`${approvals}:approved`, now.getTime(), id);
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "unstuck-legacy-"));
    // Its services built from the configuration (KUBECONFIG), as `npm start` builds them.
    w = await startTestWorld({
      token: "xoxb-legacy",
      secret: "legacy-secret",
      prefix,
      kube: { scenario: "test/fixtures/scenarios/seed-incident.yaml" },
      simServices: false,
      env: {
        UNSTUCK_ALLOW_VOLATILE_REDIS: "true",
        UNSTUCK_APPROVERS: "U0APPROVER1",
        KUBECONFIG: join(dir, "kubeconfig"),
        UNSTUCK_APPROVAL_KEY: OLD_KEY,
      },
      boot: false,
    });
    if (w.kube === undefined) throw new Error("the world has a kube simulator");
    sim = w.kube;
    await sim.writeKubeconfig(join(dir, "kubeconfig"));
    redis = w.redis;
    await writeOld(ids.pending, "PENDING", OLD_KEY, "myapp-worker-ingress");
    await writeOld(ids.approved, "APPROVED", OLD_KEY, "myapp-api-ingress");
    // In the old shape, but signed with a key the old bot never held.
    await writeOld(ids.forged, "PENDING", "a-key-the-bot-never-held-0123456789abcdef", "myapp-admin-ingress");
    // Signed with the current keys: the upgrade leaves it alone.
    const now = new Date();
    const precondition = { resourceVersion: "1", finalizers: ["x/y"] };
    await new ApprovalStore(redis, { prefix: approvals, signer: testSigner }).create({
      id: ids.current,
      action: {
        type: "remove-finalizer",
        target: {
          apiVersion: "v1",
          kind: "ConfigMap",
          resource: "configmaps",
          group: "",
          version: "v1",
          namespace: "myapp",
          name: "kept",
        },
        precondition,
        remove: precondition.finalizers,
        patch: buildFinalizerPatch(precondition, precondition.finalizers),
      },
      requester: { userId: "U0ONCALL1", teamId: "T1" },
      channelId: "C0INCIDENT",
      reason: "signed after the upgrade",
      evidence: [],
      cleanupPlan: [],
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + 1_800_000).toISOString(),
      approvalsRequired: 1,
    });
    sim.resetRequests();
    ({ runtime } = await w.boot());
  });

  afterAll(async () => {
    await w.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("ends what the old key signed — pending EXPIRED, approved FAILED — saying so, audited", async () => {
    const pending = await runtime.workflow.get(ids.pending);
    expect(pending.state).toBe("EXPIRED");
    expect(pending.result?.message).toMatch(/signed with the shared approval key of before the upgrade/);
    const approved = await runtime.workflow.get(ids.approved);
    expect(approved.state).toBe("FAILED");
    expect(approved.result?.message).toMatch(/Nothing was changed; ask for it again/);
    for (const id of [ids.pending, ids.approved]) {
      const entry = (await runtime.audit.forRequest(id)).find((e) => e.event === "request.migrated");
      expect(entry?.actor).toEqual({ kind: "system", component: "migration" });
    }
    // Out of every index: no vote, no sweep, no executor picks them up.
    expect(await redis.zscore(`${approvals}:pending`, ids.pending)).toBeNull();
    expect(await redis.zscore(`${approvals}:approved`, ids.approved)).toBeNull();
  });

  it("refuses one in the old shape the old key never signed, as tampering", async () => {
    const forged = await runtime.workflow.get(ids.forged);
    expect(forged.state).toBe("EXPIRED");
    expect(forged.result?.message).toMatch(/signed by no key the bot holds, nor by the shared key/);
    expect((await runtime.audit.forRequest(ids.forged)).map((e) => e.event)).toContain("approval.tampered");
  });

  it("leaves a request the current keys signed alone, and executes none of the old ones", async () => {
    expect((await runtime.workflow.get(ids.current)).state).toBe("PENDING");
    // The approved one put back on the actions queue (a job of before): refused by its state, no PATCH.
    await runtime.queues.actions.add("remove-finalizer", { requestId: ids.approved }, { attempts: 1 });
    await eventually(
      async () =>
        (await runtime.queues.actions.getJobs(["completed", "failed"])).length > 0 ? true : undefined,
      10_000,
      "the old job handled",
    );
    expect(sim.requests().filter((r) => r.method === "PATCH")).toHaveLength(0);
    expect((await runtime.workflow.get(ids.approved)).state).toBe("FAILED");
  });
});
