/**
 * The AWS reads that keep the orphan scan and the preflight cheap in a big account, through the
 * real SDK against the AWS simulator: interfaces of many groups in batches of 200, load balancers
 * and target groups with only one cluster's tags (Tagging API instead of DescribeTags), target
 * groups by ARN with an unknown one among them, and a tag asked with several values.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createAwsClients, destroyAwsClients, type AwsClients } from "../../../src/aws/clients.js";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import { startAwsSim, type AwsSim } from "../../sim/aws/index.js";

let sim: AwsSim | undefined;
let clients: AwsClients | undefined;
afterEach(async () => {
  if (clients) destroyAwsClients(clients);
  await sim?.stop();
  sim = undefined;
  clients = undefined;
});

async function start(): Promise<{ sim: AwsSim; aws: ReturnType<typeof createAwsAdapter> }> {
  const s = await startAwsSim({});
  sim = s;
  clients = createAwsClients({
    region: s.world.region,
    endpoint: s.url,
    credentials: { accessKeyId: "AKIAUNSTUCKTEST00001", secretAccessKey: "x" },
    maxAttempts: 1,
  });
  return { sim: s, aws: createAwsAdapter(clients) };
}

const hex = (n: number): string => n.toString(16).padStart(15, "0");

describe("edge reads for a big account", () => {
  it("finds the interfaces of 450 groups in three calls, every asked group a key, shared interfaces under each group", async () => {
    const { sim, aws } = await start();
    const groups: string[] = [];
    for (let i = 0; i < 450; i++) {
      groups.push(
        sim.world.createSecurityGroup({ id: `sg-0e${hex(i)}`, name: `g${String(i)}`, description: "x" }).id,
      );
    }
    const unrelated = sim.world.createSecurityGroup({
      id: "sg-0f000000000000001",
      name: "other",
      description: "x",
    });
    // Every third group has one interface; interface 0 also carries group 449 (two groups, two batches).
    const expected = new Map<string, string[]>(groups.map((g) => [g, []]));
    for (let i = 0; i < 450; i += 3) {
      const g = groups[i] ?? "";
      const extra = i === 0 ? [groups[449] ?? ""] : [];
      const eni = sim.world.createNetworkInterface({
        groups: [g, ...extra],
        status: "in-use",
        attached: true,
      });
      expected.get(g)?.push(eni.id);
      for (const e of extra) expected.get(e)?.push(eni.id);
    }
    sim.world.createNetworkInterface({ groups: [unrelated.id], status: "in-use", attached: true });

    sim.resetCalls();
    const found = await aws.networkInterfacesUsingAny(groups);
    const calls = sim.calls().filter((c) => c.action === "DescribeNetworkInterfaces");
    expect(calls).toHaveLength(3);
    expect([...found.keys()].sort()).toEqual([...groups].sort());
    for (const [g, ids] of expected) {
      expect((found.get(g) ?? []).map((n) => n.id).sort(), g).toEqual([...ids].sort());
    }
    expect(found.has(unrelated.id)).toBe(false);
  });

  it("reads one cluster's load balancer and target group tags with the Tagging API, never DescribeTags", async () => {
    const { sim, aws } = await start();
    const ours = { "elbv2.k8s.aws/cluster": "prod-eks", "ingress.k8s.aws/stack": "shop/web" };
    const theirs = { "elbv2.k8s.aws/cluster": "stage-eks", "ingress.k8s.aws/stack": "shop/web" };
    const a = sim.world.createLoadBalancer({ name: "k8s-shop-web-prod", tags: ours });
    const b = sim.world.createLoadBalancer({ name: "k8s-shop-web-stage", tags: theirs });
    const c = sim.world.createLoadBalancer({ name: "hand-made" });
    const tgA = sim.world.createTargetGroup({ name: "k8s-shop-web-prod-tg", tags: ours });
    const tgB = sim.world.createTargetGroup({ name: "k8s-shop-web-stage-tg", tags: theirs });
    sim.world.createListener({ loadBalancerArn: a.arn, port: 80, defaultTargetGroupArn: tgA.arn });

    sim.resetCalls();
    const [lbs, tgs] = await Promise.all([
      aws.allLoadBalancers({ clusterTags: "prod-eks" }),
      aws.allTargetGroups({ clusterTags: "prod-eks" }),
    ]);
    expect(sim.calls().some((x) => x.action === "DescribeTags")).toBe(false);
    const tagsOf = new Map(lbs.map((l) => [l.arn, l.tags]));
    expect(tagsOf.get(a.arn)).toEqual(ours);
    expect(tagsOf.get(b.arn)).toEqual({});
    expect(tagsOf.get(c.arn)).toEqual({});
    const tg = new Map(tgs.map((t) => [t.arn, t]));
    expect(tg.get(tgA.arn)?.tags).toEqual(ours);
    expect(tg.get(tgA.arn)?.loadBalancerArns).toEqual([a.arn]);
    expect(tg.get(tgB.arn)?.tags).toEqual({});

    // Attachments only, then the tags of just the ones asked for.
    sim.resetCalls();
    const bare = await aws.allTargetGroups({ withoutTags: true });
    expect(bare.every((t) => Object.keys(t.tags).length === 0)).toBe(true);
    expect(bare.find((t) => t.arn === tgA.arn)?.loadBalancerArns).toEqual([a.arn]);
    expect(sim.calls().map((x) => x.action)).toEqual(["DescribeTargetGroups"]);
    const some = await aws.elbTagsOf([tgB.arn, b.arn]);
    expect(some.get(tgB.arn)).toEqual(theirs);
    expect(some.get(b.arn)).toEqual(theirs);
    expect(some.has(tgA.arn)).toBe(false);

    // Without the option every resource carries its own tags (DescribeTags), as before.
    const all = await aws.allLoadBalancers();
    expect(new Map(all.map((l) => [l.arn, l.tags])).get(b.arn)).toEqual(theirs);
  });

  it("describes target groups by ARN in batches of 20, an unknown ARN among them costing only itself", async () => {
    const { sim, aws } = await start();
    const arns: string[] = [];
    for (let i = 0; i < 25; i++) arns.push(sim.world.createTargetGroup({ name: `tg-${String(i)}` }).arn);
    const gone = arns[3] ?? "";
    sim.world.deleteTargetGroup(gone);
    const found = await aws.targetGroupsByArn(arns);
    expect(found.map((t) => t.arn).sort()).toEqual(arns.filter((a) => a !== gone).sort());
    expect(await aws.targetGroupsByArn([gone])).toEqual([]);
  });

  it("asks a tag with several values in one GetResources (any of them), still AND-ed with the other tags", async () => {
    const { sim, aws } = await start();
    const mk = (name: string, cluster: string, stack: string) =>
      sim.world.createLoadBalancer({
        name,
        tags: { "elbv2.k8s.aws/cluster": cluster, "ingress.k8s.aws/stack": stack },
      }).arn;
    const one = mk("lb-one", "prod-eks", "shop/a");
    const two = mk("lb-two", "prod-eks", "shop/b");
    mk("lb-three", "prod-eks", "shop/c");
    mk("lb-four", "stage-eks", "shop/a");
    sim.resetCalls();
    const found = await aws.resourcesByTags(
      { "elbv2.k8s.aws/cluster": "prod-eks", "ingress.k8s.aws/stack": ["shop/a", "shop/b"] },
      ["elasticloadbalancing:loadbalancer"],
    );
    expect(found.map((r) => r.arn).sort()).toEqual([one, two].sort());
    expect(sim.calls().filter((c) => c.action === "GetResources")).toHaveLength(1);
  });
});
