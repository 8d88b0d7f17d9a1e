/**
 * `ns` on worlds shaped like real clusters, with the simulated Load Balancer Controller running:
 * an IngressGroup shared across namespaces, an NLB Service held by an instance's interface while
 * other teams' ALBs share the backend group, a Lambda and a VPC endpoint interface. The diagnosis
 * never calls a live resource blocked, never puts one in a next step or removal plan, names who
 * still uses it, and fits the fix to the dependent — and following the fix unblocks the world.
 */
import { causeSentence, nextStepTexts } from "../../../src/render/diagnosis-prose.js";
import { afterEach, describe, expect, it } from "vitest";
import { DescribeLoadBalancersCommand, type LoadBalancer } from "@aws-sdk/client-elastic-load-balancing-v2";
import { DescribeSecurityGroupsCommand, ModifyNetworkInterfaceAttributeCommand } from "@aws-sdk/client-ec2";
import type { AwsClients } from "../../../src/aws/clients.js";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import { planFinalizerRemoval, resolveResourceType } from "../../../src/diagnosis/removal-plan.js";
import type { NamespaceDiagnosis } from "../../../src/diagnosis/types.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { renderDiagnosisBlocks, REQUEST_FINALIZE_ACTION } from "../../../src/slack/blocks/diagnosis.js";
import { eventually } from "../../helpers/eventually.js";
import type { World } from "../../sim/world.js";
import { openAwsWorld, type AwsWorld } from "../helpers/aws-world.js";

let opened: AwsWorld | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

async function open(scenario: string): Promise<{ w: World; c: AwsClients }> {
  opened = await openAwsWorld(scenario);
  return opened;
}

function diagnose(w: World, c: AwsClients, ns: string): Promise<NamespaceDiagnosis> {
  return diagnoseNamespace(createKubeAdapter(w.kube.kubeconfig()), ns, {
    now: () => new Date(),
    aws: { port: createAwsAdapter(c) },
  });
}

/** Every text a person reads: next steps, summaries, remedies' commands, the Slack card. */
function everythingSaid(d: NamespaceDiagnosis): string {
  return JSON.stringify({
    steps: nextStepTexts(d),
    summary: causeSentence(d),
    aws: d.blockers.map((b) => ({
      summary: b.aws?.summary,
      blocked: b.aws?.blockedGroups.map((g) => [g.groupId, g.remedies]),
    })),
  });
}

/** Live load balancers of the account and the security groups they use. */
async function liveAwsOf(c: AwsClients): Promise<{ lbs: LoadBalancer[]; groups: Set<string> }> {
  const lbs = (await c.elbv2.send(new DescribeLoadBalancersCommand({}))).LoadBalancers ?? [];
  return { lbs, groups: new Set(lbs.flatMap((l) => l.SecurityGroups ?? [])) };
}

function buttons(d: NamespaceDiagnosis): string[] {
  return (
    JSON.stringify(renderDiagnosisBlocks(d).blocks).match(new RegExp(REQUEST_FINALIZE_ACTION, "g")) ?? []
  );
}

describe("live vs dying on shared load balancers", () => {
  it("IngressGroup: the other member's live ALB and groups are never blocked; that member is named as the cause", async () => {
    const { w, c } = await open("ingress-group-shared.yaml");
    await w.lbc?.reconcileNow();
    const live = await liveAwsOf(c);
    const shared = live.lbs.find((l) => l.LoadBalancerName?.startsWith("k8s-sharededge-"));
    expect(shared).toBeDefined();

    const d = await diagnose(w, c, "team-a");
    const b = d.blockers.find((x) => x.name === "web");
    expect(b?.finalizers).toEqual(["group.ingress.k8s.aws/shared-edge"]);
    const aws = b?.aws;
    expect(aws?.stack).toBe("shared-edge");
    // Nothing live is blocked: no group the live ALB uses, no interface of it.
    expect(aws?.blockedGroups.filter((g) => live.groups.has(g.groupId))).toEqual([]);
    const said = everythingSaid(d);
    for (const g of live.groups) expect(said).not.toContain(`--group-id ${g}`);
    expect(said).not.toMatch(/delete-network-interface|revoke-security-group/);
    // Who keeps it: team-b's member, by name; the group's members across namespaces.
    const lbStays = aws?.stays.find((s) => s.type === "LoadBalancer");
    expect(lbStays?.usedBy).toEqual(["Ingress team-b/partner-api"]);
    expect(aws?.group?.members.map((m) => m.ref).sort()).toEqual([
      "Ingress team-a/web",
      "Ingress team-b/partner-api",
    ]);
    // The controller's error keyed by the group reaches the blocker, and is pinned on team-b.
    expect(b?.evidence.some((e) => e.error && e.text.includes("CertificateNotFound"))).toBe(true);
    expect(nextStepTexts(d).join("\n")).toMatch(/because of another member, Ingress team-b\/partner-api/);
    // The card leads with that fix: no forced-removal button.
    expect(buttons(d)).toEqual([]);

    // The removal plan never lists the live ALB or team-b's target group as left behind.
    const kube = createKubeAdapter(w.kube.kubeconfig());
    const type = resolveResourceType((await kube.discover()).resources, "ingress");
    const plan = await planFinalizerRemoval(
      kube,
      { type, namespace: "team-a", name: "web" },
      {
        now: () => new Date(),
        aws: { port: createAwsAdapter(c) },
      },
    );
    const leftBehind = plan.cleanupPlan.filter((l) => l.startsWith("Left for clean-up"));
    expect(leftBehind.join("\n")).not.toContain(shared?.LoadBalancerName ?? "?");
    expect(plan.cleanupPlan.some((l) => l.startsWith("Stays") && l.includes("team-b/partner-api"))).toBe(
      true,
    );
  });

  it("NLB held by an instance's interface: the backend group stays (other teams use it); the fix keeps the instance", async () => {
    const { w, c } = await open("nlb-service-blocked.yaml");
    await w.lbc?.reconcileNow();
    const d = await diagnose(w, c, "payments");
    const b = d.blockers.find((x) => x.kind === "Service" && x.name === "gateway");
    const aws = b?.aws;
    expect(aws?.stack).toBe("payments/gateway");
    // The NLB's name is the one in the Service's hostname (hex id), not a recomputed one.
    const host = b?.loadBalancerHostnames?.[0] ?? "";
    expect(host).toMatch(/-[0-9a-f]{16}\.elb\./);
    expect(aws?.loadBalancerName).toBe(host.split(".")[0]?.replace(/-[0-9a-f]+$/, ""));

    const backend = (
      await c.ec2.send(
        new DescribeSecurityGroupsCommand({
          Filters: [{ Name: "tag:elbv2.k8s.aws/resource", Values: ["backend-sg"] }],
        }),
      )
    ).SecurityGroups?.[0]?.GroupId;
    expect(backend).toBeDefined();
    expect(aws?.blockedGroups.map((g) => g.groupId)).not.toContain(backend);
    const stays = aws?.stays.find((s) => s.id === backend);
    expect(stays?.usedBy).toEqual(expect.arrayContaining(["Ingress storefront/web", "Ingress catalog/api"]));
    expect(everythingSaid(d)).not.toMatch(/revoke-security-group/);

    const held = aws?.blockedGroups.find((g) => g.networkInterfaces.length > 0);
    const fix = held?.remedies[0];
    expect(fix?.kind).toBe("remove-group-from-interface");
    expect(fix?.what).toMatch(/of instance i-/);
    // Who attached it, from CloudTrail: the person to ask before changing it.
    expect(fix?.what).toMatch(/AttachNetworkInterface by arn:aws:/);
    expect(fix?.commands[0]).toMatch(
      /^aws ec2 modify-network-interface-attribute --network-interface-id eni-/,
    );
    expect(fix?.commands.join(" ")).not.toMatch(/terminate|delete/);
    expect(buttons(d)).toEqual([]);

    // Follow the fix exactly as printed: the controller then finishes by itself.
    const eniId = held?.networkInterfaces[0]?.id ?? "";
    // The interface's only group is the dying one, so the fix asks for a replacement: the operator
    // picks the node group here.
    expect(fix?.commands[0]).toContain("--groups <replacement-sg>");
    const groups = ["sg-0a3c5e7f9b1d2f406"];
    await c.ec2.send(
      new ModifyNetworkInterfaceAttributeCommand({ NetworkInterfaceId: eniId, Groups: groups }),
    );
    const kube = createKubeAdapter(w.kube.kubeconfig());
    await eventually(async () => (await kube.getNamespace("payments")) === null, 20_000);
  });

  it("Lambda and VPC endpoint interfaces: the function's VPC config and the endpoint, never a delete", async () => {
    const { w, c } = await open("lambda-and-endpoint.yaml");
    await w.lbc?.reconcileNow();
    const d = await diagnose(w, c, "reports");
    const remedies = d.blockers.flatMap((b) => b.aws?.blockedGroups.flatMap((g) => g.remedies) ?? []);
    expect(remedies.map((r) => r.kind)).toEqual(
      expect.arrayContaining(["lambda-vpc-config", "vpc-endpoint-remove-group"]),
    );
    const lambda = remedies.find((r) => r.kind === "lambda-vpc-config");
    expect(lambda?.commands.join("\n")).toContain("--function-name reports-exporter");
    const vpce = remedies.find((r) => r.kind === "vpc-endpoint-remove-group");
    expect(vpce?.commands[0]).toMatch(
      /^aws ec2 modify-vpc-endpoint --vpc-endpoint-id vpce-[0-9a-f]+ --remove-security-group-ids sg-/,
    );
    expect(remedies.flatMap((r) => r.commands).join("\n")).not.toMatch(/delete-network-interface/);
  });

  it("the seed incident still names its exact blocker; forcing stays the advice only while ELB holds its interface", async () => {
    const { w, c } = await open("seed-incident.yaml");
    const d = await diagnose(w, c, "myapp");
    const b = d.blockers.find((x) => x.name === "myapp-worker-ingress");
    const held = b?.aws?.blockedGroups.find((g) => g.networkInterfaces.length > 0);
    expect(held?.remedies[0]?.kind).toBe("wait-elb-release");
    expect(b?.aws?.forceAdvised).toBe(true);
    expect(buttons(d).length).toBe(1);
  });

  it("seed variant B: revoking the named node rule is the fix, so the card offers no forced removal", async () => {
    const { w, c } = await open("seed-incident-rule.yaml");
    const d = await diagnose(w, c, "myapp");
    const b = d.blockers.find((x) => x.name === "myapp-worker-ingress");
    const rule = b?.aws?.blockedGroups.flatMap((g) => g.remedies).find((r) => r.kind === "revoke-rule");
    expect(rule?.commands[0]).toMatch(
      /^aws ec2 revoke-security-group-ingress --group-id sg-[0-9a-f]+ --security-group-rule-ids sgr-/,
    );
    expect(b?.aws?.forceAdvised).toBe(false);
    expect(buttons(d)).toEqual([]);
    expect(nextStepTexts(d).some((s) => s.includes("no forced removal needed"))).toBe(true);
  });
});
