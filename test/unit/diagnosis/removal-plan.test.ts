import { describe, expect, it } from "vitest";
import { resolveResourceType } from "../../../src/diagnosis/removal-plan.js";
import { UnstuckError } from "../../../src/errors.js";
import type { ResourceType } from "../../../src/kube/types.js";

const t = (group: string, resource: string, kind: string, namespaced = true): ResourceType => ({
  group,
  version: "v1",
  apiVersion: group === "" ? "v1" : `${group}/v1`,
  kind,
  resource,
  namespaced,
  verbs: ["get", "list", "patch"],
});
const types = [
  t("", "services", "Service"),
  t("networking.k8s.io", "ingresses", "Ingress"),
  t("extensions.example.com", "ingresses", "Ingress"),
  t("", "namespaces", "Namespace", false),
];

describe("resolveResourceType", () => {
  it.each([["ingress"], ["Ingress"], ["ingresses"], ["ing"], ["ingresses.networking.k8s.io"]])(
    "resolves %s",
    (text) => {
      expect(resolveResourceType(types, text).group).toBe("networking.k8s.io");
    },
  );

  it("honours an explicit group", () => {
    expect(resolveResourceType(types, "ingresses.extensions.example.com").group).toBe(
      "extensions.example.com",
    );
  });

  it("prefers the core group and refuses cluster-scoped or unknown kinds", () => {
    expect(resolveResourceType(types, "svc").resource).toBe("services");
    expect(() => resolveResourceType(types, "namespace")).toThrow(UnstuckError);
    expect(() => resolveResourceType(types, "gizmo")).toThrow(/Unknown namespaced kind "gizmo"/);
  });
});
