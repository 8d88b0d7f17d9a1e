/**
 * The world's DNS server, asked by Node's resolver (c-ares) and by the real `dig`: hosted-zone
 * records with aliases resolved to the addresses of the load balancer or distribution they name,
 * the ELB and CloudFront names themselves, and NXDOMAIN wherever the target is gone — the old ALB
 * names of the incident.
 */
import { execFile } from "node:child_process";
import { Resolver } from "node:dns/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorld, type World } from "../../sim/world.js";

const SEED = fileURLToPath(new URL("../../fixtures/scenarios/seed-incident.yaml", import.meta.url));
const ZONE = "Z0EXAMPLE7MYAPP0001";
/** The stuck Ingress's ALB, deleted before the seed's snapshot. */
const DELETED_ELB = "k8s-myapp-myappwor-0733a56cbb-1559597038.ap-northeast-2.elb.amazonaws.com";

function dig(world: World, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      "dig",
      [`@${world.dns.host}`, "-p", String(world.dns.port), "+time=2", "+tries=1", ...args],
      { timeout: 15_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`dig ${args.join(" ")}: ${err.message} ${stderr}`));
        else resolve(stdout);
      },
    );
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

const sorted = (xs: string[]): string[] => [...xs].sort();

describe("DNS server over the seed world", () => {
  let world: World;
  let resolver: Resolver;
  let liveElb: string;
  let cloudfront: string;

  beforeAll(async () => {
    world = await startWorld({ scenario: SEED, lbc: false });
    resolver = new Resolver({ timeout: 2000, tries: 1 });
    resolver.setServers([world.dns.address]);
    const lb = [...world.aws.world.loadBalancers.values()].find((x) => x.state === "active");
    const d = world.aws.world.distributions.get("E2MYAPPTEST0001");
    if (!lb || !d) throw new Error("seed: a live ALB and the distribution");
    liveElb = lb.dnsName;
    cloudfront = d.domainName;
  });
  afterAll(async () => {
    await world.stop();
  });

  it("answers an existing ELB name with addresses and a deleted one with NXDOMAIN (Node's resolver)", async () => {
    const addrs = await resolver.resolve4(liveElb);
    expect(addrs.length).toBeGreaterThanOrEqual(2);
    for (const a of addrs) expect(a).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    // Stable: the same name gives the same addresses, with or without `dualstack.`.
    expect(sorted(await resolver.resolve4(`dualstack.${liveElb}`))).toEqual(sorted(addrs));
    expect(await code(resolver.resolve4(DELETED_ELB))).toBe("ENOTFOUND");
  });

  it("resolves zone aliases to their target's addresses, CNAMEs as CNAMEs, and unknown names to NXDOMAIN", async () => {
    const [pay, elb, test, cf, cname, ns] = await Promise.all([
      resolver.resolve4("pay.example.com"),
      resolver.resolve4(liveElb),
      resolver.resolve4("test.example.com"),
      resolver.resolve4(cloudfront),
      resolver.resolveCname("www.example.com"),
      resolver.resolveNs("example.com"),
    ]);
    expect(sorted(pay)).toEqual(sorted(elb));
    expect(sorted(test)).toEqual(sorted(cf));
    expect(test.length).toBeGreaterThan(0);
    expect(cname).toEqual(["example.com"]);
    expect(ns).toHaveLength(4);
    expect(await code(resolver.resolve6(cloudfront))).toBe("resolved");
    // The alias of api.example.com still names the deleted old ALB; a missing name is plain NXDOMAIN.
    expect(await code(resolver.resolve4("api.example.com"))).toBe("ENOTFOUND");
    expect(await code(resolver.resolve4("nosuch.example.com"))).toBe("ENOTFOUND");
    // A name that exists with no record of the asked type: NODATA, not NXDOMAIN.
    expect(await code(resolver.resolveTxt("pay.example.com"))).toBe("ENODATA");
  });

  it("follows Route 53 changes and load balancer deletions immediately", async () => {
    const aws = world.aws.world;
    const lb = [...aws.loadBalancers.values()].find((x) => x.dnsName === liveElb);
    if (!lb) throw new Error("live ALB");
    aws.changeRecords(ZONE, [
      {
        action: "CREATE",
        record: {
          name: "later.example.com",
          type: "A",
          aliasTarget: {
            hostedZoneId: lb.canonicalHostedZoneId,
            dnsName: `dualstack.${lb.dnsName}`,
            evaluateTargetHealth: true,
          },
        },
      },
    ]);
    expect(sorted(await resolver.resolve4("later.example.com"))).toEqual(
      sorted(await resolver.resolve4(liveElb)),
    );
    aws.deleteLoadBalancer(lb.arn);
    expect(await code(resolver.resolve4(liveElb))).toBe("ENOTFOUND");
    expect(await code(resolver.resolve4("later.example.com"))).toBe("ENOTFOUND");
  });

  it("answers the real dig over UDP and TCP", async () => {
    const cf = (await dig(world, ["+short", cloudfront, "A"])).trim().split("\n");
    const test = (await dig(world, ["+short", "test.example.com", "A"])).trim().split("\n");
    expect(sorted(test)).toEqual(sorted(cf));
    expect(test.length).toBeGreaterThan(0);

    const gone = await dig(world, [DELETED_ELB, "A"]);
    expect(gone).toMatch(/status: NXDOMAIN/);
    const goneTcp = await dig(world, ["+tcp", DELETED_ELB, "A"]);
    expect(goneTcp).toMatch(/status: NXDOMAIN/);

    const alias = await dig(world, ["api.example.com", "A"]);
    expect(alias).toMatch(/status: NXDOMAIN/);
    // Negative answers carry the zone's SOA, as Route 53's do.
    expect(alias).toMatch(
      /AUTHORITY SECTION:\s*\nexample\.com\.\s+\d+\s+IN\s+SOA\s+ns-1536\.awsdns-00\.co\.uk\./,
    );

    const www = await dig(world, ["+tcp", "+short", "www.example.com", "CNAME"]);
    expect(www.trim()).toBe("example.com.");
  });
});
