/**
 * The recovered seed world (docs/incident.md, step 8): the namespace and its six Ingresses are back, each
 * on a new ALB whose DNS name the Ingress reports and Route 53 aliases, the old ALB names are
 * NXDOMAIN, and test.example.com still answers CloudFront's 502 because the distribution's origin
 * is the deleted old ALB — until the origin is repointed (real CLI) and Deployed.
 */
import { execFile } from "node:child_process";
import { Resolver } from "node:dns/promises";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../../helpers/eventually.js";
import { loadScenario } from "../../sim/scenario.js";
import { DEFAULT_ROUTE53_SYNC_MS, startWorld, type World } from "../../sim/world.js";

const fixture = (name: string): string =>
  fileURLToPath(new URL(`../../fixtures/scenarios/${name}`, import.meta.url));
const RECOVERED = fixture("seed-recovered.yaml");
const SEED = fixture("seed-incident.yaml");
const DIST = "E2MYAPPTEST0001";
const ZONE = "Z0EXAMPLE7MYAPP0001";
const DEPLOY_MS = 3000;
const HOSTS = ["api", "admin-api", "cms-api", "cms", "admin", "worker"].map((h) => `${h}.example.com`);

interface IngressList {
  items: { metadata: { name: string }; status: { loadBalancer: { ingress: { hostname: string }[] } } }[];
}

function status(world: World, host: string, path = "/"): Promise<{ code: number; lb: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(`${world.httpFront.url}${path}`, { headers: { Host: host } }, (res) => {
      res.resume();
      res.on("end", () => {
        const lb = res.headers["x-sim-load-balancer"];
        resolve({ code: res.statusCode ?? 0, lb: typeof lb === "string" ? lb : undefined });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

function aws(world: World, args: string[]): Promise<string> {
  const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...world.aws.env() };
  return new Promise((resolve, reject) => {
    // The endpoint on the command line as well: a CLI older than AWS_ENDPOINT_URL (Debian's 2.9)
    // ignores the variable and would call AWS itself.
    const argv = [...args, "--endpoint-url", world.aws.url, "--output", "json"];
    execFile("aws", argv, { env, timeout: 90_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`aws ${args.join(" ")}: ${stderr}`));
      else resolve(stdout);
    });
  });
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "resolved";
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

describe("seed-recovered scenario", () => {
  let world: World;
  let resolver: Resolver;
  let dir: string;

  beforeAll(async () => {
    world = await startWorld({ scenario: RECOVERED, cloudFrontDeployMs: DEPLOY_MS });
    resolver = new Resolver({ timeout: 2000, tries: 1 });
    resolver.setServers([world.dns.address]);
    dir = await mkdtemp(join(tmpdir(), "seed-recovered-"));
  });
  afterAll(async () => {
    await world.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("has namespace myapp active with six Ingresses on six live ALBs that Route 53 aliases", async () => {
    const ns = (await fetch(`${world.kube.url}/api/v1/namespaces/myapp`).then((r) => r.json())) as {
      status: { phase: string };
    };
    expect(ns.status.phase).toBe("Active");
    const ingresses = (await fetch(
      `${world.kube.url}/apis/networking.k8s.io/v1/namespaces/myapp/ingresses`,
    ).then((r) => r.json())) as IngressList;
    expect(ingresses.items).toHaveLength(6);
    const lbs = [...world.aws.world.loadBalancers.values()];
    const ingressHosts = ingresses.items.map((i) => i.status.loadBalancer.ingress[0]?.hostname ?? "");
    for (const h of ingressHosts)
      expect(lbs.some((lb) => lb.dnsName === h && lb.state === "active")).toBe(true);

    const aliased = world.aws.world
      .sortedRecords(ZONE)
      .filter((r) => HOSTS.includes(r.name.replace(/\.$/, "")))
      .map((r) => (r.aliasTarget?.dnsName ?? "").replace(/^dualstack\./, "").replace(/\.$/, ""));
    expect(aliased.sort()).toEqual([...ingressHosts].sort());
  });

  it("the new ALB names resolve and the seed's old ones are NXDOMAIN", async () => {
    const seed = loadScenario(SEED);
    const oldNames = (
      seed.aws as { hostedZones: { records: { alias?: { dnsName?: string } }[] }[] }
    ).hostedZones
      .flatMap((z) => z.records)
      .map((r) => r.alias?.dnsName)
      .filter((n): n is string => n !== undefined && n.includes(".elb.amazonaws.com"));
    expect(oldNames).toHaveLength(6);
    for (const n of oldNames) expect(await code(resolver.resolve4(n))).toBe("ENOTFOUND");
    for (const h of HOSTS) expect((await resolver.resolve4(h)).length).toBeGreaterThan(0);
  });

  it("a Route 53 change is PENDING, then INSYNC once the world's default sync time has passed", async () => {
    const aws = world.aws.world;
    const started = Date.now();
    const change = aws.changeRecords(ZONE, [
      { action: "CREATE", record: { name: "probe.example.com", type: "TXT", ttl: 60, values: ['"probe"'] } },
    ]);
    expect(aws.changeStatus(change)).toBe("PENDING");
    const status = await eventually(
      () => (aws.changeStatus(change) === "PENDING" ? undefined : aws.changeStatus(change)),
      DEFAULT_ROUTE53_SYNC_MS + 5000,
      "the Route 53 change to leave PENDING",
    );
    expect(status).toBe("INSYNC");
    expect(Date.now() - started).toBeGreaterThanOrEqual(DEFAULT_ROUTE53_SYNC_MS);
  });

  it("the six hosts answer /readyz and /livez 200; test.example.com answers 502 until the origin is repointed and Deployed", async () => {
    const health = await Promise.all(
      HOSTS.flatMap((h) => [status(world, h, "/readyz"), status(world, h, "/livez")]),
    );
    expect(health.map((r) => r.code)).toEqual(health.map(() => 200));
    expect((await status(world, "test.example.com")).code).toBe(502);

    const worker = [...world.aws.world.loadBalancers.values()].find((lb) =>
      lb.name.startsWith("k8s-myapp-myappwor-"),
    );
    if (!worker) throw new Error("the recovered worker ALB");
    const got = JSON.parse(await aws(world, ["cloudfront", "get-distribution-config", "--id", DIST]));
    got.DistributionConfig.Origins.Items[0].DomainName = worker.dnsName;
    const file = join(dir, "config.json");
    await writeFile(file, JSON.stringify(got.DistributionConfig));
    const updatedAt = Date.now();
    await aws(world, [
      "cloudfront",
      "update-distribution",
      "--id",
      DIST,
      "--if-match",
      got.ETag,
      "--distribution-config",
      `file://${file}`,
    ]);
    expect((await status(world, "test.example.com")).code).toBe(502);
    // Let the configured deploy time pass, so the CLI waiter's first poll already sees Deployed.
    await new Promise((r) => setTimeout(r, Math.max(0, updatedAt + DEPLOY_MS - Date.now())));
    await aws(world, ["cloudfront", "wait", "distribution-deployed", "--id", DIST]);
    const after = await status(world, "test.example.com", "/readyz");
    expect(after).toEqual({ code: 200, lb: worker.name });
  }, 120_000);
});
