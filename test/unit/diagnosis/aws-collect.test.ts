import { describe, expect, it } from "vitest";
import type { AwsPort } from "../../../src/aws/port.js";
import type { SecurityGroupSnapshot } from "../../../src/aws/types.js";
import { collectAwsForBlocker } from "../../../src/diagnosis/aws-collect.js";
import { edgeOwnerOf, type EdgeOwner } from "../../../src/edge/model.js";
import type { ObjectSnapshot } from "../../../src/kube/types.js";

/** An AWS account in memory: just enough for the collector's queries. */
function account(
  groups: SecurityGroupSnapshot[],
  enis: Record<string, string[]>,
  failedGroupIds: string[],
): AwsPort {
  const matches = (g: SecurityGroupSnapshot, tags: Readonly<Record<string, string>>) =>
    Object.entries(tags).every(([k, v]) => g.tags[k] === v);
  return {
    loadBalancersByName: () => Promise.resolve([]),
    targetGroupsOf: () => Promise.resolve([]),
    listenersOf: () => Promise.resolve([]),
    listenerRulesOf: () => Promise.resolve([]),
    securityGroups: ({ ids, tags }) =>
      Promise.resolve(groups.filter((g) => (!ids || ids.includes(g.id)) && (!tags || matches(g, tags)))),
    groupsReferencing: () => Promise.resolve([]),
    rulesOf: () => Promise.resolve([]),
    networkInterfacesUsing: (groupId) =>
      Promise.resolve(
        (enis[groupId] ?? []).map((id) => ({
          id,
          description: "ELB net/x/y",
          status: "in-use",
          requesterManaged: true,
          groups: [groupId],
        })),
      ),
    cloudTrailEvents: () =>
      Promise.resolve(
        failedGroupIds.map((groupId, i) => ({
          id: `e${String(i)}`,
          time: "2026-02-12T08:48:21Z",
          name: "DeleteSecurityGroup",
          source: "ec2.amazonaws.com",
          errorCode: "Client.DependencyViolation",
          requestParameters: { groupId },
        })),
      ),
    networkInterfacesUsingAny: () => Promise.reject(new Error("not read by the collector")),
    resourcesByTags: () => Promise.resolve([]),
    targetGroupsByArn: () => Promise.reject(new Error("not read by the collector")),
    registeredTargets: () => Promise.reject(new Error("not read by the collector")),
    elbTagsOf: () => Promise.reject(new Error("not read by the collector")),
    allLoadBalancers: () => Promise.resolve([]),
    hostedZones: () => Promise.resolve([]),
    recordSets: () => Promise.resolve([]),
    distributions: () => Promise.resolve([]),
    allTargetGroups: () => Promise.resolve([]),
    elbInterfaces: () => Promise.resolve([]),
    // The collector only reads: any write would be a bug.
    distributionConfig: () => Promise.reject(new Error("not read by the collector")),
    updateDistribution: () => Promise.reject(new Error("the collector never writes")),
    distributionStatus: () => Promise.reject(new Error("not read by the collector")),
    changeRecordSets: () => Promise.reject(new Error("the collector never writes")),
    changeStatus: () => Promise.reject(new Error("not read by the collector")),
    deleteLoadBalancer: () => Promise.reject(new Error("the collector never writes")),
    deleteTargetGroup: () => Promise.reject(new Error("the collector never writes")),
    deleteSecurityGroup: () => Promise.reject(new Error("the collector never writes")),
  };
}

const service: ObjectSnapshot = {
  apiVersion: "v1",
  kind: "Service",
  resource: "services",
  namespace: "shop",
  name: "web",
  finalizers: ["service.k8s.aws/resources"],
  deletionTimestamp: "2026-02-12T08:39:00Z",
  labels: {},
  annotations: {},
  ownerReferences: [],
};
const window = {
  cluster: "prod-eks",
  since: new Date(0),
  until: new Date(),
  owners: [edgeOwnerOf(service)].filter((o): o is EdgeOwner => o !== undefined),
  ownersComplete: true,
};

describe("collectAwsForBlocker", () => {
  it("finds a Service's (NLB) managed group by the service stack tag and names the ENI holding it", async () => {
    const sg = {
      id: "sg-0svc",
      name: "k8s-shop-web-123",
      description: "",
      tags: { "elbv2.k8s.aws/cluster": "prod-eks", "service.k8s.aws/stack": "shop/web" },
    };
    const f = await collectAwsForBlocker(
      account([sg], { "sg-0svc": ["eni-0held"] }, ["sg-0svc"]),
      service,
      window,
    );
    expect(f.stack).toBe("shop/web");
    expect(f.blockedGroups.map((g) => g.groupId)).toEqual(["sg-0svc"]);
    expect(f.summary).toContain("eni-0held");
  });

  it("does not adopt a group CloudTrail names when it belongs to another stack", async () => {
    const other = {
      id: "sg-0other",
      name: "other",
      description: "",
      tags: { "elbv2.k8s.aws/cluster": "prod-eks", "service.k8s.aws/stack": "shop/other" },
    };
    const f = await collectAwsForBlocker(
      account([other], { "sg-0other": ["eni-0x"] }, ["sg-0other"]),
      service,
      window,
    );
    expect(f.blockedGroups).toEqual([]);
  });
});
