/**
 * A busy account and cluster for the edge benchmarks (orphans, preflight): built
 * through the simulators' own world methods, never through product code.
 *
 * Cluster `prod-eks`: `NAMESPACES` team namespaces of nine ALB stacks each (two Ingresses share an
 * IngressGroup, seven own their ALB; one stack is an NLB Service), every stack with its load
 * balancer, its managed security group (on the load balancer's ELB interfaces) and three target
 * groups behind listeners. Another cluster (`stage-eks`) tags its own resources in the same
 * account, and node ENIs fill the rest. Planted, and only these: load balancers whose Ingress is
 * gone (with their groups and target groups), target groups attached to nothing, controller
 * security groups attached to nothing, and ELB interfaces of load balancers that no longer exist.
 */
import type { KubeSim } from "../test/sim/kube/index.js";
import { AwsWorld, CLOUDFRONT_HOSTED_ZONE_ID, fqdn, type ResourceRecordSet } from "../test/sim/aws/index.js";

export const CLUSTER = "prod-eks";
const OTHER_CLUSTER = "stage-eks";
const VPC = "vpc-0a1b2c3d4e5f60718";
const INGRESS_FINALIZER = "ingress.k8s.aws/resources";
const SERVICE_FINALIZER = "service.k8s.aws/resources";

export const pad = (n: number, width: number): string => String(n).padStart(width, "0");

export interface Planted {
  readonly loadBalancers: Set<string>;
  readonly targetGroups: Set<string>;
  /** Controller groups attached to nothing. */
  readonly freeGroups: Set<string>;
  /** Groups of the planted load balancers (attached to their interfaces). */
  readonly orphanLbGroups: Set<string>;
  /** ELB interfaces of load balancers that no longer exist. */
  readonly strayInterfaces: Set<string>;
  /** Interfaces of the planted load balancers (they go with them). */
  readonly orphanLbInterfaces: Set<string>;
}

/** The namespace the preflight benchmark asks about, and what its deletion must and must not touch. */
export interface PreflightTarget {
  readonly namespace: string;
  readonly ingresses: number;
  /** Load balancers that go with the namespace (its own IngressGroups). */
  readonly deletedLoadBalancers: string[];
  /** A group it shares with another namespace: stays. */
  readonly sharedLoadBalancer: string;
  /** Hostnames that break, and the one that does not. */
  readonly breaking: string[];
  readonly unaffected: string;
  readonly distributions: number;
}

export interface EdgeAccount {
  readonly world: AwsWorld;
  readonly preflight: PreflightTarget;
  readonly planted: Planted;
  /** Stacks owned by a live Ingress/Service (load balancer ARNs). */
  readonly liveLoadBalancers: number;
  readonly ingresses: number;
}

interface Stack {
  readonly namespace: string;
  readonly stack: string;
  readonly kind: "ingress" | "service";
  readonly ingresses: readonly string[];
}

function stacksOf(namespace: string): Stack[] {
  const out: Stack[] = [
    { namespace, stack: `grp-${namespace}`, kind: "ingress", ingresses: ["web-a", "web-b"] },
  ];
  for (let k = 0; k < 7; k++) {
    const name = `svc-${String(k)}`;
    out.push({ namespace, stack: `${namespace}/${name}`, kind: "ingress", ingresses: [name] });
  }
  out.push({ namespace, stack: `${namespace}/nlb`, kind: "service", ingresses: ["nlb"] });
  return out;
}

function ingressObject(
  namespace: string,
  name: string,
  hostname: string,
  group: string | undefined,
): Record<string, unknown> {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: {
      name,
      namespace,
      finalizers: [group ? `group.ingress.k8s.aws/${group}` : INGRESS_FINALIZER],
      annotations: {
        "alb.ingress.kubernetes.io/scheme": "internet-facing",
        ...(group ? { "alb.ingress.kubernetes.io/group.name": group } : {}),
      },
    },
    spec: {
      ingressClassName: "alb",
      rules: [
        {
          host: `${name}.${namespace}.example.com`,
          http: {
            paths: [
              {
                path: "/",
                pathType: "Prefix",
                backend: { service: { name, port: { number: 80 } } },
              },
            ],
          },
        },
      ],
    },
    status: { loadBalancer: { ingress: [{ hostname }] } },
  };
}

function serviceObject(namespace: string, name: string, hostname: string): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name,
      namespace,
      finalizers: [SERVICE_FINALIZER],
      annotations: { "service.beta.kubernetes.io/aws-load-balancer-type": "external" },
    },
    spec: {
      type: "LoadBalancer",
      loadBalancerClass: "service.k8s.aws/nlb",
      ports: [{ port: 443, targetPort: 8443, protocol: "TCP" }],
      selector: { app: name },
    },
    status: { loadBalancer: { ingress: [{ hostname }] } },
  };
}

/**
 * Builds the account (and, when `kube` is given, the cluster's Ingresses and Services in it) with
 * `loadBalancers` ALBs/NLBs in all: `orphans` of them left by stacks whose owner is gone.
 */
export function buildEdgeAccount(
  kube: KubeSim | undefined,
  options: { readonly loadBalancers: number; readonly orphans: number; readonly extraNamespaces?: string[] },
): EdgeAccount {
  const world = new AwsWorld({ seed: 7 });
  const planted: Planted = {
    loadBalancers: new Set(),
    targetGroups: new Set(),
    freeGroups: new Set(),
    orphanLbGroups: new Set(),
    strayInterfaces: new Set(),
    orphanLbInterfaces: new Set(),
  };
  // The cluster's shared backend group, on every node.
  const backend = world.createSecurityGroup({
    id: "sg-0bacc000000000001",
    name: `k8s-traffic-${CLUSTER}-0a1b2c3d4e`,
    description: "[k8s] Shared Backend SecurityGroup for LoadBalancer",
    vpcId: VPC,
    tags: { "elbv2.k8s.aws/cluster": CLUSTER, "elbv2.k8s.aws/resource": "backend-sg" },
  });
  let sgSeq = 0;
  let tgSeq = 0;
  const nextGroup = (cluster: string, stack: string, tagKey: string): string => {
    sgSeq++;
    return world.createSecurityGroup({
      id: `sg-0c${pad(sgSeq, 15)}`,
      name: `k8s-${pad(sgSeq, 6)}-${pad(sgSeq * 7, 10)}`,
      description: "[k8s] Managed SecurityGroup for LoadBalancer",
      vpcId: VPC,
      tags: {
        "elbv2.k8s.aws/cluster": cluster,
        [tagKey]: stack,
        "ingress.k8s.aws/resource": "ManagedLBSecurityGroup",
      },
    }).id;
  };
  const nextTargetGroup = (cluster: string, stack: string, tagKey: string): string => {
    tgSeq++;
    return world.createTargetGroup({
      name: `k8s-tg-${pad(tgSeq, 6)}-${pad(tgSeq * 13, 8)}`,
      port: 8080,
      vpcId: VPC,
      tags: { "elbv2.k8s.aws/cluster": cluster, [tagKey]: stack },
    }).arn;
  };
  let lbSeq = 0;
  const stackLoadBalancer = (
    cluster: string,
    stack: string,
    kind: "ingress" | "service",
  ): { arn: string; dnsName: string; group: string; targetGroups: string[]; enis: string[] } => {
    lbSeq++;
    const tagKey = kind === "ingress" ? "ingress.k8s.aws/stack" : "service.k8s.aws/stack";
    const group = nextGroup(cluster, stack, tagKey);
    const lb = world.createLoadBalancer({
      name: `k8s-lb${pad(lbSeq, 6)}-${pad(lbSeq * 31, 10)}`,
      type: kind === "ingress" ? "application" : "network",
      securityGroups: [group],
      vpcId: VPC,
      tags: {
        "elbv2.k8s.aws/cluster": cluster,
        [tagKey]: stack,
        [kind === "ingress" ? "ingress.k8s.aws/resource" : "service.k8s.aws/resource"]: "LoadBalancer",
      },
    });
    const targetGroups: string[] = [];
    for (let k = 0; k < 3; k++) {
      const tg = nextTargetGroup(cluster, stack, tagKey);
      targetGroups.push(tg);
      world.createListener({ loadBalancerArn: lb.arn, port: 80 + k, defaultTargetGroupArn: tg });
    }
    const enis = world.createLoadBalancerEnis(lb.arn).map((n) => n.id);
    return { arn: lb.arn, dnsName: lb.dnsName, group, targetGroups, enis };
  };

  // The cluster's Load Balancer Controller, healthy: what the finalizers wait on.
  kube?.store.create({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "aws-load-balancer-controller",
      namespace: "kube-system",
      labels: {
        "app.kubernetes.io/name": "aws-load-balancer-controller",
        "app.kubernetes.io/instance": "aws-load-balancer-controller",
      },
    },
    spec: {
      replicas: 2,
      selector: { matchLabels: { "app.kubernetes.io/name": "aws-load-balancer-controller" } },
      template: {
        metadata: { labels: { "app.kubernetes.io/name": "aws-load-balancer-controller" } },
        spec: {
          serviceAccountName: "aws-load-balancer-controller",
          containers: [
            {
              name: "aws-load-balancer-controller",
              image: "public.ecr.aws/eks/aws-load-balancer-controller:v2.7.1",
              args: [`--cluster-name=${CLUSTER}`, "--ingress-class=alb"],
            },
          ],
        },
      },
    },
    status: {
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
      observedGeneration: 1,
    },
  });

  // Live stacks, owned by Ingresses/Services in the cluster.
  const live = options.loadBalancers - options.orphans;
  const namespaces = Math.ceil(live / 9);
  let liveLoadBalancers = 0;
  let ingresses = 0;
  for (let n = 0; n < namespaces && liveLoadBalancers < live; n++) {
    const namespace = `team${pad(n, 4)}`;
    kube?.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    for (const s of stacksOf(namespace)) {
      if (liveLoadBalancers >= live) break;
      const lb = stackLoadBalancer(CLUSTER, s.stack, s.kind);
      liveLoadBalancers++;
      for (const name of s.ingresses) {
        if (s.kind === "service") {
          kube?.store.create(serviceObject(namespace, name, lb.dnsName));
        } else {
          ingresses++;
          kube?.store.create(
            ingressObject(namespace, name, lb.dnsName, s.stack.startsWith("grp-") ? s.stack : undefined),
          );
        }
      }
    }
  }

  // The preflight target: namespace `shop`, 40 Ingresses in 10 IngressGroups (10 ALBs), 10
  // hostnames in Route 53, three of them through CloudFront. The last group also serves an Ingress
  // of namespace `partner`, so its ALB stays when `shop` goes.
  const shop = "shop";
  kube?.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: shop } });
  kube?.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "partner" } });
  const zone = world.createHostedZone({ name: "example.com" });
  const deletedLoadBalancers: string[] = [];
  const breaking: string[] = [];
  let sharedLoadBalancer = "";
  let unaffected = "";
  let shopIngresses = 0;
  for (let g = 0; g < 10; g++) {
    const group = `shop-g${String(g)}`;
    const lb = stackLoadBalancer(CLUSTER, group, "ingress");
    const host = `h${String(g)}.shop.example.com`;
    for (let k = 0; k < 4; k++) {
      shopIngresses++;
      kube?.store.create(ingressObject(shop, `${group}-i${String(k)}`, lb.dnsName, group));
    }
    if (g === 9) {
      kube?.store.create(ingressObject("partner", "partner-web", lb.dnsName, group));
      sharedLoadBalancer = lb.arn;
      unaffected = host;
    } else {
      deletedLoadBalancers.push(lb.arn);
      breaking.push(host);
    }
    if (g < 3) {
      const d = world.createDistribution({
        id: `E9SHOP${pad(g, 8)}`,
        domainName: `d${pad(g, 4)}shopcdn.cloudfront.net`,
        config: world.buildDistributionConfig({
          aliases: [host],
          origins: [{ id: `alb-${String(g)}`, domainName: lb.dnsName }],
          comment: `shop ${String(g)}`,
        }),
      });
      addRecord(world, zone.id, {
        name: fqdn(host),
        type: "A",
        aliasTarget: {
          hostedZoneId: CLOUDFRONT_HOSTED_ZONE_ID,
          dnsName: `${d.domainName}.`,
          evaluateTargetHealth: false,
        },
      });
    } else {
      const alb = world.loadBalancers.get(lb.arn);
      addRecord(world, zone.id, {
        name: fqdn(host),
        type: "A",
        aliasTarget: {
          hostedZoneId: alb?.canonicalHostedZoneId ?? "",
          dnsName: `dualstack.${lb.dnsName}.`,
          evaluateTargetHealth: true,
        },
      });
    }
  }
  // Other teams' names in the same zone.
  for (let i = 0; i < 500; i++) {
    addRecord(world, zone.id, {
      name: fqdn(`svc${pad(i, 4)}.example.com`),
      type: "CNAME",
      ttl: 300,
      values: [`x${String(i)}.example.net`],
    });
  }
  const preflight: PreflightTarget = {
    namespace: shop,
    ingresses: shopIngresses,
    deletedLoadBalancers,
    sharedLoadBalancer,
    breaking,
    unaffected,
    distributions: 3,
  };

  // Orphans: load balancers (with their groups, target groups and interfaces) of deleted Ingresses.
  for (let i = 0; i < options.orphans; i++) {
    const lb = stackLoadBalancer(CLUSTER, `gone${pad(i, 3)}/web`, "ingress");
    planted.loadBalancers.add(lb.arn);
    for (const tg of lb.targetGroups) planted.targetGroups.add(tg);
    planted.orphanLbGroups.add(lb.group);
    for (const e of lb.enis) planted.orphanLbInterfaces.add(e);
  }
  // Target groups attached to nothing; controller groups attached to nothing.
  for (let i = 0; i < 30; i++) {
    planted.targetGroups.add(nextTargetGroup(CLUSTER, `left${pad(i, 3)}/api`, "ingress.k8s.aws/stack"));
  }
  for (let i = 0; i < 15; i++) {
    planted.freeGroups.add(nextGroup(CLUSTER, `left${pad(i, 3)}/api`, "ingress.k8s.aws/stack"));
  }
  // ELB interfaces whose load balancer is gone (ELB normally deletes them; these lingered).
  for (let i = 0; i < 10; i++) {
    const eni = world.createNetworkInterface({
      description: `ELB app/k8s-gone${pad(i, 3)}-${pad(i * 17, 10)}/${pad(i, 16)}`,
      vpcId: VPC,
      groups: [],
      requesterId: "amazon-elb",
      requesterManaged: true,
      status: "available",
      attached: false,
    });
    planted.strayInterfaces.add(eni.id);
  }

  // Another cluster's stacks in the same account: never ours to report.
  for (let i = 0; i < Math.floor(options.loadBalancers / 10); i++) {
    stackLoadBalancer(OTHER_CLUSTER, `other${pad(i, 4)}/web`, "ingress");
  }
  // Unrelated groups and the nodes' interfaces.
  for (let i = 0; i < options.loadBalancers; i++) {
    world.createSecurityGroup({
      id: `sg-0d${pad(i, 15)}`,
      name: `app-${pad(i, 6)}`,
      description: "application group",
      vpcId: VPC,
      tags: { team: `t${pad(i % 40, 2)}` },
    });
  }
  for (let i = 0; i < options.loadBalancers * 4; i++) {
    world.createNetworkInterface({
      description: `aws-K8S-i-0${pad(i % 900, 16)}`,
      vpcId: VPC,
      groups: [backend.id],
      status: "in-use",
      attached: true,
      instanceId: `i-0${pad(i % 900, 16)}`,
      privateIpAddress: `10.${String(1 + (i >> 16))}.${String((i >> 8) & 255)}.${String(i & 255)}`,
    });
  }
  return { world, preflight, planted, liveLoadBalancers, ingresses };
}

/** Adds a record to a zone directly (names are unique by construction; a change batch re-checks each). */
export function addRecord(world: AwsWorld, zoneId: string, record: ResourceRecordSet): void {
  world.requireZone(zoneId).records.push(record);
}
