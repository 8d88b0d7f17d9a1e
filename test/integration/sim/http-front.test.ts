/**
 * The world's HTTP front answers as the traffic path says: `test.example.com` → its Route 53 alias →
 * CloudFront → the default origin. With the seed's stale origin (a deleted ALB) that is
 * CloudFront's 502; after an UpdateDistribution (through the real SDK) to a live ALB the old
 * origin keeps serving until the distribution is Deployed, then 200.
 */
import { request } from "node:http";
import { fileURLToPath } from "node:url";
import {
  CloudFrontClient,
  GetDistributionCommand,
  GetDistributionConfigCommand,
  UpdateDistributionCommand,
} from "@aws-sdk/client-cloudfront";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIM_ACCESS_KEY_ID, SIM_SECRET_ACCESS_KEY } from "../../sim/aws/index.js";
import { startWorld, type World } from "../../sim/world.js";

const SEED = fileURLToPath(new URL("../../fixtures/scenarios/seed-incident.yaml", import.meta.url));
const DIST = "E2MYAPPTEST0001";
const DEPLOY_MS = 4 * 60_000;

interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

function get(world: World, host: string, path = "/"): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(`${world.httpFront.url}${path}`, { headers: { Host: host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString(),
        });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

describe("HTTP front over the seed world", () => {
  let world: World;
  let offset = 0;
  let cf: CloudFrontClient;

  beforeAll(async () => {
    world = await startWorld({
      scenario: SEED,
      lbc: false,
      now: () => new Date(Date.now() + offset),
      cloudFrontDeployMs: DEPLOY_MS,
    });
    cf = new CloudFrontClient({
      endpoint: world.aws.url,
      region: "us-east-1",
      credentials: { accessKeyId: SIM_ACCESS_KEY_ID, secretAccessKey: SIM_SECRET_ACCESS_KEY },
      maxAttempts: 1,
    });
  });
  afterAll(async () => {
    cf.destroy();
    await world.stop();
  });

  it("a live ALB alias answers 200, health endpoints included", async () => {
    const [root, ready, live] = await Promise.all([
      get(world, "pay.example.com"),
      get(world, "pay.example.com", "/readyz"),
      get(world, "pay.example.com", "/livez"),
    ]);
    expect([root.status, ready.status, live.status]).toEqual([200, 200, 200]);
    expect(root.headers["x-sim-load-balancer"]).toBe("k8s-payments-paymenta-3a7c1e9b20");
  });

  it("names that do not resolve (no record, or an alias to a deleted ALB) answer 404 marked NXDOMAIN", async () => {
    const [none, deletedAlb] = await Promise.all([
      get(world, "nosuch.example.com"),
      get(world, "api.example.com", "/readyz"),
    ]);
    for (const r of [none, deletedAlb]) {
      expect(r.status).toBe(404);
      expect(r.headers["x-sim-dns"]).toBe("NXDOMAIN");
    }
  });

  it("test.example.com: 502 from CloudFront while the origin is the deleted ALB, 200 only once the update is Deployed", async () => {
    const before = await get(world, "test.example.com");
    expect(before.status).toBe(502);
    expect(before.headers["x-cache"]).toBe("Error from cloudfront");
    expect(before.headers.server).toBe("CloudFront");
    expect(before.headers.via).toMatch(/\.cloudfront\.net \(CloudFront\)$/);
    expect(before.headers["x-amz-cf-id"]).toBeTruthy();
    expect(before.body).toContain("<H1>502 ERROR</H1>");
    expect(before.body).toContain("The request could not be satisfied");

    const live = [...world.aws.world.loadBalancers.values()].find((lb) => lb.state === "active");
    if (!live) throw new Error("the seed has a live load balancer (payments)");
    const got = await cf.send(new GetDistributionConfigCommand({ Id: DIST }));
    const config = got.DistributionConfig;
    const origin = config?.Origins?.Items?.[0];
    if (!config || !origin) throw new Error("the distribution has an origin");
    origin.DomainName = live.dnsName;
    const updated = await cf.send(
      new UpdateDistributionCommand({ Id: DIST, IfMatch: got.ETag, DistributionConfig: config }),
    );
    expect(updated.Distribution?.Status).toBe("InProgress");

    // Until the new config has propagated, the edges still forward to the old (deleted) origin.
    const during = await get(world, "test.example.com");
    expect(during.status).toBe(502);

    offset += DEPLOY_MS;
    const status = await cf.send(new GetDistributionCommand({ Id: DIST }));
    expect(status.Distribution?.Status).toBe("Deployed");
    const [root, ready, liveZ] = await Promise.all([
      get(world, "test.example.com"),
      get(world, "test.example.com", "/readyz"),
      get(world, "test.example.com", "/livez"),
    ]);
    expect([root.status, ready.status, liveZ.status]).toEqual([200, 200, 200]);
    expect(root.headers["x-sim-load-balancer"]).toBe(live.name);
    expect(root.headers["x-cache"]).toBe("Miss from cloudfront");
  });

  it("a host that reaches a distribution without being one of its aliases is refused with 403", async () => {
    // A second name aliasing the distribution, which the distribution does not list as an alternate name.
    const zone = world.aws.world.hostedZones.get("Z0EXAMPLE7MYAPP0001");
    const d = world.aws.world.distributions.get(DIST);
    if (!zone || !d) throw new Error("seed zone and distribution");
    world.aws.world.changeRecords(zone.id, [
      {
        action: "CREATE",
        record: {
          name: "other.example.com",
          type: "A",
          aliasTarget: { hostedZoneId: "Z2FDTNDATAQYW2", dnsName: d.domainName, evaluateTargetHealth: false },
        },
      },
    ]);
    const r = await get(world, "other.example.com");
    expect(r.status).toBe(403);
    expect(r.headers["x-cache"]).toBe("Error from cloudfront");
  });
});
