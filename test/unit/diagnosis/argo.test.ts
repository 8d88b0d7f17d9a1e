import { describe, expect, it } from "vitest";
import { analyzeArgoOwnership } from "../../../src/diagnosis/argo.js";
import type { ArgoApplicationSnapshot } from "../../../src/kube/types.js";

const app = (
  name: string,
  resources: ArgoApplicationSnapshot["resources"],
  over: Partial<ArgoApplicationSnapshot> = {},
): ArgoApplicationSnapshot => ({
  namespace: "argocd",
  name,
  resources,
  conditions: [],
  automated: false,
  prune: false,
  selfHeal: false,
  ...over,
});
const NS = { group: "", kind: "Namespace", name: "myapp" };

describe("Argo CD ownership of a namespace", () => {
  it("two Applications owning the Namespace is the red flag, with each one's sync settings", () => {
    const o = analyzeArgoOwnership("myapp", [
      app("myapp-api", [NS], { automated: true, prune: true, selfHeal: true }),
      app("myapp-worker", [
        NS,
        { group: "networking.k8s.io", kind: "Ingress", namespace: "myapp", name: "w" },
      ]),
      app("other", [{ group: "", kind: "Namespace", name: "other" }]),
    ]);
    expect(o?.namespaceOwners.map((a) => a.app)).toEqual(["argocd/myapp-api", "argocd/myapp-worker"]);
    expect(o?.redFlag).toMatch(/^2 Argo CD Applications manage Namespace myapp/);
    expect(o?.redFlag).toContain("argocd/myapp-api: auto-sync + prune + self-heal");
    expect(o?.redFlag).toContain("argocd/myapp-worker: manual sync");
    expect(o?.apps.map((a) => a.app)).not.toContain("argocd/other");
  });

  it("one owner of the Namespace but an object shared by two apps is still flagged", () => {
    const ing = { group: "networking.k8s.io", kind: "Ingress", namespace: "myapp", name: "web" };
    const o = analyzeArgoOwnership("myapp", [app("a", [NS, ing]), app("b", [ing])]);
    expect(o?.shared).toEqual([
      { kind: "networking.k8s.io/Ingress", name: "web", apps: ["argocd/a", "argocd/b"] },
    ]);
    expect(o?.redFlag).toMatch(/managed by more than one Argo CD Application/);
  });

  it("a clean single owner raises nothing; no Argo CD involvement gives no finding", () => {
    const o = analyzeArgoOwnership("myapp", [app("a", [NS])]);
    expect(o?.redFlag).toBeUndefined();
    expect(
      analyzeArgoOwnership("myapp", [app("x", [{ group: "", kind: "Namespace", name: "x" }])]),
    ).toBeUndefined();
  });

  it("Argo CD's own SharedResourceWarning is reported", () => {
    const o = analyzeArgoOwnership("myapp", [
      app("a", [NS], {
        conditions: [
          {
            type: "SharedResourceWarning",
            message: "Namespace/myapp is part of applications argocd/a and b",
          },
        ],
      }),
    ]);
    expect(o?.warnings).toHaveLength(1);
    expect(o?.redFlag).toMatch(/SharedResourceWarning/);
  });
});
