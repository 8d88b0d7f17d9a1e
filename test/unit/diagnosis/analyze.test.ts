import { describe, expect, it } from "vitest";
import { causeSentence, nextStepTexts } from "../../../src/render/diagnosis-prose.js";
import { analyzeNamespace, formatDuration, type AnalyzeInput } from "../../../src/diagnosis/analyze.js";
import { ingressType, held, lbcDeployment, obj, podType, terminatingNs } from "./fixtures.js";

const now = new Date("2026-02-12T09:10:00Z");
const minutesAgo = (m: number): Date => new Date(now.getTime() - m * 60_000);

function input(over: Partial<AnalyzeInput>): AnalyzeInput {
  return {
    name: "myapp",
    namespace: terminatingNs("myapp", minutesAgo(32)),
    listed: [],
    deployments: [],
    discoveryFailures: [],
    evidence: new Map(),
    warnings: [],
    now,
    blockedAfterSeconds: 300,
    ...over,
  };
}

const stuckIngress = obj(ingressType, "myapp-worker-ingress", {
  finalizers: ["ingress.k8s.aws/resources"],
  deletionTimestamp: minutesAgo(31).toISOString(),
});

describe("analyzeNamespace", () => {
  it("does not call content gone when a type could not be listed: the answer says it is partial", () => {
    const base = terminatingNs("myapp", minutesAgo(32));
    const d = analyzeNamespace(
      input({
        namespace: { ...base, specFinalizers: ["kubernetes"] },
        listed: [{ type: podType, objects: [] }],
        unlisted: ["ingresses.networking.k8s.io"],
        warnings: ["Could not list ingresses.networking.k8s.io: timed out"],
      }),
    );
    expect(d.cause.map((c) => c.kind)).toEqual(["content-unread"]);
    expect(d.namespaceFinalizers).toEqual([]);
    expect(d.verdict).toBe("terminating");
    // Read in full, the same namespace is blocked on its own finalizer.
    const full = analyzeNamespace(
      input({
        namespace: { ...base, specFinalizers: ["kubernetes"] },
        listed: [{ type: podType, objects: [] }],
      }),
    );
    expect(full.cause.map((c) => c.kind)).toEqual(["namespace-finalizers"]);
    expect(full.verdict).toBe("blocked");
  });

  it("reports a missing namespace as not-found with no blockers", () => {
    const d = analyzeNamespace(input({ namespace: null }));
    expect(d.verdict).toBe("not-found");
    expect(d.terminatingSeconds).toBeNull();
    expect(d.blockers).toEqual([]);
  });

  it("reports an Active namespace as active", () => {
    const d = analyzeNamespace(
      input({
        namespace: { ...terminatingNs("myapp", now), deletionTimestamp: undefined, phase: "Active" },
      }),
    );
    expect(d.verdict).toBe("active");
    expect(causeSentence(d)).toContain("not being deleted");
  });

  it("names the blocking object, its finalizer and every candidate controller (the seed incident)", () => {
    const d = analyzeNamespace(
      input({
        listed: [{ type: ingressType, objects: [stuckIngress] }],
        deployments: [
          lbcDeployment("aws-load-balancer-controller"),
          lbcDeployment("myapp-aws-load-balancer-controller"),
        ],
      }),
    );
    expect(d.verdict).toBe("blocked");
    expect(d.terminatingSeconds).toBe(32 * 60);
    expect(d.remaining).toEqual([{ resource: "ingresses.networking.k8s.io", count: 1 }]);
    expect(d.blockers).toHaveLength(1);
    const b = d.blockers[0]!;
    expect(b).toMatchObject({ kind: "Ingress", namespace: "myapp", name: "myapp-worker-ingress" });
    expect(b.owners[0]?.controller).toBe("AWS Load Balancer Controller");
    expect(b.owners[0]?.candidates.map((c) => c.name).sort()).toEqual([
      "aws-load-balancer-controller",
      "myapp-aws-load-balancer-controller",
    ]);
    expect(nextStepTexts(d).join("\n")).toMatch(/2 AWS Load Balancer Controller deployments/);
    expect(nextStepTexts(d).join("\n")).toContain("/unstuck finalize ingress/myapp-worker-ingress -n myapp");
  });

  it("calls a young deletion with healthy owners 'terminating', not blocked", () => {
    const d = analyzeNamespace(
      input({
        namespace: terminatingNs("myapp", minutesAgo(1)),
        listed: [{ type: ingressType, objects: [stuckIngress] }],
        deployments: [lbcDeployment("aws-load-balancer-controller")],
      }),
    );
    expect(d.verdict).toBe("terminating");
  });

  it("calls a young deletion blocked when the controller reports errors", () => {
    const d = analyzeNamespace(
      input({
        namespace: terminatingNs("myapp", minutesAgo(1)),
        listed: [{ type: ingressType, objects: [stuckIngress] }],
        deployments: [lbcDeployment("aws-load-balancer-controller")],
        evidence: new Map([
          [
            "ingresses/myapp-worker-ingress",
            [
              {
                source: "log",
                from: "kube-system/lbc-1/c",
                text: "Reconciler error: failed to delete securityGroup",
                error: true,
              },
            ],
          ],
        ]),
      }),
    );
    expect(d.verdict).toBe("blocked");
    expect(nextStepTexts(d).join("\n")).toMatch(/describe-network-interfaces/);
  });

  it("calls it blocked at once when no controller exists for a known finalizer", () => {
    const d = analyzeNamespace(
      input({
        namespace: terminatingNs("myapp", minutesAgo(1)),
        listed: [{ type: ingressType, objects: [stuckIngress] }],
      }),
    );
    expect(d.verdict).toBe("blocked");
    expect(d.blockers[0]?.owners[0]?.candidates).toEqual([]);
    expect(d.blockers[0]?.owners[0]?.status).toBe("not-installed");
    expect(nextStepTexts(d)[0]).toMatch(/AWS Load Balancer Controller is not installed/);
    expect(nextStepTexts(d)[0]).toMatch(/nothing will ever remove `ingress\.k8s\.aws\/resources`/);
  });

  it("flags unhealthy controllers", () => {
    const d = analyzeNamespace(
      input({
        listed: [{ type: ingressType, objects: [stuckIngress] }],
        deployments: [lbcDeployment("lbc", 0, 2)],
      }),
    );
    expect(nextStepTexts(d).join("\n")).toMatch(/0\/2 ready replicas/);
  });

  it("marks unknown finalizers as unknown and counts the core group without a suffix", () => {
    const pod = held(podType, "p1", ["example.com/custom"]);
    const d = analyzeNamespace(input({ listed: [{ type: podType, objects: [pod] }] }));
    expect(d.remaining).toEqual([{ resource: "pods", count: 1 }]);
    expect(d.blockers[0]?.owners[0]).toMatchObject({
      known: false,
      controller: "unknown controller (example.com)",
    });
  });

  it("reports a discovery failure as its own cause", () => {
    const d = analyzeNamespace(
      input({
        discoveryFailures: [{ groupVersion: "metrics.k8s.io/v1beta1", message: "503 service unavailable" }],
      }),
    );
    expect(d.verdict).toBe("blocked");
    expect(causeSentence(d)).toContain("metrics.k8s.io/v1beta1");
    expect(nextStepTexts(d)[0]).toMatch(/apiservice/);
  });

  it("reports the namespace's own finalizers when content is gone", () => {
    const d = analyzeNamespace(input({ listed: [{ type: podType, objects: [] }] }));
    expect(d.remaining).toEqual([]);
    expect(d.namespaceFinalizers).toEqual(["kubernetes"]);
    expect(d.verdict).toBe("blocked");
  });

  it("treats objects without finalizers as deletion in progress", () => {
    const d = analyzeNamespace(
      input({
        namespace: terminatingNs("myapp", minutesAgo(1)),
        listed: [{ type: podType, objects: [obj(podType, "a"), obj(podType, "b")] }],
      }),
    );
    expect(d.verdict).toBe("terminating");
    expect(d.blockers).toEqual([]);
    expect(causeSentence(d)).toContain("2 objects are still being removed");
  });

  it("records Argo CD tracking as evidence", () => {
    const tracked = {
      ...stuckIngress,
      annotations: {
        "argocd.argoproj.io/tracking-id": "myapp-worker:networking.k8s.io/Ingress:myapp/myapp-worker-ingress",
      },
    };
    const d = analyzeNamespace(input({ listed: [{ type: ingressType, objects: [tracked] }] }));
    expect(d.blockers[0]?.evidence.map((e) => e.text).join()).toContain('Argo CD Application "myapp-worker"');
  });
});

describe("formatDuration", () => {
  it.each([
    [5, "5s"],
    [125, "2m"],
    [3 * 3600 + 60, "3h 1m"],
    [3 * 86400, "3d 0h"],
  ])("%i s → %s", (s, text) => {
    expect(formatDuration(s)).toBe(text);
  });
});

describe("findings are typed, not prose", () => {
  it("the seed incident: a cause chain from the remaining object to the controller's error, forcing recommended", () => {
    const d = analyzeNamespace(
      input({
        listed: [{ type: ingressType, objects: [stuckIngress] }],
        deployments: [
          lbcDeployment("aws-load-balancer-controller"),
          lbcDeployment("myapp-aws-load-balancer-controller"),
        ],
        evidence: new Map([
          [
            "ingresses/myapp-worker-ingress",
            [
              {
                source: "log",
                from: "kube-system/lbc-1/c",
                text: "failed to delete securityGroup",
                error: true,
              },
            ],
          ],
        ]),
      }),
    );
    expect(d.cause.map((c) => c.kind)).toEqual(["finalizers-remain", "controller-error"]);
    expect(d.cause[0]).toMatchObject({
      objects: [{ kind: "Ingress", name: "myapp-worker-ingress", finalizers: ["ingress.k8s.aws/resources"] }],
    });
    expect(d.remedies.map((r) => r.kind)).toEqual([
      "one-controller",
      "read-controller-error",
      "find-group-dependents",
      "force-finalizer",
    ]);
    expect(d.recommended).toBe(3);
    // No markup and no command name in what the pure diagnosis returns.
    const json = JSON.stringify(d);
    expect(json).not.toContain("/unstuck");
    expect(json).not.toContain("`");
  });

  it("nothing to recommend for a namespace that is not being deleted", () => {
    const d = analyzeNamespace(
      input({ namespace: { ...terminatingNs("myapp", now), deletionTimestamp: undefined, phase: "Active" } }),
    );
    expect(d.cause).toEqual([{ kind: "not-deleting", phase: "Active" }]);
    expect(d.remedies).toEqual([]);
    expect(d.recommended).toBeUndefined();
  });
});
