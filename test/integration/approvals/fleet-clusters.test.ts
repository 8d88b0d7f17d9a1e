/**
 * The approval engine in a fleet, against real Redis: one store shared by the workflows of two
 * clusters (each records its own, signed, `cluster` in the requests it makes).
 * - One pending request per object is per cluster: namespace myapp's Ingress stuck in c1 and in c2
 *   can each have its own pending removal; a second one in the same cluster is still refused, and
 *   outside a fleet the key is the object alone, as before.
 * - The executor of a fleet worker runs only requests signed for its own cluster: another cluster's
 *   request, or one naming none, ends FAILED with the reason, audited, nothing patched.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { executeApproved } from "../../../src/actions/execute.js";
import { type ApprovalRequest } from "../../../src/requests/model.js";
import { requestSubject } from "../../../src/requests/action-kinds.js";
import { actionSubject } from "../../../src/requests/action-kinds.js";
import { ApprovalWorkflow } from "../../../src/approvals/workflow.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import {
  alice,
  bob,
  carol,
  CHANNEL,
  createHarness,
  requestRemoval,
  seedIngress,
  type Harness,
} from "./helpers/harness.js";
import { INGRESS } from "./helpers/fake-kube.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** A workflow of cluster `cluster` over the harness's store (as a fleet worker's runtime builds it). */
function workflowOf(h: Harness, cluster: string | undefined): ApprovalWorkflow {
  return new ApprovalWorkflow({
    store: h.store,
    policy: h.policy,
    audit: h.audit,
    kube: h.fake,
    enqueueExecution: () => Promise.resolve(),
    ...(cluster !== undefined ? { cluster } : {}),
    now: h.clock.now,
    approvalsRequired: 1,
    requestTtlSeconds: 1800,
    notifier: h.notifier,
  });
}

function ask(workflow: ApprovalWorkflow, who = alice): Promise<ApprovalRequest> {
  return workflow.requestFinalizerRemoval({
    type: INGRESS,
    namespace: "myapp",
    name: "myapp-worker-ingress",
    reason: "SG deletion blocked by DependencyViolation; recovery first",
    evidence: ["Reconciler error: failed to delete securityGroup"],
    cleanupPlan: ["check ALB/TG/SG/ENI orphans"],
    requester: who,
    channelId: CHANNEL,
  });
}

async function rejection(promise: Promise<unknown>): Promise<UnstuckError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof UnstuckError) return err;
    throw err;
  }
  throw new Error("expected a rejection");
}

describe("approvals in a fleet", () => {
  it("keys one pending request per object per cluster; unchanged outside a fleet", async () => {
    const h = (harness = createHarness());
    seedIngress(h);
    const c1 = workflowOf(h, "c1");
    const c2 = workflowOf(h, "c2");
    const first = await ask(c1);
    const second = await ask(c2, carol);
    expect(first.cluster).toBe("c1");
    expect(second.cluster).toBe("c2");
    expect((await h.workflow.listPending()).map((r) => r.id).sort()).toEqual([first.id, second.id].sort());
    // Each cluster's pointer names its own request.
    const open = (cluster: string | undefined, r: ApprovalRequest): Promise<string | null> =>
      h.redis.get(`${h.prefix}:approvals:open:${requestSubject(r.action, cluster)}`);
    expect(await open("c1", first)).toBe(first.id);
    expect(await open("c2", second)).toBe(second.id);
    // A second request in the same cluster is still refused, naming the first.
    const again = await rejection(ask(c1, carol));
    expect(again.code).toBe(ErrorCode.Conflict);
    expect(again.details.existingRequestId).toBe(first.id);
    // Ending c1's request frees c1's object only.
    await c1.cancel(first.id, alice);
    expect(await open("c1", first)).toBeNull();
    expect(await open("c2", second)).toBe(second.id);
    expect((await rejection(ask(c2, alice))).details.existingRequestId).toBe(second.id);

    // Outside a fleet the key is the object's subject itself, as it always was.
    const plain = await requestRemoval(h, alice);
    expect(plain.cluster).toBeUndefined();
    expect(requestSubject(plain.action, undefined)).toBe(actionSubject(plain.action));
    expect(await h.redis.get(`${h.prefix}:approvals:open:${actionSubject(plain.action)}`)).toBe(plain.id);
  });

  it("a fleet worker refuses another cluster's request, and one naming no cluster: FAILED, audited, nothing patched", async () => {
    const h = (harness = createHarness());
    seedIngress(h);
    const execute = (cluster: string, id: string) =>
      executeApproved(
        {
          store: h.store,
          signer: h.signer,
          policy: h.policy,
          kube: h.fake,
          audit: h.audit,
          now: h.clock.now,
          cluster,
        },
        id,
        { token: randomUUID(), finalAttempt: true },
      );

    const forC1 = await ask(workflowOf(h, "c1"));
    await h.workflow.vote(forC1.id, bob, "approve", { channelId: CHANNEL });
    const refused = await execute("c2", forC1.id);
    expect(refused).toMatchObject({ kind: "finished", state: "FAILED" });
    const stored = await h.store.get(forC1.id);
    expect(stored?.state).toBe("FAILED");
    expect(stored?.result?.message).toMatch(
      /^Not executed: the request is for cluster c1, but this worker serves cluster c2; only c1's workers may run it\. Nothing was changed\.$/,
    );
    const events = (await h.audit.forRequest(forC1.id)).map((e) => e.event);
    expect(events).toContain("execution.wrong-cluster");
    expect(events).toContain("execution.failed");
    expect(h.fake.patchRequests).toBe(0);

    // A request made outside the fleet (no cluster) is not run by a fleet worker either.
    const none = await requestRemoval(h, carol);
    await h.workflow.vote(none.id, bob, "approve", { channelId: CHANNEL });
    expect(await execute("c2", none.id)).toMatchObject({ kind: "finished", state: "FAILED" });
    expect((await h.store.get(none.id))?.result?.message).toMatch(/names no cluster/);
    expect(h.fake.patchRequests).toBe(0);

    // Its own cluster's request runs.
    const forC2 = await ask(workflowOf(h, "c2"));
    await h.workflow.vote(forC2.id, bob, "approve", { channelId: CHANNEL });
    expect(await execute("c2", forC2.id)).toMatchObject({ kind: "finished", state: "DONE" });
    expect(h.fake.patchRequests).toBe(1);
  });
});
