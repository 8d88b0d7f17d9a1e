import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createAwsClients, destroyAwsClients, type AwsClients } from "../../../src/aws/clients.js";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import { collectAwsForBlocker } from "../../../src/diagnosis/aws-collect.js";
import { SEED_AWS_WINDOW, SEED_STUCK_INGRESS } from "../../fixtures/seed-ingress.js";
import { startAwsSim, type AwsSim } from "../../sim/aws/index.js";

const ingress = SEED_STUCK_INGRESS;
const window = SEED_AWS_WINDOW;

let sim: AwsSim | undefined;
let clients: AwsClients | undefined;
afterEach(async () => {
  if (clients) destroyAwsClients(clients);
  await sim?.stop();
  sim = undefined;
  clients = undefined;
});

async function start(file: string): Promise<ReturnType<typeof createAwsAdapter>> {
  sim = await startAwsSim({ scenario: parse(await readFile(file, "utf8")) as unknown });
  clients = createAwsClients({
    region: "ap-northeast-2",
    endpoint: sim.url,
    credentials: { accessKeyId: "AKIAUNSTUCKTEST00001", secretAccessKey: "x" },
    maxAttempts: 1,
  });
  return createAwsAdapter(clients);
}

describe("the exact object that blocks a security group", () => {
  it("names the ELB network interface that still uses the shared backend group (variant A)", async () => {
    const aws = await start("test/fixtures/scenarios/aws-seed-incident.yaml");
    const f = await collectAwsForBlocker(aws, ingress, window);
    const backend = f.blockedGroups.find((g) => g.groupName.startsWith("k8s-traffic-prodeks-"));
    expect(backend).toBeDefined();
    expect(backend?.networkInterfaces.map((n) => n.id)).toEqual(["eni-0c9d8e7f6a5b4c3d2"]);
    expect(backend?.networkInterfaces[0]).toMatchObject({
      description: "ELB app/k8s-myapp-myappwor-0733a56cbb/4f1c2a9b7d3e8a60",
      status: "in-use",
      requesterId: "amazon-elb",
    });
    expect(backend?.referencingRules).toEqual([]);
    expect(backend?.deleteFailures.length).toBeGreaterThan(10);
    expect(backend?.deleteFailures[0]).toMatchObject({ errorCode: "Client.DependencyViolation" });
    expect(backend?.deleteFailures[0]?.caller).toContain("prod-eks-aws-load-balancer-controller");
    expect(f.summary).toContain("eni-0c9d8e7f6a5b4c3d2");
    // The ALB of the Ingress (…-1559597038) is gone even though a newer namesake exists.
    const lb = f.resources.find((r) => r.type === "LoadBalancer");
    expect(lb).toMatchObject({ exists: false });
    expect(lb?.detail).toContain("newer load balancer");
    expect(f.problems).toEqual([]);
  });

  it("names the rule in another group that references it (variant B)", async () => {
    const aws = await start("test/fixtures/scenarios/aws-seed-incident-rule.yaml");
    const f = await collectAwsForBlocker(aws, ingress, window);
    const backend = f.blockedGroups.find((g) => g.groupName.startsWith("k8s-traffic-prodeks-"));
    expect(backend?.networkInterfaces).toEqual([]);
    expect(backend?.referencingRules.length).toBe(1);
    const rule = backend?.referencingRules[0];
    expect(rule?.ruleId).toMatch(/^sgr-[0-9a-f]{17}$/);
    expect(rule?.groupId).toBe("sg-0a3c5e7f9b1d2f406");
    expect(rule?.direction).toBe("ingress");
    expect(f.summary).toContain(rule?.ruleId);
  });

  it("names the missing IAM action and still reports the rest", async () => {
    const aws = await start("test/fixtures/scenarios/aws-seed-incident.yaml");
    sim!.setFaults({ deny: ["DescribeNetworkInterfaces"] });
    const f = await collectAwsForBlocker(aws, ingress, window);
    expect(f.problems.join()).toContain("ec2:DescribeNetworkInterfaces");
    expect(f.blockedGroups.some((g) => g.deleteFailures.length > 0)).toBe(true);
  });

  it("uses few calls: names and server-side filters, not a listing of the account", async () => {
    const aws = await start("test/fixtures/scenarios/aws-seed-incident.yaml");
    sim!.resetCalls();
    await collectAwsForBlocker(aws, ingress, window);
    const calls = sim!.calls();
    expect(calls.length).toBeLessThanOrEqual(16);
    expect(calls.filter((c) => c.action === "DescribeLoadBalancers").length).toBe(1);
  });
});
