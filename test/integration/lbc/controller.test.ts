/**
 * The simulated AWS Load Balancer Controller in one world: cleanup of a deleted Ingress, the seed
 * incident's stuck finalizer (variants A and B) with its real log line and CloudTrail record, the
 * unblocking fix through the AWS API, and a re-created Ingress getting a new ALB and DNS name.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DeleteNetworkInterfaceCommand, RevokeSecurityGroupIngressCommand } from "@aws-sdk/client-ec2";
import { createAwsClients, destroyAwsClients, type AwsClients } from "../../../src/aws/clients.js";
import type { KubeObject } from "../../sim/kube/index.js";
import { eventually } from "../../helpers/eventually.js";
import { startWorld, type World } from "../../sim/world.js";

const SEED = "test/fixtures/scenarios/seed-incident.yaml";
const RULE = "test/fixtures/scenarios/seed-incident-rule.yaml";
const LEADER = "aws-load-balancer-controller-6d8f9c7b54-7xk2p";
const LBC_KEY = "ASIAQLBCCONTROLLER01";
const BACKEND_SG = "sg-0f1e2d3c4b5a69788";
// Compressed clock: retry every 20 ms, give up after 300 ms (real: 2 s and 2 min).
const FAST = { retryIntervalMs: 20, backendSgTimeoutMs: 300, managedSgTimeoutMs: 300, requeueMs: 200 };

const HEALTHY = `name: healthy
cluster: { name: prod-eks }
kube:
  objects:
    - { apiVersion: v1, kind: Namespace, metadata: { name: shop } }
    - apiVersion: apps/v1
      kind: Deployment
      metadata: { name: aws-load-balancer-controller, namespace: kube-system }
      spec: { selector: { matchLabels: { app: lbc } }, template: { metadata: { labels: { app: lbc } }, spec: { containers: [{ name: aws-load-balancer-controller, image: lbc }] } } }
    - apiVersion: v1
      kind: Pod
      metadata: { name: aws-load-balancer-controller-5f7d8c9b6-abcde, namespace: kube-system, labels: { app: lbc } }
      spec: { containers: [{ name: aws-load-balancer-controller, image: lbc }] }
lbc:
  enabled: true
  deployments: [kube-system/aws-load-balancer-controller]
`;

function ingress(namespace: string, name: string): KubeObject {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: {
      name,
      namespace,
      annotations: {
        "alb.ingress.kubernetes.io/scheme": "internet-facing",
        "alb.ingress.kubernetes.io/listen-ports": '[{"HTTP": 80}, {"HTTPS": 443}]',
      },
    },
    spec: {
      ingressClassName: "alb",
      rules: [
        {
          http: {
            paths: [
              { path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } },
            ],
          },
        },
      ],
    },
  };
}

function hostnameOf(o: KubeObject | undefined): string | undefined {
  return (o as { status?: { loadBalancer?: { ingress?: { hostname?: string }[] } } } | undefined)?.status
    ?.loadBalancer?.ingress?.[0]?.hostname;
}

async function podLog(w: World, pod: string): Promise<string[]> {
  const token = `sim-${Buffer.from("unstuck").toString("hex")}`;
  const res = await fetch(
    `${w.kube.url}/api/v1/namespaces/kube-system/pods/${pod}/log?container=aws-load-balancer-controller`,
    { headers: { authorization: `Bearer ${token}` } },
  );
  return (await res.text()).split("\n").filter((l) => l !== "");
}

function stackResources(w: World, stack: string): string[] {
  const aws = w.aws.world;
  return [
    ...[...aws.loadBalancers.keys(), ...aws.targetGroups.keys()].filter(
      (arn) => aws.tags.get(arn)?.["ingress.k8s.aws/stack"] === stack,
    ),
    ...[...aws.securityGroups.values()]
      .filter((g) => g.tags["ingress.k8s.aws/stack"] === stack)
      .map((g) => g.id),
  ];
}

let world: World | undefined;
let clients: AwsClients | undefined;
afterEach(async () => {
  if (clients) destroyAwsClients(clients);
  await world?.stop();
  world = undefined;
  clients = undefined;
});

function ec2(w: World): AwsClients["ec2"] {
  clients = createAwsClients({
    region: w.aws.world.region,
    endpoint: w.aws.url,
    credentials: { accessKeyId: "ASIAQOPERATOR0000001", secretAccessKey: "x" },
    maxAttempts: 1,
  });
  return clients.ec2;
}

describe("simulated AWS Load Balancer Controller", () => {
  it("provisions a new alb Ingress, then cleans everything up and removes the finalizer when it is deleted", async () => {
    world = await startWorld({ scenario: HEALTHY, lbc: FAST, controllerIntervalMs: 50 });
    const w = world;
    w.kube.store.create(ingress("shop", "web"));
    const hostname = await eventually(
      () => hostnameOf(w.kube.store.get("networking.k8s.io/v1", "Ingress", "shop", "web")),
      5000,
      "hostname published",
    );
    const ing = w.kube.store.get("networking.k8s.io/v1", "Ingress", "shop", "web");
    expect(ing?.metadata?.finalizers).toContain("ingress.k8s.aws/resources");
    const lb = [...w.aws.world.loadBalancers.values()].find((x) => x.dnsName === hostname);
    expect(lb?.name).toMatch(/^k8s-shop-web-[0-9a-f]{10}$/);
    expect(w.aws.world.tags.get(lb?.arn ?? "")).toMatchObject({
      "elbv2.k8s.aws/cluster": "prod-eks",
      "ingress.k8s.aws/stack": "shop/web",
      "ingress.k8s.aws/resource": "LoadBalancer",
    });
    expect(stackResources(w, "shop/web")).toHaveLength(3); // ALB, target group, managed SG
    const backend = [...w.aws.world.securityGroups.values()].find(
      (g) => g.tags["elbv2.k8s.aws/resource"] === "backend-sg",
    );
    expect(backend?.name).toMatch(/^k8s-traffic-prodeks-[0-9a-f]{10}$/);
    expect(lb?.securityGroups).toContain(backend?.id);

    w.kube.store.delete("networking.k8s.io/v1", "Ingress", "shop", "web");
    await eventually(
      () =>
        w.kube.store.get("networking.k8s.io/v1", "Ingress", "shop", "web") === undefined ? true : undefined,
      5000,
      "ingress gone",
    );
    expect(stackResources(w, "shop/web")).toEqual([]);
    // No other Ingress uses the shared backend SG any more, so it goes too.
    expect(w.aws.world.securityGroups.has(backend?.id ?? "")).toBe(false);
    const deletes = w.aws.world.trail.filter((e) => e.eventName.startsWith("Delete")).map((e) => e.eventName);
    expect(deletes).toEqual(
      expect.arrayContaining(["DeleteLoadBalancer", "DeleteTargetGroup", "DeleteSecurityGroup"]),
    );
  });

  it("variant A: stays stuck with the real log line and DependencyViolation in CloudTrail until the ENI is deleted; the namespace then disappears and a re-created Ingress gets a new DNS name", async () => {
    world = await startWorld({ scenario: SEED, lbc: FAST, controllerIntervalMs: 50 });
    const w = world;
    const before = (await podLog(w, LEADER)).length;
    const startedAt = w.aws.world.trail.length;
    const errors = await eventually(
      async () => {
        const fresh = (await podLog(w, LEADER)).slice(before).filter((l) => l.includes('"Reconciler error"'));
        return fresh.length > 0 ? fresh : undefined;
      },
      5000,
      "reconciler error logged",
    );
    expect(JSON.parse(errors[0] ?? "{}")).toMatchObject({
      level: "error",
      msg: "Reconciler error",
      controller: "ingress",
      object: { name: "myapp-worker-ingress", namespace: "myapp" },
      namespace: "myapp",
      name: "myapp-worker-ingress",
      error: "failed to delete securityGroup: timed out waiting for the condition",
    });
    // The controller keeps retrying (and requeues after each timeout): on a loaded machine one
    // timeout's window may hold only a few attempts, so the trail is read once it holds several.
    const lbcDeletes = () =>
      w.aws.world.trail
        .slice(startedAt)
        .filter((e) => e.eventName === "DeleteSecurityGroup" && e.accessKeyId === LBC_KEY);
    const failures = await eventually(
      () => {
        const seen = lbcDeletes();
        return seen.length > 3 ? seen : undefined;
      },
      5000,
      "repeated DeleteSecurityGroup attempts in CloudTrail",
    );
    expect(failures.length).toBeGreaterThan(3);
    expect(failures[0]?.detail).toMatchObject({
      errorCode: "Client.DependencyViolation",
      errorMessage: `resource ${BACKEND_SG} has a dependent object`,
      userIdentity: { arn: expect.stringContaining("prod-eks-aws-load-balancer-controller") as unknown },
    });
    expect(
      w.kube.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress")?.metadata
        ?.finalizers,
    ).toEqual(["ingress.k8s.aws/resources"]);

    // The fix, through the AWS API: detach (what ELB should have done) and delete the ENI.
    const eni = w.aws.world.dependentsOf(BACKEND_SG).networkInterfaces[0] ?? "";
    w.aws.world.detachNetworkInterface(eni);
    await ec2(w).send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: eni }));
    await eventually(
      () => (w.kube.store.get("v1", "Namespace", undefined, "myapp") === undefined ? true : undefined),
      10_000,
      "namespace myapp gone",
    );
    expect(w.aws.world.securityGroups.has(BACKEND_SG)).toBe(false);

    // Argo CD re-syncs: same Ingress, new ALB, new DNS name (docs/incident.md, step 8).
    w.kube.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "myapp" } });
    w.kube.store.create(ingress("myapp", "myapp-worker-ingress"));
    const hostname = await eventually(
      () => hostnameOf(w.kube.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress")),
      5000,
      "new hostname",
    );
    expect(hostname).not.toContain("1559597038");
    expect(hostname).toMatch(/^k8s-myapp-myappwor-[0-9a-f]{10}-\d+\.ap-northeast-2\.elb\.amazonaws\.com$/);
    expect([...w.aws.world.loadBalancers.values()].filter((lb) => lb.dnsName === hostname)).toHaveLength(1);
  });

  it("variant B: stays stuck until the node-SG rule is revoked by rule id, then the namespace disappears", async () => {
    world = await startWorld({ scenario: RULE, lbc: FAST, controllerIntervalMs: 50 });
    const w = world;
    const startedAt = w.aws.world.trail.length;
    await eventually(
      () =>
        w.aws.world.trail
          .slice(startedAt)
          .some(
            (e) =>
              e.eventName === "DeleteSecurityGroup" && e.detail.errorCode === "Client.DependencyViolation",
          )
          ? true
          : undefined,
      5000,
      "DependencyViolation recorded",
    );
    const ruleId = w.aws.world.dependentsOf(BACKEND_SG).referencingRules[0] ?? "";
    const owner = w.aws.world.securityGroupRules.get(ruleId)?.groupId;
    await ec2(w).send(
      new RevokeSecurityGroupIngressCommand({ GroupId: owner, SecurityGroupRuleIds: [ruleId] }),
    );
    await eventually(
      () => (w.kube.store.get("v1", "Namespace", undefined, "myapp") === undefined ? true : undefined),
      10_000,
      "namespace myapp gone",
    );
    expect(w.aws.world.securityGroups.has(BACKEND_SG)).toBe(false);
    // Payments uses its own group and keeps its ALB and finalizer.
    expect(
      w.kube.store.get("networking.k8s.io/v1", "Ingress", "payments", "payments-api-ingress")?.metadata
        ?.finalizers,
    ).toEqual(["ingress.k8s.aws/resources"]);
  });
});
