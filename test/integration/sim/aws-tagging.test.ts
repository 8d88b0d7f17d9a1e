/**
 * The simulator's Resource Groups Tagging API (`GetResources`), judged by the real `aws` CLI
 * (botocore) and the SDK v3 client: tag filters AND across keys and OR across values, resource
 * type filters, pagination, and the access-denied fault.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the CLI prints untyped JSON; the assertions check its shape */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  GetResourcesCommand,
  paginateGetResources,
  type ResourceTagMapping,
} from "@aws-sdk/client-resource-groups-tagging-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAwsClients, destroyAwsClients, type AwsClients } from "../../../src/aws/clients.js";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import { UnstuckError } from "../../../src/errors.js";
import { readAwsScenario, startAwsSim, type AwsSim } from "../../sim/aws/index.js";

const scenarioPath = (name: string): string =>
  fileURLToPath(new URL(`../../fixtures/scenarios/${name}`, import.meta.url));
const ELB = "arn:aws:elasticloadbalancing:ap-northeast-2:123456789012";
const WORKER_LB = `${ELB}:loadbalancer/app/k8s-myapp-myappwor-0733a56cbb/7f60718293041526`;
const WORKER_TG = `${ELB}:targetgroup/k8s-myapp-myappwor-6f70819203/6f70819203142536`;
const API_TG = `${ELB}:targetgroup/k8s-myapp-myappapi-1a2b3c4d5e/1a2b3c4d5e6f7081`;
const WORKER_SG = "arn:aws:ec2:ap-northeast-2:123456789012:security-group/sg-06f70819203142536";
const BACKEND_SG = "arn:aws:ec2:ap-northeast-2:123456789012:security-group/sg-0f1e2d3c4b5a69788";
const CLUSTER = "Key=elbv2.k8s.aws/cluster,Values=prod-eks";
const WORKER_STACK = "Key=ingress.k8s.aws/stack,Values=myapp/myapp-worker-ingress";

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(sim: AwsSim, args: string[]): Promise<CliResult> {
  const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...sim.env() };
  return new Promise((resolve) => {
    execFile(
      "aws",
      [
        "resourcegroupstaggingapi",
        "get-resources",
        ...args,
        "--endpoint-url",
        sim.url,
        "--region",
        sim.world.region,
        "--output",
        "json",
      ],
      { env },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

async function arnsOf(sim: AwsSim, args: string[]): Promise<{ arns: string[]; out: any }> {
  const r = await cli(sim, args);
  if (r.code !== 0) throw new Error(`aws get-resources ${args.join(" ")} failed (${r.code}): ${r.stderr}`);
  const out = JSON.parse(r.stdout);
  return { arns: (out.ResourceTagMappingList as any[]).map((m) => m.ResourceARN as string).sort(), out };
}

const arns = (list: readonly ResourceTagMapping[]): string[] => list.map((m) => m.ResourceARN ?? "").sort();

describe("AWS simulator: Resource Groups Tagging API GetResources", () => {
  let sim: AwsSim;
  let simCli: AwsSim;
  let clients: AwsClients;

  beforeAll(async () => {
    const scenario = readAwsScenario(scenarioPath("aws-seed-incident.yaml"));
    [sim, simCli] = await Promise.all([startAwsSim({ scenario }), startAwsSim({ scenario })]);
    clients = createAwsClients({
      region: sim.world.region,
      endpoint: sim.url,
      credentials: { accessKeyId: "AKIAUNSTUCKTEST00001", secretAccessKey: "not-checked" },
      maxAttempts: 1,
    });
  });

  afterAll(async () => {
    destroyAwsClients(clients);
    await Promise.all([sim.stop(), simCli.stop()]);
  });

  it("answers the real aws CLI: tag filters AND across keys, OR across values, type filters", async () => {
    const [stack, orValues, groups, keyOnly, service] = await Promise.all([
      arnsOf(simCli, [
        "--tag-filters",
        CLUSTER,
        WORKER_STACK,
        "--resource-type-filters",
        "elasticloadbalancing:loadbalancer",
        "elasticloadbalancing:targetgroup",
      ]),
      arnsOf(simCli, [
        "--tag-filters",
        CLUSTER,
        "Key=ingress.k8s.aws/stack,Values=myapp/myapp-worker-ingress,myapp/myapp-api-ingress",
        "--resource-type-filters",
        "elasticloadbalancing:targetgroup",
      ]),
      arnsOf(simCli, [
        "--tag-filters",
        CLUSTER,
        WORKER_STACK,
        "--resource-type-filters",
        "ec2:security-group",
      ]),
      // A filter without values matches any value of the key.
      arnsOf(simCli, ["--tag-filters", "Key=elbv2.k8s.aws/resource", "--resource-type-filters", "ec2"]),
      // The service-only form, paged by the CLI itself five at a time until the token is empty.
      arnsOf(simCli, [
        "--tag-filters",
        CLUSTER,
        "--resource-type-filters",
        "elasticloadbalancing",
        "--page-size",
        "5",
      ]),
    ]);
    expect(stack.arns).toEqual([WORKER_LB, WORKER_TG]);
    const tg = (stack.out.ResourceTagMappingList as any[]).find((m) => m.ResourceARN === WORKER_TG);
    expect(tg.Tags).toEqual(
      expect.arrayContaining([
        { Key: "elbv2.k8s.aws/cluster", Value: "prod-eks" },
        { Key: "ingress.k8s.aws/stack", Value: "myapp/myapp-worker-ingress" },
      ]),
    );
    expect(orValues.arns).toEqual([API_TG, WORKER_TG]);
    expect(groups.arns).toEqual([WORKER_SG]);
    expect(keyOnly.arns).toEqual([BACKEND_SG]);
    expect(service.arns).toHaveLength(12);
    expect(service.arns.filter((a) => a.includes(":loadbalancer/"))).toHaveLength(6);
    expect(service.out.PaginationToken ?? "").toBe("");
    // 12 resources at 5 a page: three GetResources calls, all counted under the tagging service.
    const counted = simCli.calls().filter((c) => c.action === "GetResources");
    expect(counted.every((c) => c.service === "tagging" && c.status === 200)).toBe(true);
    expect(counted).toHaveLength(1 + 1 + 1 + 1 + 3);
  });

  it("reports an invalid page size the way botocore names it", async () => {
    const r = await cli(simCli, ["--tag-filters", CLUSTER, "--resources-per-page", "101"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("InvalidParameterException");
  });

  it("pages through the SDK with PaginationToken, the last page's token empty", async () => {
    const pages: { count: number; token: string | undefined }[] = [];
    const all: ResourceTagMapping[] = [];
    for await (const page of paginateGetResources(
      { client: clients.tagging, pageSize: 4 },
      { TagFilters: [{ Key: "elbv2.k8s.aws/cluster", Values: ["prod-eks"] }] },
    )) {
      pages.push({ count: page.ResourceTagMappingList?.length ?? 0, token: page.PaginationToken });
      all.push(...(page.ResourceTagMappingList ?? []));
    }
    // 6 load balancers + 6 target groups + 7 security groups of the cluster.
    const groups = [...sim.world.securityGroups.values()].filter(
      (g) => g.tags["elbv2.k8s.aws/cluster"] === "prod-eks",
    );
    expect(all).toHaveLength(12 + groups.length);
    expect(new Set(arns(all)).size).toBe(all.length);
    expect(pages.map((p) => p.count)).toEqual(
      Array.from({ length: Math.ceil(all.length / 4) }, (_, i) => Math.min(4, all.length - i * 4)),
    );
    expect(pages.at(-1)?.token).toBe("");
    expect(pages.slice(0, -1).every((p) => (p.token ?? "") !== "")).toBe(true);

    const tooMany = await clients.tagging.send(new GetResourcesCommand({ ResourcesPerPage: 101 })).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(tooMany?.name).toBe("InvalidParameterException");
  });

  it("follows every page in the adapter's resourcesByTags", async () => {
    for (let i = 0; i < 150; i++) {
      sim.world.createTargetGroup({
        name: `k8s-bulk-tg-${String(i).padStart(3, "0")}`,
        tags: { "elbv2.k8s.aws/cluster": "bulk-eks", "ingress.k8s.aws/stack": "bulk/app" },
      });
    }
    sim.world.createTargetGroup({
      name: "k8s-bulk-other",
      tags: { "elbv2.k8s.aws/cluster": "bulk-eks", "ingress.k8s.aws/stack": "bulk/other" },
    });
    sim.resetCalls();
    const found = await createAwsAdapter(clients).resourcesByTags(
      { "elbv2.k8s.aws/cluster": "bulk-eks", "ingress.k8s.aws/stack": "bulk/app" },
      ["elasticloadbalancing:targetgroup"],
    );
    expect(found).toHaveLength(150);
    expect(found.every((r) => r.arn.includes(":targetgroup/k8s-bulk-tg-"))).toBe(true);
    expect(found[0]?.tags).toEqual({
      "elbv2.k8s.aws/cluster": "bulk-eks",
      "ingress.k8s.aws/stack": "bulk/app",
    });
    expect(sim.calls().map((c) => c.action)).toEqual(["GetResources", "GetResources"]);
  });

  it("denies GetResources with AccessDeniedException naming tag:GetResources", async () => {
    sim.setFaults({ deny: ["GetResources"] });
    try {
      const err = await clients.tagging.send(new GetResourcesCommand({})).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.name).toBe("AccessDeniedException");
      expect(err?.message).toContain("tag:GetResources");
      const mapped = await createAwsAdapter(clients)
        .resourcesByTags({ "elbv2.k8s.aws/cluster": "prod-eks" }, [])
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(mapped).toBeInstanceOf(UnstuckError);
      expect((mapped as UnstuckError).details.action).toBe("tag:GetResources");
      expect((mapped as UnstuckError).message).toContain("Missing IAM permission tag:GetResources");
    } finally {
      sim.setFaults({});
    }
  });
});
