/**
 * Property: over generated worlds (random IngressGroups across namespaces, NLB Services, shared
 * and foreign security groups, random dependents), the groups the diagnosis calls blocked are
 * always a subset of those the controller is deleting, and no live resource ever appears in a
 * blocked group, a remedy or a removal plan. The oracle below is written from the controller's
 * documented rules, not from the product's model.
 */
import { describe, expect, it } from "vitest";
import type {
  LoadBalancerSnapshot,
  NetworkInterfaceSnapshot,
  SecurityGroupRuleSnapshot,
  SecurityGroupSnapshot,
  TargetGroupSnapshot,
} from "../../../src/aws/types.js";
import { analyzeAws, type AwsCollected } from "../../../src/diagnosis/aws.js";
import { edgeOwnerOf, type EdgeOwner } from "../../../src/edge/model.js";
import { findOrphans } from "../../../src/edge/orphans.js";
import type { ObjectSnapshot } from "../../../src/kube/types.js";
import { mulberry32 as rng } from "../../security/hostile.js";

const CLUSTER = "prod-eks";

interface World {
  readonly objects: ObjectSnapshot[];
  readonly lbs: LoadBalancerSnapshot[];
  readonly tgs: TargetGroupSnapshot[];
  readonly sgs: SecurityGroupSnapshot[];
  readonly enis: NetworkInterfaceSnapshot[];
  readonly rules: SecurityGroupRuleSnapshot[];
  readonly stackOf: Map<string, string>;
}

function generate(seed: number): World {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const namespaces = ["team-a", "team-b", "team-c", "shop"];
  const deletingNs = new Set(namespaces.filter(() => r() < 0.45));
  const groups = ["shared-edge", "internal", "partners"];
  const objects: ObjectSnapshot[] = [];
  const nIngress = 1 + Math.floor(r() * 7);
  for (let i = 0; i < nIngress; i++) {
    const ns = pick(namespaces);
    const group = r() < 0.6 ? pick(groups) : undefined;
    const deleting = deletingNs.has(ns) || r() < 0.1;
    const annotations: Record<string, string> = {};
    if (group) annotations["alb.ingress.kubernetes.io/group.name"] = group;
    if (r() < 0.2) annotations["alb.ingress.kubernetes.io/security-groups"] = "sg-foreign0";
    objects.push({
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      resource: "ingresses",
      namespace: ns,
      name: `ing${String(i)}`,
      finalizers: [group ? `group.ingress.k8s.aws/${group}` : "ingress.k8s.aws/resources"],
      ...(deleting ? { deletionTimestamp: "2026-02-12T08:39:00Z" } : {}),
      labels: {},
      annotations,
      ownerReferences: [],
      ingressClassName: "alb",
    });
  }
  const nSvc = Math.floor(r() * 3);
  for (let i = 0; i < nSvc; i++) {
    const ns = pick(namespaces);
    objects.push({
      apiVersion: "v1",
      kind: "Service",
      resource: "services",
      namespace: ns,
      name: `svc${String(i)}`,
      finalizers: ["service.k8s.aws/resources"],
      ...(deletingNs.has(ns) ? { deletionTimestamp: "2026-02-12T08:39:00Z" } : {}),
      labels: {},
      annotations: {},
      ownerReferences: [],
      serviceType: "LoadBalancer",
      loadBalancerClass: "service.k8s.aws/nlb",
    });
  }

  const sgs: SecurityGroupSnapshot[] = [
    {
      id: "sg-backend",
      name: "k8s-traffic-prodeks-0123456789",
      description: "[k8s] Shared Backend SecurityGroup for LoadBalancer",
      tags: { "elbv2.k8s.aws/cluster": CLUSTER, "elbv2.k8s.aws/resource": "backend-sg" },
    },
    { id: "sg-node", name: "eks-node", description: "", tags: { "aws:eks:cluster-name": CLUSTER } },
    { id: "sg-foreign0", name: "payments-alb", description: "", tags: { team: "payments" } },
  ];
  const lbs: LoadBalancerSnapshot[] = [];
  const tgs: TargetGroupSnapshot[] = [];
  const enis: NetworkInterfaceSnapshot[] = [];
  const rules: SecurityGroupRuleSnapshot[] = [];
  const stackOf = new Map<string, string>();
  const stacks = new Map<string, { kind: "Ingress" | "Service"; members: ObjectSnapshot[] }>();
  for (const o of objects) {
    const stack = o.annotations["alb.ingress.kubernetes.io/group.name"] ?? `${o.namespace ?? ""}/${o.name}`;
    stackOf.set(`${o.kind}/${o.namespace ?? ""}/${o.name}`, stack);
    const entry = stacks.get(`${o.kind}|${stack}`) ?? { kind: o.kind as "Ingress" | "Service", members: [] };
    entry.members.push(o);
    stacks.set(`${o.kind}|${stack}`, entry);
  }
  let n = 0;
  const id = (p: string): string => `${p}-${(n++).toString(16).padStart(8, "0")}`;
  for (const [key, { kind, members }] of stacks) {
    const stack = key.split("|")[1] ?? "";
    const tagKey = kind === "Service" ? "service.k8s.aws/stack" : "ingress.k8s.aws/stack";
    const resKey = kind === "Service" ? "service.k8s.aws/resource" : "ingress.k8s.aws/resource";
    const base = { "elbv2.k8s.aws/cluster": CLUSTER, [tagKey]: stack };
    const managed = {
      id: id("sg"),
      name: `k8s-${stack.replace(/\W/g, "")}`,
      description: "",
      tags: { ...base, [resKey]: "ManagedLBSecurityGroup" },
    };
    sgs.push(managed);
    const allDeleting = members.every((m) => m.deletionTimestamp !== undefined);
    const lbGone = allDeleting && r() < 0.5;
    const type = kind === "Service" ? "net" : "app";
    const lbName = `k8s-${stack.replace(/\W/g, "").slice(0, 12)}-${String(n)}`;
    const lbId = id("lb");
    const lbGroups = [managed.id, ...(r() < 0.8 ? ["sg-backend"] : [])];
    if (!lbGone) {
      lbs.push({
        arn: `arn:aws:elasticloadbalancing:ap-northeast-2:1:loadbalancer/${type}/${lbName}/${lbId}`,
        name: lbName,
        dnsName: `${lbName}-1.ap-northeast-2.elb.amazonaws.com`,
        state: "active",
        type: kind === "Service" ? "network" : "application",
        securityGroups: lbGroups,
        tags: { ...base, [resKey]: "LoadBalancer" },
      });
      for (const m of members) {
        tgs.push({
          arn: `arn:aws:elasticloadbalancing:ap-northeast-2:1:targetgroup/tg-${m.name}/${id("tg")}`,
          name: `tg-${m.name}`,
          loadBalancerArns: [lbs[lbs.length - 1]?.arn ?? ""],
          tags: { ...base, [resKey]: `${m.namespace ?? ""}/${m.name}-svc:80` },
        });
      }
    }
    // The load balancer's own interfaces (left behind when it is gone, with probability).
    if (!lbGone || r() < 0.7) {
      for (const g of lbGroups) {
        enis.push({
          id: id("eni"),
          description: `ELB ${type}/${lbName}/${lbId}`,
          status: r() < 0.8 ? "in-use" : "available",
          interfaceType: type === "net" ? "network_load_balancer" : "interface",
          requesterId: "amazon-elb",
          requesterManaged: true,
          groups: [g],
        });
      }
    }
    // Random other dependents on the managed group.
    if (r() < 0.3)
      enis.push({
        id: id("eni"),
        description: "ops debug",
        status: "in-use",
        interfaceType: "interface",
        requesterManaged: false,
        groups: [managed.id, "sg-node"],
        attachment: { instanceId: id("i") },
      });
    if (r() < 0.2)
      enis.push({
        id: id("eni"),
        description: `AWS Lambda VPC ENI-reporter-1c2d3e4f-0000-4000-8000-${"a".repeat(12)}`,
        status: "in-use",
        interfaceType: "lambda",
        requesterManaged: true,
        groups: [managed.id],
      });
    if (r() < 0.2)
      enis.push({
        id: id("eni"),
        description: `VPC Endpoint Interface vpce-0${String(n).padStart(16, "0")}`,
        status: "in-use",
        interfaceType: "vpc_endpoint",
        requesterManaged: true,
        groups: [managed.id],
      });
  }
  // Node rule from the backend group, and a foreign team's load balancer that uses a random group.
  rules.push({
    id: id("sgr"),
    groupId: "sg-node",
    isEgress: false,
    referencedGroupId: "sg-backend",
    protocol: "tcp",
    fromPort: 8080,
    toPort: 8080,
    description: "elbv2.k8s.aws/targetGroupBinding=shared",
  });
  if (r() < 0.3) {
    const borrowed = pick(sgs.filter((g) => g.id.startsWith("sg-0") || g.id === "sg-backend"));
    lbs.push({
      arn: "arn:aws:elasticloadbalancing:ap-northeast-2:1:loadbalancer/app/partner-lb/ffff",
      name: "partner-lb",
      dnsName: "partner-lb-2.ap-northeast-2.elb.amazonaws.com",
      state: "active",
      type: "application",
      securityGroups: [borrowed.id, "sg-foreign0"],
      tags: { team: "partners" },
    });
    enis.push({
      id: id("eni"),
      description: "ELB app/partner-lb/ffff",
      status: "in-use",
      interfaceType: "interface",
      requesterId: "amazon-elb",
      requesterManaged: true,
      groups: [borrowed.id],
    });
  }
  return { objects, lbs, tgs, sgs, enis, rules, stackOf };
}

/** The controller's documented deletion set: groups it deletes now, independent of the product. */
function controllerDeleting(w: World): Set<string> {
  const deleting = new Set<string>();
  const members = (stack: string, kind: string) =>
    w.objects.filter(
      (o) => o.kind === kind && w.stackOf.get(`${o.kind}/${o.namespace ?? ""}/${o.name}`) === stack,
    );
  for (const g of w.sgs) {
    const ing = g.tags["ingress.k8s.aws/stack"];
    const svc = g.tags["service.k8s.aws/stack"];
    const ms = ing !== undefined ? members(ing, "Ingress") : svc !== undefined ? members(svc, "Service") : [];
    if (ms.length > 0 && ms.every((m) => m.deletionTimestamp !== undefined)) deleting.add(g.id);
  }
  // isBackendSGRequired: any live object with a controller finalizer that uses the backend group.
  const live = w.objects.filter(
    (o) =>
      o.deletionTimestamp === undefined &&
      (o.kind === "Service" || o.annotations["alb.ingress.kubernetes.io/security-groups"] === undefined),
  );
  if (live.length === 0 && w.objects.some((o) => o.deletionTimestamp !== undefined))
    deleting.add("sg-backend");
  return deleting;
}

/** Groups a live object's or a foreign team's load balancer uses: must never be touched. */
function liveGroups(w: World): Set<string> {
  const live = new Set<string>();
  for (const lb of w.lbs) {
    const stack = lb.tags["ingress.k8s.aws/stack"] ?? lb.tags["service.k8s.aws/stack"];
    const kind = lb.tags["service.k8s.aws/stack"] !== undefined ? "Service" : "Ingress";
    const ours = lb.tags["elbv2.k8s.aws/cluster"] === CLUSTER;
    const alive =
      !ours ||
      w.objects.some(
        (o) =>
          o.kind === kind &&
          o.deletionTimestamp === undefined &&
          w.stackOf.get(`${o.kind}/${o.namespace ?? ""}/${o.name}`) === stack,
      );
    if (alive) for (const g of lb.securityGroups) live.add(g);
  }
  return live;
}

function collectedFor(w: World, blocker: ObjectSnapshot, owners: EdgeOwner[]): AwsCollected {
  const stack = w.stackOf.get(`${blocker.kind}/${blocker.namespace ?? ""}/${blocker.name}`) ?? "";
  const tagKey = blocker.kind === "Service" ? "service.k8s.aws/stack" : "ingress.k8s.aws/stack";
  const stackGroups = w.sgs.filter(
    (g) => g.tags[tagKey] === stack && g.tags["elbv2.k8s.aws/cluster"] === CLUSTER,
  );
  const groups = [
    ...stackGroups.map((group) => ({ group, role: "managed" as const })),
    { group: w.sgs.find((g) => g.id === "sg-backend") as SecurityGroupSnapshot, role: "backend" as const },
  ];
  const stackLb = w.lbs.find((l) => l.tags[tagKey] === stack);
  return {
    cluster: CLUSTER,
    stack,
    loadBalancers: stackLb ? [stackLb] : [],
    targetGroups: stackLb ? w.tgs.filter((t) => t.loadBalancerArns.includes(stackLb.arn)) : [],
    listenerArns: [],
    groups,
    missingGroupIds: [],
    networkInterfaces: new Map(
      groups.map(({ group }) => [group.id, w.enis.filter((e) => e.groups.includes(group.id))]),
    ),
    referencing: new Map(
      groups.map(({ group }) => {
        const owning = [
          ...new Set(w.rules.filter((r) => r.referencedGroupId === group.id).map((r) => r.groupId)),
        ];
        return [
          group.id,
          owning.map((gid) => ({
            group: w.sgs.find((g) => g.id === gid) as SecurityGroupSnapshot,
            rules: w.rules.filter((r) => r.groupId === gid),
          })),
        ];
      }),
    ),
    deleteSecurityGroupEvents: [],
    problems: [],
    owners,
    ownersComplete: true,
    otherLoadBalancers: w.lbs,
    blocker: { kind: blocker.kind, namespace: blocker.namespace ?? "", name: blocker.name },
  };
}

describe("live vs dying over generated worlds", () => {
  it("blocked groups ⊆ groups the controller is deleting; live resources never blocked, never in a fix", () => {
    let checked = 0;
    let blockedSeen = 0;
    for (let seed = 1; seed <= 600; seed++) {
      const w = generate(seed);
      const owners = w.objects.map((o) => edgeOwnerOf(o)).filter((o): o is EdgeOwner => o !== undefined);
      const deleting = controllerDeleting(w);
      const live = liveGroups(w);
      const liveLbNames = new Set(
        w.lbs
          .filter(
            (l) =>
              l.securityGroups.some((g) => live.has(g)) &&
              ![...deleting].some((d) => l.securityGroups.includes(d) && !live.has(d)),
          )
          .map((l) => l.name),
      );
      for (const blocker of w.objects.filter((o) => o.deletionTimestamp !== undefined)) {
        const f = analyzeAws(collectedFor(w, blocker, owners));
        checked++;
        for (const g of f.blockedGroups) {
          blockedSeen++;
          expect(
            deleting.has(g.groupId),
            `seed ${String(seed)}: ${g.groupId} blocked but not being deleted`,
          ).toBe(true);
          expect(live.has(g.groupId), `seed ${String(seed)}: live group ${g.groupId} called blocked`).toBe(
            false,
          );
          for (const r of g.remedies) {
            for (const c of r.commands) {
              for (const name of liveLbNames) {
                if (r.kind !== "live-dependent")
                  expect(c.includes(name), `seed ${String(seed)}: fix touches live ${name}`).toBe(false);
              }
            }
          }
        }
        for (const s of f.stays) expect(f.blockedGroups.map((g) => g.groupId)).not.toContain(s.id);
      }
    }
    // The generator must exercise both sides, or the property proves nothing.
    expect(checked).toBeGreaterThan(500);
    expect(blockedSeen).toBeGreaterThan(100);
  });

  it("orphans never include a live resource, nor one the controller is still deleting", () => {
    let orphansSeen = 0;
    for (let seed = 1; seed <= 600; seed++) {
      const w = generate(seed);
      const owners = w.objects.map((o) => edgeOwnerOf(o)).filter((o): o is EdgeOwner => o !== undefined);
      const live = liveGroups(w);
      const deleting = controllerDeleting(w);
      const report = findOrphans({
        cluster: CLUSTER,
        owners,
        ownersComplete: true,
        loadBalancers: w.lbs,
        targetGroups: w.tgs,
        securityGroups: w.sgs,
        elbInterfaces: w.enis.filter((e) => e.requesterId === "amazon-elb"),
        interfacesByGroup: new Map(w.sgs.map((g) => [g.id, w.enis.filter((e) => e.groups.includes(g.id))])),
      });
      for (const o of report.orphans) {
        orphansSeen++;
        expect(live.has(o.id), `seed ${String(seed)}: live ${o.id} called an orphan`).toBe(false);
        expect(deleting.has(o.id), `seed ${String(seed)}: ${o.id} is being deleted, not orphaned`).toBe(
          false,
        );
        if (o.type === "LoadBalancer") {
          const lb = w.lbs.find((l) => l.arn === o.id);
          expect(lb?.securityGroups.some((g) => live.has(g) && !g.startsWith("sg-foreign"))).not.toBe(true);
        }
        if (o.type === "NetworkInterface")
          expect(w.lbs.some((l) => o.name?.includes(`/${l.name}/`))).toBe(false);
      }
    }
    expect(orphansSeen).toBeGreaterThan(50);
  });
});
