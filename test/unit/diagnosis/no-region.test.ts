/** Without an AWS region every diagnosis says so, in the terminal text and on the card. */
import { describe, expect, it } from "vitest";
import { AWS_NOT_CHECKED, diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import type { AwsPort } from "../../../src/aws/port.js";
import type { KubePort } from "../../../src/kube/port.js";
import type { NamespaceSnapshot } from "../../../src/kube/types.js";
import { renderDiagnosisText } from "../../../src/render/diagnosis-text.js";
import { renderDiagnosisBlocks } from "../../../src/slack/blocks/diagnosis.js";

const ACTIVE: NamespaceSnapshot = {
  name: "myapp",
  phase: "Active",
  specFinalizers: ["kubernetes"],
  finalizers: [],
  conditions: [],
  labels: {},
  annotations: {},
};

function kube(ns: NamespaceSnapshot | null): KubePort {
  return new Proxy({} as KubePort, {
    get: (_t, method) =>
      method === "getNamespace"
        ? () => Promise.resolve(ns)
        : () => Promise.reject(new Error(`unexpected ${String(method)}`)),
  });
}

const now = (): Date => new Date("2030-01-01T00:00:00Z");

describe("a diagnosis without an AWS region", () => {
  it("states that AWS was not checked, in the text and on the Slack card", async () => {
    const d = await diagnoseNamespace(kube(ACTIVE), "myapp", { now });
    expect(d.warnings).toContain(AWS_NOT_CHECKED);
    expect(AWS_NOT_CHECKED).toMatch(/^AWS not checked: no region configured/);
    expect(renderDiagnosisText(d)).toContain("AWS not checked: no region configured");
    const card = renderDiagnosisBlocks(d);
    expect(JSON.stringify(card.blocks)).toContain("AWS not checked: no region configured");
  });

  it("says nothing of the kind when AWS is configured, nor for a namespace that does not exist", async () => {
    const aws = { port: {} as AwsPort };
    const withAws = await diagnoseNamespace(kube(ACTIVE), "myapp", { now, aws });
    expect(withAws.warnings).not.toContain(AWS_NOT_CHECKED);
    const missing = await diagnoseNamespace(kube(null), "myap", { now });
    expect(missing.verdict).toBe("not-found");
    expect(missing.warnings).not.toContain(AWS_NOT_CHECKED);
  });
});
