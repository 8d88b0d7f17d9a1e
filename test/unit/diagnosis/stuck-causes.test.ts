/**
 * The pure analysis of the causes beyond finalizers: what `NamespaceDeletionContentFailure` says,
 * pods no kubelet confirms, claims their pods hold, the namespace's own finalizers.
 */
import { describe, expect, it } from "vitest";
import { analyzeNamespace, type AnalyzeInput } from "../../../src/diagnosis/analyze.js";
import { webhooksNamedIn } from "../../../src/diagnosis/causes/refusals.js";
import { causeSentence } from "../../../src/render/diagnosis-prose.js";
import { renderDiagnosisDetails } from "../../../src/slack/blocks/diagnosis.js";
import { obj, podType, terminatingNs } from "./fixtures.js";

const now = new Date("2026-02-12T09:10:00Z");
const ago = (m: number): string => new Date(now.getTime() - m * 60_000).toISOString();
const pvcType = { ...podType, kind: "PersistentVolumeClaim", resource: "persistentvolumeclaims" };

function input(over: Partial<AnalyzeInput>): AnalyzeInput {
  return {
    name: "myapp",
    namespace: terminatingNs("myapp", new Date(ago(32))),
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

function withCondition(type: string, message: string): AnalyzeInput["namespace"] {
  const ns = terminatingNs("myapp", new Date(ago(32)));
  return { ...ns, conditions: [{ type, status: "True", reason: "x", message }] };
}

describe("causes beyond finalizers", () => {
  it("quotes the webhook names an API server error carries", () => {
    expect(
      webhooksNamedIn(
        'Internal error occurred: failed calling webhook "a.example.com": x, admission webhook "b.example.com" denied the request: no',
      ),
    ).toEqual(["a.example.com", "b.example.com"]);
  });

  it("a webhook named but not found among the configurations is still a refusal, verbatim", () => {
    const d = analyzeNamespace(
      input({
        namespace: withCondition(
          "NamespaceDeletionContentFailure",
          'Failed to delete all resource types, 1 remaining: Internal error occurred: failed calling webhook "gone.example.com": failed to call webhook: Post "https://x.y.svc:443/?timeout=10s": service "x" not found',
        ),
        causes: { webhooks: [] },
      }),
    );
    expect(d.verdict).toBe("blocked");
    expect(d.cause.filter((c) => c.kind === "delete-refused")).toHaveLength(1);
    expect(causeSentence(d)).toContain('failed calling webhook "gone.example.com"');
  });

  it("objects left without finalizers after their delete: the type named (a type that does not really delete)", () => {
    const d = analyzeNamespace(
      input({
        namespace: withCondition(
          "NamespaceDeletionContentFailure",
          "Failed to delete all resource types, 1 remaining: unexpected items still remain in namespace: myapp for gvr: example.com/v1, Resource=widgets",
        ),
      }),
    );
    expect(d.cause).toContainEqual({
      kind: "delete-refused",
      message: "unexpected items still remain in namespace: myapp for gvr: example.com/v1, Resource=widgets",
      resource: "widgets.example.com",
    });
  });

  it("a Ready node's pods are not a cause; a claim mounted only by a live pod is named but not stuck", () => {
    const d = analyzeNamespace(
      input({
        listed: [
          { type: podType, objects: [obj(podType, "web-0", { deletionTimestamp: ago(1) })] },
          {
            type: pvcType,
            objects: [
              obj(pvcType, "data", {
                finalizers: ["kubernetes.io/pvc-protection"],
                deletionTimestamp: ago(30),
              }),
            ],
          },
        ],
        causes: {
          pods: [
            {
              namespace: "myapp",
              name: "web-0",
              nodeName: "n1",
              phase: "Running",
              deletionTimestamp: ago(1),
              finalizers: [],
              claims: ["data"],
            },
          ],
          nodes: new Map([
            ["n1", { name: "n1", ready: { status: "True" }, unschedulable: false, taints: [] }],
          ]),
        },
      }),
    );
    expect(d.cause.some((c) => c.kind === "pods-on-lost-node")).toBe(false);
    expect(d.cause).toContainEqual(
      expect.objectContaining({ kind: "claim-in-use", pods: ["web-0"], podsStuck: false }),
    );
    expect(d.remedies.some((r) => r.kind === "force-finalizer")).toBe(false);
  });

  it("what reaches Slack from the cluster is escaped", () => {
    const d = analyzeNamespace(
      input({
        namespace: withCondition(
          "NamespaceDeletionContentFailure",
          "Failed to delete all resource types, 1 remaining: <!channel> & <https://evil|click>",
        ),
      }),
    );
    const text = JSON.stringify(renderDiagnosisDetails(d).blocks);
    expect(text).not.toContain("<!channel>");
    expect(text).toContain("&lt;!channel&gt;");
  });
});
