/**
 * The simulated AWS Load Balancer Controller beyond a single Ingress: IngressGroups shared across
 * namespaces (a member leaves, the group fails as a whole), NLB Services, the node security group
 * rule for the shared backend SG, and the backend SG's lifetime. Names are recomputed here from
 * upstream's algorithm (sha256 over the documented inputs), independently of the simulator's code.
 */
import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { KubeObject } from "../../sim/kube/index.js";
import { eventually } from "../../helpers/eventually.js";
import { startWorld, type World } from "../../sim/world.js";

const NODE_SG = "sg-0a3c5e7f9b1d2f406";
const GOOD_CERT = "arn:aws:acm:ap-northeast-2:123456789012:certificate/11111111-2222-4333-8444-555555555555";
const MISSING_CERT =
  "arn:aws:acm:ap-northeast-2:123456789012:certificate/99999999-0000-4000-8000-000000000000";
const FAST = { retryIntervalMs: 20, backendSgTimeoutMs: 300, managedSgTimeoutMs: 300, requeueMs: 200 };
const POD = "aws-load-balancer-controller-5f7d8c9b6-abcde";
const SHARED = "elbv2.k8s.aws/targetGroupBinding=shared";

const SCENARIO = `name: lbc-groups
cluster: { name: prod-eks }
kube:
  objects:
    - { apiVersion: v1, kind: Namespace, metadata: { name: team-a } }
    - { apiVersion: v1, kind: Namespace, metadata: { name: team-b } }
    - { apiVersion: v1, kind: Namespace, metadata: { name: payments } }
    - apiVersion: apps/v1
      kind: Deployment
      metadata: { name: aws-load-balancer-controller, namespace: kube-system }
      spec: { selector: { matchLabels: { app: lbc } }, template: { metadata: { labels: { app: lbc } }, spec: { containers: [{ name: aws-load-balancer-controller, image: lbc }] } } }
    - apiVersion: v1
      kind: Pod
      metadata: { name: ${POD}, namespace: kube-system, labels: { app: lbc } }
      spec: { containers: [{ name: aws-load-balancer-controller, image: lbc }] }
    - apiVersion: v1
      kind: Service
      metadata: { name: web, namespace: team-a, uid: 0b6f1c2e-aaaa-4b1c-9d2e-000000000001 }
      spec: { type: ClusterIP, ports: [{ name: http, port: 80, targetPort: 8080 }] }
    - apiVersion: v1
      kind: Service
      metadata: { name: partner-api, namespace: team-b, uid: 0b6f1c2e-bbbb-4b1c-9d2e-000000000002 }
      spec: { type: ClusterIP, ports: [{ name: http, port: 80, targetPort: 9090 }] }
aws:
  securityGroups:
    - id: ${NODE_SG}
      name: eks-cluster-sg-prod-eks-1357924680
      description: EKS cluster security group
      tags: { "kubernetes.io/cluster/prod-eks": owned }
lbc:
  enabled: true
  deployments: [kube-system/aws-load-balancer-controller]
  certificates: [${GOOD_CERT}]
`;

const sha10 = (...parts: string[]): string => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest("hex").slice(0, 10);
};

function member(
  namespace: string,
  name: string,
  service: string,
  extra: Record<string, string> = {},
  path = "/",
): KubeObject {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: {
      name,
      namespace,
      annotations: {
        "alb.ingress.kubernetes.io/group.name": "shared-edge",
        "alb.ingress.kubernetes.io/scheme": "internet-facing",
        "alb.ingress.kubernetes.io/target-type": "ip",
        ...extra,
      },
    },
    spec: {
      ingressClassName: "alb",
      rules: [
        {
          http: {
            paths: [
              { path, pathType: "Prefix", backend: { service: { name: service, port: { number: 80 } } } },
            ],
          },
        },
      ],
    },
  };
}

function nlbService(namespace: string, name: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name,
      namespace,
      annotations: { "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal" },
    },
    spec: {
      type: "LoadBalancer",
      loadBalancerClass: "service.k8s.aws/nlb",
      ports: [{ name: "tcp", port: 443, targetPort: 8443, nodePort: 31443, protocol: "TCP" }],
    },
  };
}

const hostnameOf = (o: KubeObject | undefined): string | undefined =>
  (o as { status?: { loadBalancer?: { ingress?: { hostname?: string }[] } } } | undefined)?.status
    ?.loadBalancer?.ingress?.[0]?.hostname;

const ing = (w: World, ns: string, name: string): KubeObject | undefined =>
  w.kube.store.get("networking.k8s.io/v1", "Ingress", ns, name);

const svc = (w: World, ns: string, name: string): KubeObject | undefined =>
  w.kube.store.get("v1", "Service", ns, name);

async function logLines(w: World): Promise<Record<string, unknown>[]> {
  const token = `sim-${Buffer.from("unstuck").toString("hex")}`;
  const res = await fetch(
    `${w.kube.url}/api/v1/namespaces/kube-system/pods/${POD}/log?container=aws-load-balancer-controller`,
    { headers: { authorization: `Bearer ${token}` } },
  );
  return (await res.text())
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function lbByTag(w: World, key: string, value: string) {
  return [...w.aws.world.loadBalancers.values()].find((lb) => w.aws.world.tags.get(lb.arn)?.[key] === value);
}

function backendSg(w: World): string | undefined {
  return [...w.aws.world.securityGroups.values()].find(
    (g) => g.tags["elbv2.k8s.aws/resource"] === "backend-sg",
  )?.id;
}

function nodeRules(w: World) {
  return [...w.aws.world.securityGroupRules.values()].filter(
    (r) => r.groupId === NODE_SG && r.description === SHARED,
  );
}

let world: World | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

async function start(): Promise<World> {
  world = await startWorld({ scenario: SCENARIO, lbc: FAST, controllerIntervalMs: 50 });
  return world;
}

async function liveGroup(w: World): Promise<string> {
  w.kube.store.create(member("team-a", "web", "web", {}, "/a"));
  w.kube.store.create(member("team-b", "partner-api", "partner-api", {}, "/b"));
  return eventually(
    () => {
      const a = hostnameOf(ing(w, "team-a", "web"));
      return a !== undefined && a === hostnameOf(ing(w, "team-b", "partner-api")) ? a : undefined;
    },
    5000,
    "both members published the group's hostname",
  );
}

describe("IngressGroups", () => {
  it("hosts members from two namespaces on one ALB named and tagged after the group", async () => {
    const w = await start();
    const hostname = await liveGroup(w);
    const lb = lbByTag(w, "ingress.k8s.aws/stack", "shared-edge");
    expect(lb?.name).toBe(`k8s-sharededge-${sha10("prod-eks", "shared-edge", "internet-facing")}`);
    expect(hostname).toBe(lb?.dnsName);
    expect(hostname).toMatch(/^k8s-sharededge-[0-9a-f]{10}-\d+\.ap-northeast-2\.elb\.amazonaws\.com$/);
    for (const [ns, name] of [
      ["team-a", "web"],
      ["team-b", "partner-api"],
    ] as const) {
      expect(ing(w, ns, name)?.metadata?.finalizers).toEqual(["group.ingress.k8s.aws/shared-edge"]);
    }
    const managed = [...w.aws.world.securityGroups.values()].find(
      (g) => g.tags["ingress.k8s.aws/stack"] === "shared-edge",
    );
    expect(managed?.name).toBe(`k8s-sharededge-${sha10("prod-eks", "shared-edge")}`);
    expect(lb?.securityGroups).toEqual([managed?.id, backendSg(w)]);
    const tgNames = [...w.aws.world.targetGroups.values()].map((tg) => tg.name).sort();
    expect(tgNames).toEqual(
      [
        `k8s-teama-web-${sha10("prod-eks", "shared-edge", "team-a", "web", "0b6f1c2e-aaaa-4b1c-9d2e-000000000001", "80", "8080", "ip", "HTTP", "HTTP1")}`,
        `k8s-teamb-partnera-${sha10("prod-eks", "shared-edge", "team-b", "partner-api", "0b6f1c2e-bbbb-4b1c-9d2e-000000000002", "80", "9090", "ip", "HTTP", "HTTP1")}`,
      ].sort(),
    );
  });

  it("a deleted member with a live one left: its rules and target group go, its finalizer goes, the ALB stays", async () => {
    const w = await start();
    const hostname = await liveGroup(w);
    const lb = lbByTag(w, "ingress.k8s.aws/stack", "shared-edge");
    const teamATg = [...w.aws.world.targetGroups.values()].find((tg) => tg.name.startsWith("k8s-teama-web-"));
    expect(w.aws.world.loadBalancersOfTargetGroup(teamATg?.arn ?? "")).toEqual([lb?.arn]);

    w.kube.store.delete("networking.k8s.io/v1", "Ingress", "team-a", "web");
    await eventually(
      () => (ing(w, "team-a", "web") === undefined ? true : undefined),
      5000,
      "team-a's member gone",
    );
    expect(w.aws.world.loadBalancers.get(lb?.arn ?? "")?.dnsName).toBe(hostname);
    expect(w.aws.world.targetGroups.has(teamATg?.arn ?? "")).toBe(false);
    const rules = [...w.aws.world.listeners.values()]
      .filter((l) => l.loadBalancerArn === lb?.arn)
      .flatMap((l) => l.rules.map((r) => r.pathPatterns.join()));
    expect(rules.some((r) => r.includes("/a"))).toBe(false);
    expect(rules.some((r) => r.includes("/b"))).toBe(true);
    expect(hostnameOf(ing(w, "team-b", "partner-api"))).toBe(hostname);

    // The last member goes: now the ALB, the group's managed SG and the backend SG go too.
    w.kube.store.delete("networking.k8s.io/v1", "Ingress", "team-b", "partner-api");
    await eventually(
      () => (ing(w, "team-b", "partner-api") === undefined ? true : undefined),
      5000,
      "group gone",
    );
    expect(w.aws.world.loadBalancers.has(lb?.arn ?? "")).toBe(false);
    expect(backendSg(w)).toBeUndefined();
  });

  it("one member's unknown certificate fails the whole group: nothing changes, the deleting member keeps its finalizer, the error is keyed by the group", async () => {
    const w = await start();
    await liveGroup(w);
    const before = {
      tgs: [...w.aws.world.targetGroups.keys()].sort(),
      rules: [...w.aws.world.listeners.values()].flatMap((l) => l.rules.map((r) => r.arn)).sort(),
    };
    const b = ing(w, "team-b", "partner-api");
    w.kube.store.update({
      ...b,
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: {
        ...b?.metadata,
        name: "partner-api",
        annotations: {
          ...b?.metadata?.annotations,
          "alb.ingress.kubernetes.io/listen-ports": '[{"HTTP": 80}, {"HTTPS": 443}]',
          "alb.ingress.kubernetes.io/certificate-arn": MISSING_CERT,
        },
      },
    });
    w.kube.store.delete("networking.k8s.io/v1", "Ingress", "team-a", "web");
    const error = await eventually(
      async () =>
        (await logLines(w)).find(
          (l) => l.msg === "Reconciler error" && String(l.error).includes("CertificateNotFound"),
        ),
      5000,
      "group error logged",
    );
    expect(error).toMatchObject({
      controller: "ingress",
      object: { name: "shared-edge" },
      namespace: "",
      name: "shared-edge",
    });
    expect(error.object).not.toHaveProperty("namespace");
    expect(String(error.error)).toContain(`Certificate '${MISSING_CERT}' not found`);
    await w.lbc?.reconcileNow();
    expect(ing(w, "team-a", "web")?.metadata?.finalizers).toEqual(["group.ingress.k8s.aws/shared-edge"]);
    expect([...w.aws.world.targetGroups.keys()].sort()).toEqual(before.tgs);
    expect([...w.aws.world.listeners.values()].flatMap((l) => l.rules.map((r) => r.arn)).sort()).toEqual(
      before.rules,
    );
    const failed = w.aws.world.trail.find((e) => e.detail.errorCode === "CertificateNotFound");
    expect(failed?.eventSource).toBe("elasticloadbalancing.amazonaws.com");
  });

  it("a model error in one member names that member under the group's request", async () => {
    const w = await start();
    await liveGroup(w);
    w.kube.store.create(
      member("team-b", "broken", "partner-api", { "alb.ingress.kubernetes.io/listen-ports": "[{HTTP: 80" }),
    );
    const error = await eventually(
      async () => (await logLines(w)).find((l) => l.msg === "Reconciler error" && l.name === "shared-edge"),
      5000,
      "group error logged",
    );
    expect(String(error.error)).toMatch(/^ingress: team-b\/broken: failed to parse json annotation/);
  });
});

describe("NLB Services", () => {
  it("creates an NLB stack with the controller's names, tags, ENIs and hostname, and deletes it with the Service", async () => {
    const w = await start();
    w.kube.store.create(nlbService("payments", "gateway"));
    const hostname = await eventually(
      () => hostnameOf(svc(w, "payments", "gateway")),
      5000,
      "NLB hostname published",
    );
    const created = svc(w, "payments", "gateway");
    const uid = created?.metadata?.uid ?? "";
    expect(created?.metadata?.finalizers).toEqual(["service.k8s.aws/resources"]);
    const lb = lbByTag(w, "service.k8s.aws/stack", "payments/gateway");
    expect(lb?.type).toBe("network");
    expect(lb?.name).toBe(`k8s-payments-gateway-${sha10("prod-eks", uid, "internal")}`);
    expect(lb?.arn).toContain(":loadbalancer/net/");
    expect(hostname).toBe(lb?.dnsName);
    expect(hostname).toMatch(
      /^k8s-payments-gateway-[0-9a-f]{10}-[0-9a-f]{16}\.elb\.ap-northeast-2\.amazonaws\.com$/,
    );
    expect(w.aws.world.tags.get(lb?.arn ?? "")).toMatchObject({
      "elbv2.k8s.aws/cluster": "prod-eks",
      "service.k8s.aws/stack": "payments/gateway",
      "service.k8s.aws/resource": "LoadBalancer",
    });
    const managed = [...w.aws.world.securityGroups.values()].find(
      (g) => g.tags["service.k8s.aws/stack"] === "payments/gateway",
    );
    expect(managed?.name).toBe(`k8s-payments-gateway-${sha10("prod-eks", "gateway", "payments", uid)}`);
    expect(managed?.tags["service.k8s.aws/resource"]).toBe("ManagedLBSecurityGroup");
    expect(lb?.securityGroups).toEqual([managed?.id, backendSg(w)]);
    const tg = [...w.aws.world.targetGroups.values()].find(
      (t) => w.aws.world.tags.get(t.arn)?.["service.k8s.aws/resource"] === "payments/gateway:443",
    );
    expect(tg?.name).toBe(
      `k8s-payments-gateway-${sha10("prod-eks", uid, "31443", "443", "instance", "TCP", "TCP", "10")}`,
    );
    const enis = [...w.aws.world.networkInterfaces.values()].filter(
      (e) => e.description === `ELB net/${lb?.name}/${lb?.arn.split("/").pop()}`,
    );
    expect(enis.length).toBeGreaterThan(0);
    for (const e of enis) {
      expect(e.interfaceType).toBe("network_load_balancer");
      expect(e.requesterManaged).toBe(true);
      expect(e.groups).toEqual(lb?.securityGroups);
    }

    w.kube.store.delete("v1", "Service", "payments", "gateway");
    await eventually(
      () => (svc(w, "payments", "gateway") === undefined ? true : undefined),
      5000,
      "Service gone",
    );
    expect(w.aws.world.loadBalancers.has(lb?.arn ?? "")).toBe(false);
    expect(w.aws.world.targetGroups.has(tg?.arn ?? "")).toBe(false);
    expect(w.aws.world.securityGroups.has(managed?.id ?? "")).toBe(false);
    expect(backendSg(w)).toBeUndefined();
  });
});

describe("the shared backend SG", () => {
  it("puts one rule from the backend SG on the node SG for the target ports, and revokes it when no target group needs it", async () => {
    const w = await start();
    await liveGroup(w);
    const backend = backendSg(w);
    const [rule] = nodeRules(w);
    expect(nodeRules(w)).toHaveLength(1);
    expect(rule).toMatchObject({
      referencedGroupId: backend,
      ipProtocol: "tcp",
      fromPort: 8080,
      toPort: 9090,
    });
    const authorize = w.aws.world.trail.find(
      (e) => e.eventName === "AuthorizeSecurityGroupIngress" && e.resources[0]?.ResourceName === NODE_SG,
    );
    expect(JSON.stringify(authorize?.detail.requestParameters)).toContain(SHARED);

    w.kube.store.delete("networking.k8s.io/v1", "Ingress", "team-b", "partner-api");
    await eventually(
      () => (nodeRules(w).some((r) => r.toPort === 8080) ? true : undefined),
      5000,
      "rule narrowed to team-a's port",
    );
    w.kube.store.delete("networking.k8s.io/v1", "Ingress", "team-a", "web");
    await eventually(() => (nodeRules(w).length === 0 ? true : undefined), 5000, "rule revoked");
    expect(w.aws.world.trail.some((e) => e.eventName === "RevokeSecurityGroupIngress")).toBe(true);
  });

  it("is kept while any LBC finalizer holder still requires it, and deleted after the last one", async () => {
    const w = await start();
    await liveGroup(w);
    w.kube.store.create(nlbService("payments", "gateway"));
    await eventually(() => hostnameOf(svc(w, "payments", "gateway")), 5000, "NLB up");
    const backend = backendSg(w);
    for (const [ns, name] of [
      ["team-a", "web"],
      ["team-b", "partner-api"],
    ] as const) {
      w.kube.store.delete("networking.k8s.io/v1", "Ingress", ns, name);
    }
    await eventually(
      () =>
        ing(w, "team-a", "web") === undefined && ing(w, "team-b", "partner-api") === undefined
          ? true
          : undefined,
      5000,
      "group gone",
    );
    await w.lbc?.reconcileNow();
    expect(w.aws.world.securityGroups.has(backend ?? "")).toBe(true);
    w.kube.store.delete("v1", "Service", "payments", "gateway");
    await eventually(() => (backendSg(w) === undefined ? true : undefined), 5000, "backend SG deleted");
  });
});
