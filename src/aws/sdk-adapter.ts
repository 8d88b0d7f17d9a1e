/**
 * `AwsPort` over the AWS SDK v3 clients: I/O and error mapping only. Calls are chosen to be the
 * fewest that answer the question (names and server-side filters rather than listing an account),
 * because ELB's Describe* bucket is 40 requests with a refill of 10/s.
 */
import { LookupEventsCommand, type CloudTrailClient } from "@aws-sdk/client-cloudtrail";
import {
  DescribeNetworkInterfacesCommand,
  DescribeSecurityGroupRulesCommand,
  DescribeSecurityGroupsCommand,
  type EC2Client,
  type Filter,
} from "@aws-sdk/client-ec2";
import {
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  DescribeTagsCommand,
  DescribeTargetGroupsCommand,
  type ElasticLoadBalancingV2Client,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import {
  GetResourcesCommand,
  type ResourceGroupsTaggingAPIClient,
} from "@aws-sdk/client-resource-groups-tagging-api";
import { ErrorCode, UnstuckError } from "../errors.js";
import type { AwsPort } from "./port.js";
import type {
  CloudTrailEventSnapshot,
  LoadBalancerSnapshot,
  NetworkInterfaceSnapshot,
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

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export function createAwsAdapter(clients: AwsDiagnosisClients): AwsPort {
  const { elbv2, ec2, cloudtrail, tagging } = clients;

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

  return {
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
          for (const lb of res.LoadBalancers ?? []) {
            found.push({
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
            });
          }
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
      await describe([...new Set(names)]);
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

    async networkInterfacesUsing(groupId) {
      const out: NetworkInterfaceSnapshot[] = [];
      let token: string | undefined;
      do {
        const res = await aws("ec2:DescribeNetworkInterfaces", () =>
          ec2.send(
            new DescribeNetworkInterfacesCommand({
              Filters: [{ Name: "group-id", Values: [groupId] }],
              MaxResults: 1000,
              NextToken: token,
            }),
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
              TagFilters: Object.entries(tags).map(([Key, Value]) => ({ Key, Values: [Value] })),
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
}
