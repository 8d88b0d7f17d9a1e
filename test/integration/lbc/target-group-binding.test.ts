/**
 * The simulated controller's TargetGroupBindings through the simulated AWS world: targets of a
 * target group someone else owns are registered from the Service's endpoints, deregistered when
 * the binding is deleted, and the finalizer goes; a missing target group keeps the finalizer, and a
 * cleanup the controller's role may not do keeps it with a FailedCleanup event.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { KubeObject } from "../../sim/kube/index.js";
import { eventually } from "../../helpers/eventually.js";
import { TARGET_GROUP_BINDING_CRD, TGB_FINALIZER } from "../../sim/lbc/index.js";
import { startWorld, type World } from "../../sim/world.js";

const LEADER = "aws-load-balancer-controller-5f7d8c9b6-abcde";
const FAST = { retryIntervalMs: 20, backendSgTimeoutMs: 300, managedSgTimeoutMs: 300, requeueMs: 100 };
const SCENARIO = `name: tgb
cluster: { name: prod-eks }
kube:
  objects:
    - { apiVersion: v1, kind: Namespace, metadata: { name: shop } }
    - apiVersion: v1
      kind: Pod
      metadata: { name: ${LEADER}, namespace: kube-system }
      spec: { containers: [{ name: aws-load-balancer-controller, image: lbc }] }
    - apiVersion: v1
      kind: Service
      metadata: { name: web, namespace: shop }
      spec: { type: NodePort, selector: { app: web }, ports: [{ name: http, port: 80, targetPort: 8080, nodePort: 31080 }] }
    - apiVersion: discovery.k8s.io/v1
      kind: EndpointSlice
      metadata: { name: web-abc12, namespace: shop, labels: { kubernetes.io/service-name: web } }
      addressType: IPv4
      ports: [{ name: http, port: 8080, protocol: TCP }]
      endpoints:
        - { addresses: [10.0.1.15], conditions: { ready: true } }
        - { addresses: [10.0.2.27], conditions: { ready: true } }
        - { addresses: [10.0.3.9], conditions: { ready: false } }
    - apiVersion: v1
      kind: Node
      metadata: { name: ip-10-0-1-10.ec2.internal }
      spec: { providerID: "aws:///ap-northeast-2a/i-0aaa1111bbbb2222c" }
      status: { conditions: [{ type: Ready, status: "True" }] }
    - apiVersion: v1
      kind: Node
      metadata: { name: ip-10-0-2-10.ec2.internal }
      spec: { providerID: "aws:///ap-northeast-2c/i-0ddd3333eeee4444f" }
      status: { conditions: [{ type: Ready, status: "False" }] }
aws:
  targetGroups:
    - { name: tf-web-ip, arnId: 1a1a1a1a1a1a1a1a, port: 8080, targetType: ip }
    - { name: tf-web-instance, arnId: 2b2b2b2b2b2b2b2b, port: 31080, targetType: instance }
lbc:
  enabled: true
  deployments: [kube-system/aws-load-balancer-controller]
`;

/** Waits until `cond` holds (`until` itself stops at the first defined value, `false` included). */
const waitFor = (cond: () => boolean | Promise<boolean>): Promise<true> =>
  eventually(async () => ((await cond()) ? true : undefined));

const TGB = { apiVersion: "elbv2.k8s.aws/v1beta1", kind: "TargetGroupBinding" } as const;

function binding(name: string, targetGroupARN: string, targetType: "ip" | "instance"): KubeObject {
  return {
    ...TGB,
    metadata: { name, namespace: "shop" },
    spec: { targetGroupARN, targetType, serviceRef: { name: "web", port: 80 } },
  };
}

function finalizers(w: World, name: string): string[] | undefined {
  const o = w.kube.store.get(TGB.apiVersion, TGB.kind, "shop", name);
  return o === undefined ? undefined : [...(o.metadata?.finalizers ?? [])];
}

function events(w: World, name: string): { reason: string; type: string; message: string }[] {
  return w.kube.store
    .list("v1", "Event", "shop")
    .map(
      (e) =>
        e as unknown as { involvedObject: { name: string }; reason: string; type: string; message: string },
    )
    .filter((e) => e.involvedObject.name === name)
    .map((e) => ({ reason: e.reason, type: e.type, message: e.message }));
}

async function podLog(w: World): Promise<string[]> {
  const token = `sim-${Buffer.from("unstuck").toString("hex")}`;
  const res = await fetch(
    `${w.kube.url}/api/v1/namespaces/kube-system/pods/${LEADER}/log?container=aws-load-balancer-controller`,
    { headers: { authorization: `Bearer ${token}` } },
  );
  return (await res.text()).split("\n").filter((l) => l !== "");
}

describe("simulated AWS Load Balancer Controller: TargetGroupBindings", () => {
  let world: World | undefined;

  afterEach(async () => {
    await world?.stop();
    world = undefined;
  });

  async function start(lbc: Record<string, unknown> = {}): Promise<World> {
    world = await startWorld({ scenario: SCENARIO, lbc: { ...FAST, ...lbc } });
    world.kube.store.create(TARGET_GROUP_BINDING_CRD);
    return world;
  }

  const arnOf = (w: World, name: string): string =>
    [...w.aws.world.targetGroups.values()].find((t) => t.name === name)?.arn ?? "";
  const targetsOf = (w: World, name: string): string[] =>
    (w.aws.world.targetGroups.get(arnOf(w, name))?.targets ?? []).map((t) => `${t.id}:${t.port}`).sort();

  it("registers the ready pod IPs, deregisters them on delete, then drops the finalizer", async () => {
    const w = await start();
    const arn = arnOf(w, "tf-web-ip");
    w.kube.store.create(binding("web-ip", arn, "ip"));
    await waitFor(() => targetsOf(w, "tf-web-ip").length === 2);
    expect(targetsOf(w, "tf-web-ip")).toEqual(["10.0.1.15:8080", "10.0.2.27:8080"]);
    expect(finalizers(w, "web-ip")).toEqual([TGB_FINALIZER]);
    await waitFor(() => events(w, "web-ip").some((e) => e.reason === "SuccessfullyReconciled"));
    const calls = w.aws.world.trail.filter((e) => e.eventName === "RegisterTargets");
    expect(calls.length).toBe(1);

    // A pod leaving the Service leaves the target group.
    const slice = w.kube.store.get("discovery.k8s.io/v1", "EndpointSlice", "shop", "web-abc12");
    const eps = (slice as unknown as { endpoints: unknown[] }).endpoints;
    w.kube.store.update({ ...slice, endpoints: eps.slice(1) });
    await waitFor(() => targetsOf(w, "tf-web-ip").length === 1);
    expect(targetsOf(w, "tf-web-ip")).toEqual(["10.0.2.27:8080"]);

    w.kube.store.delete(TGB.apiVersion, TGB.kind, "shop", "web-ip");
    await waitFor(() => finalizers(w, "web-ip") === undefined);
    expect(targetsOf(w, "tf-web-ip")).toEqual([]);
    // The target group is someone else's: it stays.
    expect(w.aws.world.targetGroups.has(arn)).toBe(true);
  });

  it("registers ready nodes' instance ids on the node port for targetType instance", async () => {
    const w = await start();
    w.kube.store.create(binding("web-instance", arnOf(w, "tf-web-instance"), "instance"));
    await waitFor(() => targetsOf(w, "tf-web-instance").length === 1);
    expect(targetsOf(w, "tf-web-instance")).toEqual(["i-0aaa1111bbbb2222c:31080"]);
  });

  it("registers nothing for a Service without endpoints", async () => {
    const w = await start();
    w.kube.store.delete("discovery.k8s.io/v1", "EndpointSlice", "shop", "web-abc12");
    w.kube.store.create(binding("web-ip", arnOf(w, "tf-web-ip"), "ip"));
    await waitFor(() => events(w, "web-ip").some((e) => e.reason === "SuccessfullyReconciled"));
    expect(targetsOf(w, "tf-web-ip")).toEqual([]);
    expect(finalizers(w, "web-ip")).toEqual([TGB_FINALIZER]);
  });

  it("keeps the finalizer of a binding whose target group does not exist, with the controller's error", async () => {
    const w = await start();
    const missing =
      "arn:aws:elasticloadbalancing:ap-northeast-2:123456789012:targetgroup/gone/0f0f0f0f0f0f0f0f";
    w.kube.store.create(binding("web-gone", missing, "ip"));
    await waitFor(async () =>
      (await podLog(w)).some(
        (l) => l.includes('"controller":"targetGroupBinding"') && l.includes("TargetGroupNotFound"),
      ),
    );
    expect(finalizers(w, "web-gone")).toEqual([TGB_FINALIZER]);
    expect(events(w, "web-gone").some((e) => e.reason === "SuccessfullyReconciled")).toBe(false);
  });

  it("keeps the finalizer with a FailedCleanup event when the role may not deregister", async () => {
    const w = await start({ deniedActions: ["elasticloadbalancing:DeregisterTargets"] });
    w.kube.store.create(binding("web-ip", arnOf(w, "tf-web-ip"), "ip"));
    await waitFor(() => targetsOf(w, "tf-web-ip").length === 2);
    w.kube.store.delete(TGB.apiVersion, TGB.kind, "shop", "web-ip");
    await waitFor(() => events(w, "web-ip").some((e) => e.reason === "FailedCleanup"));
    const failed = events(w, "web-ip").find((e) => e.reason === "FailedCleanup");
    expect(failed?.type).toBe("Warning");
    expect(failed?.message).toMatch(
      /^Failed cleanup due to AccessDenied: .*elasticloadbalancing:DeregisterTargets/,
    );
    expect(finalizers(w, "web-ip")).toEqual([TGB_FINALIZER]);
    expect(targetsOf(w, "tf-web-ip")).toHaveLength(2);
  });

  it("records BackendNotFound when the Service is missing", async () => {
    const w = await start();
    w.kube.store.create({
      ...binding("web-nosvc", arnOf(w, "tf-web-ip"), "ip"),
      spec: {
        targetGroupARN: arnOf(w, "tf-web-ip"),
        targetType: "ip",
        serviceRef: { name: "nope", port: 80 },
      },
    });
    await waitFor(() => events(w, "web-nosvc").some((e) => e.reason === "BackendNotFound"));
    expect(events(w, "web-nosvc").find((e) => e.reason === "BackendNotFound")?.message).toBe(
      'backend not found: services "nope" not found',
    );
  });
});
