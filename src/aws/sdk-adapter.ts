/**
 * `AwsPort` over the AWS SDK v3 clients: I/O and error mapping only. Calls are chosen to be the
 * fewest that answer the question (names and server-side filters rather than listing an account),
 * because ELB's Describe* bucket is 40 requests with a refill of 10/s.
 */
import {
  GetDistributionCommand,
  GetDistributionConfigCommand,
  ListDistributionsCommand,
  UpdateDistributionCommand,
  type CloudFrontClient,
  type DistributionConfig,
} from "@aws-sdk/client-cloudfront";
import { LookupEventsCommand, type CloudTrailClient } from "@aws-sdk/client-cloudtrail";
import {
  ChangeResourceRecordSetsCommand,
  GetChangeCommand,
  ListHostedZonesCommand,
  ListResourceRecordSetsCommand,
  type ResourceRecordSet,
  type ListResourceRecordSetsCommandInput,
  type Route53Client,
} from "@aws-sdk/client-route-53";
import {
  DeleteSecurityGroupCommand,
  DescribeNetworkInterfacesCommand,
  DescribeSecurityGroupRulesCommand,
  DescribeSecurityGroupsCommand,
  type EC2Client,
  type Filter,
} from "@aws-sdk/client-ec2";
import {
  DeleteLoadBalancerCommand,
  DeleteTargetGroupCommand,
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  DescribeRulesCommand,
  DescribeTagsCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  type LoadBalancer,
  type ElasticLoadBalancingV2Client,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import {
  GetResourcesCommand,
  type ResourceGroupsTaggingAPIClient,
} from "@aws-sdk/client-resource-groups-tagging-api";
import { chunks, mapLimit } from "../util/concurrency.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { AwsPort, RecordChange } from "./port.js";
import type {
  CloudTrailEventSnapshot,
  DistributionSnapshot,
  HostedZoneSnapshot,
  ListenerRuleSnapshot,
  LoadBalancerSnapshot,
  RecordSetSnapshot,
  NetworkInterfaceSnapshot,
  RegisteredTargetSnapshot,
  SecurityGroupSnapshot,
  Tags,
} from "./types.js";

/** The SDK clients {@link createAwsAdapter} reads through (a subset of `AwsClients`). */
export interface AwsDiagnosisClients {
  readonly elbv2: ElasticLoadBalancingV2Client;
  readonly ec2: EC2Client;
  readonly cloudtrail: CloudTrailClient;
  /** Resource Groups Tagging API, for `resourcesByTags`. */
  readonly tagging: ResourceGroupsTaggingAPIClient;
  /** For the traffic path (`trace`); absent → those reads fail with a clear error. */
  readonly route53?: Route53Client;
  readonly cloudfront?: CloudFrontClient;
}

/** Route 53 names: lower case, no trailing dot, `\052` (the API's escaped `*`) as `*`. */
export function route53Name(n: string): string {
  return n.replace(/\\052/g, "*").toLowerCase().replace(/\.$/, "");
}

const ACCESS_DENIED = new Set([
  "AccessDenied",
  "AccessDeniedException",
  "UnauthorizedOperation",
  "UnauthorizedAccess",
  "AuthFailure",
]);
const THROTTLED = new Set([
  "Throttling",
  "ThrottlingException",
  "RequestLimitExceeded",
  "TooManyRequestsException",
  "PriorRequestNotComplete",
]);

/** Map an SDK error to a coded, user-facing error naming the IAM action. Exported for tests. */
export function mapAwsError(err: unknown, action: string): UnstuckError {
  if (err instanceof UnstuckError) return err;
  const e = err as {
    name?: string;
    message?: string;
    code?: string;
    $metadata?: { httpStatusCode?: number };
  };
  const name = e.name ?? "Error";
  const message = e.message ?? String(err);
  if (name === "CredentialsProviderError") {
    // One message whatever the action, so a diagnosis lists it once.
    return new UnstuckError(
      ErrorCode.Unauthorized,
      "No AWS credentials for the bot: give it an IAM role (IRSA / Pod Identity), AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.",
      { awsError: name },
    );
  }
  if (ACCESS_DENIED.has(name)) {
    return new UnstuckError(
      ErrorCode.Forbidden,
      `Missing IAM permission ${action}: the bot's AWS role may not call it (${name}).`,
      { action, awsError: name },
    );
  }
  if (THROTTLED.has(name)) {
    return new UnstuckError(ErrorCode.Throttled, `AWS throttled ${action} (${name}: ${message}).`, {
      action,
      awsError: name,
    });
  }
  const code = e.code;
  if (
    (typeof code === "string" && ["ECONNREFUSED", "ENOTFOUND", "ETIMEDOUT", "ECONNRESET"].includes(code)) ||
    /ECONNREFUSED|ENOTFOUND|getaddrinfo/.test(message)
  ) {
    return new UnstuckError(
      ErrorCode.Unreachable,
      `Cannot reach the AWS endpoint for ${action}: ${message}`,
      {
        action,
      },
    );
  }
  return new UnstuckError(ErrorCode.Upstream, `AWS ${action} failed (${name}): ${message}`, {
    action,
    awsError: name,
    ...(e.$metadata?.httpStatusCode !== undefined ? { status: e.$metadata.httpStatusCode } : {}),
  });
}

/** A record as the Route 53 API takes it in a change batch. */
export function toResourceRecordSet(r: RecordSetSnapshot): ResourceRecordSet {
  return {
    Name: r.name,
    Type: r.type as ResourceRecordSet["Type"],
    ...(r.alias
      ? {
          AliasTarget: {
            HostedZoneId: r.alias.hostedZoneId,
            DNSName: r.alias.dnsName,
            EvaluateTargetHealth: r.alias.evaluateTargetHealth,
          },
        }
      : { TTL: r.ttl ?? 300, ResourceRecords: r.values.map((Value) => ({ Value })) }),
    ...(r.setIdentifier !== undefined ? { SetIdentifier: r.setIdentifier } : {}),
    ...(r.weight !== undefined ? { Weight: r.weight } : {}),
    ...(r.failover !== undefined ? { Failover: r.failover as ResourceRecordSet["Failover"] } : {}),
    ...(r.region !== undefined ? { Region: r.region as ResourceRecordSet["Region"] } : {}),
  };
}

/** A conditional write refused because what it was conditioned on changed: STALE, nothing written. */
function staleWrite(err: unknown, action: string, names: readonly string[], what: string): never {
  const name = (err as { name?: string } | null)?.name ?? "";
  if (names.includes(name)) {
    throw new UnstuckError(
      ErrorCode.Stale,
      `${what} (${name}: ${err instanceof Error ? err.message : String(err)}).`,
      { action, awsError: name },
    );
  }
  throw mapAwsError(err, action);
}

const GONE = new Set([
  "LoadBalancerNotFound",
  "LoadBalancerNotFoundException",
  "TargetGroupNotFound",
  "TargetGroupNotFoundException",
  "InvalidNetworkInterfaceID.NotFound",
  "InvalidGroup.NotFound",
]);
const IN_USE = new Set([
  "DependencyViolation",
  "ResourceInUse",
  "ResourceInUseException",
  "InvalidNetworkInterface.InUse",
]);

/** A delete: already gone is done; still in use is `Conflict` (nothing deleted); the rest as any call. */
async function deletion(action: string, op: () => Promise<unknown>): Promise<void> {
  try {
    await op();
  } catch (err) {
    const name = (err as { name?: string } | null)?.name ?? "";
    if (GONE.has(name)) return;
    const message = err instanceof Error ? err.message : String(err);
    // EC2 says an attached interface is "currently in use" with a generic code.
    if (IN_USE.has(name) || (name === "InvalidParameterValue" && /in use/i.test(message))) {
      throw new UnstuckError(ErrorCode.Conflict, `${action} refused: still in use (${name}: ${message}).`, {
        action,
        awsError: name,
      });
    }
    throw mapAwsError(err, action);
  }
}

async function aws<T>(action: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw mapAwsError(err, action);
  }
}

function tagMap(tags: readonly { Key?: string | undefined; Value?: string | undefined }[] | undefined): Tags {
  const out: Record<string, string> = {};
  for (const t of tags ?? []) if (t.Key !== undefined) out[t.Key] = t.Value ?? "";
  return out;
}

/** A load balancer as the pure core reads it (tags are added by the caller, from DescribeTags). */
function toLoadBalancerSnapshot(lb: LoadBalancer): LoadBalancerSnapshot {
  return {
    arn: lb.LoadBalancerArn ?? "",
    name: lb.LoadBalancerName ?? "",
    dnsName: lb.DNSName ?? "",
    ...(lb.CanonicalHostedZoneId ? { canonicalHostedZoneId: lb.CanonicalHostedZoneId } : {}),
    state: lb.State?.Code ?? "unknown",
    type: lb.Type ?? "application",
    ...(lb.Scheme ? { scheme: lb.Scheme } : {}),
    ...(lb.VpcId ? { vpcId: lb.VpcId } : {}),
    securityGroups: lb.SecurityGroups ?? [],
    ...(lb.CreatedTime ? { createdTime: lb.CreatedTime.toISOString() } : {}),
    tags: {},
  };
}

/** Values one EC2 filter takes in a call (the documented limit for filter values is 200). */
const FILTER_VALUES_PER_CALL = 200;
/** The tag the Load Balancer Controller puts on everything it creates for a cluster. */
const CLUSTER_TAG = "elbv2.k8s.aws/cluster";

export function createAwsAdapter(clients: AwsDiagnosisClients): AwsPort {
  const { elbv2, ec2, cloudtrail, tagging } = clients;
  const needs = <T>(client: T | undefined, what: string): T => {
    if (client === undefined) {
      throw new UnstuckError(ErrorCode.Upstream, `No ${what} client configured for the traffic path.`);
    }
    return client;
  };

  async function elbTags(arns: readonly string[]): Promise<Map<string, Tags>> {
    const out = new Map<string, Tags>();
    for (const batch of chunks(arns, 20)) {
      const res = await aws("elasticloadbalancing:DescribeTags", () =>
        elbv2.send(new DescribeTagsCommand({ ResourceArns: batch })),
      );
      for (const d of res.TagDescriptions ?? []) if (d.ResourceArn) out.set(d.ResourceArn, tagMap(d.Tags));
    }
    return out;
  }

  /** Tags of the resources of one type tagged for a cluster, by ARN (Tagging API, 100 a page). */
  async function taggedFor(cluster: string, type: string): Promise<Map<string, Tags>> {
    const found = await port.resourcesByTags({ [CLUSTER_TAG]: cluster }, [type]);
    return new Map(found.map((r) => [r.arn, r.tags]));
  }

  async function describeInterfaces(filters: Filter[]): Promise<NetworkInterfaceSnapshot[]> {
    const out: NetworkInterfaceSnapshot[] = [];
    let token: string | undefined;
    do {
      const res = await aws("ec2:DescribeNetworkInterfaces", () =>
        ec2.send(
          new DescribeNetworkInterfacesCommand({ Filters: filters, MaxResults: 1000, NextToken: token }),
        ),
      );
      for (const n of res.NetworkInterfaces ?? []) {
        const a = n.Attachment;
        out.push({
          id: n.NetworkInterfaceId ?? "",
          description: n.Description ?? "",
          status: n.Status ?? "unknown",
          ...(n.InterfaceType ? { interfaceType: n.InterfaceType } : {}),
          ...(n.RequesterId ? { requesterId: n.RequesterId } : {}),
          requesterManaged: n.RequesterManaged === true,
          groups: (n.Groups ?? []).map((g) => g.GroupId ?? ""),
          ...(a
            ? {
                attachment: {
                  ...(a.AttachmentId ? { id: a.AttachmentId } : {}),
                  ...(a.Status ? { status: a.Status } : {}),
                  ...(a.InstanceId ? { instanceId: a.InstanceId } : {}),
                  ...(a.InstanceOwnerId ? { instanceOwnerId: a.InstanceOwnerId } : {}),
                },
              }
            : {}),
        });
      }
      token = res.NextToken;
    } while (token);
    return out;
  }

  async function describeGroups(
    filters: Filter[],
    ids?: readonly string[],
  ): Promise<SecurityGroupSnapshot[]> {
    const out: SecurityGroupSnapshot[] = [];
    let token: string | undefined;
    do {
      const res = await aws("ec2:DescribeSecurityGroups", () =>
        ec2.send(
          new DescribeSecurityGroupsCommand({
            ...(filters.length > 0 ? { Filters: filters } : {}),
            ...(ids && ids.length > 0 ? { GroupIds: [...ids] } : {}),
            ...(ids && ids.length > 0 ? {} : { MaxResults: 1000 }),
            NextToken: token,
          }),
        ),
      );
      for (const g of res.SecurityGroups ?? []) {
        out.push({
          id: g.GroupId ?? "",
          name: g.GroupName ?? "",
          description: g.Description ?? "",
          ...(g.VpcId ? { vpcId: g.VpcId } : {}),
          tags: tagMap(g.Tags),
        });
      }
      token = res.NextToken;
    } while (token);
    return out;
  }

  const port: AwsPort = {
    async allLoadBalancers(options) {
      const listing = (async () => {
        const found: LoadBalancerSnapshot[] = [];
        let marker: string | undefined;
        do {
          const res = await aws("elasticloadbalancing:DescribeLoadBalancers", () =>
            elbv2.send(new DescribeLoadBalancersCommand({ PageSize: 400, Marker: marker })),
          );
          for (const lb of res.LoadBalancers ?? []) found.push(toLoadBalancerSnapshot(lb));
          marker = res.NextMarker;
        } while (marker);
        return found;
      })();
      const cluster = options?.clusterTags;
      const [found, clusterTags] = await Promise.all([
        listing,
        cluster !== undefined ? taggedFor(cluster, "elasticloadbalancing:loadbalancer") : undefined,
      ]);
      const tags = clusterTags ?? (await elbTags(found.map((lb) => lb.arn)));
      return found.map((lb) => ({ ...lb, tags: tags.get(lb.arn) ?? {} }));
    },

    async hostedZones() {
      const r53 = needs(clients.route53, "Route 53");
      const out: HostedZoneSnapshot[] = [];
      let marker: string | undefined;
      do {
        const res = await aws("route53:ListHostedZones", () =>
          r53.send(new ListHostedZonesCommand({ Marker: marker })),
        );
        for (const z of res.HostedZones ?? []) {
          out.push({
            id: (z.Id ?? "").replace(/^\/hostedzone\//, ""),
            name: route53Name(z.Name ?? ""),
            private: z.Config?.PrivateZone === true,
          });
        }
        marker = res.IsTruncated ? res.NextMarker : undefined;
      } while (marker);
      return out;
    },

    async recordSets(zoneId, name) {
      const r53 = needs(clients.route53, "Route 53");
      const out: RecordSetSnapshot[] = [];
      let next: Pick<
        ListResourceRecordSetsCommandInput,
        "StartRecordName" | "StartRecordType" | "StartRecordIdentifier"
      > = name !== undefined ? { StartRecordName: name } : {};
      for (;;) {
        const res = await aws("route53:ListResourceRecordSets", () =>
          r53.send(
            new ListResourceRecordSetsCommand({
              HostedZoneId: zoneId,
              ...next,
              ...(name !== undefined ? { MaxItems: 100 } : {}),
            }),
          ),
        );
        let past = false;
        for (const r of res.ResourceRecordSets ?? []) {
          const n = route53Name(r.Name ?? "");
          if (name !== undefined && n !== route53Name(name)) {
            past = true;
            continue;
          }
          out.push({
            zoneId,
            name: n,
            type: r.Type ?? "",
            ...(r.TTL !== undefined ? { ttl: r.TTL } : {}),
            values: (r.ResourceRecords ?? []).map((v) => v.Value ?? ""),
            ...(r.AliasTarget
              ? {
                  alias: {
                    hostedZoneId: r.AliasTarget.HostedZoneId ?? "",
                    dnsName: r.AliasTarget.DNSName ?? "",
                    evaluateTargetHealth: r.AliasTarget.EvaluateTargetHealth === true,
                  },
                }
              : {}),
            ...(r.SetIdentifier !== undefined ? { setIdentifier: r.SetIdentifier } : {}),
            ...(r.Weight !== undefined ? { weight: r.Weight } : {}),
            ...(r.Failover !== undefined ? { failover: r.Failover } : {}),
            ...(r.Region !== undefined ? { region: r.Region } : {}),
          });
        }
        // One name: records are sorted by name, so the first other name ends the answer.
        if (past || !res.IsTruncated) break;
        next = {
          StartRecordName: res.NextRecordName,
          StartRecordType: res.NextRecordType,
          StartRecordIdentifier: res.NextRecordIdentifier,
        };
      }
      return out;
    },

    async distributionConfig(id) {
      const cf = needs(clients.cloudfront, "CloudFront");
      const res = await aws("cloudfront:GetDistributionConfig", () =>
        cf.send(new GetDistributionConfigCommand({ Id: id })),
      );
      if (res.DistributionConfig === undefined || res.ETag === undefined) {
        throw new UnstuckError(ErrorCode.Upstream, `CloudFront returned no config or ETag for ${id}.`);
      }
      return { etag: res.ETag, config: res.DistributionConfig };
    },

    async updateDistribution(id, config: DistributionConfig, ifMatch) {
      const cf = needs(clients.cloudfront, "CloudFront");
      try {
        const res = await cf.send(
          new UpdateDistributionCommand({ Id: id, DistributionConfig: config, IfMatch: ifMatch }),
        );
        return { etag: res.ETag ?? "", status: res.Distribution?.Status ?? "InProgress" };
      } catch (err) {
        return staleWrite(
          err,
          "cloudfront:UpdateDistribution",
          ["PreconditionFailed", "InvalidIfMatchVersion"],
          `Distribution ${id} changed since the plan was made`,
        );
      }
    },

    async distributionStatus(id) {
      const cf = needs(clients.cloudfront, "CloudFront");
      const res = await aws("cloudfront:GetDistribution", () =>
        cf.send(new GetDistributionCommand({ Id: id })),
      );
      return { status: res.Distribution?.Status ?? "unknown", etag: res.ETag ?? "" };
    },

    async changeRecordSets(zoneId, changes: readonly RecordChange[], comment) {
      const r53 = needs(clients.route53, "Route 53");
      try {
        const res = await r53.send(
          new ChangeResourceRecordSetsCommand({
            HostedZoneId: zoneId,
            ChangeBatch: {
              Comment: comment,
              Changes: changes.map((c) => ({
                Action: c.action,
                ResourceRecordSet: toResourceRecordSet(c.record),
              })),
            },
          }),
        );
        return {
          changeId: (res.ChangeInfo?.Id ?? "").replace(/^\/change\//, ""),
          status: res.ChangeInfo?.Status ?? "PENDING",
        };
      } catch (err) {
        return staleWrite(
          err,
          "route53:ChangeResourceRecordSets",
          ["InvalidChangeBatch"],
          `The records in zone ${zoneId} changed since the plan was made`,
        );
      }
    },

    async deleteLoadBalancer(arn) {
      await deletion("elasticloadbalancing:DeleteLoadBalancer", () =>
        elbv2.send(new DeleteLoadBalancerCommand({ LoadBalancerArn: arn })),
      );
    },

    async deleteTargetGroup(arn) {
      await deletion("elasticloadbalancing:DeleteTargetGroup", () =>
        elbv2.send(new DeleteTargetGroupCommand({ TargetGroupArn: arn })),
      );
    },

    async deleteSecurityGroup(id) {
      await deletion("ec2:DeleteSecurityGroup", () =>
        ec2.send(new DeleteSecurityGroupCommand({ GroupId: id })),
      );
    },

    async changeStatus(changeId) {
      const r53 = needs(clients.route53, "Route 53");
      const res = await aws("route53:GetChange", () => r53.send(new GetChangeCommand({ Id: changeId })));
      return res.ChangeInfo?.Status ?? "unknown";
    },

    async distributions() {
      const cf = needs(clients.cloudfront, "CloudFront");
      const out: DistributionSnapshot[] = [];
      let marker: string | undefined;
      do {
        const res = await aws("cloudfront:ListDistributions", () =>
          cf.send(new ListDistributionsCommand({ Marker: marker })),
        );
        const list = res.DistributionList;
        for (const d of list?.Items ?? []) {
          out.push({
            id: d.Id ?? "",
            domainName: (d.DomainName ?? "").toLowerCase(),
            status: d.Status ?? "unknown",
            enabled: d.Enabled !== false,
            aliases: (d.Aliases?.Items ?? []).map((a) => a.toLowerCase()),
            origins: (d.Origins?.Items ?? []).map((o) => ({
              id: o.Id ?? "",
              domainName: o.DomainName ?? "",
            })),
            originGroups: (d.OriginGroups?.Items ?? []).map((g) => ({
              id: g.Id ?? "",
              members: (g.Members?.Items ?? []).map((m) => m.OriginId ?? ""),
            })),
            defaultTarget: d.DefaultCacheBehavior?.TargetOriginId ?? "",
            behaviors: (d.CacheBehaviors?.Items ?? []).map((b) => ({
              pathPattern: b.PathPattern ?? "",
              target: b.TargetOriginId ?? "",
            })),
          });
        }
        marker = list?.IsTruncated ? list.NextMarker : undefined;
      } while (marker);
      return out;
    },

    async loadBalancersByName(names) {
      if (names.length === 0) return [];
      const found: LoadBalancerSnapshot[] = [];
      // One request for all names; a single unknown name fails the whole call, so fall back to
      // asking one by one only then.
      const describe = async (batch: readonly string[]): Promise<void> => {
        try {
          const res = await aws("elasticloadbalancing:DescribeLoadBalancers", () =>
            elbv2.send(new DescribeLoadBalancersCommand({ Names: [...batch] })),
          );
          for (const lb of res.LoadBalancers ?? []) found.push(toLoadBalancerSnapshot(lb));
        } catch (err) {
          if (
            err instanceof UnstuckError &&
            (err.details.awsError === "LoadBalancerNotFoundException" ||
              err.details.awsError === "LoadBalancerNotFound")
          ) {
            if (batch.length > 1) for (const n of batch) await describe([n]);
            return;
          }
          throw err;
        }
      };
      // ELB takes at most 20 names a call.
      await Promise.all(chunks([...new Set(names)], 20).map((batch) => describe(batch)));
      const tags = await elbTags(found.map((lb) => lb.arn));
      return found.map((lb) => ({ ...lb, tags: tags.get(lb.arn) ?? {} }));
    },

    async targetGroupsOf(loadBalancerArn) {
      const res = await aws("elasticloadbalancing:DescribeTargetGroups", () =>
        elbv2.send(new DescribeTargetGroupsCommand({ LoadBalancerArn: loadBalancerArn })),
      );
      const groups = res.TargetGroups ?? [];
      const tags = await elbTags(groups.map((g) => g.TargetGroupArn ?? ""));
      return groups.map((g) => ({
        arn: g.TargetGroupArn ?? "",
        name: g.TargetGroupName ?? "",
        loadBalancerArns: g.LoadBalancerArns ?? [],
        tags: tags.get(g.TargetGroupArn ?? "") ?? {},
      }));
    },

    async listenersOf(loadBalancerArn) {
      const res = await aws("elasticloadbalancing:DescribeListeners", () =>
        elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: loadBalancerArn })),
      );
      return (res.Listeners ?? []).map((l) => ({
        arn: l.ListenerArn ?? "",
        loadBalancerArn: l.LoadBalancerArn ?? loadBalancerArn,
        ...(l.Port !== undefined ? { port: l.Port } : {}),
        ...(l.Protocol ? { protocol: l.Protocol } : {}),
      }));
    },

    async listenerRulesOf(loadBalancerArn) {
      const listeners = await port.listenersOf(loadBalancerArn);
      const perListener = await Promise.all(
        listeners.map(async (l) => {
          const out: ListenerRuleSnapshot[] = [];
          let marker: string | undefined;
          do {
            const res = await aws("elasticloadbalancing:DescribeRules", () =>
              elbv2.send(new DescribeRulesCommand({ ListenerArn: l.arn, Marker: marker })),
            );
            for (const r of res.Rules ?? []) {
              const hosts = (r.Conditions ?? [])
                .filter((c) => c.Field === "host-header")
                .flatMap((c) => c.HostHeaderConfig?.Values ?? c.Values ?? []);
              out.push({
                listenerArn: l.arn,
                isDefault: r.IsDefault === true,
                hosts,
                forwards: (r.Actions ?? []).some((a) => a.Type === "forward"),
              });
            }
            marker = res.NextMarker;
          } while (marker);
          return out;
        }),
      );
      return perListener.flat();
    },

    async securityGroups(query) {
      const filters: Filter[] = Object.entries(query.tags ?? {}).map(([k, v]) => ({
        Name: `tag:${k}`,
        Values: [v],
      }));
      try {
        return await describeGroups(filters, query.ids);
      } catch (err) {
        if (err instanceof UnstuckError && err.details.awsError === "InvalidGroup.NotFound") return [];
        throw err;
      }
    },

    async groupsReferencing(groupId) {
      const [ingress, egress] = await Promise.all([
        describeGroups([{ Name: "ip-permission.group-id", Values: [groupId] }]),
        describeGroups([{ Name: "egress.ip-permission.group-id", Values: [groupId] }]),
      ]);
      const byId = new Map([...ingress, ...egress].map((g) => [g.id, g]));
      byId.delete(groupId);
      return [...byId.values()];
    },

    async rulesOf(groupId) {
      const out = [];
      let token: string | undefined;
      do {
        const res = await aws("ec2:DescribeSecurityGroupRules", () =>
          ec2.send(
            new DescribeSecurityGroupRulesCommand({
              Filters: [{ Name: "group-id", Values: [groupId] }],
              MaxResults: 1000,
              NextToken: token,
            }),
          ),
        );
        for (const r of res.SecurityGroupRules ?? []) {
          out.push({
            id: r.SecurityGroupRuleId ?? "",
            groupId: r.GroupId ?? groupId,
            isEgress: r.IsEgress === true,
            ...(r.ReferencedGroupInfo?.GroupId ? { referencedGroupId: r.ReferencedGroupInfo.GroupId } : {}),
            ...(r.IpProtocol ? { protocol: r.IpProtocol } : {}),
            ...(r.FromPort !== undefined ? { fromPort: r.FromPort } : {}),
            ...(r.ToPort !== undefined ? { toPort: r.ToPort } : {}),
            ...(r.Description ? { description: r.Description } : {}),
          });
        }
        token = res.NextToken;
      } while (token);
      return out;
    },

    networkInterfacesUsing: (groupId) => describeInterfaces([{ Name: "group-id", Values: [groupId] }]),

    async networkInterfacesUsingAny(groupIds) {
      const out = new Map<string, NetworkInterfaceSnapshot[]>(groupIds.map((g) => [g, []]));
      const batches = await Promise.all(
        chunks([...new Set(groupIds)], FILTER_VALUES_PER_CALL).map((batch) =>
          describeInterfaces([{ Name: "group-id", Values: batch }]),
        ),
      );
      // An interface with groups in two batches is returned by both: count it once.
      const unique = new Map(batches.flat().map((n) => [n.id, n]));
      for (const n of unique.values()) {
        for (const g of n.groups) out.get(g)?.push(n);
      }
      return out;
    },

    elbInterfaces: () => describeInterfaces([{ Name: "requester-id", Values: ["amazon-elb"] }]),

    async registeredTargets(targetGroupArn) {
      try {
        const res = await aws("elasticloadbalancing:DescribeTargetHealth", () =>
          elbv2.send(new DescribeTargetHealthCommand({ TargetGroupArn: targetGroupArn })),
        );
        return (res.TargetHealthDescriptions ?? []).map((t): RegisteredTargetSnapshot => ({
          id: t.Target?.Id ?? "",
          ...(t.Target?.Port !== undefined ? { port: t.Target.Port } : {}),
          ...(t.Target?.AvailabilityZone ? { availabilityZone: t.Target.AvailabilityZone } : {}),
          state: t.TargetHealth?.State ?? "unknown",
          ...(t.TargetHealth?.Reason ? { reason: t.TargetHealth.Reason } : {}),
        }));
      } catch (err) {
        // The target group itself is gone: no target can be registered in it.
        if (
          err instanceof UnstuckError &&
          (err.details.awsError === "TargetGroupNotFound" ||
            err.details.awsError === "TargetGroupNotFoundException")
        )
          return undefined;
        throw err;
      }
    },

    async targetGroupsByArn(arns) {
      const batches = await Promise.all(
        chunks([...new Set(arns)], 20).map(async (batch) => {
          try {
            const res = await aws("elasticloadbalancing:DescribeTargetGroups", () =>
              elbv2.send(new DescribeTargetGroupsCommand({ TargetGroupArns: batch })),
            );
            return res.TargetGroups ?? [];
          } catch (err) {
            // One unknown ARN fails the whole call: ask one by one only then.
            const notFound =
              err instanceof UnstuckError &&
              (err.details.awsError === "TargetGroupNotFound" ||
                err.details.awsError === "TargetGroupNotFoundException");
            if (notFound && batch.length > 1) {
              const one = await Promise.all(batch.map((a) => port.targetGroupsByArn([a])));
              return one.flat().map((t) => ({
                TargetGroupArn: t.arn,
                TargetGroupName: t.name,
                LoadBalancerArns: [...t.loadBalancerArns],
              }));
            }
            if (notFound) return [];
            throw err;
          }
        }),
      );
      return batches.flat().map((g) => ({
        arn: g.TargetGroupArn ?? "",
        name: g.TargetGroupName ?? "",
        loadBalancerArns: g.LoadBalancerArns ?? [],
        tags: {},
      }));
    },

    async allTargetGroups(options) {
      const listing = (async () => {
        const groups: { arn: string; name: string; loadBalancerArns: string[] }[] = [];
        let marker: string | undefined;
        do {
          const res = await aws("elasticloadbalancing:DescribeTargetGroups", () =>
            elbv2.send(new DescribeTargetGroupsCommand({ PageSize: 400, Marker: marker })),
          );
          for (const g of res.TargetGroups ?? []) {
            groups.push({
              arn: g.TargetGroupArn ?? "",
              name: g.TargetGroupName ?? "",
              loadBalancerArns: g.LoadBalancerArns ?? [],
            });
          }
          marker = res.NextMarker;
        } while (marker);
        return groups;
      })();
      if (options?.withoutTags === true) return (await listing).map((g) => ({ ...g, tags: {} }));
      const cluster = options?.clusterTags;
      const [groups, clusterTags] = await Promise.all([
        listing,
        cluster !== undefined ? taggedFor(cluster, "elasticloadbalancing:targetgroup") : undefined,
      ]);
      const tags = clusterTags ?? (await elbTags(groups.map((g) => g.arn)));
      return groups.map((g) => ({ ...g, tags: tags.get(g.arn) ?? {} }));
    },

    async elbTagsOf(arns) {
      // A few batches at once: well inside ELB's burst of 40; the SDK backs off if throttled.
      const out = new Map<string, Tags>();
      const results = await mapLimit(chunks([...new Set(arns)], 20), 8, (batch) => elbTags(batch));
      for (const r of results) {
        if (!r.ok) throw r.error;
        for (const [arn, tags] of r.value) out.set(arn, tags);
      }
      return out;
    },

    async cloudTrailEvents(query) {
      const out: CloudTrailEventSnapshot[] = [];
      let token: string | undefined;
      do {
        const res = await aws("cloudtrail:LookupEvents", () =>
          cloudtrail.send(
            new LookupEventsCommand({
              LookupAttributes:
                query.resourceName !== undefined
                  ? [{ AttributeKey: "ResourceName", AttributeValue: query.resourceName }]
                  : [{ AttributeKey: "EventName", AttributeValue: query.eventName ?? "" }],
              StartTime: query.start,
              EndTime: query.end,
              MaxResults: Math.min(50, query.max - out.length),
              NextToken: token,
            }),
          ),
        );
        for (const e of res.Events ?? []) {
          let detail: Record<string, unknown> = {};
          try {
            detail = JSON.parse(e.CloudTrailEvent ?? "{}") as Record<string, unknown>;
          } catch {
            // keep the summary fields only
          }
          const identity = (detail.userIdentity ?? {}) as Record<string, unknown>;
          const caller = typeof identity.arn === "string" ? identity.arn : e.Username;
          out.push({
            id: e.EventId ?? "",
            time: (e.EventTime ?? new Date(0)).toISOString(),
            name: e.EventName ?? query.eventName ?? "",
            source: e.EventSource ?? "",
            ...(typeof detail.errorCode === "string" ? { errorCode: detail.errorCode } : {}),
            ...(typeof detail.errorMessage === "string" ? { errorMessage: detail.errorMessage } : {}),
            ...(caller ? { caller } : {}),
            requestParameters: (detail.requestParameters ?? {}) as Record<string, unknown>,
          });
        }
        token = res.NextToken;
      } while (token && out.length < query.max);
      return out;
    },

    async resourcesByTags(tags, types) {
      const out: { arn: string; tags: Tags }[] = [];
      const seen = new Set<string>();
      let token: string | undefined;
      do {
        const res = await aws("tag:GetResources", () =>
          tagging.send(
            new GetResourcesCommand({
              TagFilters: Object.entries(tags).map(([Key, Value]) => ({
                Key,
                Values: typeof Value === "string" ? [Value] : [...Value],
              })),
              ...(types.length > 0 ? { ResourceTypeFilters: [...types] } : {}),
              ResourcesPerPage: 100,
              ...(token ? { PaginationToken: token } : {}),
            }),
          ),
        );
        for (const m of res.ResourceTagMappingList ?? []) {
          if (!m.ResourceARN || seen.has(m.ResourceARN)) continue;
          seen.add(m.ResourceARN);
          out.push({ arn: m.ResourceARN, tags: tagMap(m.Tags) });
        }
        // The last page carries an empty token, not none.
        token = res.PaginationToken;
      } while (token);
      return out;
    },
  };
  return port;
}
