/**
 * `ns` across the one simulated world (kube + AWS on one clock): the diagnosis names the exact AWS
 * object that keeps the Load Balancer Controller from deleting the shared backend security group,
 * and the terminal form shows it.
 */
import { nextStepTexts } from "../../../src/render/diagnosis-prose.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DeleteSecurityGroupCommand, DescribeSecurityGroupsCommand } from "@aws-sdk/client-ec2";
import { createAwsClients, destroyAwsClients, type AwsClients } from "../../../src/aws/clients.js";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import { runCli } from "../../../src/cli.js";
import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../../src/kube/port.js";
import type { AwsPort } from "../../../src/aws/port.js";
import { startWorld, type World } from "../../sim/world.js";
import { linesIo } from "../../helpers/cli-io.js";

let world: World | undefined;
let clients: AwsClients | undefined;
afterEach(async () => {
  if (clients) destroyAwsClients(clients);
  await world?.stop();
  world = undefined;
  clients = undefined;
});

/** The world of `scenario`, with AWS clients on its simulator (both stopped after each test). */
async function startSeed(scenario = "test/fixtures/scenarios/seed-incident.yaml") {
  world = await startWorld({ scenario, lbc: false });
  const made = createAwsClients({
    region: "ap-northeast-2",
    endpoint: world.aws.url,
    credentials: { accessKeyId: "AKIAUNSTUCKTEST00001", secretAccessKey: "x" },
    maxAttempts: 1,
  });
  clients = made;
  return { kube: createKubeAdapter(world.kube.kubeconfig()), aws: createAwsAdapter(made), clients: made };
}

async function diagnose(scenario: string) {
  const { kube, aws } = await startSeed(scenario);
  // No cluster name configured: it is read from the controller's --cluster-name.
  return diagnoseNamespace(kube, "myapp", { now: () => new Date(), aws: { port: aws } });
}

/**
 * `kube` whose lists of the namespaces `held` picks (`undefined`: the whole cluster) answer only
 * once `release` is called, or after 3 s at the latest, and then `late()` says so.
 */
function holdLists(kube: KubePort, held: (ns: string | undefined) => boolean) {
  let release!: () => void;
  let late = false;
  const released = new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      late = true;
      resolve();
    }, 3_000);
    release = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  const holding: KubePort = new Proxy(kube, {
    get: (target, key, receiver) =>
      key === "listObjects"
        ? async (type: Parameters<KubePort["listObjects"]>[0], ns?: string) => {
            if (held(ns)) await released;
            return target.listObjects(type, ns);
          }
        : (Reflect.get(target, key, receiver) as unknown),
  });
  return { kube: holding, release: () => release(), late: () => late };
}

describe("ns reaches into AWS", () => {
  it("reads AWS while the cluster-wide lists are still under way, and judges with them", async () => {
    const { kube: real, aws: port } = await startSeed();
    // The cluster-wide lists (every Ingress, Service, TargetGroupBinding) answer only once AWS has
    // been asked what holds the groups (the last AWS reads).
    const { kube, release, late } = holdLists(real, (ns) => ns === undefined);
    const aws: AwsPort = {
      ...port,
      networkInterfacesUsing: async (id) => {
        const enis = await port.networkInterfacesUsing(id);
        release();
        return enis;
      },
    };
    const d = await diagnoseNamespace(kube, "myapp", { now: () => new Date(), aws: { port: aws } });
    expect(late()).toBe(false);
    const b = d.blockers.find((x) => x.name === "myapp-worker-ingress");
    const held = b?.aws?.blockedGroups.find((g) => g.networkInterfaces.length > 0);
    expect(held?.networkInterfaces[0]?.description).toMatch(/^ELB app\/k8s-myapp-myappwor-0733a56cbb\//);
    // Judged with the cluster-wide lists, as when they are read before AWS.
    expect(d.warnings.filter((w) => w.includes("in all namespaces"))).toEqual([]);
    const plain = await diagnoseNamespace(real, "myapp", { now: () => new Date(), aws: { port } });
    const same = plain.blockers.find((x) => x.name === "myapp-worker-ingress")?.aws;
    // Liveness is judged from every owner in the cluster (none live here: the group is dying).
    const liveness = (f: typeof same) => f?.resources.map((r) => r.liveness?.state);
    expect(liveness(same)).toContain("dying");
    expect({ liveness: liveness(b?.aws), summary: b?.aws?.summary }).toEqual({
      liveness: liveness(same),
      summary: same?.summary,
    });
  });

  it("asks for the shared backend group beside the namespace's content, and each read once", async () => {
    const { kube: real, aws: port } = await startSeed();
    // The namespace's own lists answer only once AWS has been asked for the backend group.
    const { kube, release, late } = holdLists(real, (ns) => ns === "myapp");
    const asked: string[] = [];
    const aws: AwsPort = {
      ...port,
      securityGroups: (query) => {
        asked.push(`securityGroups ${JSON.stringify(query)}`);
        if (query.tags?.["elbv2.k8s.aws/resource"] === "backend-sg") release();
        return port.securityGroups(query);
      },
      networkInterfacesUsing: (id) => (
        asked.push(`networkInterfacesUsing ${id}`),
        port.networkInterfacesUsing(id)
      ),
      groupsReferencing: (id) => (asked.push(`groupsReferencing ${id}`), port.groupsReferencing(id)),
    };
    const d = await diagnoseNamespace(kube, "myapp", {
      now: () => new Date(),
      aws: { port: aws, cluster: "prod-eks" },
    });
    expect(late()).toBe(false);
    const held = d.blockers
      .find((x) => x.name === "myapp-worker-ingress")
      ?.aws?.blockedGroups.find((g) => g.networkInterfaces.length > 0);
    expect(held?.networkInterfaces[0]?.description).toMatch(/^ELB app\/k8s-myapp-myappwor-0733a56cbb\//);
    // Asked ahead and again by the Ingress's collection: one call each.
    expect(asked.length).toBeGreaterThanOrEqual(4);
    expect(new Set(asked).size).toBe(asked.length);
  });

  it("names the ENI that holds the shared backend security group, with CloudTrail's failures (variant A)", async () => {
    const d = await diagnose("test/fixtures/scenarios/seed-incident.yaml");
    const b = d.blockers.find((x) => x.name === "myapp-worker-ingress");
    expect(b?.aws?.cluster).toBe("prod-eks");
    expect(b?.aws?.stack).toBe("myapp/myapp-worker-ingress");
    const held = b?.aws?.blockedGroups.find((g) => g.networkInterfaces.length > 0);
    expect(held?.groupName).toMatch(/^k8s-traffic-prodeks-/);
    expect(held?.networkInterfaces[0]?.description).toMatch(/^ELB app\/k8s-myapp-myappwor-0733a56cbb\//);
    expect(held?.deleteFailures.length).toBeGreaterThan(0);
    expect(held?.deleteFailures[0]?.errorCode).toBe("Client.DependencyViolation");
    expect(b?.aws?.resources.find((r) => r.type === "LoadBalancer")?.exists).toBe(false);
    expect(
      b?.evidence.some((e) => e.source === "aws" && e.text.includes(held?.networkInterfaces[0]?.id ?? "?")),
    ).toBe(true);
    expect(nextStepTexts(d).join("\n")).toContain(held?.networkInterfaces[0]?.id ?? "?");
  });

  it("never pulls another team's security group into the stack because CloudTrail saw it fail", async () => {
    const seed = await startSeed();
    // Someone tries to delete the payments ALB's group: it fails (its ALB still uses it), and CloudTrail records it.
    const payments = await seed.clients.ec2.send(
      new DescribeSecurityGroupsCommand({ Filters: [{ Name: "group-name", Values: ["payments-alb"] }] }),
    );
    const paymentsId = payments.SecurityGroups?.[0]?.GroupId;
    expect(paymentsId).toBeDefined();
    await expect(
      seed.clients.ec2.send(new DeleteSecurityGroupCommand({ GroupId: paymentsId })),
    ).rejects.toMatchObject({
      name: "DependencyViolation",
    });
    const d = await diagnoseNamespace(seed.kube, "myapp", { now: () => new Date(), aws: { port: seed.aws } });
    const aws = d.blockers.find((x) => x.name === "myapp-worker-ingress")?.aws;
    expect(aws?.blockedGroups.length).toBeGreaterThan(0);
    expect(aws?.blockedGroups.map((g) => g.groupId)).not.toContain(paymentsId);
    expect(aws?.resources.map((r) => r.id)).not.toContain(paymentsId);
  });

  it("names the rule in the node security group that references it (variant B)", async () => {
    const d = await diagnose("test/fixtures/scenarios/seed-incident-rule.yaml");
    const b = d.blockers.find((x) => x.name === "myapp-worker-ingress");
    const held = b?.aws?.blockedGroups.find((g) => g.referencingRules.length > 0);
    expect(held?.networkInterfaces).toEqual([]);
    expect(held?.referencingRules[0]?.ruleId).toMatch(/^sgr-/);
    expect(held?.referencingRules[0]?.description).toBe("elbv2.k8s.aws/targetGroupBinding=shared");
    expect(nextStepTexts(d).join("\n")).toContain("revoke-security-group-ingress");
  });

  it("shows it from the terminal with the AWS settings from the environment", async () => {
    world = await startWorld({ scenario: "test/fixtures/scenarios/seed-incident.yaml", lbc: false });
    const dir = await mkdtemp(join(tmpdir(), "unstuck-ns-aws-"));
    try {
      const kubeconfig = join(dir, "kubeconfig");
      await world.kube.writeKubeconfig(kubeconfig);
      const out: string[] = [];
      const code = await runCli(
        ["ns", "myapp", "--kubeconfig", kubeconfig],
        { ...world.aws.env(), UNSTUCK_CLUSTER_NAME: "prod-eks" },
        linesIo(out),
      );
      expect(code).toBe(0);
      const text = out.join("\n");
      expect(text).toMatch(/AWS \(cluster prod-eks, stack myapp\/myapp-worker-ingress\)/);
      expect(text).toMatch(/held by network interface eni-[0-9a-f]+/);
      expect(text).toMatch(/CloudTrail .* DeleteSecurityGroup Client\.DependencyViolation/);
      // The shared backend group is asked for ahead (the cluster is named) and by the Ingress's
      // collection, and so is what holds it: each once. The stack's group, the backend group and
      // the two rule directions that could reference the held one.
      const groupReads = world.aws.calls().filter((c) => c.action === "DescribeSecurityGroups");
      expect(groupReads).toHaveLength(4);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
