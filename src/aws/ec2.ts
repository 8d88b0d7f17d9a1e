/**
 * `Ec2Port` over the EC2 SDK client: security groups, their rules and the network interfaces that
 * use them, read with server-side filters (never by listing the account), and the group deletes.
 */
import {
  DeleteSecurityGroupCommand,
  DescribeNetworkInterfacesCommand,
  DescribeSecurityGroupRulesCommand,
  DescribeSecurityGroupsCommand,
  type EC2Client,
  type Filter,
} from "@aws-sdk/client-ec2";
import { chunks } from "../util/concurrency.js";
import { UnstuckError } from "../errors.js";
import type { Ec2Port } from "./port.js";
import { aws, deletion, tagMap } from "./sdk-calls.js";
import type { NetworkInterfaceSnapshot, SecurityGroupRuleSnapshot, SecurityGroupSnapshot } from "./types.js";

/** Values one EC2 filter takes in a call (the documented limit for filter values is 200). */
const FILTER_VALUES_PER_CALL = 200;

/**
 * The start-up check's one EC2 read (`ec2:DescribeSecurityGroups`, 5 groups), which the bot's
 * policy already grants. The SDK's error is thrown as is, for the caller to map and word.
 */
export async function probeEc2(ec2: EC2Client): Promise<void> {
  await ec2.send(new DescribeSecurityGroupsCommand({ MaxResults: 5 }));
}

/** Network interfaces matching every filter (DescribeNetworkInterfaces, all pages of 1000). */
async function describeInterfaces(ec2: EC2Client, filters: Filter[]): Promise<NetworkInterfaceSnapshot[]> {
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

/**
 * `networkInterfacesUsingAny`: the interfaces of these groups, by group, 200 groups a call; every
 * asked group is a key.
 */
async function networkInterfacesUsingAny(
  ec2: EC2Client,
  groupIds: readonly string[],
): Promise<Map<string, NetworkInterfaceSnapshot[]>> {
  const out = new Map<string, NetworkInterfaceSnapshot[]>(groupIds.map((g) => [g, []]));
  const batches = await Promise.all(
    chunks([...new Set(groupIds)], FILTER_VALUES_PER_CALL).map((batch) =>
      describeInterfaces(ec2, [{ Name: "group-id", Values: batch }]),
    ),
  );
  // An interface with groups in two batches is returned by both: count it once.
  const unique = new Map(batches.flat().map((n) => [n.id, n]));
  for (const n of unique.values()) {
    for (const g of n.groups) out.get(g)?.push(n);
  }
  return out;
}

/** Security groups matching every filter and/or these ids (DescribeSecurityGroups, all pages). */
async function describeGroups(
  ec2: EC2Client,
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

/** `securityGroups`: by tags (server-side `tag:<k>` filters) and/or ids; an unknown id → none. */
async function securityGroups(
  ec2: EC2Client,
  query: { ids?: readonly string[]; tags?: Readonly<Record<string, string>> },
): Promise<SecurityGroupSnapshot[]> {
  const filters: Filter[] = Object.entries(query.tags ?? {}).map(([k, v]) => ({
    Name: `tag:${k}`,
    Values: [v],
  }));
  try {
    return await describeGroups(ec2, filters, query.ids);
  } catch (err) {
    if (err instanceof UnstuckError && err.details.awsError === "InvalidGroup.NotFound") return [];
    throw err;
  }
}

/** `groupsReferencing`: the other groups whose ingress or egress rules name `groupId`. */
async function groupsReferencing(ec2: EC2Client, groupId: string): Promise<SecurityGroupSnapshot[]> {
  const [ingress, egress] = await Promise.all([
    describeGroups(ec2, [{ Name: "ip-permission.group-id", Values: [groupId] }]),
    describeGroups(ec2, [{ Name: "egress.ip-permission.group-id", Values: [groupId] }]),
  ]);
  const byId = new Map([...ingress, ...egress].map((g) => [g.id, g]));
  byId.delete(groupId);
  return [...byId.values()];
}

/** `rulesOf`: every rule of one group (DescribeSecurityGroupRules, all pages). */
async function rulesOf(ec2: EC2Client, groupId: string): Promise<SecurityGroupRuleSnapshot[]> {
  const out: SecurityGroupRuleSnapshot[] = [];
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
}

/** `Ec2Port` over one EC2 client: the group reads, the interface reads and the group delete. */
export function createEc2Adapter(ec2: EC2Client): Ec2Port {
  return {
    async deleteSecurityGroup(id) {
      await deletion("ec2:DeleteSecurityGroup", () =>
        ec2.send(new DeleteSecurityGroupCommand({ GroupId: id })),
      );
    },
    securityGroups: (query) => securityGroups(ec2, query),
    groupsReferencing: (groupId) => groupsReferencing(ec2, groupId),
    rulesOf: (groupId) => rulesOf(ec2, groupId),
    networkInterfacesUsing: (groupId) => describeInterfaces(ec2, [{ Name: "group-id", Values: [groupId] }]),
    networkInterfacesUsingAny: (groupIds) => networkInterfacesUsingAny(ec2, groupIds),
    elbInterfaces: () => describeInterfaces(ec2, [{ Name: "requester-id", Values: ["amazon-elb"] }]),
  };
}
