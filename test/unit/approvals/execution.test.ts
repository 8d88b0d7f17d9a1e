import { describe, expect, it } from "vitest";
import { judge } from "../../../src/actions/execute.js";
import { isRequestId, newRequestId, type RemoveFinalizerAction } from "../../../src/requests/model.js";
import { buildFinalizerPatch } from "../../../src/approvals/workflow.js";
import type { ObjectSnapshot } from "../../../src/kube/types.js";
import { jobId } from "../../../src/jobs/queues.js";
import { WORKER_INGRESS } from "./fixtures.js";

const precondition = {
  resourceVersion: "1234",
  finalizers: ["ingress.k8s.aws/resources", "example.com/keep"],
};
const remove = ["ingress.k8s.aws/resources"];
const action: RemoveFinalizerAction = {
  type: "remove-finalizer",
  target: WORKER_INGRESS,
  precondition,
  remove,
  patch: buildFinalizerPatch(precondition, remove),
};

function object(resourceVersion: string, finalizers: string[]): ObjectSnapshot {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    resource: "ingresses",
    namespace: "myapp",
    name: "myapp-worker-ingress",
    resourceVersion,
    finalizers,
    labels: {},
    annotations: {},
    ownerReferences: [],
  };
}

describe("judge (re-check before patching)", () => {
  it("applies only at the approved resourceVersion and finalizers", () => {
    expect(judge(action, object("1234", [...precondition.finalizers]), false)).toEqual({ kind: "apply" });
    expect(judge(action, object("1234", [...precondition.finalizers]), true)).toEqual({ kind: "apply" });
  });

  it("says what changed", () => {
    const v = judge(action, object("1301", [...precondition.finalizers, "b"]), false);
    expect(v.kind).toBe("stale");
    expect(v.kind === "stale" && v.message).toContain(
      "resourceVersion 1234 → 1301; finalizers [ingress.k8s.aws/resources, example.com/keep] → [ingress.k8s.aws/resources, example.com/keep, b]",
    );
    const rvOnly = judge(action, object("1301", [...precondition.finalizers]), false);
    expect(rvOnly.kind === "stale" && rvOnly.message).toContain(
      "resourceVersion 1234 → 1301; finalizers unchanged",
    );
    expect(judge(action, null, false)).toMatchObject({
      kind: "stale",
      message: expect.stringContaining("object is gone"),
    });
  });

  it("recognises the interrupted attempt's own patch only when resuming", () => {
    const patched = object("1235", ["example.com/keep"]);
    expect(judge(action, patched, true).kind).toBe("done");
    expect(judge(action, patched, false).kind).toBe("stale");
    expect(judge(action, null, true).kind).toBe("done");
    // Someone else's edit is not mistaken for our patch.
    expect(judge(action, object("1236", ["ingress.k8s.aws/resources"]), true).kind).toBe("stale");
  });
});

describe("buildFinalizerPatch", () => {
  it("pins resourceVersion and the exact finalizer list, then replaces or removes", () => {
    expect(buildFinalizerPatch(precondition, remove)).toEqual([
      { op: "test", path: "/metadata/resourceVersion", value: "1234" },
      { op: "test", path: "/metadata/finalizers", value: precondition.finalizers },
      { op: "replace", path: "/metadata/finalizers", value: ["example.com/keep"] },
    ]);
    expect(buildFinalizerPatch(precondition, precondition.finalizers).at(-1)).toEqual({
      op: "remove",
      path: "/metadata/finalizers",
    });
  });
});

describe("ids", () => {
  it("issues 26-character base32 request ids that do not repeat", () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newRequestId()));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(isRequestId(id)).toBe(true);
    expect(isRequestId("abc")).toBe(false);
    expect(isRequestId(`${newRequestId().slice(0, 25)}1`)).toBe(false);
  });

  it("builds BullMQ-safe job ids", () => {
    expect(jobId("ns-gone", "arn:aws:eks:ap-northeast-2:1:cluster/prod", "myapp")).toBe(
      "ns-gone.arn_aws_eks_ap-northeast-2_1_cluster/prod.myapp",
    );
  });
});
