import { describe, expect, it } from "vitest";
import {
  ACTION_KINDS,
  actionSubject,
  auditChange,
  describeAction,
  describeChange,
  wellFormed,
} from "../../../src/requests/action-kinds.js";
import type { ApprovalAction } from "../../../src/requests/model.js";
import { ONE_OF_EACH as EXAMPLES } from "./fixtures.js";

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

  it("says which plans of each kind are well formed: the examples are, a tampered one is not", () => {
    for (const a of Object.values(EXAMPLES)) expect(wellFormed(a), a.type).toBe(true);
    const finalizer = EXAMPLES["remove-finalizer"];
    expect(wellFormed({ ...finalizer, remove: ["other.example.com/finalizer"] })).toBe(false);
    const guard = EXAMPLES["open-deletion-guard"];
    expect(wellFormed({ ...guard, windowSeconds: 86_401 })).toBe(false);
    const orphans = EXAMPLES["delete-orphans"];
    expect(wellFormed({ ...orphans, resources: [{ type: "SecurityGroup", id: "i-0123" }] })).toBe(false);
  });

  it("says what each kind waits for once done, from the plan itself", () => {
    const finalizer = EXAMPLES["remove-finalizer"];
    expect(ACTION_KINDS["remove-finalizer"].followedBy(finalizer)).toEqual({
      wait: "namespace-gone",
      namespace: finalizer.target.namespace,
    });
    const base = EXAMPLES["repoint-path"];
    const repoint = {
      ...base,
      steps: [
        ...base.steps,
        { kind: "route53" as const, zoneId: "Z0ABC", zoneName: "example.com.", changes: [], edits: [] },
      ],
    };
    expect(ACTION_KINDS["repoint-path"].followedBy(repoint)).toEqual({
      wait: "edge",
      hostnames: base.hostnames,
      zoneNames: { Z0ABC: "example.com." },
    });
    // A clean-up says what it deleted, an opened guard's close is scheduled: nothing to wait for.
    expect(ACTION_KINDS["delete-orphans"].followedBy(EXAMPLES["delete-orphans"])).toBeNull();
    expect(ACTION_KINDS["open-deletion-guard"].followedBy(EXAMPLES["open-deletion-guard"])).toBeNull();
  });

  it("gives every kind its words for every surface: terminal, card and timeline", () => {
    for (const a of Object.values(EXAMPLES)) {
      const kind = ACTION_KINDS[a.type] as unknown as (typeof ACTION_KINDS)["repoint-path"];
      const action = a as unknown as Parameters<typeof kind.change>[0];
      expect(kind.terminal.what(action), a.type).not.toBe("");
      expect(kind.card.header(action), a.type).not.toBe("");
      expect(kind.card.exact(action, "r-1"), a.type).toContain("*Change*");
      expect(kind.timeline, a.type).toMatch(/^[a-z ]+$/);
    }
  });
});
