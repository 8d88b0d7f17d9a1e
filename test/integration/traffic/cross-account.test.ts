/**
 * DNS and CDN in a shared edge account, the cluster in a workload account: the seed world split in
 * two simulated accounts — A (the workload, the scenario's 123456789012) keeps the load balancers,
 * target groups and interfaces, B (the edge, 222222222222) gets the Route 53 zone and the CloudFront
 * distributions whose origins are A's load balancers. The product's clients assume the cluster's
 * role with the pod's keys and the edge role with the cluster's credentials (the SDK's
 * `fromTemporaryCredentials`, through the simulator's STS). The trace walks Route 53 → CloudFront
 * (B) → ALB (A) → Ingress; the repair writes in B only, signed as B's assumed role; a refused role
 * or permission in one account is a partial trace that names the account and role.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { applyRepoint } from "../../../src/actions/repoint-path.js";
import type { RepointPathAction } from "../../../src/requests/model.js";
import { createAwsClients, destroyAwsClients, type AwsClientOptions } from "../../../src/aws/clients.js";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import { runCli } from "../../../src/cli.js";
import { ErrorCode } from "../../../src/errors.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { planPathRepair } from "../../../src/traffic/repoint.js";
import { traceHostnames, traceNamespace } from "../../../src/traffic/trace.js";
import { AwsWorld as SimAwsWorld } from "../../sim/aws/index.js";
import type { World } from "../../sim/world.js";
import { openAwsWorld, recoverSeed, type AwsWorld } from "../helpers/aws-world.js";
import { linesIo } from "../../helpers/cli-io.js";

const WORKLOAD = "123456789012";
const EDGE = "222222222222";
const CLUSTER_ROLE = `arn:aws:iam::${WORKLOAD}:role/unstuck`;
const EDGE_ROLE = `arn:aws:iam::${EDGE}:role/unstuck-edge`;
const EDGE_EXTERNAL_ID = "unstuck-edge-7";
/** The pod's own keys (IRSA / Pod Identity in a cluster): the chain's first link, in account A. */
const POD_KEYS = { accessKeyId: "AKIAPODKEYS000000001", secretAccessKey: "x" };

let opened: AwsWorld | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) c();
  await opened?.close();
  opened = undefined;
});

/** The seed world with its zones and distributions moved to the edge account B, and the two roles. */
async function openSplit(file = "seed-incident.yaml"): Promise<{ w: World; edge: SimAwsWorld }> {
  opened = await openAwsWorld(file);
  const { w } = opened;
  const a = w.aws.world;
  const edge = new SimAwsWorld({ accountId: EDGE, region: a.region, now: () => a.now(), seed: 7 });
  for (const [id, z] of a.hostedZones) edge.hostedZones.set(id, z);
  for (const [id, d] of a.distributions) edge.distributions.set(id, d);
  a.hostedZones.clear();
  a.distributions.clear();
  w.aws.accounts.addAccount(edge);
  w.aws.accounts.addRole({ arn: CLUSTER_ROLE, trustedAccounts: [WORKLOAD] });
  w.aws.accounts.addRole({ arn: EDGE_ROLE, trustedAccounts: [WORKLOAD], externalId: EDGE_EXTERNAL_ID });
  return { w, edge };
}

/** The product's clients for this world, with the chain of roles given. */
function clientsFor(w: World, roles: Partial<AwsClientOptions>) {
  const c = createAwsClients({
    region: w.aws.world.region,
    endpoint: w.aws.url,
    credentials: POD_KEYS,
    maxAttempts: 1,
    ...roles,
  });
  cleanups.push(() => {
    destroyAwsClients(c);
  });
  return c;
}

const chain = { roleArn: CLUSTER_ROLE, edge: { roleArn: EDGE_ROLE, externalId: EDGE_EXTERNAL_ID } };

/** A's state the repair must not touch: its load balancers, groups, zones and distributions. */
function stateOf(world: SimAwsWorld): string {
  return JSON.stringify({
    lbs: [...world.loadBalancers.keys()].sort(),
    tgs: [...world.targetGroups.keys()].sort(),
    sgs: [...world.securityGroups.keys()].sort(),
    zones: world.hostedZones.size,
    distributions: world.distributions.size,
  });
}

describe("an edge account apart from the cluster's (assume-role chain)", () => {
  it("trace: Route 53 and CloudFront read in B as B's role, the ALB in A as the cluster's role, the Ingress found", async () => {
    const { w } = await openSplit();
    const aws = createAwsAdapter(clientsFor(w, chain));
    const t = await traceHostnames(
      aws,
      createKubeAdapter(w.kube.kubeconfig()),
      ["test.example.com", "worker.example.com"],
      () => new Date(),
    );
    expect(t.warnings).toEqual([]);
    expect(t.denied).toBeUndefined();
    const test = t.paths.find((p) => p.hostname === "test.example.com");
    expect(test?.hops.map((h) => [h.kind, h.verdict])).toEqual([
      ["record", "ok"],
      ["distribution", "ok"],
      ["origin", "stale"],
    ]);
    expect(test?.hops[2]?.ref).toMatchObject({ distributionId: "E2MYAPPTEST0001" });

    // Each call went to the account that holds what it reads, signed as that account's role.
    const calls = w.aws.calls().filter((c) => c.service !== "sts");
    const accountsOf = (service: string) => [
      ...new Set(calls.filter((c) => c.service === service).map((c) => c.account)),
    ];
    expect(accountsOf("route53")).toEqual([EDGE]);
    expect(accountsOf("cloudfront")).toEqual([EDGE]);
    expect(accountsOf("elbv2")).toEqual([WORKLOAD]);
    const roleOf = (key: string | undefined) => w.aws.accounts.session(key ?? "")?.roleArn;
    for (const c of calls) expect(roleOf(c.accessKeyId)).toBe(c.account === EDGE ? EDGE_ROLE : CLUSTER_ROLE);
    // One AssumeRole per role, shared by every client of its account: the edge role assumed with
    // the cluster role's session, the cluster role with the pod's keys.
    const [clusterSession, ...moreCluster] = w.aws.accounts.sessionsOf(CLUSTER_ROLE);
    const [edgeSession, ...moreEdge] = w.aws.accounts.sessionsOf(EDGE_ROLE);
    expect([moreCluster, moreEdge]).toEqual([[], []]);
    expect(clusterSession?.assumedBy).toBe(POD_KEYS.accessKeyId);
    expect(edgeSession?.assumedBy).toBe(clusterSession?.accessKeyId);
    expect(edgeSession?.sessionName).toBe("unstuck");
  });

  it("repoint: the Route 53 batch and the CloudFront update written in B with B's role, nothing in A changed", async () => {
    const { w, edge } = await openSplit();
    await recoverSeed(w, ["myapp-worker-ingress"]);
    const aws = createAwsAdapter(clientsFor(w, chain));
    const kube = createKubeAdapter(w.kube.kubeconfig());
    const { plan, trace } = await planPathRepair(aws, kube, { namespace: "myapp" }, () => new Date());
    expect(trace.warnings).toEqual([]);
    const action = plan.action as RepointPathAction;
    expect(action.steps.map((s) => s.kind).sort()).toEqual(["cloudfront-origin", "route53"]);
    // The new ALB (A) is the target; the edge account has none.
    expect(action.targets?.[0]?.owner).toBe("Ingress myapp/myapp-worker-ingress");
    expect(edge.loadBalancers.size).toBe(0);

    const a = w.aws.world;
    const before = stateOf(a);
    const aTrail = a.trail.length;
    const bTrail = edge.trail.length;
    w.aws.resetCalls();
    const outcome = await applyRepoint({ aws }, "req-cross", action);
    expect(outcome.state).toBe("DONE");

    // The writes: in B, signed with the keys STS handed out for B's role.
    const writes = w.aws
      .calls()
      .filter((c) => c.action === "ChangeResourceRecordSets" || c.action === "UpdateDistribution");
    expect(writes.map((c) => [c.action, c.status, c.account])).toEqual(
      expect.arrayContaining([
        ["ChangeResourceRecordSets", 200, EDGE],
        ["UpdateDistribution", 200, EDGE],
      ]),
    );
    expect(writes).toHaveLength(2);
    for (const c of writes) expect(w.aws.accounts.session(c.accessKeyId ?? "")?.roleArn).toBe(EDGE_ROLE);
    // B's CloudTrail has them as the assumed edge role; A's has nothing new and A's state is as it was.
    const events = edge.trail.slice(bTrail);
    expect(events.map((e) => e.eventName).sort()).toEqual(["ChangeResourceRecordSets", "UpdateDistribution"]);
    for (const e of events) {
      expect((e.detail["userIdentity"] as { arn: string }).arn).toBe(
        `arn:aws:sts::${EDGE}:assumed-role/unstuck-edge/unstuck`,
      );
    }
    expect(a.trail.slice(aTrail)).toEqual([]);
    expect(stateOf(a)).toBe(before);
    expect(w.aws.calls().filter((c) => c.account === WORKLOAD && c.status !== 200)).toEqual([]);

    // And the path is whole again, read through the same chain.
    const after = await traceNamespace(aws, kube, "myapp", () => new Date());
    const ok = after.paths.filter((p) => p.verdict === "ok").map((p) => p.hostname);
    expect(ok).toEqual(expect.arrayContaining(["test.example.com", "worker.example.com"]));
  });

  it("an edge role B does not let A assume: a partial trace naming the role and account, A's reads intact", async () => {
    const { w } = await openSplit();
    const other = `arn:aws:iam::${EDGE}:role/not-trusted`;
    const aws = createAwsAdapter(clientsFor(w, { roleArn: CLUSTER_ROLE, edge: { roleArn: other } }));
    const t = await traceHostnames(
      aws,
      createKubeAdapter(w.kube.kubeconfig()),
      ["test.example.com"],
      () => new Date(),
    );
    expect(t.denied).toEqual([
      { what: "Route 53 hosted zones", account: EDGE, role: other, action: "sts:AssumeRole" },
      { what: "CloudFront distributions", account: EDGE, role: other, action: "sts:AssumeRole" },
    ]);
    expect(t.warnings).toHaveLength(2);
    for (const warning of t.warnings) {
      expect(warning).toContain(`Cannot assume the edge account ${EDGE} (role ${other})`);
      expect(warning).toContain(`with the cluster's account ${WORKLOAD} (role ${CLUSTER_ROLE})`);
      expect(warning).toMatch(/AccessDenied: User: arn:aws:sts::123456789012:assumed-role\/unstuck\/unstuck/);
    }
    // The cluster's account answered: its load balancers were read.
    expect(
      w.aws
        .calls()
        .some((c) => c.action === "DescribeLoadBalancers" && c.status === 200 && c.account === WORKLOAD),
    ).toBe(true);
    expect(t.paths.every((p) => p.verdict !== "ok")).toBe(true);
  });

  it("a permission the edge role lacks: that read is named with its account and role, the rest of the path is traced", async () => {
    const { w } = await openSplit();
    const limited = `arn:aws:iam::${EDGE}:role/unstuck-edge-dns-only`;
    w.aws.accounts.addRole({
      arn: limited,
      trustedAccounts: [WORKLOAD],
      deny: ["cloudfront:ListDistributions"],
    });
    const aws = createAwsAdapter(clientsFor(w, { roleArn: CLUSTER_ROLE, edge: { roleArn: limited } }));
    const t = await traceHostnames(
      aws,
      createKubeAdapter(w.kube.kubeconfig()),
      ["test.example.com"],
      () => new Date(),
    );
    expect(t.denied).toEqual([
      {
        what: "CloudFront distributions",
        account: EDGE,
        role: limited,
        action: "cloudfront:ListDistributions",
      },
    ]);
    expect(t.warnings).toEqual([
      `Could not read CloudFront distributions: Missing IAM permission cloudfront:ListDistributions in the edge account ${EDGE} (role ${limited}): the role may not call it (AccessDenied).`,
    ]);
    // The record in B was read; the hop it leads to is unknown, never ok.
    const [p] = t.paths;
    expect(p?.hops.map((h) => [h.kind, h.verdict])).toEqual([
      ["record", "ok"],
      ["distribution", "unknown"],
    ]);
    expect(p?.verdict).toBe("unknown");
  });

  it("a write the edge role may not make: refused naming the edge account and role, and the distribution unchanged", async () => {
    const { w, edge } = await openSplit("seed-recovered.yaml");
    const readOnly = `arn:aws:iam::${EDGE}:role/unstuck-edge-read-only`;
    w.aws.accounts.addRole({
      arn: readOnly,
      trustedAccounts: [WORKLOAD],
      deny: ["cloudfront:UpdateDistribution"],
    });
    const aws = createAwsAdapter(clientsFor(w, { roleArn: CLUSTER_ROLE, edge: { roleArn: readOnly } }));
    const kube = createKubeAdapter(w.kube.kubeconfig());
    const { plan } = await planPathRepair(aws, kube, { namespace: "myapp" }, () => new Date());
    const action = plan.action as RepointPathAction;
    expect(action.steps.map((s) => s.kind)).toEqual(["cloudfront-origin"]);
    const before = JSON.stringify(edge.distributions.get("E2MYAPPTEST0001"));
    await expect(applyRepoint({ aws }, "req-denied", action)).rejects.toMatchObject({
      code: ErrorCode.Forbidden,
      message: `Missing IAM permission cloudfront:UpdateDistribution in the edge account ${EDGE} (role ${readOnly}): the role may not call it (AccessDenied).`,
      details: { account: EDGE, role: readOnly, action: "cloudfront:UpdateDistribution" },
    });
    expect(JSON.stringify(edge.distributions.get("E2MYAPPTEST0001"))).toBe(before);
  });

  it("the cluster's role alone (no edge): every service in the cluster's account, as one account did before", async () => {
    opened = await openAwsWorld("seed-incident.yaml");
    const { w } = opened;
    w.aws.accounts.addRole({ arn: CLUSTER_ROLE, trustedAccounts: [WORKLOAD] });
    const aws = createAwsAdapter(clientsFor(w, { roleArn: CLUSTER_ROLE }));
    const t = await traceHostnames(
      aws,
      createKubeAdapter(w.kube.kubeconfig()),
      ["test.example.com"],
      () => new Date(),
    );
    expect(t.warnings).toEqual([]);
    expect(t.paths[0]?.hops.map((h) => h.verdict)).toEqual(["ok", "ok", "stale"]);
    const signed = new Set(
      w.aws
        .calls()
        .filter((c) => c.service !== "sts")
        .map((c) => c.accessKeyId),
    );
    expect([...signed].map((k) => w.aws.accounts.session(k ?? "")?.roleArn)).toEqual([CLUSTER_ROLE]);
  });

  it("from the clusters file (roleArn, edge with its external id) through the terminal's services", async () => {
    const { w } = await openSplit();
    const dir = await mkdtemp(join(tmpdir(), "unstuck-cross-account-"));
    try {
      const kubeconfig = join(dir, "kubeconfig");
      await w.kube.writeKubeconfig(kubeconfig);
      const clusters = join(dir, "clusters.yaml");
      await writeFile(
        clusters,
        [
          "clusters:",
          "  prod-eks:",
          `    region: ${w.aws.world.region}`,
          `    endpoint: ${w.aws.url}`,
          `    roleArn: ${CLUSTER_ROLE}`,
          "    edge:",
          `      roleArn: ${EDGE_ROLE}`,
          `      externalId: ${EDGE_EXTERNAL_ID}`,
          "",
        ].join("\n"),
      );
      const env = {
        ...w.aws.env(),
        AWS_ACCESS_KEY_ID: POD_KEYS.accessKeyId,
        UNSTUCK_CLUSTERS_FILE: clusters,
        UNSTUCK_CLUSTER_NAME: "prod-eks",
      };
      const out: string[] = [];
      const io = linesIo(out);
      const code = await runCli(["trace", "test.example.com", "--kubeconfig", kubeconfig], env, io);
      expect(out.join("\n")).toMatch(/STALE +origin myapp-worker-alb/);
      expect(code).toBe(0);
      expect(w.aws.accounts.sessionsOf(EDGE_ROLE)).toHaveLength(1);
      expect(
        w.aws
          .calls()
          .filter((c) => c.service === "route53" || c.service === "cloudfront")
          .every((c) => c.account === EDGE),
      ).toBe(true);

      // A role ARN that is not one is refused with the file's own words, before any AWS call.
      await writeFile(clusters, `clusters:\n  prod-eks:\n    region: eu-west-1\n    roleArn: unstuck\n`);
      const calls = w.aws.calls().length;
      out.length = 0;
      const bad = await runCli(["trace", "test.example.com", "--kubeconfig", kubeconfig], env, io);
      expect(bad).not.toBe(0);
      expect(out.join("\n")).toMatch(
        /UNSTUCK_CLUSTERS_FILE: clusters\.prod-eks\.roleArn must be an IAM role ARN/,
      );
      expect(w.aws.calls()).toHaveLength(calls);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
