/**
 * A scenario's CloudFront distribution with several origins, a failover origin group as the default
 * target and path-pattern cache behaviours, read back with the real SDK and the real `aws` CLI;
 * UpdateDistribution's origin checks; ELB canonical hosted zone ids and Route 53's alias check.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the CLI prints untyped JSON; the assertions check its shape */
import { execFile } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  CloudFrontClient,
  GetDistributionCommand,
  GetDistributionConfigCommand,
  ListDistributionsCommand,
  UpdateDistributionCommand,
  type DistributionConfig,
} from "@aws-sdk/client-cloudfront";
import { parseAwsScenario, startAwsSim, type AwsSim } from "../../sim/aws/index.js";
import { AwsWorld, NLB_HOSTED_ZONE_IDS, ALB_HOSTED_ZONE_IDS } from "../../sim/aws/world.js";

const SCENARIO = `
aws:
  region: eu-north-1
  loadBalancers:
    - { name: web-primary, arnId: 0a0a0a0a0a0a0a0a, dnsSuffix: "1111111111" }
    - { name: web-standby, arnId: 0b0b0b0b0b0b0b0b, dnsSuffix: "2222222222" }
    - { name: api, arnId: 0c0c0c0c0c0c0c0c, dnsSuffix: "3333333333" }
  distributions:
    - id: E2ORIGINGROUP01
      aliases: [www.example.com]
      origins:
        - { id: primary, loadBalancer: web-primary }
        - { id: standby, loadBalancer: web-standby }
        - { id: api, loadBalancer: api }
      originGroups:
        - { id: web-failover, members: [primary, standby], failoverStatusCodes: [502, 503, 504] }
      defaultOriginId: web-failover
      cacheBehaviors:
        - { pathPattern: "/api/*", targetOriginId: api }
        - { pathPattern: "/static/*", targetOriginId: web-failover }
`;

function cli(sim: AwsSim, args: string[]): Promise<any> {
  const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...sim.env() };
  return new Promise((resolve, reject) => {
    execFile(
      "aws",
      [...args, "--endpoint-url", sim.url, "--region", "us-east-1", "--output", "json"],
      { env },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`aws ${args.join(" ")} failed: ${stderr}`));
        else resolve(JSON.parse(stdout));
      },
    );
  });
}

describe("CloudFront origin groups and cache behaviours in the simulator", () => {
  let sim: AwsSim;
  let cf: CloudFrontClient;

  beforeAll(async () => {
    sim = await startAwsSim({ scenario: parseAwsScenario(parseYaml(SCENARIO)) });
    cf = new CloudFrontClient({
      region: "us-east-1",
      endpoint: sim.url,
      credentials: { accessKeyId: "AKIAUNSTUCKTEST00001", secretAccessKey: "x" },
      maxAttempts: 1,
    });
  });

  afterAll(async () => {
    cf.destroy();
    await sim.stop();
  });

  it("round-trips the origin group and the behaviours through the SDK", async () => {
    const got = await cf.send(new GetDistributionCommand({ Id: "E2ORIGINGROUP01" }));
    const config = got.Distribution?.DistributionConfig;
    expect(config?.Origins?.Items?.map((o) => o.Id)).toEqual(["primary", "standby", "api"]);
    expect(config?.OriginGroups?.Quantity).toBe(1);
    const group = config?.OriginGroups?.Items?.[0];
    expect(group?.Id).toBe("web-failover");
    expect(group?.FailoverCriteria?.StatusCodes?.Items).toEqual([502, 503, 504]);
    expect(group?.Members?.Items?.map((m) => m.OriginId)).toEqual(["primary", "standby"]);
    expect(config?.DefaultCacheBehavior?.TargetOriginId).toBe("web-failover");
    expect(config?.DefaultCacheBehavior?.AllowedMethods?.Items).toEqual(["HEAD", "GET", "OPTIONS"]);
    expect(config?.CacheBehaviors?.Items?.map((b) => [b.PathPattern, b.TargetOriginId])).toEqual([
      ["/api/*", "api"],
      ["/static/*", "web-failover"],
    ]);
    const list = await cf.send(new ListDistributionsCommand({}));
    const summary = list.DistributionList?.Items?.[0];
    expect(summary?.OriginGroups?.Items?.[0]?.Members?.Quantity).toBe(2);
    expect(summary?.CacheBehaviors?.Quantity).toBe(2);
  });

  it("shows the same shapes to the aws CLI", async () => {
    const [dist, cfg] = await Promise.all([
      cli(sim, ["cloudfront", "get-distribution", "--id", "E2ORIGINGROUP01"]),
      cli(sim, ["cloudfront", "get-distribution-config", "--id", "E2ORIGINGROUP01"]),
    ]);
    const group = dist.Distribution.DistributionConfig.OriginGroups.Items[0];
    expect(group.Members.Items).toEqual([{ OriginId: "primary" }, { OriginId: "standby" }]);
    expect(group.FailoverCriteria.StatusCodes).toEqual({ Quantity: 3, Items: [502, 503, 504] });
    expect(
      cfg.DistributionConfig.CacheBehaviors.Items.map((b: any) => [b.PathPattern, b.TargetOriginId]),
    ).toEqual([
      ["/api/*", "api"],
      ["/static/*", "web-failover"],
    ]);
    expect(typeof cfg.ETag).toBe("string");
  });

  it("UpdateDistribution keeps a valid config and refuses unknown targets and odd-sized groups", async () => {
    const cur = await cf.send(new GetDistributionConfigCommand({ Id: "E2ORIGINGROUP01" }));
    const base = cur.DistributionConfig as DistributionConfig;
    const update = (config: DistributionConfig, etag: string | undefined) =>
      cf.send(
        new UpdateDistributionCommand({ Id: "E2ORIGINGROUP01", IfMatch: etag, DistributionConfig: config }),
      );

    const badTarget = structuredClone(base);
    badTarget.CacheBehaviors!.Items![0]!.TargetOriginId = "nowhere";
    await expect(update(badTarget, cur.ETag)).rejects.toMatchObject({ name: "NoSuchOrigin" });

    const oneMember = structuredClone(base);
    oneMember.OriginGroups!.Items![0]!.Members = { Quantity: 1, Items: [{ OriginId: "primary" }] };
    await expect(update(oneMember, cur.ETag)).rejects.toMatchObject({ name: "InvalidArgument" });

    const swapped = structuredClone(base);
    swapped.OriginGroups!.Items![0]!.Members = {
      Quantity: 2,
      Items: [{ OriginId: "standby" }, { OriginId: "primary" }],
    };
    const done = await update(swapped, cur.ETag);
    expect(
      done.Distribution?.DistributionConfig?.OriginGroups?.Items?.[0]?.Members?.Items?.[0]?.OriginId,
    ).toBe("standby");
    const again = await cli(sim, ["cloudfront", "get-distribution-config", "--id", "E2ORIGINGROUP01"]);
    expect(again.DistributionConfig.OriginGroups.Items[0].Members.Items[0].OriginId).toBe("standby");
  });

  it("routes a path to its behaviour's origin, and a group to its members in failover order", () => {
    const world = sim.world;
    const d = world.requireDistribution("E2ORIGINGROUP01");
    expect(world.originsForPath(d.config, "/api/v1/x").map((o) => o.id)).toEqual(["api"]);
    expect(world.originsForPath(d.config, "/static/app.js").map((o) => o.id)).toEqual(["standby", "primary"]);
  });
});

describe("ELB canonical hosted zones and Route 53 alias targets", () => {
  it("gives every region's ALB and NLB their own zone and refuses a region it does not know", () => {
    expect(Object.keys(ALB_HOSTED_ZONE_IDS).sort()).toEqual(Object.keys(NLB_HOSTED_ZONE_IDS).sort());
    const stockholm = new AwsWorld({ region: "eu-north-1" });
    expect(stockholm.createLoadBalancer({ name: "a" }).canonicalHostedZoneId).toBe("Z23TAZ6LKFMNIO");
    expect(stockholm.createLoadBalancer({ name: "n", type: "network" }).canonicalHostedZoneId).toBe(
      "Z1UDT6IFJ4EJM",
    );
    const nowhere = new AwsWorld({ region: "xx-nowhere-9" });
    expect(() => nowhere.createLoadBalancer({ name: "a" })).toThrow(
      /no ALB canonical hosted zone id.*xx-nowhere-9/,
    );
  });

  it("refuses an alias whose hosted zone id is not the load balancer's", () => {
    const world = new AwsWorld({ region: "eu-north-1" });
    const alb = world.createLoadBalancer({ name: "web" });
    const zone = world.createHostedZone({ name: "example.com" });
    const alias = (hostedZoneId: string) => ({
      action: "CREATE",
      record: {
        name: "www.example.com",
        type: "A",
        aliasTarget: { hostedZoneId, dnsName: `dualstack.${alb.dnsName}`, evaluateTargetHealth: true },
      },
    });
    expect(() => world.changeRecords(zone.id, [alias(NLB_HOSTED_ZONE_IDS["eu-north-1"] ?? "")])).toThrow(
      `Tried to create an alias that targets dualstack.${alb.dnsName}., type A in zone Z1UDT6IFJ4EJM, but the alias target name does not lie within the target zone`,
    );
    expect(() => world.changeRecords(zone.id, [alias(ALB_HOSTED_ZONE_IDS["us-east-1"] ?? "")])).toThrow(
      /does not lie within the target zone/,
    );
    world.changeRecords(zone.id, [alias(alb.canonicalHostedZoneId)]);
    expect(world.sortedRecords(zone.id).some((r) => r.name === "www.example.com." && r.type === "A")).toBe(
      true,
    );
  });
});
