import { describe, expect, it } from "vitest";
import { analyzeNamespace } from "../../../src/diagnosis/analyze.js";
import { renderDiagnosisBlocks } from "../../../src/slack/blocks/diagnosis.js";
import { ingressType, obj, terminatingNs } from "../diagnosis/fixtures.js";

describe("diagnosis Block Kit", () => {
  it("stays within Slack's 50 blocks and keeps the next steps however many blockers there are", () => {
    const now = new Date("2026-02-12T09:10:00Z");
    const objects = Array.from({ length: 200 }, (_, i) =>
      obj(ingressType, `ing-${String(i)}`, {
        finalizers: ["ingress.k8s.aws/resources"],
        deletionTimestamp: now.toISOString(),
      }),
    );
    const d = analyzeNamespace({
      name: "myapp",
      namespace: terminatingNs("myapp", new Date(now.getTime() - 3_600_000)),
      listed: [{ type: ingressType, objects }],
      deployments: [],
      discoveryFailures: [{ groupVersion: "metrics.k8s.io/v1beta1", message: "503" }],
      evidence: new Map(),
      warnings: ["Could not list secrets"],
      now,
      blockedAfterSeconds: 300,
    });
    const m = renderDiagnosisBlocks(d);
    expect(m.blocks.length).toBeLessThanOrEqual(50);
    const text = JSON.stringify(m.blocks);
    expect(text).toContain("Next steps");
    expect(text).toContain("more blockers");
    expect(text).toContain("Partial result");
    for (const b of m.blocks) {
      const t = (b as { text?: { text?: string } }).text?.text;
      if (t) expect(t.length).toBeLessThanOrEqual(3000);
    }
  });
});
