/**
 * `ns` and the removal plan through the Kubernetes and AWS simulators, for each kind of Load
 * Balancer Controller owner: a TargetGroupBinding bound to a Terraform target group (its targets,
 * never a load balancer), a member of a shared IngressGroup (only its own rules and target groups
 * are left), and a controller that runs yet fails to finalize (its own error first).
 */
import { afterEach, describe, expect, it } from "vitest";
import { DeregisterTargetsCommand } from "@aws-sdk/client-elastic-load-balancing-v2";
import { createAwsClients, destroyAwsClients, type AwsClients } from "../../../src/aws/clients.js";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import { diagnoseNamespace, type DiagnoseOptions } from "../../../src/diagnosis/diagnose.js";
import { FINALIZERS } from "../../../src/diagnosis/finalizers.js";
import { planFinalizerRemoval, resolveResourceType } from "../../../src/diagnosis/removal-plan.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../../src/kube/port.js";
import { renderDiagnosisText } from "../../../src/render/diagnosis-text.js";
import { renderDiagnosisBlocks, renderDiagnosisDetails } from "../../../src/slack/blocks/diagnosis.js";
import { lintMessage } from "../../sim/slack/block-kit-lint.js";
import { startWorld, type World } from "../../sim/world.js";
import { openAwsWorld, type AwsWorld } from "../helpers/aws-world.js";

const TF_ORDERS_API =
  "arn:aws:elasticloadbalancing:ap-northeast-2:123456789012:targetgroup/tf-orders-api/0a1b2c3d4e5f6071";

let world: World | undefined;
let clients: AwsClients | undefined;
let opened: AwsWorld | undefined;
afterEach(async () => {
  if (clients) destroyAwsClients(clients);
  await world?.stop();
  await opened?.close();
  world = undefined;
  clients = undefined;
  opened = undefined;
});

/** A world without the simulated controller: the cluster and the account as the scenario left them. */
async function open(file: string): Promise<{ kube: KubePort; options: DiagnoseOptions; c: AwsClients }> {
  world = await startWorld({ scenario: `test/fixtures/scenarios/${file}`, lbc: false });
  clients = createAwsClients({
    region: "ap-northeast-2",
    endpoint: world.aws.url,
    credentials: { accessKeyId: "AKIAUNSTUCKTEST00001", secretAccessKey: "x" },
    maxAttempts: 1,
  });
  return {
    kube: createKubeAdapter(world.kube.kubeconfig()),
    options: { now: () => new Date(), aws: { port: createAwsAdapter(clients) } },
    c: clients,
  };
}

async function plan(kube: KubePort, options: DiagnoseOptions, kind: string, namespace: string, name: string) {
  const types = (await kube.discover()).resources;
  return planFinalizerRemoval(kube, { type: resolveResourceType(types, kind), namespace, name }, options);
}

describe("TargetGroupBinding bound to a Terraform target group", () => {
  it("names the target group, its owner and the targets left, with the exact deregistration; never a load balancer", async () => {
    const { kube, options } = await open("tgb-terraform-target-group.yaml");
    const d = await diagnoseNamespace(kube, "orders", options);
    expect(d.verdict).toBe("blocked");
    const api = d.blockers.find((b) => b.name === "orders-api");
    const aws = api?.aws;
    expect(aws?.resources.filter((r) => r.type === "LoadBalancer")).toEqual([]);
    expect(aws?.loadBalancerName).toBeUndefined();
    expect(aws?.binding).toMatchObject({
      targetGroupArn: TF_ORDERS_API,
      targetGroupName: "tf-orders-api",
      exists: true,
      owner: { managedBy: "other", hint: "ManagedBy=terraform" },
      deregisterActionable: true,
      otherBindings: [],
    });
    expect(aws?.binding?.targets?.map((t) => `${t.id}:${String(t.port)}`)).toEqual([
      "10.0.3.14:8080",
      "10.0.3.15:8080",
    ]);
    const command = `aws elbv2 deregister-targets --target-group-arn ${TF_ORDERS_API} --targets Id=10.0.3.14,Port=8080 Id=10.0.3.15,Port=8080`;
    expect(aws?.binding?.deregisterCommand).toBe(command);

    // The binding whose target group Terraform already destroyed: nothing left registered.
    const legacy = d.blockers.find((b) => b.name === "orders-legacy")?.aws;
    expect(legacy?.binding?.exists).toBe(false);
    expect(legacy?.resources.filter((r) => r.type === "LoadBalancer")).toEqual([]);
    expect(d.blockers.find((b) => b.name === "orders-legacy")?.owners[0]?.cleanup).toContain(
      "target group tf-orders-legacy does not exist",
    );

    // The least destructive fix leads, in the text and on the card.
    const rec = d.remedies[d.recommended ?? -1];
    expect(rec).toMatchObject({ kind: "deregister-targets", command, actionable: true });
    const text = renderDiagnosisText(d);
    expect(text).toContain(`$ ${command}`);
    expect(text).toContain(
      "owner: not managed by the controller (no elbv2.k8s.aws/cluster tag; tagged ManagedBy=terraform)",
    );
    expect(text).not.toMatch(/LoadBalancer k8s-|load balancer k8s-/);
    const card = renderDiagnosisBlocks(d);
    expect(JSON.stringify(card)).toContain(command);
    expect(lintMessage(card).filter((p) => p.severity === "error")).toEqual([]);
    expect(lintMessage(renderDiagnosisDetails(d)).filter((p) => p.severity === "error")).toEqual([]);

    // The clean-up plan after a forced removal lists those targets, not an ALB or security group.
    const p = await plan(kube, options, "tgb", "orders", "orders-api");
    const cleanup = p.cleanupPlan.join("\n");
    expect(cleanup).toContain(
      "Left registered in target group tf-orders-api (" +
        TF_ORDERS_API +
        "): Id=10.0.3.14,Port=8080, Id=10.0.3.15,Port=8080.",
    );
    expect(cleanup).toContain(`Deregister them: \`${command}\``);
    expect(cleanup).toContain("Stays (not the binding's to delete): target group tf-orders-api");
    expect(cleanup).not.toMatch(/\bALB\b|load balancer|Security group|k8s-/);
  });

  it("once the targets are deregistered, nothing is left to deregister and no command is given", async () => {
    const { kube, options, c } = await open("tgb-terraform-target-group.yaml");
    await c.elbv2.send(
      new DeregisterTargetsCommand({
        TargetGroupArn: TF_ORDERS_API,
        Targets: [
          { Id: "10.0.3.14", Port: 8080 },
          { Id: "10.0.3.15", Port: 8080 },
        ],
      }),
    );
    const d = await diagnoseNamespace(kube, "orders", options);
    const aws = d.blockers.find((b) => b.name === "orders-api")?.aws;
    expect(aws?.binding?.targets).toEqual([]);
    expect(aws?.binding?.deregisterCommand).toBeUndefined();
    expect(aws?.summary).toContain("has no target left registered");
    expect(d.remedies.some((r) => r.kind === "deregister-targets")).toBe(false);
  });
});

describe("a member of a shared IngressGroup", () => {
  it("says only its own rules and target groups are left; the ALB and its groups stay, named as team-b's live path", async () => {
    opened = await openAwsWorld("ingress-group-shared.yaml");
    await opened.w.lbc?.reconcileNow();
    const kube = createKubeAdapter(opened.w.kube.kubeconfig());
    const options: DiagnoseOptions = { now: () => new Date(), aws: { port: createAwsAdapter(opened.c) } };
    const d = await diagnoseNamespace(kube, "team-a", options);
    const cleanup = d.blockers.find((b) => b.name === "web")?.owners[0]?.cleanup ?? "";
    expect(cleanup).toMatch(
      /^only this member's listener rules and target groups \(k8s-teama-web-a58841e732\)/,
    );
    expect(cleanup).toContain("the load balancer k8s-sharededge-f7651cd10c and its security groups");
    expect(cleanup).toContain("sg-0e5d4c3b2a1908f7e (k8s-sharededge-80a55958de)");
    expect(cleanup).toContain("live traffic path of Ingress team-b/partner-api");
    expect(cleanup).not.toContain("the shared backend security group (k8s-traffic-<cluster>-*");

    const p = await plan(kube, options, "ingress", "team-a", "web");
    const lines = p.cleanupPlan.join("\n");
    expect(lines).toContain(
      `group.ingress.k8s.aws/shared-edge: AWS Load Balancer Controller would have cleaned up ${cleanup}.`,
    );
    expect(lines).toContain(
      "Left for clean-up in AWS (stack shared-edge): TargetGroup k8s-teama-web-a58841e732",
    );
    expect(lines).not.toMatch(/Left for clean-up[^\n]*k8s-sharededge-f7651cd10c/);
    expect(lines).toContain(
      "After removal: check only this member's listener rules and target groups for orphans; the load balancer of IngressGroup shared-edge and its security groups stay (Ingress team-b/partner-api still uses them).",
    );
  });

  it("a sole-owner Ingress whose load balancer is gone: only what of its stack is left (the seed incident)", async () => {
    const { kube, options } = await open("seed-incident.yaml");
    const d = await diagnoseNamespace(kube, "myapp", options);
    const table = FINALIZERS.find((f) => f.pattern === "ingress.k8s.aws/resources")?.cleanup;
    const cleanup = d.blockers.find((b) => b.name === "myapp-worker-ingress")?.owners[0]?.cleanup;
    expect(cleanup).not.toBe(table);
    expect(cleanup).toBe(
      "only SecurityGroup k8s-traffic-prodeks-e91bc47b4a (sg-0f1e2d3c4b5a69788): its load balancer k8s-myapp-myappwor-0733a56cbb is already gone",
    );
  });
});

describe("a controller that is installed and running but fails to finalize", () => {
  it("shows its own error first, in the text and on the Slack card, escaped", async () => {
    const { kube, options } = await open("ingress-controller-failing.yaml");
    const d = await diagnoseNamespace(kube, "shop", options);
    const sentence =
      "aws-load-balancer-controller is running but fails to finalize Ingress shop/storefront: failed to delete securityGroup: UnauthorizedOperation: You are not authorized to perform this operation";
    const text = renderDiagnosisText(d).split("\n");
    expect(text[1]).toBe(
      `  Cause: ${sentence}, so Ingress shop/storefront keeps its finalizer ingress.k8s.aws/resources.`,
    );
    const at = text.indexOf("Blocker: Ingress shop/storefront (networking.k8s.io/v1)");
    expect(text[at + 1]).toBe(`  cause: ${sentence}`);
    // No generic "look for dependents" hint: IAM refused the call, no dependent is involved.
    expect(d.remedies.some((r) => r.kind === "find-group-dependents")).toBe(false);

    const card = renderDiagnosisBlocks(d);
    const headline = (card.blocks[1] as { text: { text: string } }).text.text;
    expect(
      headline.startsWith(
        `:red_circle: *BLOCKED*: ${sentence}, so Ingress shop/storefront keeps its finalizer`,
      ),
    ).toBe(true);
    expect(card.text).toContain(sentence);
    const details = renderDiagnosisDetails(d);
    expect(JSON.stringify(details)).toContain(`:x: *${sentence}*`);
    expect(lintMessage(card).filter((p) => p.severity === "error")).toEqual([]);
    expect(lintMessage(details).filter((p) => p.severity === "error")).toEqual([]);
  });

  it("keeps the exact-holder sentence first when AWS names what holds the group (the seed incident)", async () => {
    const { kube, options } = await open("seed-incident.yaml");
    const d = await diagnoseNamespace(kube, "myapp", options);
    const card = renderDiagnosisBlocks(d);
    const headline = (card.blocks[1] as { text: { text: string } }).text.text;
    expect(headline).toMatch(
      /^:red_circle: \*BLOCKED\*: Security group sg-0f1e2d3c4b5a69788 \(k8s-traffic-prodeks-e91bc47b4a\) is held by network interface eni-[0-9a-f]+ of the deleted load balancer k8s-[a-z0-9-]+, so Ingress myapp\/myapp-worker-ingress keeps its finalizer/,
    );
    // The blocker's own first line is still the controller's error.
    const text = renderDiagnosisText(d).split("\n");
    const at = text.indexOf("Blocker: Ingress myapp/myapp-worker-ingress (networking.k8s.io/v1)");
    expect(text[at + 1]).toMatch(
      /^ {2}cause: aws-load-balancer-controller is running but fails to finalize Ingress myapp\/myapp-worker-ingress: failed to delete securityGroup/,
    );
  });

  it("says forcing leaves nothing in AWS once the load balancer and all of its stack are gone", async () => {
    const { kube, options } = await open("seed-incident.yaml");
    const aws = world?.aws.world;
    // What ELB and the controller would have done by now: the interface released, the group deleted.
    aws?.detachNetworkInterface("eni-0c9d8e7f6a5b4c3d2");
    aws?.deleteNetworkInterface("eni-0c9d8e7f6a5b4c3d2");
    aws?.deleteSecurityGroup("sg-0f1e2d3c4b5a69788");
    const p = await plan(kube, options, "ingress", "myapp", "myapp-worker-ingress");
    const steps = p.cleanupPlan.join("\n");
    expect(steps).toContain(
      "Leaves nothing in AWS: load balancer k8s-myapp-myappwor-0733a56cbb is already gone",
    );
    expect(steps).not.toMatch(/would have cleaned up the load balancer|check for orphans \(ALB/);
    const d = await diagnoseNamespace(kube, "myapp", options);
    const owner = d.blockers.find((b) => b.name === "myapp-worker-ingress")?.owners[0];
    expect(owner?.cleanup).toMatch(
      /^nothing in AWS: its load balancer k8s-myapp-myappwor-0733a56cbb is already gone/,
    );
  });
});
