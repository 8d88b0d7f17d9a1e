/**
 * `trace` reads the tags only of the load balancers that matter: the cluster's own (through the
 * Tagging API, 100 a page) and those a traced path reaches. An account full of other teams' load
 * balancers costs no DescribeTags call per 20 of them, and an on-path load balancer of another
 * cluster is still named with its cluster.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../../src/cli.js";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { traceHostnamesWithReads } from "../../../src/traffic/trace.js";
import { openAwsWorld, type AwsWorld } from "../helpers/aws-world.js";
import { linesIo } from "../../helpers/cli-io.js";

let opened: AwsWorld | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

const OTHERS = 300;

describe("trace in a crowded account", () => {
  it("reads tags for the cluster's load balancers and the path's, not for every load balancer", async () => {
    opened = await openAwsWorld("seed-incident.yaml");
    const { w, c } = opened;
    const world = w.aws.world;
    for (let i = 0; i < OTHERS; i++) {
      world.createLoadBalancer({
        name: `k8s-other${String(i).padStart(3, "0")}-web-${String(i).padStart(8, "0")}`,
        tags: { "elbv2.k8s.aws/cluster": "shared-eks", "ingress.k8s.aws/stack": `other${String(i)}/web` },
      });
    }
    // A partner's name, served by another cluster's load balancer.
    const partner = world.createLoadBalancer({
      name: "k8s-partner-portal-0a1b2c3d4e",
      tags: { "elbv2.k8s.aws/cluster": "partner-eks", "ingress.k8s.aws/stack": "partner/portal" },
    });
    const zone = [...world.hostedZones.values()].find((z) => z.name.replace(/\.$/, "") === "example.com");
    expect(zone).toBeDefined();
    world.changeRecords(zone?.id ?? "", [
      {
        action: "CREATE",
        record: {
          name: "partner.example.com.",
          type: "A",
          aliasTarget: {
            hostedZoneId: partner.canonicalHostedZoneId,
            dnsName: `dualstack.${partner.dnsName}.`,
            evaluateTargetHealth: true,
          },
        },
      },
    ]);
    w.aws.resetCalls();

    const { trace: t, loadBalancers } = await traceHostnamesWithReads(
      createAwsAdapter(c),
      createKubeAdapter(w.kube.kubeconfig()),
      ["partner.example.com", "test.example.com"],
      () => new Date(),
    );

    const calls = w.aws.calls();
    const describeTags = calls.filter((x) => x.action === "DescribeTags");
    // One call for the one untagged-for-us load balancer on the paths; before, ceil(301+/20) calls.
    expect(describeTags.length).toBeLessThanOrEqual(1);
    expect(calls.filter((x) => x.action === "GetResources").length).toBeLessThanOrEqual(2);
    // The partner's load balancer is on a path: its tags were read, and the path says whose it is not.
    const tagsOf = (name: string) => loadBalancers.find((l) => l.name === name)?.tags;
    expect(tagsOf(partner.name)?.["elbv2.k8s.aws/cluster"]).toBe("partner-eks");
    expect(tagsOf("k8s-other000-web-00000000")).toEqual({});
    const partnerPath = t.paths.find((p) => p.hostname === "partner.example.com");
    expect(partnerPath?.hops.map((h) => h.kind)).toEqual(["record", "load-balancer"]);
    expect(partnerPath?.hops[1]?.why).toMatch(/no Ingress or Service of this cluster owns it/);
    const test = t.paths.find((p) => p.hostname === "test.example.com");
    expect(test?.verdict).toBe("stale");
    expect(t.warnings).toEqual([]);

    // The same from where an operator starts: `npm run unstuck -- trace partner.example.com`.
    const dir = await mkdtemp(join(tmpdir(), "unstuck-trace-scale-"));
    try {
      const kubeconfig = join(dir, "kubeconfig");
      await w.kube.writeKubeconfig(kubeconfig);
      const out: string[] = [];
      const io = linesIo(out);
      w.aws.resetCalls();
      const code = await runCli(
        ["trace", "partner.example.com", "--kubeconfig", kubeconfig],
        w.aws.env(),
        io,
      );
      expect(code, out.join("\n")).toBe(0);
      expect(out.join("\n")).toContain("partner.example.com");
      expect(w.aws.calls().filter((x) => x.action === "DescribeTags").length).toBeLessThanOrEqual(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("reads the distribution list once for a burst of traces, and again when a name points past it", async () => {
    opened = await openAwsWorld("seed-incident.yaml");
    const { w, c } = opened;
    const aws = createAwsAdapter(c);
    const kube = createKubeAdapter(w.kube.kubeconfig());
    const lists = (): number => w.aws.calls().filter((x) => x.action === "ListDistributions").length;
    w.aws.resetCalls();
    for (let i = 0; i < 3; i++)
      await traceHostnamesWithReads(aws, kube, ["test.example.com"], () => new Date());
    expect(lists()).toBe(1);

    // A distribution made since the list was read, and a name pointing at it: the trace reads again.
    const world = w.aws.world;
    const fresh = world.createDistribution({
      config: world.buildDistributionConfig({
        aliases: ["new.example.com"],
        origins: [{ id: "web", domainName: "origin.example.net" }],
      }),
    });
    const zone = [...world.hostedZones.values()].find((z) => z.name.replace(/\.$/, "") === "example.com");
    world.changeRecords(zone?.id ?? "", [
      {
        action: "CREATE",
        record: { name: "new.example.com.", type: "CNAME", ttl: 60, values: [fresh.domainName] },
      },
    ]);
    const { trace } = await traceHostnamesWithReads(aws, kube, ["new.example.com"], () => new Date());
    expect(lists()).toBe(2);
    const hops = trace.paths.find((p) => p.hostname === "new.example.com")?.hops ?? [];
    expect(hops.map((h) => h.kind)).toContain("distribution");
    expect(JSON.stringify(hops)).toContain("origin.example.net");
  });
});
