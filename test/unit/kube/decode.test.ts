/**
 * An object's snapshot from the API server's JSON: the string maps (labels, annotations) are read
 * leniently, whatever a server put in them, and an empty or missing one is the shared empty map.
 */
import { describe, expect, it } from "vitest";
import { toObjectSnapshot } from "../../../src/kube/decode.js";
import type { ResourceType } from "../../../src/kube/types.js";

const configmaps: ResourceType = {
  group: "",
  version: "v1",
  apiVersion: "v1",
  kind: "ConfigMap",
  resource: "configmaps",
  namespaced: true,
  verbs: ["list"],
};

const snapshot = (metadata: Record<string, unknown>) =>
  toObjectSnapshot({ metadata: { name: "cm", namespace: "ns", ...metadata } }, configmaps);

describe("toObjectSnapshot's labels and annotations", () => {
  it("keeps a map of strings as the server gave it", () => {
    const labels = { app: "web", "app.kubernetes.io/instance": "shop" };
    const s = snapshot({ labels, annotations: { "kubernetes.io/ingress.class": "alb" } });
    expect(s.labels).toEqual({ app: "web", "app.kubernetes.io/instance": "shop" });
    expect(s.annotations).toEqual({ "kubernetes.io/ingress.class": "alb" });
  });

  it("turns values that are not strings into strings, whatever a server sent", () => {
    const s = snapshot({
      labels: { replicas: 3, ready: true, gone: null, nested: { a: 1 } },
      annotations: { when: "2026-12-06T08:00:00Z", count: 2 },
    });
    expect(s.labels).toEqual({ replicas: "3", ready: "true", gone: "", nested: '{"a":1}' });
    expect(s.annotations).toEqual({ when: "2026-12-06T08:00:00Z", count: "2" });
  });

  it("reads a missing, empty or malformed map as no entries", () => {
    for (const labels of [undefined, null, {}, "app=web", 7]) {
      const s = snapshot({ labels, annotations: labels });
      expect(s.labels).toEqual({});
      expect(s.annotations).toEqual({});
    }
    // A list where a map belongs keeps its entries by position, as it always read.
    expect(snapshot({ labels: ["a", 2] }).labels).toEqual({ 0: "a", 1: "2" });
  });

  it("reads the ingress class from a kept annotations map", () => {
    const ingresses: ResourceType = {
      ...configmaps,
      group: "networking.k8s.io",
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      resource: "ingresses",
    };
    const s = toObjectSnapshot(
      { metadata: { name: "web", annotations: { "kubernetes.io/ingress.class": "alb" } } },
      ingresses,
    );
    expect(s.ingressClassName).toBe("alb");
  });
});
