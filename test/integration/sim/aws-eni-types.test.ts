/**
 * The simulator's network interfaces as AWS's services make them (ALB, NLB, Lambda, VPC endpoint,
 * an instance's secondary interface) and the EC2 calls that free a security group held by one,
 * judged by the real SDK v3 EC2 client and the real `aws` CLI.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the CLI prints untyped JSON; the assertions check its shape */
import { execFile } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { CloudTrailClient, LookupEventsCommand } from "@aws-sdk/client-cloudtrail";
import {
  AttachNetworkInterfaceCommand,
  CreateNetworkInterfaceCommand,
  DeleteNetworkInterfaceCommand,
  DeleteSecurityGroupCommand,
  DescribeNetworkInterfacesCommand,
  DescribeVpcEndpointsCommand,
  DetachNetworkInterfaceCommand,
  EC2Client,
  ModifyNetworkInterfaceAttributeCommand,
  ModifyVpcEndpointCommand,
  type NetworkInterface,
} from "@aws-sdk/client-ec2";
import { parseAwsScenario, startAwsSim, type AwsSim } from "../../sim/aws/index.js";

const DEFAULT_SG = "sg-0d0000000000000d1";
const ALB_SG = "sg-0a1b000000000a1b1";
const NLB_SG = "sg-0a1b000000000a1b2";
const LAMBDA_SG = "sg-0a1b000000000a1b3";
const ENDPOINT_SG = "sg-0a1b000000000a1b4";
const WORKER_SG = "sg-0a1b000000000a1b5";
const SPARE_SG = "sg-0a1b000000000a1b6";
const INSTANCE = "i-0123456789abcdef0";
const OTHER_INSTANCE = "i-0fedcba9876543210";
const SECONDARY_ENI = "eni-0badc0ffee0000001";
const VPCE = "vpce-0123456789abcdef0";
const NLB_DESCRIPTION = "ELB net/k8s-myapp-grpc-5d2e8a1f0c/8f3a2b1c0d9e8f7a";
const OPERATOR_KEY = "ASIAOPERATOR00000001";

/** The scenario as an author writes it: every kind of interface that can hold a security group. */
const SCENARIO = `
aws:
  identities:
    - accessKeyId: ${OPERATOR_KEY}
      arn: arn:aws:sts::123456789012:assumed-role/oncall-admin/jane
  securityGroups:
    - { id: ${DEFAULT_SG}, name: default, description: default VPC security group }
    - { id: ${ALB_SG}, name: k8s-myapp-web, description: ALB }
    - { id: ${NLB_SG}, name: k8s-myapp-grpc, description: NLB }
    - { id: ${LAMBDA_SG}, name: orders-consumer, description: Lambda }
    - { id: ${ENDPOINT_SG}, name: ecr-endpoint, description: ECR interface endpoint }
    - { id: ${WORKER_SG}, name: legacy-worker, description: left on a secondary interface }
    - { id: ${SPARE_SG}, name: spare, description: unused }
  loadBalancers:
    - { name: k8s-myapp-web-0a1b2c3d4e, securityGroups: [${ALB_SG}] }
  instances:
    - { id: ${INSTANCE}, securityGroups: [${DEFAULT_SG}] }
    - { id: ${OTHER_INSTANCE}, securityGroups: [${DEFAULT_SG}], availabilityZone: ap-northeast-2c, subnetId: subnet-0c33cc33cc33cc33c }
  vpcEndpoints:
    - id: ${VPCE}
      serviceName: com.amazonaws.ap-northeast-2.ecr.api
      securityGroups: [${ENDPOINT_SG}, ${DEFAULT_SG}]
  lambdaFunctions:
    - { name: orders-consumer, securityGroups: [${LAMBDA_SG}] }
  networkInterfaces:
    - { description: "${NLB_DESCRIPTION}", groups: [${NLB_SG}] }
    - id: ${SECONDARY_ENI}
      description: legacy worker data plane
      instanceId: ${INSTANCE}
      deviceIndex: 1
      groups: [${WORKER_SG}]
`;

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(sim: AwsSim, args: string[]): Promise<CliResult> {
  // Signed as the on-call operator, so CloudTrail can say who made each change.
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    ...sim.env(),
    AWS_ACCESS_KEY_ID: OPERATOR_KEY,
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

async function json(sim: AwsSim, args: string[]): Promise<any> {
  const r = await cli(sim, args);
  if (r.code !== 0) throw new Error(`aws ${args.join(" ")} failed (${r.code}): ${r.stderr}`);
  return r.stdout.trim() === "" ? {} : JSON.parse(r.stdout);
}

/** The CLI's one-line error for `code` on `operation`. */
function cliError(code: string, operation: string): string {
  return `An error occurred (${code}) when calling the ${operation} operation`;
}

/** Each `aws` process costs one to three seconds on a shared machine; the CLI tests run several in a row. */
const CLI_TIMEOUT = 90_000;

async function errorOf(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected the call to fail");
}

describe("AWS simulator: ENI interface types and the calls that free a security group", () => {
  let sim: AwsSim;
  let ec2: EC2Client;
  let trail: CloudTrailClient;

  const clientConfig = (): {
    region: string;
    endpoint: string;
    credentials: { accessKeyId: string; secretAccessKey: string };
    maxAttempts: number;
  } => ({
    region: sim.world.region,
    endpoint: sim.url,
    credentials: { accessKeyId: OPERATOR_KEY, secretAccessKey: "not-checked" },
    maxAttempts: 1,
  });

  async function enisWith(filterName: string, value: string): Promise<NetworkInterface[]> {
    const out = await ec2.send(
      new DescribeNetworkInterfacesCommand({ Filters: [{ Name: filterName, Values: [value] }] }),
    );
    return out.NetworkInterfaces ?? [];
  }

  beforeEach(async () => {
    sim = await startAwsSim({ scenario: parseAwsScenario(parseYaml(SCENARIO)) });
    ec2 = new EC2Client(clientConfig());
    trail = new CloudTrailClient(clientConfig());
  });

  afterEach(async () => {
    ec2.destroy();
    trail.destroy();
    await sim.stop();
  });

  it("describes each interface type with the description, requester and attachment AWS gives it (SDK)", async () => {
    const [alb, nlb, lambda, endpoint, own] = await Promise.all([
      enisWith("group-id", ALB_SG),
      enisWith("interface-type", "network_load_balancer"),
      enisWith("interface-type", "lambda"),
      enisWith("interface-type", "vpc_endpoint"),
      enisWith("requester-managed", "false"),
    ]);
    const lb = [...sim.world.loadBalancers.values()][0]!;
    expect(alb).toHaveLength(lb.availabilityZones.length);
    for (const e of alb) {
      expect(e).toMatchObject({
        InterfaceType: "interface",
        Description: `ELB app/${lb.name}/${lb.arn.split("/").pop()}`,
        RequesterId: "amazon-elb",
        RequesterManaged: true,
        Status: "in-use",
        Attachment: { Status: "attached", InstanceOwnerId: "amazon-aws" },
      });
      expect(e.Attachment?.AttachmentId).toMatch(/^ela-attach-0[0-9a-f]{16}$/);
      expect(e.Attachment?.InstanceId).toBeUndefined();
    }

    expect(nlb).toHaveLength(1);
    expect(nlb[0]).toMatchObject({
      Description: NLB_DESCRIPTION,
      RequesterId: "amazon-elb",
      RequesterManaged: true,
      Groups: [{ GroupId: NLB_SG, GroupName: "k8s-myapp-grpc" }],
    });

    // One Hyperplane ENI per subnet of the function.
    expect(lambda.length).toBeGreaterThan(0);
    for (const e of lambda) {
      expect(e.Description).toMatch(
        /^AWS Lambda VPC ENI-orders-consumer-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      );
      expect(e.RequesterId).toMatch(/^AROA[0-9A-Z]{17}:orders-consumer$/);
      expect(e).toMatchObject({ RequesterManaged: true, Status: "in-use", Groups: [{ GroupId: LAMBDA_SG }] });
    }
    expect(new Set(lambda.map((e) => e.SubnetId)).size).toBe(lambda.length);

    expect(endpoint.length).toBeGreaterThan(0);
    for (const e of endpoint) {
      expect(e).toMatchObject({
        Description: `VPC Endpoint Interface ${VPCE}`,
        RequesterId: "727180483921",
        RequesterManaged: true,
        Status: "in-use",
      });
      expect(e.Groups?.map((g) => g.GroupId)).toEqual([ENDPOINT_SG, DEFAULT_SG]);
    }
    const vpces = await ec2.send(new DescribeVpcEndpointsCommand({ VpcEndpointIds: [VPCE] }));
    expect(vpces.VpcEndpoints).toHaveLength(1);
    expect(vpces.VpcEndpoints![0]).toMatchObject({
      VpcEndpointId: VPCE,
      VpcEndpointType: "Interface",
      ServiceName: "com.amazonaws.ap-northeast-2.ecr.api",
      State: "available",
      RequesterManaged: false,
    });
    expect(vpces.VpcEndpoints![0]!.Groups?.map((g) => g.GroupId)).toEqual([ENDPOINT_SG, DEFAULT_SG]);
    expect([...(vpces.VpcEndpoints![0]!.NetworkInterfaceIds ?? [])].sort()).toEqual(
      endpoint.map((e) => e.NetworkInterfaceId).sort(),
    );
    expect(vpces.VpcEndpoints![0]!.CreationTimestamp).toBeInstanceOf(Date);

    // The customer's own interfaces: each instance's primary (device 0) and the secondary (device 1).
    const secondary = own.find((e) => e.NetworkInterfaceId === SECONDARY_ENI);
    expect(secondary).toMatchObject({
      InterfaceType: "interface",
      RequesterManaged: false,
      Status: "in-use",
      Attachment: {
        InstanceId: INSTANCE,
        DeviceIndex: 1,
        Status: "attached",
        InstanceOwnerId: "123456789012",
      },
    });
    expect(secondary?.RequesterId).toBeUndefined();
    expect(secondary?.Attachment?.AttachmentId).toMatch(/^eni-attach-0[0-9a-f]{16}$/);
    const primary = own.find((e) => e.Attachment?.InstanceId === INSTANCE && e.Attachment.DeviceIndex === 0);
    expect(primary).toMatchObject({
      Groups: [{ GroupId: DEFAULT_SG }],
      Attachment: { DeleteOnTermination: true },
    });
  });

  it(
    "the aws CLI parses every interface type and the VPC endpoint the same way",
    { timeout: CLI_TIMEOUT },
    async () => {
      const [lambda, nlb, own, vpce] = await Promise.all([
        json(sim, ["ec2", "describe-network-interfaces", "--filters", "Name=interface-type,Values=lambda"]),
        json(sim, ["ec2", "describe-network-interfaces", "--filters", `Name=description,Values=ELB net/*`]),
        json(sim, [
          "ec2",
          "describe-network-interfaces",
          "--filters",
          `Name=attachment.instance-id,Values=${INSTANCE}`,
          "Name=attachment.device-index,Values=1",
        ]),
        json(sim, ["ec2", "describe-vpc-endpoints", "--filters", "Name=vpc-endpoint-type,Values=Interface"]),
      ]);
      expect(lambda.NetworkInterfaces.length).toBeGreaterThan(0);
      for (const e of lambda.NetworkInterfaces) {
        expect(e).toMatchObject({ InterfaceType: "lambda", RequesterManaged: true, Status: "in-use" });
        expect(e.Description).toMatch(/^AWS Lambda VPC ENI-orders-consumer-/);
      }
      expect(nlb.NetworkInterfaces.map((e: any) => e.InterfaceType)).toEqual(["network_load_balancer"]);
      expect(own.NetworkInterfaces).toHaveLength(1);
      expect(own.NetworkInterfaces[0]).toMatchObject({
        NetworkInterfaceId: SECONDARY_ENI,
        InterfaceType: "interface",
        RequesterManaged: false,
        Attachment: { InstanceId: INSTANCE, DeviceIndex: 1 },
      });
      expect(vpce.VpcEndpoints).toHaveLength(1);
      expect(vpce.VpcEndpoints[0]).toMatchObject({
        VpcEndpointId: VPCE,
        State: "available",
        Groups: [{ GroupId: ENDPOINT_SG, GroupName: "ecr-endpoint" }, { GroupId: DEFAULT_SG }],
      });
      expect(vpce.VpcEndpoints[0].DnsEntries[0].DnsName).toMatch(/\.vpce\.amazonaws\.com$/);
    },
  );

  it(
    "modify-network-interface-attribute --groups frees a group for delete-security-group, and CloudTrail says who (CLI)",
    { timeout: CLI_TIMEOUT },
    async () => {
      const blocked = await cli(sim, ["ec2", "delete-security-group", "--group-id", WORKER_SG]);
      expect(blocked.code).not.toBe(0);
      expect(blocked.stderr).toContain(cliError("DependencyViolation", "DeleteSecurityGroup"));

      await json(sim, [
        "ec2",
        "modify-network-interface-attribute",
        "--network-interface-id",
        SECONDARY_ENI,
        "--groups",
        DEFAULT_SG,
        SPARE_SG,
      ]);
      const [holders, eni] = await Promise.all([
        json(sim, ["ec2", "describe-network-interfaces", "--filters", `Name=group-id,Values=${WORKER_SG}`]),
        json(sim, ["ec2", "describe-network-interfaces", "--network-interface-ids", SECONDARY_ENI]),
      ]);
      expect(holders.NetworkInterfaces).toEqual([]);
      expect(eni.NetworkInterfaces[0].Groups.map((g: any) => g.GroupId)).toEqual([DEFAULT_SG, SPARE_SG]);

      await json(sim, ["ec2", "delete-security-group", "--group-id", WORKER_SG]);
      expect(sim.world.securityGroups.has(WORKER_SG)).toBe(false);

      const events = await json(sim, [
        "cloudtrail",
        "lookup-events",
        "--lookup-attributes",
        `AttributeKey=ResourceName,AttributeValue=${SECONDARY_ENI}`,
      ]);
      const modify = events.Events.find((e: any) => e.EventName === "ModifyNetworkInterfaceAttribute");
      expect(modify).toMatchObject({ Username: "jane", AccessKeyId: OPERATOR_KEY });
      expect(modify.Resources).toContainEqual({
        ResourceType: "AWS::EC2::SecurityGroup",
        ResourceName: SPARE_SG,
      });
      expect(JSON.parse(modify.CloudTrailEvent).requestParameters).toEqual({
        networkInterfaceId: SECONDARY_ENI,
        groupSet: { items: [{ groupId: DEFAULT_SG }, { groupId: SPARE_SG }] },
      });
    },
  );

  it(
    "refuses to change a requester-managed interface's groups with AuthFailure (SDK and CLI)",
    { timeout: CLI_TIMEOUT },
    async () => {
      const [lambdaEni] = await enisWith("interface-type", "lambda");
      const [endpointEni] = await enisWith("interface-type", "vpc_endpoint");
      const sdk = await errorOf(
        ec2.send(
          new ModifyNetworkInterfaceAttributeCommand({
            NetworkInterfaceId: lambdaEni!.NetworkInterfaceId,
            Groups: [DEFAULT_SG],
          }),
        ),
      );
      expect(sdk.name).toBe("AuthFailure");
      expect(sdk.message).toBe("You do not have permission to access the specified resource.");

      const byCli = await cli(sim, [
        "ec2",
        "modify-network-interface-attribute",
        "--network-interface-id",
        endpointEni!.NetworkInterfaceId!,
        "--groups",
        DEFAULT_SG,
      ]);
      expect(byCli.code).not.toBe(0);
      expect(byCli.stderr).toContain(cliError("AuthFailure", "ModifyNetworkInterfaceAttribute"));

      const [lambdaAfter, endpointAfter] = await Promise.all([
        enisWith("network-interface-id", lambdaEni!.NetworkInterfaceId!),
        enisWith("network-interface-id", endpointEni!.NetworkInterfaceId!),
      ]);
      expect(lambdaAfter[0]!.Groups).toEqual(lambdaEni!.Groups);
      expect(endpointAfter[0]!.Groups).toEqual(endpointEni!.Groups);

      // The ELB's own attachment cannot be detached by the customer either.
      const [albEni] = await enisWith("group-id", ALB_SG);
      const detach = await errorOf(
        ec2.send(new DetachNetworkInterfaceCommand({ AttachmentId: albEni!.Attachment!.AttachmentId })),
      );
      expect(detach.name).toBe("OperationNotPermitted");
      expect(detach.message).toBe("You are not allowed to manage 'ela-attach' attachments.");
    },
  );

  it("answers bad ModifyNetworkInterfaceAttribute input with EC2's error codes, and applies one attribute per call (SDK)", async () => {
    const modify = (input: ConstructorParameters<typeof ModifyNetworkInterfaceAttributeCommand>[0]) =>
      errorOf(ec2.send(new ModifyNetworkInterfaceAttributeCommand(input)));
    const [empty, both, unknownGroup, unknownEni, malformed] = await Promise.all([
      modify({ NetworkInterfaceId: SECONDARY_ENI, Groups: [] }),
      modify({ NetworkInterfaceId: SECONDARY_ENI, Groups: [DEFAULT_SG], Description: { Value: "x" } }),
      modify({ NetworkInterfaceId: SECONDARY_ENI, Groups: ["sg-0000000000000dead"] }),
      modify({ NetworkInterfaceId: "eni-0000000000000dead", Groups: [DEFAULT_SG] }),
      modify({ NetworkInterfaceId: "nic-1", Groups: [DEFAULT_SG] }),
    ]);
    expect([empty.name, empty.message]).toEqual(["InvalidParameterCombination", "No attributes specified."]);
    expect(both.name).toBe("InvalidParameterCombination");
    expect(unknownGroup.name).toBe("InvalidGroup.NotFound");
    expect(unknownEni.name).toBe("InvalidNetworkInterfaceID.NotFound");
    expect(malformed.name).toBe("InvalidNetworkInterfaceID.Malformed");
    // Nothing changed: the worker group still holds the interface.
    expect((await enisWith("group-id", WORKER_SG)).map((e) => e.NetworkInterfaceId)).toEqual([SECONDARY_ENI]);

    // The other attributes, one per call, show in DescribeNetworkInterfaces too.
    await ec2.send(
      new ModifyNetworkInterfaceAttributeCommand({
        NetworkInterfaceId: SECONDARY_ENI,
        SourceDestCheck: { Value: false },
      }),
    );
    await ec2.send(
      new ModifyNetworkInterfaceAttributeCommand({
        NetworkInterfaceId: SECONDARY_ENI,
        Description: { Value: "nat appliance" },
      }),
    );
    const [changed] = await enisWith("source-dest-check", "false");
    expect(changed).toMatchObject({
      NetworkInterfaceId: SECONDARY_ENI,
      SourceDestCheck: false,
      Description: "nat appliance",
      Groups: [{ GroupId: WORKER_SG }],
    });
  });

  it("creates, attaches, refuses to delete while in use, detaches and deletes an interface; CloudTrail shows who attached it (SDK)", async () => {
    const created = await ec2.send(
      new CreateNetworkInterfaceCommand({
        SubnetId: "subnet-0a11aa11aa11aa11a",
        Groups: [SPARE_SG],
        Description: "jane's debug interface",
        TagSpecifications: [{ ResourceType: "network-interface", Tags: [{ Key: "owner", Value: "jane" }] }],
      }),
    );
    const eni = created.NetworkInterface!;
    expect(eni).toMatchObject({
      Status: "available",
      InterfaceType: "interface",
      RequesterManaged: false,
      Description: "jane's debug interface",
      Groups: [{ GroupId: SPARE_SG }],
      TagSet: [{ Key: "owner", Value: "jane" }],
    });
    expect(eni.NetworkInterfaceId).toMatch(/^eni-0[0-9a-f]{16}$/);
    expect(eni.Attachment).toBeUndefined();
    const id = eni.NetworkInterfaceId!;

    const attached = await ec2.send(
      new AttachNetworkInterfaceCommand({ NetworkInterfaceId: id, InstanceId: INSTANCE, DeviceIndex: 2 }),
    );
    expect(attached.AttachmentId).toMatch(/^eni-attach-0[0-9a-f]{16}$/);
    const [described] = await enisWith("network-interface-id", id);
    expect(described).toMatchObject({
      Status: "in-use",
      Attachment: {
        AttachmentId: attached.AttachmentId,
        InstanceId: INSTANCE,
        DeviceIndex: 2,
        Status: "attached",
      },
    });

    const [again, sameIndex, otherAz, noInstance, inUse, groupHeld] = await Promise.all([
      errorOf(
        ec2.send(
          new AttachNetworkInterfaceCommand({ NetworkInterfaceId: id, InstanceId: INSTANCE, DeviceIndex: 3 }),
        ),
      ),
      ec2
        .send(new CreateNetworkInterfaceCommand({ SubnetId: "subnet-0a11aa11aa11aa11a", Groups: [SPARE_SG] }))
        .then((c) =>
          errorOf(
            ec2.send(
              new AttachNetworkInterfaceCommand({
                NetworkInterfaceId: c.NetworkInterface!.NetworkInterfaceId,
                InstanceId: INSTANCE,
                DeviceIndex: 1,
              }),
            ),
          ),
        ),
      ec2
        .send(new CreateNetworkInterfaceCommand({ SubnetId: "subnet-0a11aa11aa11aa11a", Groups: [SPARE_SG] }))
        .then((c) =>
          errorOf(
            ec2.send(
              new AttachNetworkInterfaceCommand({
                NetworkInterfaceId: c.NetworkInterface!.NetworkInterfaceId,
                InstanceId: OTHER_INSTANCE,
                DeviceIndex: 1,
              }),
            ),
          ),
        ),
      errorOf(
        ec2.send(
          new AttachNetworkInterfaceCommand({
            NetworkInterfaceId: id,
            InstanceId: "i-00000000000000bad",
            DeviceIndex: 3,
          }),
        ),
      ),
      errorOf(ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: id }))),
      errorOf(ec2.send(new DeleteSecurityGroupCommand({ GroupId: SPARE_SG }))),
    ]);
    expect([again.name, again.message]).toEqual([
      "InvalidNetworkInterface.InUse",
      `Interface: [${id}] in use.`,
    ]);
    expect(sameIndex.name).toBe("InvalidParameterValue");
    expect(sameIndex.message).toContain("device index '1'");
    expect(otherAz.name).toBe("InvalidParameterCombination");
    expect(noInstance.name).toBe("InvalidInstanceID.NotFound");
    expect([inUse.name, inUse.message]).toEqual([
      "InvalidParameterValue",
      `Network interface '${id}' is currently in use.`,
    ]);
    expect(groupHeld.name).toBe("DependencyViolation");

    // The primary interface stays; an unknown attachment is not found.
    const [primary] = (await enisWith("attachment.instance-id", INSTANCE)).filter(
      (e) => e.Attachment?.DeviceIndex === 0,
    );
    const [primaryDetach, unknownDetach] = await Promise.all([
      errorOf(
        ec2.send(new DetachNetworkInterfaceCommand({ AttachmentId: primary!.Attachment!.AttachmentId })),
      ),
      errorOf(ec2.send(new DetachNetworkInterfaceCommand({ AttachmentId: "eni-attach-00000000000000bad" }))),
    ]);
    expect(primaryDetach.name).toBe("OperationNotPermitted");
    expect(unknownDetach.name).toBe("InvalidAttachmentID.NotFound");

    await ec2.send(new DetachNetworkInterfaceCommand({ AttachmentId: attached.AttachmentId }));
    const [detached] = await enisWith("network-interface-id", id);
    expect(detached!.Status).toBe("available");
    expect(detached!.Attachment).toBeUndefined();
    await ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: id }));
    const gone = await errorOf(ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] })));
    expect(gone.name).toBe("InvalidNetworkInterfaceID.NotFound");

    const attaches = await trail.send(
      new LookupEventsCommand({
        LookupAttributes: [{ AttributeKey: "EventName", AttributeValue: "AttachNetworkInterface" }],
      }),
    );
    const success = attaches.Events!.filter((e) => !JSON.parse(e.CloudTrailEvent!).errorCode);
    expect(success).toHaveLength(1);
    expect(success[0]).toMatchObject({ Username: "jane", AccessKeyId: OPERATOR_KEY });
    expect(success[0]!.Resources).toEqual(
      expect.arrayContaining([
        { ResourceType: "AWS::EC2::NetworkInterface", ResourceName: id },
        { ResourceType: "AWS::EC2::Instance", ResourceName: INSTANCE },
      ]),
    );
    expect(JSON.parse(success[0]!.CloudTrailEvent!).requestParameters).toEqual({
      networkInterfaceId: id,
      instanceId: INSTANCE,
      deviceIndex: 2,
    });
    // The detach names only an attachment id; CloudTrail still ties it to the interface.
    const byEni = await trail.send(
      new LookupEventsCommand({ LookupAttributes: [{ AttributeKey: "ResourceName", AttributeValue: id }] }),
    );
    expect(new Set(byEni.Events!.map((e) => e.EventName))).toEqual(
      new Set([
        "CreateNetworkInterface",
        "AttachNetworkInterface",
        "DeleteNetworkInterface",
        "DetachNetworkInterface",
      ]),
    );
  });

  it("the same lifecycle through the aws CLI", { timeout: CLI_TIMEOUT }, async () => {
    const created = await json(sim, [
      "ec2",
      "create-network-interface",
      "--subnet-id",
      "subnet-0a11aa11aa11aa11a",
      "--groups",
      SPARE_SG,
      "--description",
      "cli interface",
    ]);
    const id = created.NetworkInterface.NetworkInterfaceId;
    expect(created.NetworkInterface).toMatchObject({ Status: "available", InterfaceType: "interface" });
    const attached = await json(sim, [
      "ec2",
      "attach-network-interface",
      "--network-interface-id",
      id,
      "--instance-id",
      INSTANCE,
      "--device-index",
      "2",
    ]);
    expect(attached.AttachmentId).toMatch(/^eni-attach-/);
    const refused = await cli(sim, ["ec2", "delete-network-interface", "--network-interface-id", id]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      `${cliError("InvalidParameterValue", "DeleteNetworkInterface")}: Network interface '${id}' is currently in use.`,
    );
    await json(sim, ["ec2", "detach-network-interface", "--attachment-id", attached.AttachmentId]);
    await json(sim, ["ec2", "delete-network-interface", "--network-interface-id", id]);
    const held = await json(sim, [
      "ec2",
      "describe-network-interfaces",
      "--filters",
      `Name=group-id,Values=${SPARE_SG}`,
    ]);
    expect(held.NetworkInterfaces).toEqual([]);
    await json(sim, ["ec2", "delete-security-group", "--group-id", SPARE_SG]);
    expect(sim.world.securityGroups.has(SPARE_SG)).toBe(false);
  });

  it(
    "modify-vpc-endpoint --remove-security-group-ids frees the group from every endpoint interface (CLI)",
    { timeout: CLI_TIMEOUT },
    async () => {
      const blocked = await cli(sim, ["ec2", "delete-security-group", "--group-id", ENDPOINT_SG]);
      expect(blocked.stderr).toContain(cliError("DependencyViolation", "DeleteSecurityGroup"));

      const modified = await json(sim, [
        "ec2",
        "modify-vpc-endpoint",
        "--vpc-endpoint-id",
        VPCE,
        "--remove-security-group-ids",
        ENDPOINT_SG,
      ]);
      expect(modified.Return).toBe(true);
      const [endpoint, holders] = await Promise.all([
        json(sim, ["ec2", "describe-vpc-endpoints", "--vpc-endpoint-ids", VPCE]),
        json(sim, ["ec2", "describe-network-interfaces", "--filters", `Name=group-id,Values=${ENDPOINT_SG}`]),
      ]);
      expect(endpoint.VpcEndpoints[0].Groups.map((g: any) => g.GroupId)).toEqual([DEFAULT_SG]);
      expect(holders.NetworkInterfaces).toEqual([]);
      await json(sim, ["ec2", "delete-security-group", "--group-id", ENDPOINT_SG]);

      const events = await json(sim, [
        "cloudtrail",
        "lookup-events",
        "--lookup-attributes",
        `AttributeKey=ResourceName,AttributeValue=${VPCE}`,
      ]);
      expect(events.Events.map((e: any) => e.EventName)).toEqual(["ModifyVpcEndpoint"]);
      expect(JSON.parse(events.Events[0].CloudTrailEvent).requestParameters).toEqual({
        ModifyVpcEndpointRequest: {
          VpcEndpointId: VPCE,
          RemoveSecurityGroupId: { tag: 1, content: ENDPOINT_SG },
        },
      });
    },
  );

  it("ModifyVpcEndpoint adds groups to the endpoint's interfaces and rejects unknown ids (SDK)", async () => {
    await ec2.send(new ModifyVpcEndpointCommand({ VpcEndpointId: VPCE, AddSecurityGroupIds: [SPARE_SG] }));
    const endpointEnis = await enisWith("interface-type", "vpc_endpoint");
    for (const e of endpointEnis) {
      expect(e.Groups?.map((g) => g.GroupId)).toEqual([ENDPOINT_SG, DEFAULT_SG, SPARE_SG]);
    }
    expect((await enisWith("group-id", SPARE_SG)).length).toBe(endpointEnis.length);

    const [unknown, malformed, badGroup, describeUnknown] = await Promise.all([
      errorOf(
        ec2.send(
          new ModifyVpcEndpointCommand({
            VpcEndpointId: "vpce-0000000000000dead",
            AddSecurityGroupIds: [SPARE_SG],
          }),
        ),
      ),
      errorOf(
        ec2.send(
          new ModifyVpcEndpointCommand({ VpcEndpointId: "endpoint-1", AddSecurityGroupIds: [SPARE_SG] }),
        ),
      ),
      errorOf(
        ec2.send(
          new ModifyVpcEndpointCommand({
            VpcEndpointId: VPCE,
            AddSecurityGroupIds: ["sg-0000000000000dead"],
          }),
        ),
      ),
      errorOf(ec2.send(new DescribeVpcEndpointsCommand({ VpcEndpointIds: ["vpce-0000000000000dead"] }))),
    ]);
    expect(unknown.name).toBe("InvalidVpcEndpointId.NotFound");
    expect(malformed.name).toBe("InvalidVpcEndpointId.Malformed");
    expect(badGroup.name).toBe("InvalidGroup.NotFound");
    expect(describeUnknown.name).toBe("InvalidVpcEndpointId.NotFound");
    // A failed call changed nothing.
    expect((await enisWith("group-id", SPARE_SG)).length).toBe(endpointEnis.length);
  });
});
