/**
 * What the diagnosis says for each kind of Load Balancer Controller owner, on snapshots: a
 * TargetGroupBinding (its target group and the targets left in it, never a load balancer), a
 * member of a shared IngressGroup (only its own rules and target groups are left), and a
 * controller that runs yet fails to finalize (its own error first).
 */
import { describe, expect, it } from "vitest";
import type { AwsPort } from "../../../src/aws/port.js";
import type { RegisteredTargetSnapshot, TargetGroupSnapshot } from "../../../src/aws/types.js";
import { analyzeNamespace, type AnalyzeInput } from "../../../src/diagnosis/analyze.js";
import type { AwsFindings } from "../../../src/diagnosis/aws.js";
import { collectAwsForBlocker } from "../../../src/diagnosis/aws-collect.js";
import { analyzeBinding, type BindingCollected } from "../../../src/diagnosis/binding.js";
import { FINALIZERS } from "../../../src/diagnosis/finalizers.js";
import type { Evidence } from "../../../src/diagnosis/types.js";
import type { EdgeOwner } from "../../../src/edge/model.js";
import type { ResourceType } from "../../../src/kube/types.js";
import { causeSentence, nextStepTexts } from "../../../src/render/diagnosis-prose.js";
import { renderDiagnosisText } from "../../../src/render/diagnosis-text.js";
import { renderDiagnosisBlocks, renderDiagnosisDetails } from "../../../src/slack/blocks/diagnosis.js";
import { ingressType, lbcDeployment, obj, terminatingNs } from "./fixtures.js";

const ARN =
  "arn:aws:elasticloadbalancing:ap-northeast-2:123456789012:targetgroup/tf-orders-api/0a1b2c3d4e5f6071";
const tgbType: ResourceType = {
  group: "elbv2.k8s.aws",
  version: "v1beta1",
  apiVersion: "elbv2.k8s.aws/v1beta1",
  kind: "TargetGroupBinding",
  resource: "targetgroupbindings",
  namespaced: true,
  verbs: ["get", "list", "patch"],
};
const now = new Date("2026-02-12T09:10:00Z");
const deletedAt = new Date("2026-02-12T08:50:00Z");

function tg(tags: Record<string, string>): TargetGroupSnapshot {
  return { arn: ARN, name: "tf-orders-api", loadBalancerArns: [], tags };
}
const TARGETS: RegisteredTargetSnapshot[] = [
  { id: "10.0.3.14", port: 8080, state: "unhealthy", reason: "Target.FailedHealthChecks" },
  { id: "10.0.3.15", port: 8080, state: "unhealthy", reason: "Target.FailedHealthChecks" },
];

function binding(over: Partial<BindingCollected> = {}): AwsFindings {
  return analyzeBinding({
    cluster: "prod-eks",
    blocker: { namespace: "orders", name: "orders-api" },
    targetGroupArn: ARN,
    targetGroup: tg({ ManagedBy: "terraform" }),
    tags: { ManagedBy: "terraform" },
    targets: TARGETS,
    owners: [],
    problems: [],
    ...over,
  });
}

function tgbInput(aws: AwsFindings, evidence: Evidence[] = []): AnalyzeInput {
  return {
    name: "orders",
    namespace: terminatingNs("orders", deletedAt),
    listed: [
      {
        type: tgbType,
        objects: [
          obj(tgbType, "orders-api", {
            namespace: "orders",
            finalizers: ["elbv2.k8s.aws/resources"],
            deletionTimestamp: deletedAt.toISOString(),
            targetGroupArn: ARN,
          }),
        ],
      },
    ],
    deployments: [lbcDeployment("aws-load-balancer-controller", 1, 1)],
    discoveryFailures: [],
    evidence: new Map([["targetgroupbindings/orders-api", evidence]]),
    aws: new Map([["targetgroupbindings/orders-api", aws]]),
    warnings: [],
    now,
    blockedAfterSeconds: 300,
  };
}

describe("TargetGroupBinding: its target group, never a load balancer", () => {
  it("names a Terraform target group as not the controller's, the targets left and the exact deregistration", () => {
    const f = binding();
    expect(f.resources.map((r) => r.type)).toEqual(["TargetGroup"]);
    expect(f.loadBalancerName).toBeUndefined();
    expect(f.binding?.ownerText).toBe(
      "not managed by the controller (no elbv2.k8s.aws/cluster tag; tagged ManagedBy=terraform)",
    );
    expect(f.binding?.exists).toBe(true);
    expect(f.binding?.deregisterCommand).toBe(
      `aws elbv2 deregister-targets --target-group-arn ${ARN} --targets Id=10.0.3.14,Port=8080 Id=10.0.3.15,Port=8080`,
    );
    expect(f.forceAdvised).toBe(false);
    expect(f.summary).toContain("Id=10.0.3.14,Port=8080 Id=10.0.3.15,Port=8080");
  });

  it("never offers to deregister a target that serves traffic, nor forcing while it does", () => {
    const f = binding({
      targets: [{ id: "10.0.3.14", port: 8080, state: "healthy" }, ...TARGETS.slice(1)],
    });
    expect(f.binding?.serving).toEqual(["Id=10.0.3.14,Port=8080"]);
    expect(f.binding?.deregisterActionable).toBe(false);
    expect(f.forceAdvised).toBe(false);
    expect(f.summary).toContain("1 of them is healthy and serving traffic");
    const d = analyzeNamespace(tgbInput(f));
    const steps = nextStepTexts(d).join("\n");
    expect(steps).toContain("Do not deregister");
    expect(steps).not.toMatch(/finalize targetgroupbinding/);
    expect(d.remedies.map((r) => r.kind)).not.toContain("force-finalizer");
    // What AWS holds is our finding, never put in the controller's mouth.
    const said = d.remedies.flatMap((r) => (r.kind === "read-controller-error" ? [r.text] : []));
    expect(said.join("\n")).not.toMatch(/registered target/);
    const text = renderDiagnosisText(d);
    expect(text).toContain("not now: 1 healthy and serving traffic");
    expect(JSON.stringify(renderDiagnosisBlocks(d))).not.toContain("Fix without forcing");
  });

  it("names the controller's own target group by its cluster and stack tags", () => {
    const tags = {
      "elbv2.k8s.aws/cluster": "prod-eks",
      "service.k8s.aws/stack": "orders/orders-api",
    };
    const f = binding({ targetGroup: tg(tags), tags });
    expect(f.binding?.ownerText).toBe(
      "managed by cluster prod-eks's controller for stack service.k8s.aws/stack=orders/orders-api",
    );
    expect(f.stack).toBe("orders/orders-api");
  });

  it("says a target group that does not exist leaves nothing registered, and offers no command", () => {
    const f = binding({ targetGroup: null, targets: null });
    expect(f.binding?.exists).toBe(false);
    expect(f.binding?.deregisterCommand).toBeUndefined();
    expect(f.resources[0]).toMatchObject({ type: "TargetGroup", exists: false, detail: "does not exist" });
    expect(f.summary).toContain("does not exist");
    expect(f.forceAdvised).toBe(true);
  });

  it("leaves draining targets out, and never gives a blind command when another live binding shares the group", () => {
    const other: EdgeOwner = {
      kind: "TargetGroupBinding",
      namespace: "orders-canary",
      name: "orders-api",
      deleting: false,
      hasLbcFinalizer: true,
      usesBackendSg: true,
      targetGroupArn: ARN,
    };
    const f = binding({
      targets: [...TARGETS, { id: "10.0.3.16", port: 8080, state: "draining" }],
      owners: [other],
    });
    expect(f.binding?.deregisterCommand).not.toContain("10.0.3.16");
    expect(f.binding?.deregisterActionable).toBe(false);
    expect(f.binding?.otherBindings).toEqual(["TargetGroupBinding orders-canary/orders-api"]);
    expect(f.forceAdvised).toBe(true);
  });

  it("leads with the deregistration, and says a forced removal leaves those targets, not an ALB or security group", () => {
    const d = analyzeNamespace(tgbInput(binding()));
    const b = d.blockers[0];
    const cleanup = b?.owners[0]?.cleanup ?? "";
    expect(cleanup).toContain("Id=10.0.3.14,Port=8080 Id=10.0.3.15,Port=8080");
    expect(cleanup).toContain("not the target group itself");
    expect(cleanup).not.toMatch(/load balancer|ALB|k8s-/);
    const rec = d.remedies[d.recommended ?? -1];
    expect(rec?.kind).toBe("deregister-targets");
    expect(nextStepTexts(d).join("\n")).not.toMatch(/load balancer k8s-|finalize targetgroupbinding/);
    const text = renderDiagnosisText(d);
    expect(text).toContain("AWS (cluster prod-eks, no load balancer of its own)");
    expect(text).toContain(`$ aws elbv2 deregister-targets --target-group-arn ${ARN}`);
    expect(text).not.toMatch(/LoadBalancer k8s-/);
    const card = JSON.stringify(renderDiagnosisBlocks(d));
    expect(card).toContain("Recommended — no forcing needed");
    expect(card).toContain("Id=10.0.3.14,Port=8080 Id=10.0.3.15,Port=8080");
    expect(card).not.toContain("finalize:request");
  });

  it("collects only the bound target group: no load balancer name, no stack lookups", async () => {
    const calls: string[] = [];
    const refuse = (name: string) => () => {
      calls.push(name);
      return Promise.reject(new Error(`${name} must not be read for a TargetGroupBinding`));
    };
    const port = new Proxy({} as AwsPort, {
      get(_t, prop: string) {
        if (prop === "targetGroupsByArn")
          return (arns: string[]) => {
            calls.push(prop);
            return Promise.resolve(arns.includes(ARN) ? [tg({})] : []);
          };
        if (prop === "elbTagsOf")
          return () => {
            calls.push(prop);
            return Promise.resolve(new Map([[ARN, { "aws:cloudformation:stack-name": "orders-edge" }]]));
          };
        if (prop === "registeredTargets")
          return () => {
            calls.push(prop);
            return Promise.resolve(TARGETS);
          };
        return refuse(prop);
      },
    });
    const f = await collectAwsForBlocker(
      port,
      obj(tgbType, "orders-api", {
        namespace: "orders",
        targetGroupArn: ARN,
        finalizers: ["elbv2.k8s.aws/resources"],
      }),
      {
        cluster: "prod-eks",
        owners: Promise.resolve({ owners: [], complete: true }),
        since: deletedAt,
        until: now,
      },
    );
    expect([...new Set(calls)].sort()).toEqual(["elbTagsOf", "registeredTargets", "targetGroupsByArn"]);
    expect(f.problems).toEqual([]);
    expect(f.binding?.ownerText).toContain("tagged aws:cloudformation:stack-name=orders-edge");
    expect(f.resources.some((r) => r.type === "LoadBalancer")).toBe(false);
  });
});

/** An IngressGroup's AWS side: a live ALB and groups, the deleting member's own target group. */
function groupFindings(others: { deleting: boolean }[]): AwsFindings {
  const live = { state: "live" as const, usedBy: ["Ingress team-b/partner-api"], why: "stays" };
  return {
    cluster: "prod-eks",
    stack: "shared-edge",
    resources: [
      { type: "LoadBalancer", id: "arn:lb", name: "k8s-sharededge-f7651cd10c", exists: true, liveness: live },
      {
        type: "TargetGroup",
        id: "arn:tg-a",
        name: "k8s-teama-web-a58841e732",
        exists: true,
        liveness: { state: "dying", deletingOwners: ["Ingress team-a/web"], why: "dying" },
      },
      {
        type: "SecurityGroup",
        id: "sg-0e5d4c3b2a1908f7e",
        name: "k8s-sharededge-80a55958de",
        exists: true,
        liveness: live,
      },
    ],
    blockedGroups: [],
    stays: [],
    group: {
      name: "shared-edge",
      members: [
        { ref: "Ingress team-a/web", namespace: "team-a", name: "web", deleting: true, certificateArns: [] },
        ...others.map((o, i) => ({
          ref: `Ingress team-b/partner-${String(i)}`,
          namespace: "team-b",
          name: `partner-${String(i)}`,
          deleting: o.deleting,
          certificateArns: [],
        })),
      ],
    },
    forceAdvised: true,
    problems: [],
    summary: "nothing held",
  };
}

function groupInput(aws: AwsFindings): AnalyzeInput {
  return {
    name: "team-a",
    namespace: terminatingNs("team-a", deletedAt),
    listed: [
      {
        type: ingressType,
        objects: [
          obj(ingressType, "web", {
            namespace: "team-a",
            finalizers: ["group.ingress.k8s.aws/shared-edge"],
            deletionTimestamp: deletedAt.toISOString(),
            annotations: { "alb.ingress.kubernetes.io/group.name": "shared-edge" },
          }),
        ],
      },
    ],
    deployments: [lbcDeployment("aws-load-balancer-controller", 1, 1)],
    discoveryFailures: [],
    evidence: new Map(),
    aws: new Map([["ingresses/web", aws]]),
    warnings: [],
    now,
    blockedAfterSeconds: 300,
  };
}

describe("a member of a shared IngressGroup", () => {
  it("leaves only its own rules and target groups; the ALB and its groups stay as the other members' live path", () => {
    const d = analyzeNamespace(groupInput(groupFindings([{ deleting: false }])));
    const cleanup = d.blockers[0]?.owners[0]?.cleanup ?? "";
    expect(cleanup).toMatch(
      /^only this member's listener rules and target groups \(k8s-teama-web-a58841e732\)/,
    );
    expect(cleanup).toContain(
      "the load balancer k8s-sharededge-f7651cd10c and its security groups (sg-0e5d4c3b2a1908f7e (k8s-sharededge-80a55958de)) stay",
    );
    expect(cleanup).toContain("live traffic path of Ingress team-b/partner-0");
    expect(renderDiagnosisText(d)).toContain(`removing it by hand leaves: ${cleanup}`);
  });

  it("keeps today's text when no other live member remains (the load balancer is the member's alone)", () => {
    const table = FINALIZERS.find((f) => f.pattern === "group.ingress.k8s.aws/")?.cleanup;
    const d = analyzeNamespace(groupInput(groupFindings([{ deleting: true }])));
    expect(d.blockers[0]?.owners[0]?.cleanup).toBe(table);
  });
});

function failingInput(evidence: Evidence[], ready = 1): AnalyzeInput {
  return {
    name: "myapp",
    namespace: terminatingNs("myapp", deletedAt),
    listed: [
      {
        type: ingressType,
        objects: [
          obj(ingressType, "x", {
            finalizers: ["ingress.k8s.aws/resources"],
            deletionTimestamp: deletedAt.toISOString(),
          }),
        ],
      },
    ],
    deployments: [lbcDeployment("aws-load-balancer-controller", ready, 1)],
    discoveryFailures: [],
    evidence: new Map([["ingresses/x", evidence]]),
    warnings: [],
    now,
    blockedAfterSeconds: 300,
  };
}

const LOG: Evidence = {
  source: "log",
  from: "kube-system/aws-load-balancer-controller-6d8f9c7b54-7xk2p/aws-load-balancer-controller",
  text: "Reconciler error: failed to delete securityGroup: timed out waiting for the condition (×4)",
  time: "2026-02-12T09:05:00Z",
  error: true,
};

describe("a controller that runs but fails to finalize", () => {
  it("says its own error first: in the cause, the card's headline and the blocker's first line", () => {
    const d = analyzeNamespace(failingInput([LOG]));
    const link = d.cause.find((c) => c.kind === "controller-error");
    expect(link).toMatchObject({
      controller: "aws-load-balancer-controller",
      running: true,
      finalizer: "ingress.k8s.aws/resources",
    });
    const sentence =
      "aws-load-balancer-controller is running but fails to finalize Ingress myapp/x: failed to delete securityGroup: timed out waiting for the condition (×4)";
    expect(causeSentence(d)).toBe(
      `${sentence}, so Ingress myapp/x keeps its finalizer ingress.k8s.aws/resources`,
    );
    expect(causeSentence(d)).toContain(sentence);
    const card = renderDiagnosisBlocks(d);
    const headline = (card.blocks[1] as { text: { text: string } }).text.text;
    expect(headline).toContain(`:red_circle: *BLOCKED*: ${sentence}`);
    const text = renderDiagnosisText(d).split("\n");
    const at = text.indexOf("Blocker: Ingress myapp/x (networking.k8s.io/v1)");
    expect(text[at + 1]).toBe(`  cause: ${sentence}`);
    const details = JSON.stringify(renderDiagnosisDetails(d));
    expect(details).toContain(`:x: *${sentence}*`);
  });

  it("names the controller from a Warning Event when it is the only candidate", () => {
    const event: Evidence = {
      source: "event",
      from: "Event FailedDeployModel (ingress)",
      text: "Failed deploy model due to failed to delete securityGroup: UnauthorizedOperation",
      error: true,
    };
    const d = analyzeNamespace(failingInput([event]));
    expect(causeSentence(d)).toMatch(
      /^aws-load-balancer-controller is running but fails to finalize Ingress myapp\/x: Failed deploy model due to failed to delete securityGroup: UnauthorizedOperation, so/,
    );
  });

  it("does not call a controller without every replica ready 'running'", () => {
    const d = analyzeNamespace(failingInput([LOG], 0));
    expect(causeSentence(d)).not.toContain("is running");
    expect(causeSentence(d)).toContain(
      'the controller fails with "Reconciler error: failed to delete securityGroup',
    );
  });

  it("escapes what the controller logged before it reaches Slack", () => {
    const d = analyzeNamespace(
      failingInput([
        { ...LOG, text: "Reconciler error: <!channel> failed <https://evil.example|click> & more" },
      ]),
    );
    const all = JSON.stringify([renderDiagnosisBlocks(d), renderDiagnosisDetails(d)]);
    expect(all).not.toContain("<!channel>");
    expect(all).not.toContain("<https://evil.example");
    expect(all).toContain("&lt;!channel&gt;");
  });
});
