import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LookupEventsCommand } from "@aws-sdk/client-cloudtrail";
import {
  DeleteSecurityGroupCommand,
  DescribeNetworkInterfacesCommand,
  DescribeSecurityGroupsCommand,
} from "@aws-sdk/client-ec2";
import { DescribeLoadBalancersCommand } from "@aws-sdk/client-elastic-load-balancing-v2";
import { GetDistributionConfigCommand } from "@aws-sdk/client-cloudfront";
import { createAwsClients, destroyAwsClients, type AwsClients } from "../../../src/aws/clients.js";
import { readAwsScenario, startAwsSim, type AwsSim } from "../../sim/aws/index.js";

const scenarioPath = (name: string): string =>
  fileURLToPath(new URL(`../../fixtures/scenarios/${name}`, import.meta.url));
const BOT_KEY = "AKIAUNSTUCKTEST00001";

type WireError = Error & { $metadata?: { httpStatusCode?: number } };

async function errorOf(p: Promise<unknown>): Promise<WireError> {
  try {
    await p;
  } catch (err) {
    return err as WireError;
  }
  throw new Error("expected the call to fail");
}

describe("AWS simulator: IAM deny fault", () => {
  let sim: AwsSim;
  let aws: AwsClients;

  beforeEach(async () => {
    sim = await startAwsSim({ scenario: readAwsScenario(scenarioPath("aws-seed-incident.yaml")) });
    aws = createAwsClients({
      region: sim.world.region,
      endpoint: sim.url,
      credentials: { accessKeyId: BOT_KEY, secretAccessKey: "not-checked" },
      maxAttempts: 1,
    });
  });

  afterEach(async () => {
    destroyAwsClients(aws);
    await sim.stop();
  });

  it("answers a denied EC2 action with UnauthorizedOperation (403) and leaves the others alone", async () => {
    sim.setFaults({ deny: ["DescribeNetworkInterfaces"] });
    const err = await errorOf(aws.ec2.send(new DescribeNetworkInterfacesCommand({})));
    expect(err.name).toBe("UnauthorizedOperation");
    expect(err.$metadata?.httpStatusCode).toBe(403);
    expect(err.message).toContain("You are not authorized to perform this operation.");
    expect(err.message).toContain("ec2:DescribeNetworkInterfaces");

    const groups = await aws.ec2.send(new DescribeSecurityGroupsCommand({}));
    expect(groups.SecurityGroups?.length).toBeGreaterThan(0);
    expect(sim.calls().map((c) => [c.action, c.errorCode])).toEqual([
      ["DescribeNetworkInterfaces", "UnauthorizedOperation"],
      ["DescribeSecurityGroups", undefined],
    ]);
  });

  it("uses each service's own error: ELBv2 AccessDenied, CloudTrail AccessDeniedException, CloudFront AccessDenied", async () => {
    sim.setFaults({
      deny: ["elasticloadbalancing:DescribeLoadBalancers", "LookupEvents", "GetDistributionConfig"],
    });
    const elb = await errorOf(aws.elbv2.send(new DescribeLoadBalancersCommand({})));
    expect(elb.name).toBe("AccessDenied");
    expect(elb.$metadata?.httpStatusCode).toBe(403);
    expect(elb.message).toContain("elasticloadbalancing:DescribeLoadBalancers");

    const trail = await errorOf(aws.cloudtrail.send(new LookupEventsCommand({})));
    expect(trail.name).toBe("AccessDeniedException");
    expect(trail.message).toContain("cloudtrail:LookupEvents");

    const distributionId = [...sim.world.distributions.keys()][0];
    const cf = await errorOf(aws.cloudfront.send(new GetDistributionConfigCommand({ Id: distributionId })));
    expect(cf.name).toBe("AccessDenied");
    expect(cf.$metadata?.httpStatusCode).toBe(403);
  });

  it("an IAM-form entry denies only that service's action", async () => {
    sim.setFaults({ deny: ["cloudtrail:DescribeLoadBalancers"] });
    const lbs = await aws.elbv2.send(new DescribeLoadBalancersCommand({}));
    expect(lbs.LoadBalancers?.length).toBeGreaterThan(0);
  });

  it("records a denied write in CloudTrail with the caller and changes nothing; clearing the fault allows it again", async () => {
    const group = [...sim.world.securityGroups.values()].find((g) => g.name.startsWith("k8s-myapp-myappapi"));
    expect(group).toBeDefined();
    sim.setFaults({ deny: ["ec2:DeleteSecurityGroup"] });
    const err = await errorOf(aws.ec2.send(new DeleteSecurityGroupCommand({ GroupId: group?.id })));
    expect(err.name).toBe("UnauthorizedOperation");
    expect(sim.world.securityGroups.has(group?.id ?? "")).toBe(true);
    const event = sim.world.trail.at(-1);
    expect(event?.eventName).toBe("DeleteSecurityGroup");
    expect(event?.detail).toMatchObject({
      errorCode: "Client.UnauthorizedOperation",
      userIdentity: { accessKeyId: BOT_KEY },
    });

    sim.setFaults({});
    // The group is still used by its ALB, so the real service now answers with the dependency error.
    const after = await errorOf(aws.ec2.send(new DeleteSecurityGroupCommand({ GroupId: group?.id })));
    expect(after.name).toBe("DependencyViolation");
  });
});
