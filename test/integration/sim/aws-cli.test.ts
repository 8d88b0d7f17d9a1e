/**
 * The real `aws` CLI (botocore) as the judge of the simulator's wire format. Each invocation costs
 * about a second, so independent commands run concurrently.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the CLI prints untyped JSON; the assertions check its shape */
import { execFile } from "node:child_process";
import { writeFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAwsScenario, startAwsSim, type AwsSim } from "../../sim/aws/index.js";

const scenarioPath = (name: string): string =>
  fileURLToPath(new URL(`../../fixtures/scenarios/${name}`, import.meta.url));
const BACKEND_SG = "sg-0f1e2d3c4b5a69788";
const NODE_SG = "sg-0a3c5e7f9b1d2f406";

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(sim: AwsSim, args: string[], accessKeyId?: string): Promise<CliResult> {
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    ...sim.env(),
    ...(accessKeyId ? { AWS_ACCESS_KEY_ID: accessKeyId } : {}),
  };
  return new Promise((resolve) => {
    execFile(
      "aws",
      [...args, "--endpoint-url", sim.url, "--region", sim.world.region, "--output", "json"],
      { env },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

async function json(sim: AwsSim, args: string[], accessKeyId?: string): Promise<any> {
  const r = await cli(sim, args, accessKeyId);
  if (r.code !== 0) throw new Error(`aws ${args.join(" ")} failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

describe("AWS simulator judged by the real aws CLI", () => {
  let simA: AwsSim;
  let simB: AwsSim;
  let dir: string;

  beforeAll(async () => {
    [simA, simB] = await Promise.all([
      startAwsSim({ scenario: readAwsScenario(scenarioPath("aws-seed-incident.yaml")) }),
      startAwsSim({ scenario: readAwsScenario(scenarioPath("aws-seed-incident-rule.yaml")) }),
    ]);
    dir = await mkdtemp(join(tmpdir(), "aws-sim-cli-"));
  });

  afterAll(async () => {
    await Promise.all([simA.stop(), simB.stop(), rm(dir, { recursive: true, force: true })]);
  });

  it("describes load balancers, security groups and ENIs as botocore parses them", async () => {
    const [lbs, sgs, enis, referencing] = await Promise.all([
      json(simA, ["elbv2", "describe-load-balancers", "--page-size", "4"]),
      json(simA, [
        "ec2",
        "describe-security-groups",
        "--filters",
        "Name=group-name,Values=k8s-traffic-*",
        "Name=tag:elbv2.k8s.aws/resource,Values=backend-sg",
      ]),
      json(simA, ["ec2", "describe-network-interfaces", "--filters", `Name=group-id,Values=${BACKEND_SG}`]),
      json(simB, [
        "ec2",
        "describe-security-groups",
        "--filters",
        `Name=ip-permission.group-id,Values=${BACKEND_SG}`,
      ]),
    ]);
    // --page-size is ELB's own PageSize parameter, so the CLI shows one page and its NextMarker.
    expect(lbs.LoadBalancers).toHaveLength(4);
    const rest = await json(simA, ["elbv2", "describe-load-balancers", "--marker", lbs.NextMarker]);
    expect(rest.NextMarker).toBeUndefined();
    const all = [...lbs.LoadBalancers, ...rest.LoadBalancers];
    expect(all.map((l: any) => l.DNSName)).toEqual(
      [...simA.world.loadBalancers.values()].map((l) => l.dnsName),
    );
    for (const l of all) {
      expect(l.DNSName).toMatch(/^k8s-myapp-[a-z]+-[0-9a-f]{10}-\d+\.ap-northeast-2\.elb\.amazonaws\.com$/);
      expect(l.CanonicalHostedZoneId).toBe("ZWKZPGTI48KDX");
      expect(l.State.Code).toBe("active");
    }
    expect(sgs.SecurityGroups.map((g: any) => g.GroupId)).toEqual([BACKEND_SG]);
    expect(sgs.SecurityGroups[0].Description).toBe("[k8s] Shared Backend SecurityGroup for LoadBalancer");
    expect(enis.NetworkInterfaces).toHaveLength(1);
    expect(enis.NetworkInterfaces[0]).toMatchObject({
      Status: "in-use",
      RequesterId: "amazon-elb",
      RequesterManaged: true,
      Groups: [{ GroupId: BACKEND_SG }],
      Attachment: { Status: "attached" },
    });
    expect(enis.NetworkInterfaces[0].Description).toMatch(
      /^ELB app\/k8s-myapp-myappwor-0733a56cbb\/[0-9a-f]{16}$/,
    );
    expect(referencing.SecurityGroups.map((g: any) => g.GroupId)).toEqual([NODE_SG]);
    const pairs = referencing.SecurityGroups[0].IpPermissions.flatMap((p: any) => p.UserIdGroupPairs);
    expect(pairs).toContainEqual(
      expect.objectContaining({
        GroupId: BACKEND_SG,
        Description: "elbv2.k8s.aws/targetGroupBinding=shared",
      }),
    );
  });

  it("prints DependencyViolation for delete-security-group, and CloudTrail records it for the caller", async () => {
    const lbcKey = "ASIAQLBCCONTROLLER01";
    const del = await cli(simA, ["ec2", "delete-security-group", "--group-id", BACKEND_SG], lbcKey);
    expect(del.code).not.toBe(0);
    expect(del.stderr).toContain(
      `An error occurred (DependencyViolation) when calling the DeleteSecurityGroup operation: resource ${BACKEND_SG} has a dependent object`,
    );
    expect(simA.world.securityGroups.has(BACKEND_SG)).toBe(true);

    const [latest, page] = await Promise.all([
      json(simA, [
        "cloudtrail",
        "lookup-events",
        "--lookup-attributes",
        "AttributeKey=EventName,AttributeValue=DeleteSecurityGroup",
        "--max-items",
        "1",
      ]),
      json(simA, [
        "cloudtrail",
        "lookup-events",
        "--lookup-attributes",
        `AttributeKey=ResourceName,AttributeValue=${BACKEND_SG}`,
        "--max-items",
        "60",
        "--page-size",
        "20",
      ]),
    ]);
    const event = latest.Events[0];
    expect(latest.NextToken).toBeDefined();
    expect(event).toMatchObject({
      EventName: "DeleteSecurityGroup",
      EventSource: "ec2.amazonaws.com",
      ReadOnly: "false",
      AccessKeyId: lbcKey,
    });
    const detail = JSON.parse(event.CloudTrailEvent);
    expect(detail).toMatchObject({
      errorCode: "Client.DependencyViolation",
      errorMessage: `resource ${BACKEND_SG} has a dependent object`,
      requestParameters: { groupId: BACKEND_SG },
      userIdentity: {
        type: "AssumedRole",
        arn: expect.stringContaining("assumed-role/prod-eks-aws-load-balancer-controller/"),
      },
      userAgent: expect.stringMatching(/^aws-cli\//),
    });
    // The controller's 2-minute retry loop from the scenario plus this call, over several pages of 20.
    const recorded = simA.world.trail.filter((e) => e.resources.some((r) => r.ResourceName === BACKEND_SG));
    expect(recorded.length).toBeGreaterThan(40);
    expect(page.Events).toHaveLength(Math.min(60, recorded.length));
    expect(new Set(page.Events.map((e: any) => e.EventId)).size).toBe(page.Events.length);
    expect(simA.calls().filter((c) => c.action === "LookupEvents").length).toBeGreaterThanOrEqual(
      1 + Math.ceil(recorded.length / 20),
    );
  });

  it("paginates list-resource-record-sets with --max-items/--page-size and --starting-token", async () => {
    const zoneId = [...simA.world.hostedZones.keys()][0]!;
    const all = simA.world.sortedRecords(zoneId);
    const first = await json(simA, [
      "route53",
      "list-resource-record-sets",
      "--hosted-zone-id",
      zoneId,
      "--max-items",
      "3",
      "--page-size",
      "2",
    ]);
    expect(first.ResourceRecordSets).toHaveLength(3);
    expect(first.NextToken).toBeDefined();
    const rest = await json(simA, [
      "route53",
      "list-resource-record-sets",
      "--hosted-zone-id",
      zoneId,
      "--page-size",
      "2",
      "--starting-token",
      first.NextToken,
    ]);
    const names = [...first.ResourceRecordSets, ...rest.ResourceRecordSets].map(
      (r: any) => `${r.Name} ${r.Type}`,
    );
    expect(names).toEqual(all.map((r) => `${r.name} ${r.type}`));
    const test = [...first.ResourceRecordSets, ...rest.ResourceRecordSets].find(
      (r: any) => r.Name === "test.example.com.",
    );
    expect(test.AliasTarget).toEqual({
      HostedZoneId: "Z2FDTNDATAQYW2",
      DNSName: expect.stringMatching(/\.cloudfront\.net\.$/),
      EvaluateTargetHealth: false,
    });
  });

  it("round-trips get-distribution-config into update-distribution --if-match, and rejects a stale ETag", async () => {
    const id = [...simA.world.distributions.keys()][0]!;
    const got = await json(simA, ["cloudfront", "get-distribution-config", "--id", id]);
    expect(got.ETag).toBe(simA.world.distributions.get(id)!.etag);
    expect(got.DistributionConfig.Origins.Items[0].DomainName).toMatch(/^k8s-myapp-myappwor-0733a56cbb-/);
    const newOrigin = [...simA.world.loadBalancers.values()].find(
      (l) => l.name === "k8s-myapp-myappwor-0733a56cbb",
    )!.dnsName;
    got.DistributionConfig.Origins.Items[0].DomainName = newOrigin;
    const file = join(dir, "config.json");
    await writeFile(file, JSON.stringify(got.DistributionConfig));

    const updated = await json(simA, [
      "cloudfront",
      "update-distribution",
      "--id",
      id,
      "--if-match",
      got.ETag,
      "--distribution-config",
      `file://${file}`,
    ]);
    expect(updated.ETag).not.toBe(got.ETag);
    expect(updated.Distribution.DistributionConfig).toEqual(got.DistributionConfig);
    expect(simA.world.distributionOrigins(simA.world.distributions.get(id)!)[0]?.domainName).toBe(newOrigin);

    const [stale, list] = await Promise.all([
      cli(simA, [
        "cloudfront",
        "update-distribution",
        "--id",
        id,
        "--if-match",
        got.ETag,
        "--distribution-config",
        `file://${file}`,
      ]),
      json(simA, ["cloudfront", "list-distributions"]),
    ]);
    expect(stale.code).not.toBe(0);
    expect(stale.stderr).toContain(
      "An error occurred (PreconditionFailed) when calling the UpdateDistribution operation",
    );
    expect(list.DistributionList.Items.map((d: any) => [d.Id, d.Origins.Items[0].DomainName])).toEqual([
      [id, newOrigin],
    ]);
    // A summary's ETag is newer than some CLIs' models (Debian's aws-cli 2.9 drops the element it
    // does not know); where the CLI shows it, it is the ETag of the update. The SDK's test reads it
    // in every case.
    const etags = list.DistributionList.Items.map((d: any) => d.ETag as string | undefined);
    if (etags[0] !== undefined) expect(etags).toEqual([updated.ETag]);
  });

  it("counts every CLI call per service and action", () => {
    const calls = simA.calls();
    expect(calls.filter((c) => c.service === "ec2" && c.action === "DeleteSecurityGroup")).toEqual([
      { service: "ec2", action: "DeleteSecurityGroup", status: 400, errorCode: "DependencyViolation" },
    ]);
    expect(
      calls.some((c) => c.service === "cloudfront" && c.action === "UpdateDistribution" && c.status === 412),
    ).toBe(true);
    expect(calls.some((c) => c.service === "route53" && c.action === "ListResourceRecordSets")).toBe(true);
  });
});
