import { describe, expect, it } from "vitest";
import type { AwsPort } from "../../../src/aws/port.js";
import type { SecurityGroupSnapshot } from "../../../src/aws/types.js";
import { endingAt, lastAwsReads, onceEach, readAhead } from "../../../src/diagnosis/aws-ahead.js";
import { collectAwsForBlocker, type ClusterOwners } from "../../../src/diagnosis/aws-collect.js";
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
  owners: Promise.resolve({
    owners: [edgeOwnerOf(service)].filter((o): o is EdgeOwner => o !== undefined),
    complete: true,
  }),
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

  it("reads a group's dependents once its tag query answers, and AWS without waiting for the owners", async () => {
    const sg = {
      id: "sg-0svc",
      name: "svc",
      description: "",
      tags: { "elbv2.k8s.aws/cluster": "prod-eks", "service.k8s.aws/stack": "shop/web" },
    };
    const base = account([sg], { "sg-0svc": ["eni-0held"] }, []);
    const asked: string[] = [];
    let answerTrail!: () => void;
    const trail = new Promise<void>((resolve) => (answerTrail = resolve));
    let answerOwners!: (o: ClusterOwners) => void;
    const owners = new Promise<ClusterOwners>((resolve) => (answerOwners = resolve));
    const aws: AwsPort = {
      ...base,
      // CloudTrail answers last, and the cluster's owners later still.
      cloudTrailEvents: async (q) => {
        await trail;
        return base.cloudTrailEvents(q);
      },
      networkInterfacesUsing: (id) => (asked.push(`enis ${id}`), base.networkInterfacesUsing(id)),
      groupsReferencing: (id) => (asked.push(`refs ${id}`), base.groupsReferencing(id)),
    };
    let settled = false;
    const collecting = collectAwsForBlocker(aws, service, { ...window, owners }).finally(
      () => (settled = true),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(asked.sort()).toEqual(["enis sg-0svc", "refs sg-0svc"]);
    answerTrail();
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Every AWS read is done; only the judgement of what is live waits for the owners.
    expect(settled).toBe(false);
    answerOwners(await window.owners);
    const f = await collecting;
    expect(f.blockedGroups.map((g) => g.groupId)).toEqual(["sg-0svc"]);
    expect(f.summary).toContain("eni-0held");
    // Each group's dependents are read once, though the group is found before CloudTrail answers.
    expect(asked).toHaveLength(2);
  });
});

describe("onceEach", () => {
  it("makes each distinct read once, and hands every caller the same failure", async () => {
    const asked: string[] = [];
    const base = account([], {}, []);
    const aws = onceEach({
      ...base,
      securityGroups: (q) => (asked.push(JSON.stringify(q)), base.securityGroups(q)),
      rulesOf: (id) => (asked.push(`rules ${id}`), Promise.reject(new Error("UnauthorizedOperation"))),
    }).port;
    await Promise.all([aws.securityGroups({ ids: ["sg-1"] }), aws.securityGroups({ ids: ["sg-1"] })]);
    await aws.securityGroups({ ids: ["sg-2"] });
    await expect(aws.rulesOf("sg-1")).rejects.toThrow("UnauthorizedOperation");
    await expect(aws.rulesOf("sg-1")).rejects.toThrow("UnauthorizedOperation");
    expect(asked).toEqual(['{"ids":["sg-1"]}', '{"ids":["sg-2"]}', "rules sg-1"]);
  });
});

describe("readAhead", () => {
  const watching = () => {
    const asked: string[] = [];
    const backend = {
      id: "sg-0backend",
      name: "backend",
      description: "",
      tags: { "elbv2.k8s.aws/cluster": "prod-eks", "elbv2.k8s.aws/resource": "backend-sg" },
    };
    const base = account([backend], { "sg-0backend": ["eni-0x"] }, []);
    const aws: AwsPort = {
      ...base,
      securityGroups: (q) => (asked.push(`groups ${JSON.stringify(q.tags)}`), base.securityGroups(q)),
      networkInterfacesUsing: (id) => (asked.push(`enis ${id}`), base.networkInterfacesUsing(id)),
      groupsReferencing: (id) => (asked.push(`refs ${id}`), base.groupsReferencing(id)),
      loadBalancersByName: (names) => (asked.push(`lbs ${names.join(",")}`), base.loadBalancersByName(names)),
      listenersOf: (arn) => (asked.push(`listeners ${arn}`), base.listenersOf(arn)),
    };
    return { asked, aws };
  };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

  it("asks for the cluster's backend group and what holds it when an Ingress's LBC finalizer is named", async () => {
    const { asked, aws } = watching();
    readAhead(
      onceEach(aws),
      { types: new Map(), finalizers: new Map([["ingress.k8s.aws/resources", 1]]) },
      "prod-eks",
    );
    await settle();
    expect(asked).toEqual([
      'groups {"elbv2.k8s.aws/cluster":"prod-eks","elbv2.k8s.aws/resource":"backend-sg"}',
      "enis sg-0backend",
      "refs sg-0backend",
    ]);
  });

  it("asks nothing for finalizers whose collection never reads the backend group", async () => {
    const { asked, aws } = watching();
    const finalizers = new Map([
      ["elbv2.k8s.aws/resources", 2],
      ["kubernetes.io/pvc-protection", 1],
    ]);
    readAhead(onceEach(aws), { types: new Map(), finalizers }, "prod-eks", [
      { method: "loadBalancersByName", args: [["k8s-myapp-a1b2c3"]] },
    ]);
    await settle();
    expect(asked).toEqual([]);
  });

  it("asks again what the last diagnosis read, and the diagnosis's own asks of it get those answers", async () => {
    const { asked, aws } = watching();
    const memo = onceEach(aws);
    const lb = "k8s-myapp-a1b2c3";
    readAhead(
      memo,
      { types: new Map(), finalizers: new Map([["ingress.k8s.aws/resources", 1]]) },
      "prod-eks",
      [
        { method: "loadBalancersByName", args: [[lb]] },
        { method: "listenersOf", args: ["arn:lb"] },
      ],
    );
    await settle();
    expect(asked).toEqual(expect.arrayContaining([`lbs ${lb}`, "listeners arn:lb"]));
    const before = asked.length;
    // The diagnosis asks one of them itself, and one read that was not asked ahead.
    await memo.port.loadBalancersByName([lb]);
    await memo.port.loadBalancersByName(["k8s-other-d4e5f6"]);
    expect(asked.slice(before)).toEqual(["lbs k8s-other-d4e5f6"]);
    // Only what the diagnosis asked itself is its own: a read asked ahead and never used is not.
    expect(memo.asked()).toEqual([
      { method: "loadBalancersByName", args: [[lb]] },
      { method: "loadBalancersByName", args: [["k8s-other-d4e5f6"]] },
    ]);
  });
});

describe("lastAwsReads", () => {
  const lb = (name: string) => ({ method: "loadBalancersByName" as const, args: [[name]] as [string[]] });
  const deletions = { eventName: "DeleteSecurityGroup", start: new Date(0), end: new Date(1_000), max: 200 };
  const history = { resourceName: "eni-0held", start: new Date(0), end: new Date(1_000), max: 50 };

  it("keeps each namespace's reads and its DeleteSecurityGroup lookup, never an interface's history", () => {
    const last = lastAwsReads();
    last.remember("prod-eks/myapp", [
      lb("a"),
      { method: "cloudTrailEvents", args: [deletions] },
      { method: "cloudTrailEvents", args: [history] },
    ]);
    last.remember("stage-eks/myapp", [lb("b")]);
    expect(last.of("prod-eks/myapp")).toEqual([lb("a"), { method: "cloudTrailEvents", args: [deletions] }]);
    expect(last.of("stage-eks/myapp")).toEqual([lb("b")]);
    expect(last.of("prod-eks/other")).toEqual([]);
    last.remember("prod-eks/myapp", [{ method: "cloudTrailEvents", args: [history] }]);
    expect(last.of("prod-eks/myapp")).toEqual([]);
  });

  it("asks a CloudTrail lookup again up to the new diagnosis's moment, from the same start", () => {
    const until = new Date(5_000);
    expect(endingAt([lb("a"), { method: "cloudTrailEvents", args: [deletions] }], until)).toEqual([
      lb("a"),
      { method: "cloudTrailEvents", args: [{ ...deletions, end: until }] },
    ]);
  });
});
