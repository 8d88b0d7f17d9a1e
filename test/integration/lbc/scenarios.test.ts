/**
 * The IngressGroup and NLB scenarios as worlds with the simulated controller running: each stays
 * stuck for the reason its file describes, and un-sticks once that one cause is removed.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { KubeObject } from "../../sim/kube/index.js";
import { eventually } from "../../helpers/eventually.js";
import { startWorld, type World } from "../../sim/world.js";

const GROUP = "test/fixtures/scenarios/ingress-group-shared.yaml";
const NLB = "test/fixtures/scenarios/nlb-service-blocked.yaml";
const LEADER = "aws-load-balancer-controller-6d8f9c7b54-7xk2p";
const NODE_SG = "sg-0a3c5e7f9b1d2f406";
const BACKEND_SG = "sg-0f1e2d3c4b5a69788";
const FAST = { retryIntervalMs: 20, backendSgTimeoutMs: 300, managedSgTimeoutMs: 300, requeueMs: 200 };
const KNOWN_CERT = "arn:aws:acm:ap-northeast-2:123456789012:certificate/8e2f4a6c-1b3d-4f5a-8c7e-9d0b1a2c3e4f";

let world: World | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

async function errors(w: World, since: number): Promise<Record<string, unknown>[]> {
  const token = `sim-${Buffer.from("unstuck").toString("hex")}`;
  const res = await fetch(
    `${w.kube.url}/api/v1/namespaces/kube-system/pods/${LEADER}/log?container=aws-load-balancer-controller`,
    { headers: { authorization: `Bearer ${token}` } },
  );
  return (await res.text())
    .split("\n")
    .filter((l) => l !== "")
    .slice(since)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === "Reconciler error");
}

async function logLength(w: World): Promise<number> {
  const token = `sim-${Buffer.from("unstuck").toString("hex")}`;
  const res = await fetch(
    `${w.kube.url}/api/v1/namespaces/kube-system/pods/${LEADER}/log?container=aws-load-balancer-controller`,
    { headers: { authorization: `Bearer ${token}` } },
  );
  return (await res.text()).split("\n").filter((l) => l !== "").length;
}

const gone = (w: World, ns: string) => (): true | undefined =>
  w.kube.store.get("v1", "Namespace", undefined, ns) === undefined ? true : undefined;

function sharedRules(w: World) {
  return [...w.aws.world.securityGroupRules.values()].filter(
    (r) => r.groupId === NODE_SG && r.description === "elbv2.k8s.aws/targetGroupBinding=shared",
  );
}

describe("scenario ingress-group-shared", () => {
  it("as loaded: the live group's ALB and its ENIs carry the managed and backend SGs; the node SG names the backend SG", async () => {
    world = await startWorld({ scenario: GROUP, lbc: false });
    const aws = world.aws.world;
    const lb = [...aws.loadBalancers.values()].find((x) => x.name.startsWith("k8s-sharededge-"));
    expect(lb?.securityGroups).toHaveLength(2);
    for (const sg of lb?.securityGroups ?? []) {
      const d = aws.dependentsOf(sg);
      expect(d.loadBalancers).toEqual([lb?.arn]);
      expect(d.networkInterfaces.length).toBeGreaterThan(0);
      for (const eni of d.networkInterfaces)
        expect(aws.networkInterfaces.get(eni)?.description).toMatch(/^ELB app\//);
    }
    expect(aws.dependentsOf(BACKEND_SG).referencingRules).toHaveLength(1);
    const ing = world.kube.store.get("networking.k8s.io/v1", "Ingress", "team-a", "web");
    expect(ing?.metadata?.finalizers).toEqual(["group.ingress.k8s.aws/shared-edge"]);
    expect(
      (ing as { status?: { loadBalancer?: { ingress?: { hostname?: string }[] } } }).status?.loadBalancer
        ?.ingress?.[0]?.hostname,
    ).toBe(lb?.dnsName);
  });

  it("stays stuck on team-b's certificate, logged under the group; fixing the certificate lets team-a go and keeps the ALB", async () => {
    world = await startWorld({ scenario: GROUP, lbc: FAST, controllerIntervalMs: 50 });
    const w = world;
    const before = await logLength(w);
    const [error] = await eventually(
      async () => {
        const e = await errors(w, before);
        return e.length > 0 ? e : undefined;
      },
      5000,
      "group error logged",
    );
    expect(error).toMatchObject({
      controller: "ingress",
      object: { name: "shared-edge" },
      namespace: "",
      name: "shared-edge",
    });
    expect(String(error?.error)).toContain("CertificateNotFound");
    const lb = [...w.aws.world.loadBalancers.values()].find((x) => x.name.startsWith("k8s-sharededge-"));
    const teamATg = [...w.aws.world.targetGroups.values()].find((tg) => tg.name.startsWith("k8s-teama-web-"));
    expect(w.aws.world.targetGroups.has(teamATg?.arn ?? "")).toBe(true);
    expect(
      w.kube.store.get("networking.k8s.io/v1", "Ingress", "team-a", "web")?.metadata?.finalizers,
    ).toEqual(["group.ingress.k8s.aws/shared-edge"]);

    // team-b points its annotation back at a certificate the account has.
    const b = w.kube.store.get("networking.k8s.io/v1", "Ingress", "team-b", "partner-api") as KubeObject;
    w.kube.store.update({
      ...b,
      metadata: {
        ...b.metadata,
        name: "partner-api",
        annotations: { ...b.metadata?.annotations, "alb.ingress.kubernetes.io/certificate-arn": KNOWN_CERT },
      },
    });
    await eventually(gone(w, "team-a"), 10_000, "namespace team-a gone");
    expect(w.aws.world.loadBalancers.get(lb?.arn ?? "")?.dnsName).toBe(lb?.dnsName);
    expect(w.aws.world.targetGroups.has(teamATg?.arn ?? "")).toBe(false);
    expect(w.aws.world.securityGroups.has(BACKEND_SG)).toBe(true);
    expect(sharedRules(w).map((r) => [r.fromPort, r.toPort])).toEqual([[9090, 9090]]);
  });
});

describe("scenario nlb-service-blocked", () => {
  it("as loaded: the NLB's managed SG is held only by an instance's secondary interface; the backend SG is in use by live ALBs", async () => {
    world = await startWorld({ scenario: NLB, lbc: false });
    const aws = world.aws.world;
    const managed = [...aws.securityGroups.values()].find(
      (g) => g.tags["service.k8s.aws/stack"] === "payments/gateway",
    );
    const d = aws.dependentsOf(managed?.id ?? "");
    expect(d.loadBalancers).toEqual([]);
    expect(d.referencingRules).toEqual([]);
    expect(d.networkInterfaces).toHaveLength(1);
    const eni = aws.networkInterfaces.get(d.networkInterfaces[0] ?? "");
    expect(eni).toMatchObject({ interfaceType: "interface", requesterManaged: false });
    expect(eni?.attachment).toMatchObject({ instanceId: "i-0a1b2c3d4e5f67890", deviceIndex: 1 });
    expect(aws.dependentsOf(BACKEND_SG).loadBalancers).toHaveLength(2);
  });

  it("keeps service.k8s.aws/resources with the controller's timeout error until the interface goes; the backend SG and its node rule stay", async () => {
    world = await startWorld({ scenario: NLB, lbc: FAST, controllerIntervalMs: 50 });
    const w = world;
    const rulesBefore = sharedRules(w).map((r) => r.id);
    const trailStart = w.aws.world.trail.length;
    const before = await logLength(w);
    const [error] = await eventually(
      async () => {
        const e = await errors(w, before);
        return e.length > 0 ? e : undefined;
      },
      5000,
      "service error logged",
    );
    expect(error).toMatchObject({
      controller: "service",
      object: { name: "gateway", namespace: "payments" },
      error: "failed to delete securityGroup: timed out waiting for the condition",
    });
    expect(w.kube.store.get("v1", "Service", "payments", "gateway")?.metadata?.finalizers).toEqual([
      "service.k8s.aws/resources",
    ]);

    const managed = [...w.aws.world.securityGroups.values()].find(
      (g) => g.tags["service.k8s.aws/stack"] === "payments/gateway",
    );
    const [eni] = w.aws.world.dependentsOf(managed?.id ?? "").networkInterfaces;
    w.aws.world.detachNetworkInterface(eni ?? "");
    w.aws.world.deleteNetworkInterface(eni ?? "");
    await eventually(gone(w, "payments"), 10_000, "namespace payments gone");
    expect(w.aws.world.securityGroups.has(managed?.id ?? "")).toBe(false);
    expect(w.aws.world.securityGroups.has(BACKEND_SG)).toBe(true);
    expect(sharedRules(w).map((r) => r.id)).toEqual(rulesBefore);
    // The backend SG was never a deletion candidate: live Ingresses still require it.
    const backendDeletes = w.aws.world.trail
      .slice(trailStart)
      .filter((e) => e.eventName === "DeleteSecurityGroup" && e.resources[0]?.ResourceName === BACKEND_SG);
    expect(backendDeletes).toEqual([]);
  });
});

describe("scenario lambda-and-endpoint", () => {
  it("the managed SG is held by a Lambda ENI and a VPC endpoint ENI; the Ingress keeps its finalizer until both let go", async () => {
    world = await startWorld({
      scenario: "test/fixtures/scenarios/lambda-and-endpoint.yaml",
      lbc: FAST,
      controllerIntervalMs: 50,
    });
    const w = world;
    const managed = "sg-0a7b8c9d0e1f2a3b4";
    const holders = w.aws.world
      .dependentsOf(managed)
      .networkInterfaces.map((id) => w.aws.world.networkInterfaces.get(id)?.interfaceType)
      .sort();
    expect(new Set(holders)).toEqual(new Set(["lambda", "vpc_endpoint"]));
    const before = await logLength(w);
    const [error] = await eventually(
      async () => {
        const e = await errors(w, before);
        return e.length > 0 ? e : undefined;
      },
      5000,
      "ingress error logged",
    );
    expect(error).toMatchObject({ controller: "ingress", name: "reports-ingress", namespace: "reports" });
    expect(
      w.kube.store.get("networking.k8s.io/v1", "Ingress", "reports", "reports-ingress")?.metadata?.finalizers,
    ).toEqual(["ingress.k8s.aws/resources"]);
    // What the services would do once the function and the endpoint stop using the group.
    for (const id of w.aws.world.dependentsOf(managed).networkInterfaces)
      w.aws.world.networkInterfaces.delete(id);
    await eventually(gone(w, "reports"), 10_000, "namespace reports gone");
    expect(w.aws.world.securityGroups.has(managed)).toBe(false);
    expect(w.aws.world.securityGroups.has(BACKEND_SG)).toBe(false);
  });
});
