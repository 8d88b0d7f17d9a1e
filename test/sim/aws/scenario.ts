/**
 * The `aws:` section of a scenario file, validated with zod and loaded into an {@link AwsWorld}.
 * References between objects use the names a scenario author knows (load balancer and target
 * group names, security group ids), so a scenario reads like the incident it reproduces.
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { AwsWorld, type AwsWorldOptions } from "./world.js";

const tags = z.record(z.string(), z.string()).default({});

const ruleSchema = z.object({
  id: z.string().optional(),
  protocol: z.string().default("tcp"),
  fromPort: z.number().int().default(-1),
  toPort: z.number().int().optional(),
  sourceGroupId: z.string().optional(),
  cidr: z.string().optional(),
  description: z.string().optional(),
});

const securityGroupSchema = z.object({
  id: z.string().regex(/^sg-[0-9a-f]{8,17}$/),
  name: z.string(),
  description: z.string().default(""),
  vpcId: z.string().optional(),
  tags,
  ingress: z.array(ruleSchema).default([]),
  egress: z.array(ruleSchema).optional(),
});

const loadBalancerSchema = z.object({
  name: z.string(),
  arnId: z
    .string()
    .regex(/^[0-9a-f]{16}$/)
    .optional(),
  dnsSuffix: z.string().regex(/^\d+$/).optional(),
  type: z.enum(["application", "network"]).default("application"),
  scheme: z.enum(["internet-facing", "internal"]).default("internet-facing"),
  state: z.enum(["active", "provisioning", "active_impaired", "failed"]).default("active"),
  vpcId: z.string().optional(),
  securityGroups: z.array(z.string()).default([]),
  tags,
  createdTime: z.coerce.date().optional(),
  /** Create the ELB ENIs (one per AZ) that a real ALB owns. */
  enis: z.boolean().default(true),
  listeners: z
    .array(
      z.object({
        port: z.number().int(),
        protocol: z.string().default("HTTP"),
        targetGroup: z.string().optional(),
        rules: z
          .array(
            z.object({
              priority: z.string(),
              pathPatterns: z.array(z.string()).optional(),
              targetGroups: z.array(z.string()),
            }),
          )
          .default([]),
      }),
    )
    .default([]),
});

const targetGroupSchema = z.object({
  name: z.string(),
  arnId: z
    .string()
    .regex(/^[0-9a-f]{16}$/)
    .optional(),
  protocol: z.string().default("HTTP"),
  port: z.number().int().default(80),
  vpcId: z.string().optional(),
  targetType: z.enum(["instance", "ip", "lambda", "alb"]).default("ip"),
  healthCheckPath: z.string().default("/"),
  tags,
  targets: z
    .array(
      z.object({
        id: z.string(),
        port: z.number().int(),
        health: z
          .enum(["healthy", "unhealthy", "initial", "draining", "unused", "unavailable"])
          .default("healthy"),
      }),
    )
    .default([]),
});

const eniSchema = z.object({
  id: z
    .string()
    .regex(/^eni-[0-9a-f]{8,17}$/)
    .optional(),
  description: z.string().default(""),
  /** Shorthand: an ELB ENI of this (existing) load balancer. */
  loadBalancer: z.string().optional(),
  groups: z.array(z.string()).default([]),
  status: z.enum(["available", "in-use"]).default("in-use"),
  requesterId: z.string().optional(),
  requesterManaged: z.boolean().optional(),
  subnetId: z.string().optional(),
  availabilityZone: z.string().optional(),
  vpcId: z.string().optional(),
  privateIpAddress: z.string().optional(),
  /** Attached to this instance (an instance's own interface: not requester-managed, `eni-attach-…`). */
  instanceId: z.string().optional(),
  /** The attachment's device index; 1 (a secondary interface) unless given. */
  deviceIndex: z.number().int().min(0).optional(),
  /**
   * AWS's `InterfaceType` (`interface`, `lambda`, `vpc_endpoint`, `network_load_balancer`,
   * `nat_gateway`, …). Unset, it follows the description as AWS's would (`ELB net/…` → `network_load_balancer`).
   */
  interfaceType: z.string().optional(),
  retainOnLoadBalancerDelete: z.boolean().optional(),
  tags,
});

const subnetSchema = z.object({ subnetId: z.string(), availabilityZone: z.string() });

/** An EC2 instance; its primary interface (device index 0) is created with it. */
const instanceSchema = z.object({
  id: z.string().regex(/^i-[0-9a-f]{8,17}$/),
  subnetId: z.string().optional(),
  availabilityZone: z.string().optional(),
  vpcId: z.string().optional(),
  securityGroups: z.array(z.string()).default([]),
  primaryNetworkInterfaceId: z
    .string()
    .regex(/^eni-[0-9a-f]{8,17}$/)
    .optional(),
});

/** An interface VPC endpoint: PrivateLink makes one `vpc_endpoint` ENI per subnet with the endpoint's groups. */
const vpcEndpointSchema = z.object({
  id: z
    .string()
    .regex(/^vpce-[0-9a-f]{8,17}$/)
    .optional(),
  serviceName: z.string(),
  vpcId: z.string().optional(),
  securityGroups: z.array(z.string()).default([]),
  subnets: z.array(subnetSchema).optional(),
  privateDnsEnabled: z.boolean().default(true),
  requesterId: z.string().optional(),
  tags,
  creationTimestamp: z.coerce.date().optional(),
});

/** A VPC-attached Lambda function, only as the Hyperplane `lambda` ENIs it leaves in the VPC. */
const lambdaFunctionSchema = z.object({
  name: z.string(),
  securityGroups: z.array(z.string()).min(1),
  vpcId: z.string().optional(),
  subnets: z.array(subnetSchema).optional(),
  requesterId: z.string().optional(),
});

const recordSchema = z.object({
  name: z.string(),
  type: z.string(),
  ttl: z.number().int().optional(),
  values: z.array(z.string()).optional(),
  setIdentifier: z.string().optional(),
  weight: z.number().int().optional(),
  alias: z
    .object({
      hostedZoneId: z.string().optional(),
      /** A literal DNS name, or `loadBalancer`/`distribution` to point at one in this scenario. */
      dnsName: z.string().optional(),
      loadBalancer: z.string().optional(),
      distribution: z.string().optional(),
      evaluateTargetHealth: z.boolean().default(true),
    })
    .optional(),
});

const zoneSchema = z.object({
  id: z
    .string()
    .regex(/^Z[0-9A-Z]{6,31}$/)
    .optional(),
  name: z.string(),
  comment: z.string().optional(),
  private: z.boolean().default(false),
  records: z.array(recordSchema).default([]),
});

const distributionSchema = z.object({
  id: z
    .string()
    .regex(/^E[0-9A-Z]{6,20}$/)
    .optional(),
  domainName: z.string().optional(),
  etag: z.string().optional(),
  aliases: z.array(z.string()).default([]),
  comment: z.string().optional(),
  origins: z
    .array(
      z.object({ id: z.string(), domainName: z.string().optional(), loadBalancer: z.string().optional() }),
    )
    .min(1),
  /** Failover groups: `members` is [primary, secondary] (CloudFront takes exactly two). */
  originGroups: z
    .array(
      z.object({
        id: z.string(),
        members: z.array(z.string()),
        failoverStatusCodes: z.array(z.number().int()).optional(),
      }),
    )
    .default([]),
  /** The default behaviour's target: an origin id or an origin group id (default: the first origin). */
  defaultOriginId: z.string().optional(),
  /** Cache behaviours in precedence order; each targets an origin or an origin group. */
  cacheBehaviors: z.array(z.object({ pathPattern: z.string(), targetOriginId: z.string() })).default([]),
  status: z.enum(["Deployed", "InProgress"]).default("Deployed"),
  lastModifiedTime: z.coerce.date().optional(),
});

const trailEventSchema = z.object({
  eventName: z.string(),
  /** Short service name: ec2, elasticloadbalancing, route53, cloudfront. */
  service: z.string(),
  eventTime: z.coerce.date(),
  accessKeyId: z.string().default("ASIAHISTORY000000000"),
  errorCode: z.string().optional(),
  errorMessage: z.string().optional(),
  requestParameters: z.record(z.string(), z.unknown()).nullable().default(null),
  responseElements: z.record(z.string(), z.unknown()).nullable().default(null),
  resources: z.array(z.object({ type: z.string(), name: z.string() })).default([]),
  userAgent: z.string().default("aws-sdk-go/1.55.5 (go1.22.5; linux; amd64)"),
  /** Repeat the event this many times, `every` seconds apart (a controller's retry loop). */
  repeat: z.number().int().min(1).default(1),
  every: z.number().default(2),
});

/** The schema of a scenario's `aws:` section. */
export const awsScenarioSchema = z.object({
  accountId: z
    .string()
    .regex(/^\d{12}$/)
    .default("123456789012"),
  region: z.string().default("ap-northeast-2"),
  identities: z
    .array(
      z.object({
        accessKeyId: z.string(),
        arn: z.string(),
        userName: z.string().optional(),
        sourceIPAddress: z.string().optional(),
      }),
    )
    .default([]),
  securityGroups: z.array(securityGroupSchema).default([]),
  targetGroups: z.array(targetGroupSchema).default([]),
  loadBalancers: z.array(loadBalancerSchema).default([]),
  networkInterfaces: z.array(eniSchema).default([]),
  instances: z.array(instanceSchema).default([]),
  vpcEndpoints: z.array(vpcEndpointSchema).default([]),
  lambdaFunctions: z.array(lambdaFunctionSchema).default([]),
  hostedZones: z.array(zoneSchema).default([]),
  distributions: z.array(distributionSchema).default([]),
  cloudTrailEvents: z.array(trailEventSchema).default([]),
});

/** A validated `aws:` section. */
export type AwsScenario = z.infer<typeof awsScenarioSchema>;

/** Accepts the `aws:` section itself or a whole parsed scenario that contains one. */
export function parseAwsScenario(input: unknown): AwsScenario {
  const section = typeof input === "object" && input !== null && "aws" in input ? input.aws : input;
  return awsScenarioSchema.parse(section ?? {});
}

/** Reads a YAML scenario file and returns its validated `aws:` section. */
export function readAwsScenario(path: string): AwsScenario {
  return parseAwsScenario(parseYaml(readFileSync(path, "utf8")));
}

/**
 * Builds a world from a scenario. Creation order follows dependencies: groups, TGs, load balancers,
 * instances, VPC endpoints, Lambda ENIs, other ENIs, DNS, CDN, history.
 */
export function loadAwsScenario(
  input: unknown,
  options: Omit<AwsWorldOptions, "accountId" | "region"> = {},
): AwsWorld {
  const s = parseAwsScenario(input);
  const world = new AwsWorld({ ...options, accountId: s.accountId, region: s.region });
  for (const id of s.identities) {
    world.setIdentity(id.accessKeyId, {
      arn: id.arn,
      ...(id.userName !== undefined ? { userName: id.userName } : {}),
      ...(id.sourceIPAddress !== undefined ? { sourceIPAddress: id.sourceIPAddress } : {}),
    });
  }

  for (const g of s.securityGroups) {
    world.createSecurityGroup({
      id: g.id,
      name: g.name,
      description: g.description,
      ...(g.vpcId !== undefined ? { vpcId: g.vpcId } : {}),
      tags: g.tags,
      defaultEgress: g.egress === undefined,
    });
  }
  // Rules after all groups exist, since rules reference other groups.
  for (const g of s.securityGroups) {
    for (const [egress, rules] of [
      [false, g.ingress],
      [true, g.egress ?? []],
    ] as const) {
      for (const r of rules) {
        const all = r.protocol === "-1" || r.protocol === "all";
        const [added] = world.authorize(g.id, egress, [
          {
            ipProtocol: all ? "-1" : r.protocol,
            fromPort: all ? -1 : r.fromPort,
            toPort: all ? -1 : (r.toPort ?? r.fromPort),
            ...(r.sourceGroupId !== undefined ? { referencedGroupId: r.sourceGroupId } : {}),
            ...(r.cidr !== undefined ? { cidrIpv4: r.cidr } : {}),
            ...(r.description !== undefined ? { description: r.description } : {}),
          },
        ]);
        if (added && r.id !== undefined) {
          world.securityGroupRules.delete(added.id);
          world.securityGroupRules.set(r.id, { ...added, id: r.id });
        }
      }
    }
  }

  const tgByName = new Map<string, string>();
  for (const t of s.targetGroups) {
    const tg = world.createTargetGroup({
      name: t.name,
      protocol: t.protocol,
      port: t.port,
      ...(t.vpcId !== undefined ? { vpcId: t.vpcId } : {}),
      targetType: t.targetType,
      healthCheckPath: t.healthCheckPath,
      tags: t.tags,
      targets: t.targets,
      ...(t.arnId !== undefined ? { arnId: t.arnId } : {}),
    });
    tgByName.set(t.name, tg.arn);
  }
  const tgArn = (name: string): string => {
    const arn = tgByName.get(name);
    if (arn === undefined) throw new Error(`scenario: unknown target group '${name}'`);
    return arn;
  };

  for (const l of s.loadBalancers) {
    const lb = world.createLoadBalancer({
      name: l.name,
      type: l.type,
      scheme: l.scheme,
      state: l.state,
      securityGroups: l.securityGroups,
      tags: l.tags,
      ...(l.vpcId !== undefined ? { vpcId: l.vpcId } : {}),
      ...(l.arnId !== undefined ? { arnId: l.arnId } : {}),
      ...(l.dnsSuffix !== undefined ? { dnsSuffix: l.dnsSuffix } : {}),
      ...(l.createdTime !== undefined ? { createdTime: l.createdTime } : {}),
    });
    for (const listener of l.listeners) {
      world.createListener({
        loadBalancerArn: lb.arn,
        port: listener.port,
        protocol: listener.protocol,
        ...(listener.targetGroup !== undefined ? { defaultTargetGroupArn: tgArn(listener.targetGroup) } : {}),
        rules: listener.rules.map((r) => ({
          priority: r.priority,
          ...(r.pathPatterns !== undefined ? { pathPatterns: r.pathPatterns } : {}),
          targetGroupArns: r.targetGroups.map(tgArn),
        })),
      });
    }
    if (l.enis) world.createLoadBalancerEnis(lb.arn);
  }
  const lbByName = (name: string): { dnsName: string; canonicalHostedZoneId: string; arn: string } => {
    const lb = [...world.loadBalancers.values()].find((x) => x.name === name);
    if (!lb) throw new Error(`scenario: unknown load balancer '${name}'`);
    return lb;
  };

  for (const i of s.instances) {
    world.createInstance({
      id: i.id,
      groups: i.securityGroups,
      ...(i.subnetId !== undefined ? { subnetId: i.subnetId } : {}),
      ...(i.availabilityZone !== undefined ? { availabilityZone: i.availabilityZone } : {}),
      ...(i.vpcId !== undefined ? { vpcId: i.vpcId } : {}),
      ...(i.primaryNetworkInterfaceId !== undefined
        ? { primaryNetworkInterfaceId: i.primaryNetworkInterfaceId }
        : {}),
    });
  }
  for (const v of s.vpcEndpoints) {
    world.createVpcEndpoint({
      serviceName: v.serviceName,
      groups: v.securityGroups,
      privateDnsEnabled: v.privateDnsEnabled,
      tags: v.tags,
      ...(v.id !== undefined ? { id: v.id } : {}),
      ...(v.vpcId !== undefined ? { vpcId: v.vpcId } : {}),
      ...(v.subnets !== undefined ? { subnets: v.subnets } : {}),
      ...(v.requesterId !== undefined ? { requesterId: v.requesterId } : {}),
      ...(v.creationTimestamp !== undefined ? { creationTimestamp: v.creationTimestamp } : {}),
    });
  }
  for (const fn of s.lambdaFunctions) {
    world.createLambdaFunctionEnis({
      functionName: fn.name,
      groups: fn.securityGroups,
      ...(fn.vpcId !== undefined ? { vpcId: fn.vpcId } : {}),
      ...(fn.subnets !== undefined ? { subnets: fn.subnets } : {}),
      ...(fn.requesterId !== undefined ? { requesterId: fn.requesterId } : {}),
    });
  }

  for (const e of s.networkInterfaces) {
    let description = e.description;
    let groups = e.groups;
    if (e.loadBalancer !== undefined) {
      const lb = lbByName(e.loadBalancer);
      const kind = world.loadBalancers.get(lb.arn)?.type === "network" ? "net" : "app";
      description = `ELB ${kind}/${e.loadBalancer}/${lb.arn.split("/").pop() ?? ""}`;
      if (groups.length === 0) groups = world.loadBalancers.get(lb.arn)?.securityGroups ?? [];
    }
    const elb = description.startsWith("ELB ");
    world.createNetworkInterface({
      ...(e.interfaceType !== undefined ? { interfaceType: e.interfaceType } : {}),
      ...(e.deviceIndex !== undefined ? { deviceIndex: e.deviceIndex } : {}),
      ...(e.id !== undefined ? { id: e.id } : {}),
      description,
      groups,
      status: e.status,
      attached: e.status === "in-use",
      ...(e.requesterId !== undefined
        ? { requesterId: e.requesterId }
        : elb
          ? { requesterId: "amazon-elb" }
          : {}),
      ...(e.requesterManaged !== undefined ? { requesterManaged: e.requesterManaged } : {}),
      ...(e.subnetId !== undefined ? { subnetId: e.subnetId } : {}),
      ...(e.availabilityZone !== undefined ? { availabilityZone: e.availabilityZone } : {}),
      ...(e.vpcId !== undefined ? { vpcId: e.vpcId } : {}),
      ...(e.privateIpAddress !== undefined ? { privateIpAddress: e.privateIpAddress } : {}),
      ...(e.instanceId !== undefined ? { instanceId: e.instanceId } : {}),
      ...(e.retainOnLoadBalancerDelete !== undefined
        ? { retainOnLoadBalancerDelete: e.retainOnLoadBalancerDelete }
        : {}),
      tags: e.tags,
    });
  }

  const distributionDomains = new Map<string, string>();
  for (const d of s.distributions) {
    const config = world.buildDistributionConfig({
      aliases: d.aliases,
      origins: d.origins.map((o) => ({
        id: o.id,
        domainName: o.domainName ?? (o.loadBalancer !== undefined ? lbByName(o.loadBalancer).dnsName : ""),
      })),
      originGroups: d.originGroups.map((g) => ({
        id: g.id,
        members: g.members,
        ...(g.failoverStatusCodes !== undefined ? { failoverStatusCodes: g.failoverStatusCodes } : {}),
      })),
      cacheBehaviors: d.cacheBehaviors,
      ...(d.defaultOriginId !== undefined ? { defaultOriginId: d.defaultOriginId } : {}),
      ...(d.comment !== undefined ? { comment: d.comment } : {}),
    });
    const dist = world.createDistribution({
      config,
      deployed: d.status === "Deployed",
      ...(d.id !== undefined ? { id: d.id } : {}),
      ...(d.domainName !== undefined ? { domainName: d.domainName } : {}),
      ...(d.etag !== undefined ? { etag: d.etag } : {}),
      ...(d.lastModifiedTime !== undefined ? { lastModifiedTime: d.lastModifiedTime } : {}),
    });
    distributionDomains.set(dist.id, dist.domainName);
    for (const a of d.aliases) distributionDomains.set(a, dist.domainName);
  }

  for (const z of s.hostedZones) {
    const zone = world.createHostedZone({
      name: z.name,
      privateZone: z.private,
      ...(z.id !== undefined ? { id: z.id } : {}),
      ...(z.comment !== undefined ? { comment: z.comment } : {}),
    });
    if (z.records.length === 0) continue;
    world.changeRecords(
      zone.id,
      z.records.map((r) => {
        let aliasTarget;
        if (r.alias) {
          const lb = r.alias.loadBalancer !== undefined ? lbByName(r.alias.loadBalancer) : undefined;
          const cf =
            r.alias.distribution !== undefined ? distributionDomains.get(r.alias.distribution) : undefined;
          if (r.alias.distribution !== undefined && cf === undefined)
            throw new Error(`scenario: unknown distribution '${r.alias.distribution}'`);
          aliasTarget = {
            hostedZoneId:
              r.alias.hostedZoneId ?? lb?.canonicalHostedZoneId ?? (cf !== undefined ? "Z2FDTNDATAQYW2" : ""),
            dnsName: r.alias.dnsName ?? (lb ? `dualstack.${lb.dnsName}` : (cf ?? "")),
            evaluateTargetHealth: cf !== undefined ? false : r.alias.evaluateTargetHealth,
          };
        }
        return {
          action: "CREATE",
          record: {
            name: r.name,
            type: r.type,
            ...(r.ttl !== undefined ? { ttl: r.ttl } : {}),
            ...(r.values !== undefined ? { values: r.values } : {}),
            ...(r.setIdentifier !== undefined ? { setIdentifier: r.setIdentifier } : {}),
            ...(r.weight !== undefined ? { weight: r.weight } : {}),
            ...(aliasTarget ? { aliasTarget } : {}),
          },
        };
      }),
    );
  }
  // Scenario records are history, not pending changes.
  world.changes.clear();

  for (const e of s.cloudTrailEvents) {
    for (let i = 0; i < e.repeat; i++) {
      world.recordApiCall(
        {
          service: e.service,
          action: e.eventName,
          accessKeyId: e.accessKeyId,
          userAgent: e.userAgent,
          requestId: world.ids.uuid(),
          region: world.region,
          requestParameters: e.requestParameters,
          responseElements: e.responseElements,
          ...(e.errorCode !== undefined
            ? { errorCode: e.errorCode, errorMessage: e.errorMessage ?? "" }
            : {}),
          resources: e.resources.map((r) => ({ ResourceType: r.type, ResourceName: r.name })),
        },
        new Date(e.eventTime.getTime() + i * e.every * 1000),
      );
    }
  }
  return world;
}
