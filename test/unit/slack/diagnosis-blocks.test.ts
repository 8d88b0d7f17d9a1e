import type { KnownBlock } from "@slack/types";
import { describe, expect, it } from "vitest";
import { analyzeNamespace, type AnalyzeInput } from "../../../src/diagnosis/analyze.js";
import type { AwsFindings } from "../../../src/diagnosis/aws.js";
import {
  DiagnosisActionId,
  REQUEST_FINALIZE_ACTION,
  renderDiagnosisBlocks,
  renderDiagnosisDetails,
} from "../../../src/slack/blocks/diagnosis.js";
import { lintMessage } from "../../sim/slack/block-kit-lint.js";
import { renderSlackMessage } from "../../../src/slack/blocks/index.js";
import { ingressType, lbcDeployment, obj, terminatingNs } from "../diagnosis/fixtures.js";

const now = new Date("2026-02-12T09:10:00Z");
const deletedAt = new Date("2026-02-12T08:38:47.123Z");

function seedInput(aws?: AwsFindings, over: Partial<AnalyzeInput> = {}): AnalyzeInput {
  const ingress = obj(ingressType, "myapp-worker-ingress", {
    finalizers: ["ingress.k8s.aws/resources"],
    deletionTimestamp: "2026-02-12T08:39:00Z",
  });
  return {
    name: "myapp",
    namespace: terminatingNs("myapp", deletedAt),
    listed: [{ type: ingressType, objects: [ingress] }],
    deployments: [
      lbcDeployment("aws-load-balancer-controller"),
      lbcDeployment("myapp-aws-load-balancer-controller"),
    ],
    discoveryFailures: [],
    evidence: new Map(),
    ...(aws ? { aws: new Map([["ingresses/myapp-worker-ingress", aws]]) } : {}),
    warnings: [],
    now,
    blockedAfterSeconds: 300,
    ...over,
  };
}

/** The seed incident's AWS side: the backend group held by an interface of the deleted ALB. */
function heldGroup(eniStatus: "in-use" | "available"): AwsFindings {
  const eni = "eni-0c9d8e7f6a5b4c3d2";
  const released = eniStatus === "available";
  return {
    cluster: "prod-eks",
    stack: "myapp/myapp-worker-ingress",
    resources: [],
    blockedGroups: [
      {
        groupId: "sg-0f1e2d3c4b5a69788",
        groupName: "k8s-traffic-prodeks-e91bc47b4a",
        role: "backend",
        networkInterfaces: [
          {
            id: eni,
            description: "ELB app/k8s-myapp-myappwor-0733a56cbb/4f1c2a9b7d3e8a60",
            status: eniStatus,
            groups: ["sg-0f1e2d3c4b5a69788"],
            requesterId: "amazon-elb",
            requesterManaged: true,
          },
        ],
        referencingRules: [],
        deleteFailures: [
          {
            time: "2026-02-12T08:48:21.378Z",
            groupId: "sg-0f1e2d3c4b5a69788",
            errorCode: "Client.DependencyViolation",
          },
        ],
        remedies: [
          released
            ? {
                kind: "delete-released-interface",
                target: eni,
                what: `ELB interface ${eni} of deleted application load balancer k8s-myapp-myappwor-0733a56cbb, released (available)`,
                action: "delete the released interface",
                commands: [`aws ec2 delete-network-interface --network-interface-id ${eni}`],
                actionable: true,
              }
            : {
                kind: "wait-elb-release",
                target: eni,
                what: `ELB interface ${eni} of deleted application load balancer k8s-myapp-myappwor-0733a56cbb, still in-use`,
                action: "ELB normally releases it minutes after the load balancer is gone",
                commands: [],
                actionable: false,
              },
        ],
      },
    ],
    stays: [],
    forceAdvised: !released,
    problems: [],
    summary: "sg-0f1e2d3c4b5a69788 cannot be deleted",
  };
}

function sectionText(b: KnownBlock | undefined): string {
  return (b as { text?: { text?: string } } | undefined)?.text?.text ?? "";
}

function buttons(
  blocks: readonly KnownBlock[],
): { action_id: string; style?: string; text: { text: string } }[] {
  return blocks.flatMap((b) =>
    b.type === "actions"
      ? (b.elements as { action_id: string; style?: string; text: { text: string } }[])
      : [],
  );
}

describe("diagnosis card", () => {
  it("leads with verdict, the cause in one sentence and for how long, in date tokens", () => {
    const d = analyzeNamespace(seedInput(heldGroup("in-use")));
    const m = renderDiagnosisBlocks(d);
    const first = sectionText(m.blocks[1]);
    expect(first.split("\n")[0]).toMatch(/^:red_circle: \*BLOCKED\*: Security group sg-0f1e2d3c4b5a69788/);
    expect(first).toContain(
      "held by network interface eni-0c9d8e7f6a5b4c3d2 of the deleted load balancer k8s-myapp-myappwor-0733a56cbb",
    );
    expect(first).toContain("Ingress myapp/myapp-worker-ingress keeps its finalizer");
    expect(first).toContain("Terminating for *31m*");
    expect(first).toContain(
      `<!date^${String(Math.floor(deletedAt.getTime() / 1000))}^{date_short_pretty} {time} ({ago})|2026-02-12 08:38 UTC>`,
    );
    // No raw ISO with milliseconds anywhere on the card or its details.
    for (const msg of [m, renderDiagnosisDetails(d)]) {
      expect(JSON.stringify(msg)).not.toMatch(/\d\d:\d\d:\d\d\.\d{3}Z/);
    }
  });

  it("puts verdict and cause in the notification text", () => {
    const m = renderDiagnosisBlocks(analyzeNamespace(seedInput(heldGroup("in-use"))));
    expect(m.text).toMatch(
      /^Namespace myapp: BLOCKED \(Terminating for 31m\) — security group sg-0f1e2d3c4b5a69788/,
    );
    expect(m.text).toContain("held by network interface eni-0c9d8e7f6a5b4c3d2");
  });

  it("offers forcing as the primary action only when forcing is the advice (ENI still held by ELB)", () => {
    const d = analyzeNamespace(seedInput(heldGroup("in-use")));
    expect(d.remedies[d.recommended ?? -1]?.kind).toBe("force-finalizer");
    const m = renderDiagnosisBlocks(d);
    const b = buttons(m.blocks);
    expect(b[0]).toMatchObject({ action_id: REQUEST_FINALIZE_ACTION, style: "primary" });
    expect(b.map((x) => x.action_id)).toContain(DiagnosisActionId.Details);
    expect(m.blocks.map(sectionText).join("\n")).toContain("Recommended — recovery first");
  });

  it("leads with the non-forced fix when releasing the ENI lets the controller finish, and offers no forcing", () => {
    const d = analyzeNamespace(seedInput(heldGroup("available")));
    const rec = d.remedies[d.recommended ?? -1];
    expect(rec?.kind).toBe("release-dependent");
    const m = renderDiagnosisBlocks(d);
    const text = m.blocks.map(sectionText).join("\n");
    expect(text).toContain("Recommended — no forcing needed");
    expect(text).toContain("aws ec2 delete-network-interface --network-interface-id eni-0c9d8e7f6a5b4c3d2");
    expect(text).toContain("removes the finalizer by itself");
    const b = buttons(m.blocks);
    expect(b[0]).toMatchObject({ action_id: DiagnosisActionId.Recheck, style: "primary" });
    expect(b.map((x) => x.action_id)).not.toContain(REQUEST_FINALIZE_ACTION);
  });

  it("keeps evidence and long lists out of the card: they are in the Details reply", () => {
    const d = analyzeNamespace(
      seedInput(heldGroup("in-use"), {
        evidence: new Map([
          [
            "ingresses/myapp-worker-ingress",
            [
              {
                source: "log",
                from: "kube-system/lbc-1/c",
                text: "Reconciler error: failed to delete securityGroup",
                time: "2026-02-12T08:40:34.325Z",
                error: true,
              },
            ],
          ],
        ]),
      }),
    );
    const card = renderDiagnosisBlocks(d);
    expect(card.blocks.length).toBeLessThanOrEqual(9);
    expect(JSON.stringify(card)).not.toContain("Reconciler error");
    expect(JSON.stringify(card)).not.toContain("Next steps");
    const details = renderDiagnosisDetails(d);
    const all = JSON.stringify(details);
    expect(all).toContain("Reconciler error");
    expect(all).toContain("Next steps");
    expect(all).toContain("myapp-aws-load-balancer-controller");
    expect(all).toContain("<!date^");
    expect(lintMessage(card).filter((p) => p.severity === "error")).toEqual([]);
    expect(lintMessage(details).filter((p) => p.severity === "error")).toEqual([]);
  });

  it("says '1 object remains' and 'N objects remain'", () => {
    const one = renderDiagnosisBlocks(analyzeNamespace(seedInput()));
    expect(JSON.stringify(one)).toContain("1 object remains");
    expect(JSON.stringify(one)).not.toMatch(/\b1 objects\b|1 object[^.;"]* remain\b/);
  });

  it("stays within Slack's 50 blocks; its Details keep the next steps however many blockers there are", () => {
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
    const card = renderDiagnosisBlocks(d);
    expect(card.blocks.length).toBeLessThanOrEqual(9);
    expect(JSON.stringify(card)).toContain("200 objects remain");
    expect(JSON.stringify(card)).toContain("Partial result — Could not list secrets");
    const m = renderDiagnosisDetails(d);
    expect(m.blocks.length).toBeLessThanOrEqual(50);
    const text = JSON.stringify(m.blocks);
    expect(text).toContain("Next steps");
    expect(text).toContain("…and 180 more objects with finalizers");
    expect(text).toContain("ns myapp --all");
    expect(text).toContain("*200 objects with finalizers*");
    expect(text).toContain("Partial result");
    for (const b of [...m.blocks, ...card.blocks]) {
      const t = (b as { text?: { text?: string } }).text?.text;
      if (t) expect(t.length).toBeLessThanOrEqual(3000);
    }
  });

  it("a command result rendered for Slack names the command as configured", () => {
    // A recommended step that runs a command ("check again: watch ns …") names it as configured.
    const seed = analyzeNamespace(seedInput(heldGroup("in-use")));
    const d = { ...seed, remedies: [{ kind: "wait" as const, namespace: "myapp" }], recommended: 0 };
    for (const result of [
      { type: "diagnosis" as const, diagnosis: d },
      { type: "watch" as const, namespace: "myapp", diagnosis: d },
    ]) {
      const card = JSON.stringify(renderSlackMessage(result, { command: "/unstuck-prod" }));
      expect(card).toContain("/unstuck-prod watch ns myapp");
      expect(card).not.toContain("/unstuck watch");
    }
  });

  it("names the command as configured in the steps", () => {
    const d = analyzeNamespace(seedInput(heldGroup("in-use")));
    const details = JSON.stringify(renderDiagnosisDetails(d, { command: "/unstuck-prod" }));
    expect(details).toContain("/unstuck-prod finalize ingress/myapp-worker-ingress -n myapp");
    expect(details).not.toContain("/unstuck finalize");
  });
});
