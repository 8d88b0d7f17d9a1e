/**
 * The incident's repair, done by hand with the real `aws` CLI against the simulator: CloudFront's
 * ETag guard and InProgress → Deployed (the CLI's own waiter), Route 53's all-or-nothing change
 * batches with AWS's InvalidChangeBatch messages and PENDING → INSYNC. The world's clock is a
 * test-owned offset, so "the deploy time has elapsed" is a clock step, not a sleep.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the CLI prints untyped JSON; the assertions check its shape */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAwsSim, type AwsSim } from "../../sim/aws/index.js";
import { loadScenario } from "../../sim/scenario.js";

const SEED = fileURLToPath(new URL("../../fixtures/scenarios/seed-incident.yaml", import.meta.url));
const DIST = "E2MYAPPTEST0001";
const ZONE = "Z0EXAMPLE7MYAPP0001";
const DEPLOY_MS = 5 * 60_000;
const SYNC_MS = 45_000;

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
      [...args, "--endpoint-url", sim.url, "--output", "json"],
      { env, timeout: 90_000 },
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

describe("CloudFront and Route 53 waits through the real aws CLI", () => {
  let sim: AwsSim;
  let dir: string;
  let offset = 0;
  const advance = (ms: number): void => {
    offset += ms;
  };

  beforeAll(async () => {
    sim = await startAwsSim({
      scenario: loadScenario(SEED).aws,
      now: () => new Date(Date.now() + offset),
      cloudFrontDeployMs: DEPLOY_MS,
      route53SyncMs: SYNC_MS,
    });
    dir = await mkdtemp(join(tmpdir(), "cf-r53-waits-"));
  });
  afterAll(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("UpdateDistribution needs the current ETag, replaces the config, and deploys after the configured time", async () => {
    const live = [...sim.world.loadBalancers.values()].find((lb) => lb.state === "active");
    if (!live) throw new Error("the seed has a live load balancer (payments)");

    const got = await json(sim, ["cloudfront", "get-distribution-config", "--id", DIST]);
    expect(got.ETag).toBe(sim.world.distributions.get(DIST)?.etag);
    const config = got.DistributionConfig;
    const oldOrigin = config.Origins.Items[0].DomainName as string;
    config.Origins.Items[0].DomainName = live.dnsName;
    config.Comment = "repointed by hand";
    const file = join(dir, "config.json");
    await writeFile(file, JSON.stringify(config));
    const update = (ifMatch?: string): Promise<CliResult> =>
      cli(sim, [
        "cloudfront",
        "update-distribution",
        "--id",
        DIST,
        "--distribution-config",
        `file://${file}`,
        ...(ifMatch !== undefined ? ["--if-match", ifMatch] : []),
      ]);

    const [stale, missing] = await Promise.all([update("E1STALEETAG0000"), update()]);
    expect(stale.code).not.toBe(0);
    expect(stale.stderr).toMatch(/\(PreconditionFailed\).*UpdateDistribution/);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/\(InvalidIfMatchVersion\)/);
    expect(
      sim
        .calls()
        .filter((c) => c.action === "UpdateDistribution")
        .map((c) => c.status),
    ).toEqual(expect.arrayContaining([412, 400]));
    // Neither failed attempt changed anything.
    const unchanged = await json(sim, ["cloudfront", "get-distribution-config", "--id", DIST]);
    expect(unchanged.ETag).toBe(got.ETag);
    expect(unchanged.DistributionConfig.Origins.Items[0].DomainName).toBe(oldOrigin);

    const ok = await update(got.ETag);
    expect(ok.code, ok.stderr).toBe(0);
    const updated = JSON.parse(ok.stdout);
    expect(updated.ETag).not.toBe(got.ETag);
    expect(updated.Distribution.Status).toBe("InProgress");
    expect(updated.Distribution.DistributionConfig.Origins.Items[0].DomainName).toBe(live.dnsName);
    expect(updated.Distribution.DistributionConfig.Comment).toBe("repointed by hand");

    // The old ETag is now stale.
    const again = await update(got.ETag);
    expect(again.stderr).toMatch(/\(PreconditionFailed\)/);

    const during = await json(sim, ["cloudfront", "get-distribution", "--id", DIST]);
    expect(during.Distribution.Status).toBe("InProgress");
    expect(during.ETag).toBe(updated.ETag);

    // Let the deploy time pass, then the CLI waiter's first poll (it polls every 60 s) succeeds.
    advance(DEPLOY_MS);
    const wait = await cli(sim, ["cloudfront", "wait", "distribution-deployed", "--id", DIST]);
    expect(wait.code, wait.stderr).toBe(0);
    const after = await json(sim, ["cloudfront", "get-distribution", "--id", DIST]);
    expect(after.Distribution.Status).toBe("Deployed");

    const trail = sim.world.trail.filter((e) => e.eventName === "UpdateDistribution");
    expect(trail.map((e) => e.detail.errorCode ?? "ok")).toEqual(
      expect.arrayContaining(["PreconditionFailed", "InvalidIfMatchVersion", "ok"]),
    );
    expect(trail.every((e) => e.eventSource === "cloudfront.amazonaws.com")).toBe(true);
  }, 120_000);

  it("a change batch is all-or-nothing, DELETE must match exactly, and a change goes PENDING → INSYNC", async () => {
    const list = await json(sim, ["route53", "list-resource-record-sets", "--hosted-zone-id", ZONE]);
    const api = list.ResourceRecordSets.find((r: any) => r.Name === "api.example.com." && r.Type === "A");
    expect(api.AliasTarget).toBeDefined();
    const newTarget = {
      HostedZoneId: api.AliasTarget.HostedZoneId,
      DNSName: "dualstack.k8s-myapp-api-794921f445-2111042198.ap-northeast-2.elb.amazonaws.com.",
      EvaluateTargetHealth: api.AliasTarget.EvaluateTargetHealth,
    };
    const batch = (changes: unknown[]): string[] => [
      "route53",
      "change-resource-record-sets",
      "--hosted-zone-id",
      ZONE,
      "--change-batch",
      JSON.stringify({ Comment: "repoint api", Changes: changes }),
    ];
    const created = {
      Name: "canary.example.com.",
      Type: "TXT",
      TTL: 60,
      ResourceRecords: [{ Value: '"x"' }],
    };

    const [mismatch, notFound, exists] = await Promise.all([
      // A DELETE with the wrong alias target, next to a valid CREATE: the whole batch fails.
      cli(
        sim,
        batch([
          { Action: "DELETE", ResourceRecordSet: { ...api, AliasTarget: newTarget } },
          { Action: "CREATE", ResourceRecordSet: created },
        ]),
      ),
      cli(
        sim,
        batch([
          {
            Action: "DELETE",
            ResourceRecordSet: { Name: "gone.example.com.", Type: "A", AliasTarget: newTarget },
          },
        ]),
      ),
      cli(sim, batch([{ Action: "CREATE", ResourceRecordSet: { ...api, AliasTarget: newTarget } }])),
    ]);
    expect(mismatch.stderr).toContain("(InvalidChangeBatch)");
    expect(mismatch.stderr).toContain(
      "Tried to delete resource record set [name='api.example.com.', type='A'] but the values provided do not match the current values",
    );
    expect(notFound.stderr).toContain(
      "Tried to delete resource record set [name='gone.example.com.', type='A'] but it was not found",
    );
    expect(exists.stderr).toContain("(InvalidChangeBatch)");
    expect(exists.stderr).toContain("but it already exists");
    const untouched = await json(sim, ["route53", "list-resource-record-sets", "--hosted-zone-id", ZONE]);
    expect(untouched.ResourceRecordSets).toEqual(list.ResourceRecordSets);

    // The exact current record deleted, the new one created: accepted, PENDING until the sync time.
    const ok = await json(
      sim,
      batch([
        { Action: "DELETE", ResourceRecordSet: api },
        { Action: "CREATE", ResourceRecordSet: { ...api, AliasTarget: newTarget } },
      ]),
    );
    expect(ok.ChangeInfo.Status).toBe("PENDING");
    const id = ok.ChangeInfo.Id as string;
    const pending = await json(sim, ["route53", "get-change", "--id", id]);
    expect(pending.ChangeInfo.Status).toBe("PENDING");
    const now = await json(sim, ["route53", "list-resource-record-sets", "--hosted-zone-id", ZONE]);
    expect(now.ResourceRecordSets.find((r: any) => r.Name === "api.example.com.").AliasTarget.DNSName).toBe(
      newTarget.DNSName,
    );

    advance(SYNC_MS);
    const insync = await json(sim, ["route53", "get-change", "--id", id]);
    expect(insync.ChangeInfo.Status).toBe("INSYNC");
    const wait = await cli(sim, ["route53", "wait", "resource-record-sets-changed", "--id", id]);
    expect(wait.code, wait.stderr).toBe(0);

    const trail = sim.world.trail.filter((e) => e.eventName === "ChangeResourceRecordSets");
    expect(trail.filter((e) => e.detail.errorCode === "InvalidChangeBatch")).toHaveLength(3);
    expect(trail.filter((e) => e.detail.errorCode === undefined)).toHaveLength(1);
  }, 120_000);
});
