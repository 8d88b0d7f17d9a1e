/**
 * The simulator's STS and its accounts, judged by the real `aws` CLI (botocore): AssumeRole answers
 * as STS does (query protocol, XML) with temporary credentials of the role's account; those
 * credentials see only that account's resources; an untrusted caller, a wrong external id or an
 * unknown role is STS's own AccessDenied, which the CLI parses and names.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the CLI prints untyped JSON; the assertions check its shape */
import { execFile } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AwsWorld, startAwsSim, type AwsSim } from "../../sim/aws/index.js";

const WORKLOAD = "111111111111";
const EDGE = "222222222222";
const CLUSTER_ROLE = `arn:aws:iam::${WORKLOAD}:role/unstuck`;
const EDGE_ROLE = `arn:aws:iam::${EDGE}:role/unstuck-edge`;

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(sim: AwsSim, args: string[], creds: Record<string, string> = {}): Promise<CliResult> {
  const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...sim.env(), ...creds };
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

async function json(sim: AwsSim, args: string[], creds?: Record<string, string>): Promise<any> {
  const r = await cli(sim, args, creds);
  if (r.code !== 0) throw new Error(`aws ${args.join(" ")} failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** The CLI's environment for temporary credentials AssumeRole returned. */
function asSession(c: any): Record<string, string> {
  return {
    AWS_ACCESS_KEY_ID: c.AccessKeyId,
    AWS_SECRET_ACCESS_KEY: c.SecretAccessKey,
    AWS_SESSION_TOKEN: c.SessionToken,
  };
}

describe("STS AssumeRole and accounts, judged by the real aws CLI", () => {
  let sim: AwsSim;

  beforeAll(async () => {
    const workload = new AwsWorld({ accountId: WORKLOAD, region: "eu-west-1" });
    const edge = new AwsWorld({ accountId: EDGE, region: "eu-west-1" });
    workload.createSecurityGroup({ name: "workload-sg", description: "in A", vpcId: "vpc-0a" });
    edge.createHostedZone({ name: "example.com" });
    sim = await startAwsSim({
      world: workload,
      accounts: [edge],
      roles: [
        { arn: CLUSTER_ROLE, trustedAccounts: [WORKLOAD] },
        { arn: EDGE_ROLE, trustedAccounts: [WORKLOAD], externalId: "edge-ext-1" },
      ],
    });
  });

  afterAll(async () => {
    await sim.stop();
  });

  it("assume-role parses: credentials, expiration and the assumed-role ARN of the role's account", async () => {
    const out = await json(sim, [
      "sts",
      "assume-role",
      "--role-arn",
      CLUSTER_ROLE,
      "--role-session-name",
      "xy",
    ]);
    expect(out.Credentials.AccessKeyId).toMatch(/^ASIA[A-Z0-9]{16}$/);
    expect(out.Credentials.SecretAccessKey).toHaveLength(40);
    expect(out.Credentials.SessionToken.length).toBeGreaterThan(100);
    // botocore parsed the timestamp (it prints it back as ISO 8601 with an offset).
    expect(new Date(out.Credentials.Expiration).getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);
    expect(out.AssumedRoleUser.Arn).toBe(`arn:aws:sts::${WORKLOAD}:assumed-role/unstuck/xy`);
    expect(out.AssumedRoleUser.AssumedRoleId).toMatch(/^AROA[A-Z0-9]{17}:xy$/);
    const who = await json(sim, ["sts", "get-caller-identity"], asSession(out.Credentials));
    expect(who).toMatchObject({ Account: WORKLOAD, Arn: out.AssumedRoleUser.Arn });
  });

  it("a chained role's credentials see only the edge account: its zone, not the workload's groups", async () => {
    const cluster = await json(sim, [
      "sts",
      "assume-role",
      "--role-arn",
      CLUSTER_ROLE,
      "--role-session-name",
      "unstuck",
    ]);
    const edge = await json(
      sim,
      [
        "sts",
        "assume-role",
        "--role-arn",
        EDGE_ROLE,
        "--role-session-name",
        "unstuck",
        "--external-id",
        "edge-ext-1",
      ],
      asSession(cluster.Credentials),
    );
    expect(edge.AssumedRoleUser.Arn).toBe(`arn:aws:sts::${EDGE}:assumed-role/unstuck-edge/unstuck`);
    const creds = asSession(edge.Credentials);
    const [zones, groups, mainZones, mainGroups, noToken] = await Promise.all([
      json(sim, ["route53", "list-hosted-zones"], creds),
      json(sim, ["ec2", "describe-security-groups"], creds),
      json(sim, ["route53", "list-hosted-zones"]),
      json(sim, ["ec2", "describe-security-groups"]),
      // Without its session token a temporary key is refused, as on AWS.
      cli(sim, ["route53", "list-hosted-zones"], { ...creds, AWS_SESSION_TOKEN: "" }),
    ]);
    expect(zones.HostedZones.map((z: any) => z.Name)).toEqual(["example.com."]);
    expect(groups.SecurityGroups).toEqual([]);
    // The main world's keys see the workload account: its group, no zone.
    expect(mainZones.HostedZones).toEqual([]);
    expect(mainGroups.SecurityGroups.map((g: any) => g.GroupName)).toEqual(["workload-sg"]);
    expect(noToken.code).not.toBe(0);
    expect(noToken.stderr).toMatch(/InvalidClientTokenId/);
  });

  it("an unknown role, a caller the trust policy does not name, a wrong external id: STS's AccessDenied", async () => {
    const [unknown, wrongId, untrusted] = await Promise.all([
      cli(sim, [
        "sts",
        "assume-role",
        "--role-arn",
        `arn:aws:iam::${EDGE}:role/nobody`,
        "--role-session-name",
        "unstuck",
      ]),
      cli(sim, [
        "sts",
        "assume-role",
        "--role-arn",
        EDGE_ROLE,
        "--role-session-name",
        "unstuck",
        "--external-id",
        "wrong-one",
      ]),
      (async () => {
        // A session of the edge account itself is not trusted by the cluster role (only WORKLOAD is).
        const edge = await json(sim, [
          "sts",
          "assume-role",
          "--role-arn",
          EDGE_ROLE,
          "--role-session-name",
          "unstuck",
          "--external-id",
          "edge-ext-1",
        ]);
        return cli(
          sim,
          ["sts", "assume-role", "--role-arn", CLUSTER_ROLE, "--role-session-name", "unstuck"],
          asSession(edge.Credentials),
        );
      })(),
    ]);
    for (const r of [unknown, wrongId, untrusted]) {
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(
        /An error occurred \(AccessDenied\) when calling the AssumeRole operation: User: arn:aws:sts::\d{12}:assumed-role\/[^ ]+ is not authorized to perform: sts:AssumeRole on resource: arn:aws:iam::\d{12}:role\//,
      );
    }
    expect(unknown.stderr).toContain(`on resource: arn:aws:iam::${EDGE}:role/nobody`);
    expect(untrusted.stderr).toContain(`User: arn:aws:sts::${EDGE}:assumed-role/unstuck-edge/unstuck`);
  });

  it("a session name STS's pattern refuses is its ValidationError, and nothing is handed out", async () => {
    const before = sim.accounts.sessionsOf(CLUSTER_ROLE).length;
    const r = await cli(sim, [
      "sts",
      "assume-role",
      "--role-arn",
      CLUSTER_ROLE,
      "--role-session-name",
      "bad name!",
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/\(ValidationError\) when calling the AssumeRole operation/);
    expect(sim.accounts.sessionsOf(CLUSTER_ROLE)).toHaveLength(before);
  });
});
