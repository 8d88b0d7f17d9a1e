import { describe, expect, it } from "vitest";
import type {
  LoadBalancerSnapshot,
  NetworkInterfaceSnapshot,
  SecurityGroupSnapshot,
} from "../../../src/aws/types.js";
import { analyzeAws, type AwsCollected } from "../../../src/diagnosis/aws.js";
import { loadBalancerNameFromHostname } from "../../../src/edge/lbc-names.js";
import { buildEdgeModel, edgeOwnerOf, type EdgeOwner } from "../../../src/edge/model.js";
import { remedyForInterface } from "../../../src/edge/remedies.js";
import type { ObjectSnapshot } from "../../../src/kube/types.js";

const CLUSTER = "prod-eks";

function ingress(
  ns: string,
  name: string,
  extra: Partial<ObjectSnapshot> = {},
  group?: string,
): ObjectSnapshot {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    resource: "ingresses",
    namespace: ns,
    name,
    finalizers: [group ? `group.ingress.k8s.aws/${group}` : "ingress.k8s.aws/resources"],
    labels: {},
    annotations: group ? { "alb.ingress.kubernetes.io/group.name": group } : {},
    ownerReferences: [],
    ingressClassName: "alb",
    ...extra,
  };
}
const deleting = { deletionTimestamp: "2026-02-12T08:39:00Z" };
const owners = (...objs: ObjectSnapshot[]): EdgeOwner[] =>
  objs.map((o) => edgeOwnerOf(o)).filter((o): o is EdgeOwner => o !== undefined);

const backend: SecurityGroupSnapshot = {
  id: "sg-backend",
  name: "k8s-traffic-prodeks-0123456789",
  description: "[k8s] Shared Backend SecurityGroup for LoadBalancer",
  tags: { "elbv2.k8s.aws/cluster": CLUSTER, "elbv2.k8s.aws/resource": "backend-sg" },
};
const groupSg: SecurityGroupSnapshot = {
  id: "sg-group",
  name: "k8s-sharededge-abc",
  description: "[k8s] Managed SecurityGroup for LoadBalancer",
  tags: {
    "elbv2.k8s.aws/cluster": CLUSTER,
    "ingress.k8s.aws/stack": "shared-edge",
    "ingress.k8s.aws/resource": "ManagedLBSecurityGroup",
  },
};
const sharedAlb: LoadBalancerSnapshot = {
  arn: "arn:aws:elasticloadbalancing:ap-northeast-2:1:loadbalancer/app/k8s-sharededge-5e1f0c2b9a/0a1b",
  name: "k8s-sharededge-5e1f0c2b9a",
  dnsName: "k8s-sharededge-5e1f0c2b9a-12345.ap-northeast-2.elb.amazonaws.com",
  state: "active",
  type: "application",
  securityGroups: ["sg-group", "sg-backend"],
  tags: {
    "elbv2.k8s.aws/cluster": CLUSTER,
    "ingress.k8s.aws/stack": "shared-edge",
    "ingress.k8s.aws/resource": "LoadBalancer",
  },
};
const albEni = (g: string): NetworkInterfaceSnapshot => ({
  id: `eni-alb-${g}`,
  description: "ELB app/k8s-sharededge-5e1f0c2b9a/0a1b",
  status: "in-use",
  interfaceType: "interface",
  requesterId: "amazon-elb",
  requesterManaged: true,
  groups: [g],
});

function collected(over: Partial<AwsCollected>): AwsCollected {
  return {
    cluster: CLUSTER,
    stack: "shared-edge",
    loadBalancerName: sharedAlb.name,
    hostname: sharedAlb.dnsName,
    loadBalancers: [sharedAlb],
    targetGroups: [],
    listenerArns: [],
    groups: [
      { group: groupSg, role: "managed" },
      { group: backend, role: "backend" },
    ],
    missingGroupIds: [],
    networkInterfaces: new Map([
      ["sg-group", [albEni("sg-group")]],
      ["sg-backend", [albEni("sg-backend")]],
    ]),
    referencing: new Map([
      [
        "sg-backend",
        [
          {
            group: { id: "sg-node", name: "eks-node", description: "", tags: {} },
            rules: [
              {
                id: "sgr-node",
                groupId: "sg-node",
                isEgress: false,
                referencedGroupId: "sg-backend",
                protocol: "tcp",
                fromPort: 8080,
                toPort: 8080,
                description: "elbv2.k8s.aws/targetGroupBinding=shared",
              },
            ],
          },
        ],
      ],
    ]),
    deleteSecurityGroupEvents: [],
    problems: [],
    owners: [],
    ownersComplete: true,
    blocker: { kind: "Ingress", namespace: "team-a", name: "web" },
    ...over,
  };
}

describe("IngressGroup shared across namespaces", () => {
  const a = ingress("team-a", "web", deleting, "shared-edge");
  const b = ingress("team-b", "partner-api", {}, "shared-edge");

  it("a member being deleted while another lives: nothing is blocked, the live member is named", () => {
    const f = analyzeAws(collected({ owners: owners(a, b) }));
    expect(f.blockedGroups).toEqual([]);
    const lb = f.stays.find((s) => s.type === "LoadBalancer");
    expect(lb?.usedBy).toEqual(["Ingress team-b/partner-api"]);
    expect(lb?.why).toContain("team-b/partner-api is still a member of group `shared-edge`");
    expect(f.stays.map((s) => s.id)).toEqual(expect.arrayContaining(["sg-group", "sg-backend"]));
    expect(f.group?.members.map((m) => m.ref)).toEqual(["Ingress team-a/web", "Ingress team-b/partner-api"]);
    expect(f.summary).not.toMatch(/cannot be deleted/);
  });

  it("every member being deleted: the group's SG is dying and its holder named with a remedy", () => {
    const bGone = ingress("team-b", "partner-api", deleting, "shared-edge");
    const f = analyzeAws(collected({ owners: owners(a, bGone), loadBalancers: [] }));
    expect(f.blockedGroups.map((g) => g.groupId).sort()).toEqual(["sg-backend", "sg-group"]);
    expect(f.blockedGroups[0]?.why).toMatch(/being deleted/);
  });

  it("with the owners unreadable nothing shared is called dying", () => {
    const f = analyzeAws(collected({ owners: owners(a), ownersComplete: false, loadBalancers: [] }));
    expect(f.blockedGroups.map((g) => g.groupId)).toEqual([]);
  });
});

describe("the shared backend security group", () => {
  it("stays while any other live owner uses it, even when this stack's NLB is blocked", () => {
    const svc: ObjectSnapshot = {
      apiVersion: "v1",
      kind: "Service",
      resource: "services",
      namespace: "payments",
      name: "gateway",
      finalizers: ["service.k8s.aws/resources"],
      ...deleting,
      labels: {},
      annotations: {},
      ownerReferences: [],
      serviceType: "LoadBalancer",
      loadBalancerClass: "service.k8s.aws/nlb",
    };
    const other = ingress("shop", "web");
    const m = buildEdgeModel({
      cluster: CLUSTER,
      owners: owners(svc, other),
      ownersComplete: true,
      loadBalancers: [],
      targetGroups: [],
      securityGroups: [backend],
      networkInterfaces: [],
    });
    const lv = m.liveness("SecurityGroup", "sg-backend");
    expect(lv.state).toBe("live");
    expect(lv.state === "live" ? lv.usedBy : []).toEqual(["Ingress shop/web"]);
    const alone = buildEdgeModel({
      cluster: CLUSTER,
      owners: owners(svc),
      ownersComplete: true,
      loadBalancers: [],
      targetGroups: [],
      securityGroups: [backend],
      networkInterfaces: [],
    });
    expect(alone.liveness("SecurityGroup", "sg-backend").state).toBe("dying");
  });
});

describe("a load balancer's name from its hostname", () => {
  it("reads ALB (decimal id) and NLB (hex id) hostnames, internal and dualstack", () => {
    expect(
      loadBalancerNameFromHostname(
        "k8s-myapp-myappwor-0733a56cbb-1559597038.ap-northeast-2.elb.amazonaws.com",
      ),
    ).toBe("k8s-myapp-myappwor-0733a56cbb");
    expect(
      loadBalancerNameFromHostname(
        "k8s-payments-gateway-3c9e1a7f2b-0f1e2d3c4b5a6978.elb.ap-northeast-2.amazonaws.com",
      ),
    ).toBe("k8s-payments-gateway-3c9e1a7f2b");
    expect(
      loadBalancerNameFromHostname(
        "dualstack.internal-k8s-shop-web-aa11bb22cc-42.ap-northeast-2.elb.amazonaws.com",
      ),
    ).toBe("k8s-shop-web-aa11bb22cc");
  });
});

describe("a remedy per interface type", () => {
  const m = buildEdgeModel({
    cluster: CLUSTER,
    owners: [],
    ownersComplete: true,
    loadBalancers: [],
    targetGroups: [],
    securityGroups: [groupSg],
    networkInterfaces: [],
  });
  const eni = (over: Partial<NetworkInterfaceSnapshot>): NetworkInterfaceSnapshot => ({
    id: "eni-0x",
    description: "",
    status: "in-use",
    requesterManaged: false,
    groups: ["sg-group"],
    ...over,
  });

  it("ELB interface of a deleted load balancer: wait while in use, delete once released", () => {
    const held = remedyForInterface(
      eni({
        description: "ELB app/k8s-gone-0123456789/abcd",
        requesterId: "amazon-elb",
        requesterManaged: true,
      }),
      "sg-group",
      m,
    );
    expect(held).toMatchObject({ kind: "wait-elb-release", actionable: false });
    const released = remedyForInterface(
      eni({ description: "ELB net/k8s-gone-0123456789/abcd", status: "available", requesterManaged: true }),
      "sg-group",
      m,
    );
    expect(released.kind).toBe("delete-released-interface");
    expect(released.commands[0]).toBe("aws ec2 delete-network-interface --network-interface-id eni-0x");
  });

  it("an instance's secondary interface keeps its other groups; its instance is not touched", () => {
    const r = remedyForInterface(
      eni({
        groups: ["sg-group", "sg-node"],
        attachment: { instanceId: "i-0abc" },
        interfaceType: "interface",
      }),
      "sg-group",
      m,
    );
    expect(r.kind).toBe("remove-group-from-interface");
    expect(r.commands).toEqual([
      "aws ec2 modify-network-interface-attribute --network-interface-id eni-0x --groups sg-node",
    ]);
    expect(r.what).toContain("i-0abc");
    expect(r.commands.join(" ")).not.toMatch(/delete|terminate/);
  });

  it("a Lambda interface is fixed in the function's VPC configuration", () => {
    const r = remedyForInterface(
      eni({
        interfaceType: "lambda",
        requesterManaged: true,
        description: "AWS Lambda VPC ENI-report-builder-1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
      }),
      "sg-group",
      m,
    );
    expect(r.kind).toBe("lambda-vpc-config");
    expect(r.commands.join("\n")).toContain("--function-name report-builder");
  });

  it("a VPC endpoint interface is fixed on the endpoint", () => {
    const r = remedyForInterface(
      eni({
        interfaceType: "vpc_endpoint",
        requesterManaged: true,
        description: "VPC Endpoint Interface vpce-0a1b2c3d4e5f60718",
      }),
      "sg-group",
      m,
    );
    expect(r.commands).toEqual([
      "aws ec2 modify-vpc-endpoint --vpc-endpoint-id vpce-0a1b2c3d4e5f60718 --remove-security-group-ids sg-group",
    ]);
  });
});
