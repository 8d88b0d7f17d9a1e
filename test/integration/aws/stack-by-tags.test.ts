/**
 * The stack's ELB resources found by the controller's tags (one paged `GetResources`), including a
 * target group left behind after its load balancer is gone, which no path from the load balancer
 * can reach.
 */
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
const STACK_TAGS = {
  "elbv2.k8s.aws/cluster": "prod-eks",
  "ingress.k8s.aws/stack": "myapp/myapp-worker-ingress",
};

let sim: AwsSim | undefined;
let clients: AwsClients | undefined;
afterEach(async () => {
  if (clients) destroyAwsClients(clients);
  await sim?.stop();
  sim = undefined;
  clients = undefined;
});

async function start(): Promise<{ sim: AwsSim; aws: ReturnType<typeof createAwsAdapter> }> {
  const s = await startAwsSim({
    scenario: parse(await readFile("test/fixtures/scenarios/aws-seed-incident.yaml", "utf8")) as unknown,
  });
  sim = s;
  clients = createAwsClients({
    region: "ap-northeast-2",
    endpoint: s.url,
    credentials: { accessKeyId: "AKIAUNSTUCKTEST00001", secretAccessKey: "x" },
    maxAttempts: 1,
  });
  return { sim: s, aws: createAwsAdapter(clients) };
}

describe("the stack's AWS resources by the controller's tags", () => {
  it("lists a leftover target group of the stack that no load balancer uses, and not another stack's", async () => {
    const { sim, aws } = await start();
    const leftover = sim.world.createTargetGroup({
      name: "k8s-myapp-myappwor-9a8b7c6d5e",
      port: 8080,
      tags: { ...STACK_TAGS, "ingress.k8s.aws/resource": "myapp/myapp-worker-ingress-myapp-worker:9090" },
    });
    const other = sim.world.createTargetGroup({
      name: "k8s-myapp-myappapi-0f0e0d0c0b",
      port: 8080,
      tags: { ...STACK_TAGS, "ingress.k8s.aws/stack": "myapp/myapp-api-ingress" },
    });
    const otherCluster = sim.world.createTargetGroup({
      name: "k8s-myapp-myappwor-stage00001",
      port: 8080,
      tags: { ...STACK_TAGS, "elbv2.k8s.aws/cluster": "stage-eks" },
    });
    expect(sim.world.loadBalancersOfTargetGroup(leftover.arn)).toEqual([]);

    sim.resetCalls();
    const f = await collectAwsForBlocker(aws, ingress, window);

    expect(f.resources.find((r) => r.id === leftover.arn)).toEqual({
      type: "TargetGroup",
      id: leftover.arn,
      name: "k8s-myapp-myappwor-9a8b7c6d5e",
      exists: true,
      detail: "found by tag",
    });
    const ids = f.resources.map((r) => r.id);
    expect(ids).not.toContain(other.arn);
    expect(ids).not.toContain(otherCluster.arn);
    // Listed once each: the target group the load balancer path already found is not repeated.
    expect(new Set(ids).size).toBe(ids.length);
    // The Ingress's own ALB is still reported gone, and the blocking ENI is still named.
    expect(f.resources.find((r) => r.type === "LoadBalancer")).toMatchObject({ exists: false });
    expect(f.summary).toContain("eni-0c9d8e7f6a5b4c3d2");
    expect(f.problems).toEqual([]);
    // One GetResources call, not a listing of the account's target groups.
    const calls = sim.calls();
    expect(calls.filter((c) => c.action === "GetResources")).toEqual([
      { service: "tagging", action: "GetResources", status: 200 },
    ]);
  });

  it("lists a stack load balancer found only by its tags", async () => {
    const { sim, aws } = await start();
    const lb = sim.world.createLoadBalancer({
      name: "k8s-myapp-workerold-1b2c3d4e5f",
      tags: { ...STACK_TAGS, "ingress.k8s.aws/resource": "LoadBalancer" },
    });
    const f = await collectAwsForBlocker(aws, ingress, window);
    expect(f.resources.find((r) => r.id === lb.arn)).toEqual({
      type: "LoadBalancer",
      id: lb.arn,
      name: "k8s-myapp-workerold-1b2c3d4e5f",
      exists: true,
      detail: "found by tag",
    });
  });

  it("names tag:GetResources when it is denied and still reports the rest", async () => {
    const { sim, aws } = await start();
    const leftover = sim.world.createTargetGroup({ name: "k8s-myapp-myappwor-9a8b7c6d5e", tags: STACK_TAGS });
    sim.setFaults({ deny: ["GetResources"] });
    const f = await collectAwsForBlocker(aws, ingress, window);
    expect(f.problems).toHaveLength(1);
    expect(f.problems[0]).toContain("tag:GetResources");
    expect(f.resources.map((r) => r.id)).not.toContain(leftover.arn);
    const backend = f.blockedGroups.find((g) => g.groupName.startsWith("k8s-traffic-prodeks-"));
    expect(backend?.networkInterfaces.map((n) => n.id)).toEqual(["eni-0c9d8e7f6a5b4c3d2"]);
    expect(f.summary).toContain("eni-0c9d8e7f6a5b4c3d2");
  });
});
