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
import type { NetworkInterfaceSnapshot, SecurityGroupSnapshot } from "./types.js";

/** Values one EC2 filter takes in a call (the documented limit for filter values is 200). */
const FILTER_VALUES_PER_CALL = 200;

/**
 * The start-up check's one EC2 read (`ec2:DescribeSecurityGroups`, 5 groups), which the bot's
 * policy already grants. The SDK's error is thrown as is, for the caller to map and word.
 */
export async function probeEc2(ec2: EC2Client): Promise<void> {
  await ec2.send(new DescribeSecurityGroupsCommand({ MaxResults: 5 }));
}

export function createEc2Adapter(ec2: EC2Client): Ec2Port {
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

  return {
    async deleteSecurityGroup(id) {
      await deletion("ec2:DeleteSecurityGroup", () =>
        ec2.send(new DeleteSecurityGroupCommand({ GroupId: id })),
      );
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
  };
}
