import { describe, expect, it } from "vitest";
import {
  ACTION_KINDS,
  actionSubject,
  auditChange,
  describeAction,
  describeChange,
} from "../../../src/approvals/action-kinds.js";
import type { ApprovalAction } from "../../../src/approvals/types.js";
import { buildFinalizerPatch } from "../../../src/approvals/workflow.js";
import { WORKER_INGRESS } from "./fixtures.js";

const precondition = { resourceVersion: "4711", finalizers: ["ingress.k8s.aws/resources"] };

/** One action of every kind: the record is typed over the union, so a new kind must add one. */
const EXAMPLES: { readonly [T in ApprovalAction["type"]]: Extract<ApprovalAction, { type: T }> } = {
  "remove-finalizer": {
    type: "remove-finalizer",
    target: WORKER_INGRESS,
    precondition,
    remove: ["ingress.k8s.aws/resources"],
    patch: buildFinalizerPatch(precondition, ["ingress.k8s.aws/resources"]),
  },
  "open-deletion-guard": {
    type: "open-deletion-guard",
    namespace: "myapp",
    windowSeconds: 3600,
    precondition: { uid: "u-1", resourceVersion: "7" },
    preflight: { verdict: "safe", summary: "nothing reaches it" },
  },
  "delete-orphans": {
    type: "delete-orphans",
    cluster: "prod-eks",
    namespace: "myapp",
    resources: [{ type: "SecurityGroup", id: "sg-1", name: "k8s-traffic" }],
  },
  "repoint-path": {
    type: "repoint-path",
    hostnames: ["test.example.com"],
    steps: [
      {
        kind: "cloudfront-origin",
        distributionId: "E1",
        originId: "o1",
        from: "old.elb.amazonaws.com",
        to: "new.elb.amazonaws.com",
        etag: "ETAG",
        hostnames: ["test.example.com"],
      },
    ],
  },
};

describe("the action-kind table", () => {
  it("has one entry per action type, and says each kind's own verb", () => {
    expect(Object.keys(ACTION_KINDS).sort()).toEqual(Object.keys(EXAMPLES).sort());
    const verbs: Record<ApprovalAction["type"], RegExp> = {
      "remove-finalizer":
        /^remove finalizer ingress\.k8s\.aws\/resources from Ingress myapp\/myapp-worker-ingress$/,
      "open-deletion-guard": /^allow deleting namespace myapp for 60 min \(preflight: safe\)$/,
      // A duplicate clean-up was once described as "a request to repoint …".
      "delete-orphans": /^delete 1 AWS orphan of namespace myapp$/,
      "repoint-path": /^repoint the traffic path of test\.example\.com \(1 change\)$/,
    };
    for (const a of Object.values(EXAMPLES)) expect(describeChange(a)).toMatch(verbs[a.type]);
  });

  it("gives every kind a subject of its own and an audit line naming its target", () => {
    const subjects = Object.values(EXAMPLES).map(actionSubject);
    expect(new Set(subjects).size).toBe(subjects.length);
    for (const a of Object.values(EXAMPLES)) {
      const change = auditChange(a);
      expect(change.type).toBe(a.type);
      expect(change.target).toBe(describeAction(a));
    }
  });
});
