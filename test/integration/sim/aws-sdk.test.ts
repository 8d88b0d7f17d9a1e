import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LookupEventsCommand } from "@aws-sdk/client-cloudtrail";
import {
  DeleteNetworkInterfaceCommand,
  DeleteSecurityGroupCommand,
  DescribeNetworkInterfacesCommand,
  DescribeSecurityGroupRulesCommand,
  DescribeSecurityGroupsCommand,
  RevokeSecurityGroupIngressCommand,
  paginateDescribeSecurityGroups,
} from "@aws-sdk/client-ec2";
import {
  DeleteTargetGroupCommand,
  DescribeListenersCommand,
  DescribeLoadBalancersCommand,
  DescribeTagsCommand,
  DescribeTargetGroupsCommand,
  DescribeTargetHealthCommand,
  paginateDescribeLoadBalancers,
} from "@aws-sdk/client-elastic-load-balancing-v2";
import {
  ChangeResourceRecordSetsCommand,
  GetChangeCommand,
  ListResourceRecordSetsCommand,
  type ResourceRecordSet,
} from "@aws-sdk/client-route-53";
import {
  GetDistributionCommand,
  GetDistributionConfigCommand,
  ListDistributionsCommand,
  UpdateDistributionCommand,
} from "@aws-sdk/client-cloudfront";
import { createAwsClients, destroyAwsClients, type AwsClients } from "../../../src/aws/clients.js";
import { readAwsScenario, startAwsSim, type AwsSim } from "../../sim/aws/index.js";

const scenarioPath = (name: string): string =>
  fileURLToPath(new URL(`../../fixtures/scenarios/${name}`, import.meta.url));
const LBC_KEY = "ASIAQLBCCONTROLLER01";
const BACKEND_SG = "sg-0f1e2d3c4b5a69788";
const NODE_SG = "sg-0a3c5e7f9b1d2f406";

async function errorOf(p: Promise<unknown>): Promise<Error & { $metadata?: { httpStatusCode?: number } }> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected the call to fail");
}

describe("AWS simulator through SDK v3 clients (createAwsClients)", () => {
  let sim: AwsSim;
  let aws: AwsClients;
  let nowMs: number;

  const clients = (accessKeyId = "AKIAUNSTUCKTEST00001", maxAttempts?: number): AwsClients =>
    createAwsClients({
      region: sim.world.region,
      endpoint: sim.url,
      credentials: { accessKeyId, secretAccessKey: "not-checked" },
      ...(maxAttempts !== undefined ? { maxAttempts } : {}),
    });

  async function start(file: string): Promise<void> {
    nowMs = Date.parse("2026-02-12T09:30:00Z");
    sim = await startAwsSim({
      scenario: readAwsScenario(scenarioPath(file)),
      now: () => new Date(nowMs),
      cloudFrontDeployMs: 5 * 60_000,
      route53SyncMs: 60_000,
    });
    aws = clients();
  }

  afterEach(async () => {
    destroyAwsClients(aws);
    await sim.stop();
  });

  describe("variant A (ENI left in use)", () => {
    beforeEach(() => start("aws-seed-incident.yaml"));

    it("paginates DescribeLoadBalancers with PageSize and Marker", async () => {
      const names: string[] = [];
      for await (const page of paginateDescribeLoadBalancers(
        { client: aws.elbv2, pageSize: 4 },
        { PageSize: 4 },
      )) {
        expect(page.LoadBalancers?.length ?? 0).toBeLessThanOrEqual(4);
        names.push(...(page.LoadBalancers ?? []).map((lb) => lb.LoadBalancerName ?? ""));
      }
      const expected = [...sim.world.loadBalancers.values()].map((lb) => lb.name);
      expect(names).toEqual(expected);
      const pages = sim.calls().filter((c) => c.action === "DescribeLoadBalancers").length;
      expect(pages).toBe(Math.ceil(expected.length / 4));

      const [first] = [...sim.world.loadBalancers.values()];
      const one = await aws.elbv2.send(new DescribeLoadBalancersCommand({ Names: [first!.name] }));
      expect(one.LoadBalancers?.[0]).toMatchObject({
        DNSName: first!.dnsName,
        CanonicalHostedZoneId: "ZWKZPGTI48KDX",
        State: { Code: "active" },
        SecurityGroups: first!.securityGroups,
      });
      expect(one.LoadBalancers?.[0]?.CreatedTime).toBeInstanceOf(Date);

      const tooBig = await errorOf(aws.elbv2.send(new DescribeLoadBalancersCommand({ PageSize: 401 })));
      expect(tooBig.name).toBe("ValidationError");
      const missing = await errorOf(
        aws.elbv2.send(new DescribeLoadBalancersCommand({ Names: ["k8s-myapp-gone-0000000000"] })),
      );
      expect(missing.name).toBe("LoadBalancerNotFoundException");
    });

    it("limits DescribeTags to 20 ARNs and returns the controller's tags", async () => {
      const arns = [...sim.world.loadBalancers.keys(), ...sim.world.targetGroups.keys()];
      const tags = await aws.elbv2.send(new DescribeTagsCommand({ ResourceArns: arns }));
      expect(tags.TagDescriptions?.map((t) => t.ResourceArn)).toEqual(arns);
      for (const d of tags.TagDescriptions ?? []) {
        expect(d.Tags).toContainEqual({ Key: "elbv2.k8s.aws/cluster", Value: "prod-eks" });
      }
      const many = Array.from({ length: 21 }, (_, i) => arns[i % arns.length]!);
      const err = await errorOf(aws.elbv2.send(new DescribeTagsCommand({ ResourceArns: many })));
      expect(err.name).toBe("ValidationError");
      expect(err.message).toMatch(/less than or equal to 20/);
    });

    it("links listeners, target groups and health, and refuses to delete a target group in use", async () => {
      const lb = [...sim.world.loadBalancers.values()].find(
        (l) => l.name === "k8s-myapp-myappwor-0733a56cbb",
      )!;
      const listeners = await aws.elbv2.send(new DescribeListenersCommand({ LoadBalancerArn: lb.arn }));
      const tgArn = listeners.Listeners?.[0]?.DefaultActions?.[0]?.TargetGroupArn;
      expect(tgArn).toBeDefined();
      const tgs = await aws.elbv2.send(new DescribeTargetGroupsCommand({ LoadBalancerArn: lb.arn }));
      expect(tgs.TargetGroups?.map((t) => t.TargetGroupArn)).toEqual([tgArn]);
      expect(tgs.TargetGroups?.[0]?.LoadBalancerArns).toEqual([lb.arn]);
      const health = await aws.elbv2.send(new DescribeTargetHealthCommand({ TargetGroupArn: tgArn }));
      expect(health.TargetHealthDescriptions?.[0]?.TargetHealth?.State).toBe("healthy");
      const inUse = await errorOf(aws.elbv2.send(new DeleteTargetGroupCommand({ TargetGroupArn: tgArn })));
      expect(inUse.name).toBe("ResourceInUseException");
      expect(sim.world.targetGroups.has(tgArn!)).toBe(true);
    });

    it("blocks DeleteSecurityGroup on an attached ELB ENI until it is detached and deleted", async () => {
      const lbc = clients(LBC_KEY);
      try {
        const enis = await aws.ec2.send(
          new DescribeNetworkInterfacesCommand({ Filters: [{ Name: "group-id", Values: [BACKEND_SG] }] }),
        );
        expect(enis.NetworkInterfaces).toHaveLength(1);
        const eni = enis.NetworkInterfaces![0]!;
        expect(eni).toMatchObject({ Status: "in-use", RequesterId: "amazon-elb", RequesterManaged: true });
        expect(eni.Description).toMatch(/^ELB app\/k8s-myapp-myappwor-0733a56cbb\//);
        expect(eni.Attachment?.Status).toBe("attached");

        const byDescription = await aws.ec2.send(
          new DescribeNetworkInterfacesCommand({
            Filters: [
              { Name: "description", Values: ["ELB app/k8s-myapp-*"] },
              { Name: "requester-id", Values: ["amazon-elb"] },
            ],
          }),
        );
        // The six live ALBs own two ENIs each, plus the leftover one.
        expect(byDescription.NetworkInterfaces?.length).toBe(sim.world.loadBalancers.size * 2 + 1);

        const blocked = await errorOf(lbc.ec2.send(new DeleteSecurityGroupCommand({ GroupId: BACKEND_SG })));
        expect(blocked.name).toBe("DependencyViolation");
        expect(blocked.message).toBe(`resource ${BACKEND_SG} has a dependent object`);

        const inUse = await errorOf(
          aws.ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: eni.NetworkInterfaceId })),
        );
        expect(inUse.name).toBe("InvalidParameterValue"); // what EC2 answers for an attached interface
        sim.world.detachNetworkInterface(eni.NetworkInterfaceId!);
        await aws.ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: eni.NetworkInterfaceId }));
        const gone = await errorOf(
          aws.ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: eni.NetworkInterfaceId })),
        );
        expect(gone.name).toBe("InvalidNetworkInterfaceID.NotFound");

        await lbc.ec2.send(new DeleteSecurityGroupCommand({ GroupId: BACKEND_SG }));
        expect(sim.world.securityGroups.has(BACKEND_SG)).toBe(false);
        const missing = await errorOf(aws.ec2.send(new DeleteSecurityGroupCommand({ GroupId: BACKEND_SG })));
        expect(missing.name).toBe("InvalidGroup.NotFound");

        // CloudTrail shows the controller's failed and successful attempts, newest first, as its role.
        const trail = await aws.cloudtrail.send(
          new LookupEventsCommand({
            LookupAttributes: [{ AttributeKey: "ResourceName", AttributeValue: BACKEND_SG }],
            StartTime: new Date(nowMs - 60_000),
          }),
        );
        const mine = (trail.Events ?? []).filter((e) => e.AccessKeyId === LBC_KEY);
        expect(mine.map((e) => e.EventName)).toEqual(["DeleteSecurityGroup", "DeleteSecurityGroup"]);
        const [ok, failed] = mine.map((e) => JSON.parse(e.CloudTrailEvent ?? "{}"));
        expect(ok.errorCode).toBeUndefined();
        expect(failed).toMatchObject({
          errorCode: "Client.DependencyViolation",
          errorMessage: `resource ${BACKEND_SG} has a dependent object`,
          eventSource: "ec2.amazonaws.com",
          eventType: "AwsApiCall",
          requestParameters: { groupId: BACKEND_SG },
          userIdentity: {
            type: "AssumedRole",
            arn: expect.stringMatching(/assumed-role\/prod-eks-aws-load-balancer-controller\//),
          },
        });
      } finally {
        destroyAwsClients(lbc);
      }
    });

    it("pages CloudTrail history newest first with NextToken and enforces MaxResults ≤ 50", async () => {
      const seen: { time: number; name: string }[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const page = await aws.cloudtrail.send(
          new LookupEventsCommand({
            LookupAttributes: [{ AttributeKey: "EventSource", AttributeValue: "ec2.amazonaws.com" }],
            MaxResults: 20,
            NextToken: token,
          }),
        );
        pages++;
        seen.push(...(page.Events ?? []).map((e) => ({ time: e.EventTime!.getTime(), name: e.EventName! })));
        token = page.NextToken;
      } while (token !== undefined);
      const ec2Events = sim.world.trail.filter((e) => e.eventSource === "ec2.amazonaws.com");
      expect(seen).toHaveLength(ec2Events.length);
      expect(pages).toBe(Math.ceil(ec2Events.length / 20));
      expect(seen.map((s) => s.time)).toEqual([...seen.map((s) => s.time)].sort((a, b) => b - a));

      const window = await aws.cloudtrail.send(
        new LookupEventsCommand({
          LookupAttributes: [{ AttributeKey: "EventName", AttributeValue: "DeleteLoadBalancer" }],
          StartTime: new Date("2026-02-12T08:39:00Z"),
          EndTime: new Date("2026-02-12T08:40:00Z"),
        }),
      );
      expect(window.Events?.length).toBe(
        sim.world.trail.filter((e) => e.eventName === "DeleteLoadBalancer").length,
      );

      const tooMany = await errorOf(aws.cloudtrail.send(new LookupEventsCommand({ MaxResults: 51 })));
      expect(tooMany.name).toBe("InvalidMaxResultsException");
      const twoAttrs = await errorOf(
        aws.cloudtrail.send(
          new LookupEventsCommand({
            LookupAttributes: [
              { AttributeKey: "EventName", AttributeValue: "DeleteSecurityGroup" },
              { AttributeKey: "ReadOnly", AttributeValue: "false" },
            ],
          }),
        ),
      );
      expect(twoAttrs.name).toBe("InvalidLookupAttributesException");
    });

    it("guards UpdateDistribution with If-Match and deploys after the configured delay", async () => {
      const id = [...sim.world.distributions.keys()][0]!;
      const got = await aws.cloudfront.send(new GetDistributionConfigCommand({ Id: id }));
      expect(got.ETag).toBe(sim.world.distributions.get(id)!.etag);
      const config = got.DistributionConfig!;
      const newOrigin = [...sim.world.loadBalancers.values()].find(
        (l) => l.name === "k8s-myapp-myappwor-0733a56cbb",
      )!.dnsName;
      config.Origins!.Items![0]!.DomainName = newOrigin;

      const missing = await errorOf(
        aws.cloudfront.send(new UpdateDistributionCommand({ Id: id, DistributionConfig: config })),
      );
      expect(missing.name).toBe("InvalidIfMatchVersion");

      const updated = await aws.cloudfront.send(
        new UpdateDistributionCommand({ Id: id, DistributionConfig: config, IfMatch: got.ETag }),
      );
      expect(updated.ETag).not.toBe(got.ETag);
      expect(updated.Distribution?.Status).toBe("InProgress");
      expect(updated.Distribution?.DistributionConfig?.Origins?.Items?.[0]?.DomainName).toBe(newOrigin);
      // Everything else in the config round-trips unchanged.
      expect(updated.Distribution?.DistributionConfig).toEqual(config);

      const stale = await errorOf(
        aws.cloudfront.send(
          new UpdateDistributionCommand({ Id: id, DistributionConfig: config, IfMatch: got.ETag }),
        ),
      );
      expect(stale.name).toBe("PreconditionFailed");
      expect(stale.$metadata?.httpStatusCode).toBe(412);

      nowMs += 5 * 60_000;
      const after = await aws.cloudfront.send(new GetDistributionCommand({ Id: id }));
      expect(after.Distribution?.Status).toBe("Deployed");
      expect(after.ETag).toBe(updated.ETag);
      // The list's summary carries the same ETag: a repoint can be planned from a list alone.
      const listed = await aws.cloudfront.send(new ListDistributionsCommand({}));
      expect(listed.DistributionList?.Items?.find((d) => d.Id === id)?.ETag).toBe(updated.ETag);
    });
  });

  describe("variant B (node SG rule references the backend SG)", () => {
    beforeEach(() => start("aws-seed-incident-rule.yaml"));

    it("finds the referencing rule and unblocks deletion by revoking it by rule id", async () => {
      const referencing = await aws.ec2.send(
        new DescribeSecurityGroupsCommand({
          Filters: [{ Name: "ip-permission.group-id", Values: [BACKEND_SG] }],
        }),
      );
      expect(referencing.SecurityGroups?.map((g) => g.GroupId)).toEqual([NODE_SG]);
      const pair = referencing.SecurityGroups?.[0]?.IpPermissions?.flatMap(
        (p) => p.UserIdGroupPairs ?? [],
      ).find((p) => p.GroupId === BACKEND_SG);
      expect(pair?.Description).toBe("elbv2.k8s.aws/targetGroupBinding=shared");

      const rules = await aws.ec2.send(
        new DescribeSecurityGroupRulesCommand({ Filters: [{ Name: "group-id", Values: [NODE_SG] }] }),
      );
      const rule = rules.SecurityGroupRules?.find((r) => r.ReferencedGroupInfo?.GroupId === BACKEND_SG);
      expect(rule).toMatchObject({ IsEgress: false, IpProtocol: "tcp", FromPort: 8080, ToPort: 8080 });
      expect(rule?.SecurityGroupRuleId).toMatch(/^sgr-[0-9a-f]{17}$/);

      const none = await aws.ec2.send(
        new DescribeNetworkInterfacesCommand({ Filters: [{ Name: "group-id", Values: [BACKEND_SG] }] }),
      );
      expect(none.NetworkInterfaces).toEqual([]);

      const blocked = await errorOf(aws.ec2.send(new DeleteSecurityGroupCommand({ GroupId: BACKEND_SG })));
      expect(blocked.name).toBe("DependencyViolation");

      await aws.ec2.send(
        new RevokeSecurityGroupIngressCommand({
          GroupId: NODE_SG,
          SecurityGroupRuleIds: [rule!.SecurityGroupRuleId!],
        }),
      );
      await aws.ec2.send(new DeleteSecurityGroupCommand({ GroupId: BACKEND_SG }));
      expect(sim.world.securityGroups.has(BACKEND_SG)).toBe(false);
    });

    it("paginates DescribeSecurityGroups with MaxResults and filters by tag and wildcard name", async () => {
      const ids: string[] = [];
      for await (const page of paginateDescribeSecurityGroups(
        { client: aws.ec2, pageSize: 5 },
        { MaxResults: 5 },
      )) {
        ids.push(...(page.SecurityGroups ?? []).map((g) => g.GroupId!));
      }
      expect(ids).toEqual([...sim.world.securityGroups.keys()]);
      const traffic = await aws.ec2.send(
        new DescribeSecurityGroupsCommand({
          Filters: [
            { Name: "group-name", Values: ["k8s-traffic-*"] },
            { Name: "tag:elbv2.k8s.aws/cluster", Values: ["prod-eks"] },
          ],
        }),
      );
      expect(traffic.SecurityGroups?.map((g) => g.GroupId)).toEqual([BACKEND_SG]);
      const bad = await errorOf(
        aws.ec2.send(
          new DescribeSecurityGroupsCommand({ Filters: [{ Name: "no-such-filter", Values: ["x"] }] }),
        ),
      );
      expect(bad.name).toBe("InvalidParameterValue");
    });
  });

  describe("Route 53", () => {
    beforeEach(() => start("aws-seed-incident.yaml"));

    it("applies change batches all-or-nothing and reports PENDING then INSYNC", async () => {
      const zoneId = [...sim.world.hostedZones.keys()][0]!;
      const list = await aws.route53.send(
        new ListResourceRecordSetsCommand({
          HostedZoneId: zoneId,
          StartRecordName: "worker.example.com",
          StartRecordType: "A",
          MaxItems: 1,
        }),
      );
      const current = list.ResourceRecordSets![0]!;
      expect(current.Name).toBe("worker.example.com.");
      expect(current.AliasTarget?.HostedZoneId).toBe("ZWKZPGTI48KDX");

      const target: ResourceRecordSet = {
        Name: "worker.example.com.",
        Type: "A",
        AliasTarget: {
          HostedZoneId: "ZWKZPGTI48KDX",
          DNSName: "dualstack.k8s-new-1.ap-northeast-2.elb.amazonaws.com.",
          EvaluateTargetHealth: true,
        },
      };
      const wrongDelete: ResourceRecordSet = {
        ...current,
        AliasTarget: { ...current.AliasTarget!, EvaluateTargetHealth: false },
      };
      const rejected = await errorOf(
        aws.route53.send(
          new ChangeResourceRecordSetsCommand({
            HostedZoneId: zoneId,
            ChangeBatch: {
              Changes: [
                { Action: "DELETE", ResourceRecordSet: wrongDelete },
                { Action: "CREATE", ResourceRecordSet: target },
              ],
            },
          }),
        ),
      );
      expect(rejected.name).toBe("InvalidChangeBatch");
      expect(rejected.message).toContain(
        "Tried to delete resource record set [name='worker.example.com.', type='A'] but the values provided do not match the current values",
      );
      const unchanged = sim.world.hostedZones
        .get(zoneId)!
        .records.find((r) => r.name === "worker.example.com.");
      expect(unchanged?.aliasTarget?.dnsName).toBe(current.AliasTarget?.DNSName);

      const dup = await errorOf(
        aws.route53.send(
          new ChangeResourceRecordSetsCommand({
            HostedZoneId: zoneId,
            ChangeBatch: { Changes: [{ Action: "CREATE", ResourceRecordSet: current }] },
          }),
        ),
      );
      expect(dup.message).toContain("but it already exists");

      const ok = await aws.route53.send(
        new ChangeResourceRecordSetsCommand({
          HostedZoneId: zoneId,
          ChangeBatch: {
            Changes: [
              { Action: "DELETE", ResourceRecordSet: current },
              { Action: "CREATE", ResourceRecordSet: target },
            ],
          },
        }),
      );
      expect(ok.ChangeInfo?.Status).toBe("PENDING");
      expect(ok.ChangeInfo?.Id).toMatch(/^\/change\/C/);
      const pending = await aws.route53.send(new GetChangeCommand({ Id: ok.ChangeInfo!.Id }));
      expect(pending.ChangeInfo?.Status).toBe("PENDING");
      nowMs += 60_000;
      const synced = await aws.route53.send(new GetChangeCommand({ Id: ok.ChangeInfo!.Id }));
      expect(synced.ChangeInfo?.Status).toBe("INSYNC");
      const now = sim.world.hostedZones.get(zoneId)!.records.find((r) => r.name === "worker.example.com.");
      expect(now?.aliasTarget?.dnsName).toBe(target.AliasTarget?.DNSName);
    });

    it("pages ListResourceRecordSets by NextRecordName/Type", async () => {
      const zoneId = [...sim.world.hostedZones.keys()][0]!;
      const names: string[] = [];
      let start: {
        StartRecordName?: string;
        StartRecordType?: ListResourceRecordSetsCommand["input"]["StartRecordType"];
      } = {};
      for (;;) {
        const page = await aws.route53.send(
          new ListResourceRecordSetsCommand({ HostedZoneId: zoneId, MaxItems: 3, ...start }),
        );
        expect(page.ResourceRecordSets!.length).toBeLessThanOrEqual(3);
        names.push(...page.ResourceRecordSets!.map((r) => `${r.Name} ${r.Type}`));
        if (page.IsTruncated !== true) break;
        start = { StartRecordName: page.NextRecordName, StartRecordType: page.NextRecordType };
      }
      expect(names).toEqual(sim.world.sortedRecords(zoneId).map((r) => `${r.name} ${r.type}`));
      expect(new Set(names).size).toBe(names.length);
    });
  });

  describe("faults", () => {
    beforeEach(() => start("aws-seed-incident.yaml"));

    it("surfaces throttling as err.name Throttling when retries are exhausted, and recovers with retries", async () => {
      const once = clients("AKIAUNSTUCKTEST00001", 1);
      try {
        sim.setFaults({ throttle: { service: "elbv2", count: 1 } });
        const err = await errorOf(once.elbv2.send(new DescribeLoadBalancersCommand({})));
        expect(err.name).toBe("Throttling");
        // The fault was spent: the next call goes through.
        const ok = await once.elbv2.send(new DescribeLoadBalancersCommand({}));
        expect(ok.LoadBalancers?.length).toBe(sim.world.loadBalancers.size);

        sim.setFaults({ throttle: { service: "elbv2", count: 2 } });
        sim.resetCalls();
        const retried = await aws.elbv2.send(new DescribeLoadBalancersCommand({}));
        expect(retried.LoadBalancers?.length).toBe(sim.world.loadBalancers.size);
        expect(sim.calls().map((c) => c.status)).toEqual([400, 400, 200]);

        sim.setFaults({ throttle: { service: "ec2", count: 1 } });
        const ec2Err = await errorOf(once.ec2.send(new DescribeSecurityGroupsCommand({})));
        expect(ec2Err.name).toBe("RequestLimitExceeded");
      } finally {
        destroyAwsClients(once);
      }
    });

    it("injects 5xx faults and latency at run time, and clears them", async () => {
      const once = clients("AKIAUNSTUCKTEST00001", 1);
      try {
        sim.setFaults({ errorRate: 1 });
        const ec2Err = await errorOf(once.ec2.send(new DescribeSecurityGroupsCommand({})));
        expect(ec2Err.name).toBe("InternalError");
        expect(ec2Err.$metadata?.httpStatusCode).toBe(500);
        const cfErr = await errorOf(
          once.cloudfront.send(new GetDistributionCommand({ Id: [...sim.world.distributions.keys()][0] })),
        );
        expect(cfErr.$metadata?.httpStatusCode).toBe(503);

        sim.setFaults({ latencyMs: 150 });
        const started = performance.now();
        await once.ec2.send(new DescribeSecurityGroupsCommand({}));
        expect(performance.now() - started).toBeGreaterThanOrEqual(140);

        sim.setFaults({});
        await once.ec2.send(new DescribeSecurityGroupsCommand({}));
        expect(sim.calls().at(-1)).toEqual({ service: "ec2", action: "DescribeSecurityGroups", status: 200 });
      } finally {
        destroyAwsClients(once);
      }
    });

    it("enforces ELB's 40-request burst bucket", async () => {
      const once = clients("AKIAUNSTUCKTEST00001", 1);
      try {
        sim.setFaults({ elbThrottleBucket: true });
        const results = await Promise.allSettled(
          Array.from({ length: 60 }, () => once.elbv2.send(new DescribeTargetGroupsCommand({}))),
        );
        const throttled = results.filter(
          (r) => r.status === "rejected" && (r.reason as Error).name === "Throttling",
        ).length;
        const ok = results.filter((r) => r.status === "fulfilled").length;
        expect(ok + throttled).toBe(60);
        // 40 burst plus whatever refilled (10/s) while the batch ran.
        expect(ok).toBeGreaterThanOrEqual(40);
        expect(throttled).toBeGreaterThan(0);
        const counted = sim
          .calls()
          .filter((c) => c.service === "elbv2" && c.errorCode === "Throttling").length;
        expect(counted).toBe(throttled);
      } finally {
        destroyAwsClients(once);
      }
    });
  });
});
