/**
 * `orphans` on the seed world with the simulated controller: while the controller is still trying,
 * the backend group is "being deleted", not an orphan; after the forced finalizer removal (INCIDENT
 * step 7) the group and the ELB interface of the deleted ALB are orphans, with the interface named
 * as what must go first — and payments' live ALB, its target group and group are never listed.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { collectOrphans } from "../../../src/orphans/collect.js";
import { applyDeleteOrphans } from "../../../src/actions/delete-orphans.js";
import type { DeleteOrphansAction } from "../../../src/requests/model.js";
import { renderSlackMessage } from "../../../src/slack/blocks/index.js";
import { forceRemoveSeedFinalizer, openAwsWorld, type AwsWorld } from "../helpers/aws-world.js";

const BACKEND = "sg-0f1e2d3c4b5a69788";
const ENI = "eni-0c9d8e7f6a5b4c3d2";
let opened: AwsWorld | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

describe("orphans", () => {
  it("before and after the forced removal of the seed's finalizer", async () => {
    opened = await openAwsWorld("seed-incident.yaml");
    const { w } = opened;
    const aws = createAwsAdapter(opened.c);
    const kube = createKubeAdapter(w.kube.kubeconfig());

    const before = await collectOrphans(aws, kube, {});
    expect(before.cluster).toBe("prod-eks");
    expect(before.inProgress.map((p) => p.id)).toContain(BACKEND);
    expect(before.orphans.map((o) => o.id)).not.toContain(BACKEND);
    expect(before.orphans.map((o) => o.id)).toEqual([ENI]);

    await forceRemoveSeedFinalizer(w);

    const after = await collectOrphans(aws, kube, {});
    const sg = after.orphans.find((o) => o.id === BACKEND);
    expect(sg?.removableNow).toBe(false);
    expect(sg?.why).toContain(ENI);
    expect(after.orphans.find((o) => o.id === ENI)?.remove.at(-1)).toBe(
      `aws ec2 delete-network-interface --network-interface-id ${ENI}`,
    );
    // Payments' live stack is in use: never an orphan.
    const listed = JSON.stringify(after.orphans);
    expect(listed).not.toMatch(/payments/);
    expect(after.liveCount).toBeGreaterThanOrEqual(2);
    expect(renderSlackMessage({ type: "orphans", report: after }).text).toMatch(
      /^2 orphans for cluster prod-eks/,
    );

    // Scoped to the deleted namespace: its interface, and the shared group its removal orphaned.
    const mine = await collectOrphans(aws, kube, { namespace: "myapp" });
    expect(mine.orphans.map((o) => o.id).sort()).toEqual([ENI, BACKEND].sort());
    // Scoped to another namespace: nothing of myapp's interface, nothing of payments' live stack.
    const payments = await collectOrphans(aws, kube, { namespace: "payments" });
    expect(payments.orphans.map((o) => o.id)).not.toContain(ENI);
    expect(JSON.stringify(payments.orphans)).not.toMatch(/payments-/);
  });
});

describe("orphan clean-up through the executor's step", () => {
  it("deletes the orphaned group once ELB released its interface; leaves it, and says why, if it is in use again", async () => {
    opened = await openAwsWorld("seed-incident.yaml");
    const { w } = opened;
    const aws = createAwsAdapter(opened.c);
    const kube = createKubeAdapter(w.kube.kubeconfig());
    await forceRemoveSeedFinalizer(w);
    // The controller's retry loop ends (else its next retry deletes the group once the interface
    // goes); then ELB releases the deleted ALB's interface, as it does in its own time.
    await w.lbc?.stop();
    w.aws.world.networkInterfaces.delete(ENI);
    const report = await collectOrphans(aws, kube, { namespace: "myapp" });
    const sg = report.orphans.find((o) => o.id === BACKEND);
    expect(sg?.removableNow).toBe(true);
    const action: DeleteOrphansAction = {
      type: "delete-orphans",
      cluster: report.cluster,
      namespace: "myapp",
      resources: [{ type: "SecurityGroup", id: BACKEND, name: sg?.name ?? BACKEND }],
    };

    // Someone attaches an instance interface to it after the approval: not deleted, named.
    const eni = w.aws.world.createNetworkInterface({
      groups: [BACKEND],
      description: "late user",
      status: "in-use",
    });
    const refused = await applyDeleteOrphans({ aws, kube }, action);
    expect(refused.state).toBe("STALE");
    expect(refused.message).toMatch(/Nothing was deleted/);
    expect(refused.message).toContain(BACKEND);
    expect(w.aws.calls().filter((c) => c.action === "DeleteSecurityGroup")).toEqual([]);
    expect(w.aws.world.securityGroups.has(BACKEND)).toBe(true);

    // The user goes; the same approved clean-up now deletes it, and a re-run finds it gone.
    w.aws.world.networkInterfaces.delete(eni.id);
    const done = await applyDeleteOrphans({ aws, kube }, action);
    expect(done.state).toBe("DONE");
    expect(done.message).toContain(`Deleted SecurityGroup`);
    expect(w.aws.world.securityGroups.has(BACKEND)).toBe(false);
    const again = await applyDeleteOrphans({ aws, kube }, action);
    expect(again.state).toBe("STALE");
    expect(again.message).toMatch(/no longer an orphan .* or already gone/);
    // Payments' live stack was never touched.
    expect(w.aws.calls().filter((c) => c.action.startsWith("Delete") && c.status < 300)).toHaveLength(1);
  });
});
