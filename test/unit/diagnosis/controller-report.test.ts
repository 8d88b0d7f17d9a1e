/**
 * Reading the namespace controller's report: when it may stand in for listing every type, and why
 * not; and where what the lists found disagrees with it.
 */
import { describe, expect, it } from "vitest";
import { checkReport, readControllerReport } from "../../../src/diagnosis/controller-report.js";
import type { Condition, ObjectSnapshot, ResourceType } from "../../../src/kube/types.js";

const content = (message: string, status = "True"): Condition => ({
  type: "NamespaceContentRemaining",
  status,
  message,
});
const finalizers = (message: string, status = "True"): Condition => ({
  type: "NamespaceFinalizersRemaining",
  status,
  message,
});
const CONTENT =
  "Some resources are remaining: configmaps. has 2 resource instances, ingresses.networking.k8s.io has 1 resource instances";
const FINALIZERS =
  "Some content in the namespace has finalizers remaining: example.com/a in 2 resource instances, ingress.k8s.aws/resources in 1 resource instances";

const type = (group: string, resource: string): ResourceType => ({
  group,
  version: "v1",
  apiVersion: group === "" ? "v1" : `${group}/v1`,
  kind: resource,
  resource,
  namespaced: true,
  verbs: ["list"],
});
const object = (name: string, fins: string[]): ObjectSnapshot => ({
  apiVersion: "v1",
  kind: "X",
  resource: "x",
  name,
  finalizers: fins,
  labels: {},
  annotations: {},
  ownerReferences: [],
});

describe("readControllerReport", () => {
  it("reads both counts, the core group with its trailing dot", () => {
    expect(readControllerReport({ conditions: [content(CONTENT), finalizers(FINALIZERS)] }, false)).toEqual({
      types: new Map([
        ["configmaps.", 2],
        ["ingresses.networking.k8s.io", 1],
      ]),
      finalizers: new Map([
        ["example.com/a", 2],
        ["ingress.k8s.aws/resources", 1],
      ]),
    });
  });

  it("takes False for nothing left", () => {
    const r = readControllerReport(
      { conditions: [content("All content successfully removed", "False"), finalizers("", "False")] },
      false,
    );
    expect(r).toEqual({ types: new Map(), finalizers: new Map() });
  });

  it.each([
    [[], { kind: "no-report", condition: "NamespaceContentRemaining" }],
    [[content(CONTENT)], { kind: "no-report", condition: "NamespaceFinalizersRemaining" }],
    [
      [content(CONTENT, "Unknown"), finalizers(FINALIZERS)],
      { kind: "report-unknown", condition: "NamespaceContentRemaining" },
    ],
    [
      [content("Some resources are remaining: configmaps. has many"), finalizers(FINALIZERS)],
      { kind: "report-unreadable", condition: "NamespaceContentRemaining" },
    ],
    [
      [content("something else"), finalizers(FINALIZERS)],
      { kind: "report-unreadable", condition: "NamespaceContentRemaining" },
    ],
    [
      [
        { type: "NamespaceDeletionDiscoveryFailure", status: "True", message: "Discovery failed" },
        content(CONTENT),
        finalizers(FINALIZERS),
      ],
      { kind: "discovery-failed", by: "namespace-controller" },
    ],
    [
      [
        {
          type: "NamespaceDeletionContentFailure",
          status: "True",
          message: "Failed to delete all resource types, 1 remaining: some error",
        },
        content(CONTENT),
        finalizers(FINALIZERS),
      ],
      { kind: "content-failure" },
    ],
  ])("falls back: %j", (conditions, reason) => {
    expect(readControllerReport({ conditions: conditions }, false)).toEqual(reason);
  });

  it("keeps the report when the only content failures are the counted 'unexpected items'", () => {
    const failure: Condition = {
      type: "NamespaceDeletionContentFailure",
      status: "True",
      message:
        "Failed to delete all resource types, 1 remaining: unexpected items still remain in namespace: x for gvr: /v1, Resource=configmaps",
    };
    expect(
      readControllerReport({ conditions: [failure, content(CONTENT), finalizers(FINALIZERS)] }, false),
    ).toHaveProperty("types");
  });

  it("falls back when the bot's own discovery failed", () => {
    expect(readControllerReport({ conditions: [content(CONTENT), finalizers(FINALIZERS)] }, true)).toEqual({
      kind: "discovery-failed",
      by: "unstuck",
    });
  });
});

describe("checkReport", () => {
  const report = { types: new Map([["configmaps.", 2]]), finalizers: new Map([["example.com/a", 2]]) };
  const cms = type("", "configmaps");

  it("agrees when counts and finalizers match", () => {
    const listed = [{ type: cms, objects: [object("a", ["example.com/a"]), object("b", ["example.com/a"])] }];
    expect(checkReport(report, listed, true)).toBeUndefined();
  });

  it("names a type whose count differs", () => {
    const listed = [{ type: cms, objects: [object("a", ["example.com/a"])] }];
    expect(checkReport(report, listed, true)).toEqual({
      kind: "count-mismatch",
      resource: "configmaps",
      reported: 2,
      found: 1,
    });
  });

  it("names a finalizer the listed types do not account for, unless a list could not be read", () => {
    const listed = [{ type: cms, objects: [object("a", ["example.com/a"]), object("b", ["example.com/b"])] }];
    expect(checkReport(report, listed, true)).toEqual({
      kind: "finalizer-mismatch",
      finalizer: "example.com/a",
      reported: 2,
      found: 1,
    });
    expect(checkReport(report, listed, false)).toBeUndefined();
  });
});
