/**
 * The traffic-path repair against the seed world through the real SDK clients: the plan made from a
 * fresh trace (exact Route 53 DELETE + CREATE, the CloudFront origin with the ETag read when planning),
 * applied by the executor's repoint step, and refused as STALE — with nothing written — when the
 * world moved after planning. A load balancer of another stack is never guessed.
 */
import { GetDistributionConfigCommand, UpdateDistributionCommand } from "@aws-sdk/client-cloudfront";
import { ChangeResourceRecordSetsCommand } from "@aws-sdk/client-route-53";
import { afterEach, describe, expect, it } from "vitest";
import { applyRepoint } from "../../../src/actions/repoint-path.js";
import type { RepointPathAction } from "../../../src/requests/model.js";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { planPathRepair } from "../../../src/traffic/repoint.js";
import { traceNamespace } from "../../../src/traffic/trace.js";
import { openAwsWorld, recoverSeed, type AwsWorld } from "../helpers/aws-world.js";

let opened: AwsWorld | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

function hostOf(w: AwsWorld["w"], ingress: string): string {
  const o = w.kube.store.get("networking.k8s.io/v1", "Ingress", "myapp", ingress) as {
    status: { loadBalancer: { ingress: { hostname: string }[] } };
  };
  return o.status.loadBalancer.ingress[0]?.hostname ?? "";
}

function writes(w: AwsWorld["w"]) {
  return w.aws
    .calls()
    .filter((c) => c.action === "ChangeResourceRecordSets" || c.action === "UpdateDistribution");
}

describe("repoint: plan and apply", () => {
  it("after the incident's recovery: one CloudFront step with the planning ETag; applied, the path traces ok", async () => {
    opened = await openAwsWorld("seed-recovered.yaml");
    const { w, c } = opened;
    const aws = createAwsAdapter(c);
    const kube = createKubeAdapter(w.kube.kubeconfig());
    const { plan } = await planPathRepair(aws, kube, { namespace: "myapp" }, () => new Date());
    expect(plan.questions).toEqual([]);
    const action = plan.action as RepointPathAction;
    expect(action.hostnames).toEqual(["test.example.com"]);
    expect(action.steps).toHaveLength(1);
    const step = action.steps[0];
    if (step?.kind !== "cloudfront-origin") throw new Error("expected a CloudFront step");
    expect(step.distributionId).toBe("E2MYAPPTEST0001");
    expect(step.to).toBe(hostOf(w, "myapp-worker-ingress"));
    const etag = (await c.cloudfront.send(new GetDistributionConfigCommand({ Id: "E2MYAPPTEST0001" }))).ETag;
    expect(step.etag).toBe(etag);

    const outcome = await applyRepoint({ aws }, "req-test", action);
    expect(outcome.state).toBe("DONE");
    expect(outcome.applied.distributions).toEqual(["E2MYAPPTEST0001"]);
    const after = await traceNamespace(aws, kube, "myapp", () => new Date());
    expect(after.paths.filter((p) => p.verdict !== "ok").map((p) => p.hostname)).toEqual([]);

    // A second run (a resumed attempt) finds it applied and writes nothing more.
    const before = writes(w).length;
    const again = await applyRepoint({ aws }, "req-test", action);
    expect(again.state).toBe("DONE");
    expect(again.message).toMatch(/already applied/);
    expect(writes(w)).toHaveLength(before);
  });

  it("on the seed after a forced removal: the worker alias as DELETE + CREATE in one batch, the origin; other stale names are questions", async () => {
    opened = await openAwsWorld("seed-incident.yaml");
    const { w, c } = opened;
    await recoverSeed(w, ["myapp-worker-ingress"]);
    const aws = createAwsAdapter(c);
    const kube = createKubeAdapter(w.kube.kubeconfig());
    const { plan } = await planPathRepair(aws, kube, { namespace: "myapp" }, () => new Date());
    const action = plan.action as RepointPathAction;
    const r53 = action.steps.find((s) => s.kind === "route53");
    if (r53?.kind !== "route53") throw new Error("expected a Route 53 step");
    expect(r53.changes.map((ch) => [ch.action, ch.record.name])).toEqual([
      ["DELETE", "worker.example.com"],
      ["CREATE", "worker.example.com"],
    ]);
    expect(r53.changes[1]?.record.alias?.dnsName.toLowerCase()).toContain(
      hostOf(w, "myapp-worker-ingress").toLowerCase(),
    );
    expect(action.steps.some((s) => s.kind === "cloudfront-origin")).toBe(true);
    // The other five names lost ALBs whose owners are not back: asked, never pointed at the worker.
    expect(plan.questions).toHaveLength(5);
    for (const q of plan.questions) expect(q).toMatch(/cannot be established/);
    expect(plan.questions.join("\n")).not.toMatch(/candidate|k8s-myapp-myappwor-0733a56cbb \(/);
    // The card's targets: the owner from the controller's tags, the cluster, the hosts, the evidence.
    expect(action.targets).toEqual([
      expect.objectContaining({
        loadBalancer: "k8s-myapp-myappwor-0733a56cbb",
        owner: "Ingress myapp/myapp-worker-ingress",
        namespaces: ["myapp"],
        cluster: "prod-eks",
        serves: ["test.example.com", "worker.example.com"],
        hostnames: expect.arrayContaining(["test.example.com", "worker.example.com"]) as unknown,
      }),
    ]);
    expect(action.targets?.[0]?.established).toMatch(
      /exactly the name cluster prod-eks's controller derives/,
    );

    const outcome = await applyRepoint({ aws }, "req-seed", action);
    expect(outcome.state).toBe("DONE");
    expect(outcome.applied.route53Changes).toHaveLength(1);
    const after = await traceNamespace(aws, kube, "myapp", () => new Date());
    const ok = after.paths.filter((p) => p.verdict === "ok").map((p) => p.hostname);
    expect(ok).toEqual(expect.arrayContaining(["test.example.com", "worker.example.com"]));
  });

  it("a distribution edited after planning: STALE (CloudFront refuses the planning ETag), nothing written", async () => {
    opened = await openAwsWorld("seed-recovered.yaml");
    const { w, c } = opened;
    const aws = createAwsAdapter(c);
    const { plan } = await planPathRepair(
      aws,
      createKubeAdapter(w.kube.kubeconfig()),
      { namespace: "myapp" },
      () => new Date(),
    );
    // Someone else edits the distribution (a comment) in between.
    const got = await c.cloudfront.send(new GetDistributionConfigCommand({ Id: "E2MYAPPTEST0001" }));
    await c.cloudfront.send(
      new UpdateDistributionCommand({
        Id: "E2MYAPPTEST0001",
        IfMatch: got.ETag,
        DistributionConfig: { ...got.DistributionConfig!, Comment: "edited by someone else" },
      }),
    );
    const origin = got.DistributionConfig?.Origins?.Items?.[0]?.DomainName;
    const before = writes(w).length;
    const outcome = await applyRepoint({ aws }, "req-stale", plan.action as RepointPathAction);
    expect(outcome.state).toBe("STALE");
    expect(outcome.message).toMatch(/Nothing was changed/);
    expect(writes(w)).toHaveLength(before);
    const now = await c.cloudfront.send(new GetDistributionConfigCommand({ Id: "E2MYAPPTEST0001" }));
    expect(now.DistributionConfig?.Origins?.Items?.[0]?.DomainName).toBe(origin);
  });

  it("a record changed after planning: STALE before any write, the record left as the other person set it", async () => {
    opened = await openAwsWorld("seed-incident.yaml");
    const { w, c } = opened;
    await recoverSeed(w, ["myapp-worker-ingress"]);
    const aws = createAwsAdapter(c);
    const { plan } = await planPathRepair(
      aws,
      createKubeAdapter(w.kube.kubeconfig()),
      { namespace: "myapp" },
      () => new Date(),
    );
    const zoneId = (await aws.hostedZones())[0]?.id ?? "";
    // Someone else points worker.example.com at a maintenance page in between: the alias goes, a
    // CNAME comes (an A alias and a CNAME cannot share a name; Route 53 refuses an alias to a name
    // outside the target zone, so a CNAME is how this is done).
    const [rec] = await aws.recordSets(zoneId, "worker.example.com");
    await c.route53.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: zoneId,
        ChangeBatch: {
          Changes: [
            {
              Action: "DELETE",
              ResourceRecordSet: {
                Name: "worker.example.com",
                Type: "A",
                AliasTarget: {
                  HostedZoneId: rec?.alias?.hostedZoneId ?? "",
                  DNSName: rec?.alias?.dnsName ?? "",
                  EvaluateTargetHealth: rec?.alias?.evaluateTargetHealth ?? false,
                },
              },
            },
            {
              Action: "CREATE",
              ResourceRecordSet: {
                Name: "worker.example.com",
                Type: "CNAME",
                TTL: 60,
                ResourceRecords: [{ Value: "maintenance.example.net" }],
              },
            },
          ],
        },
      }),
    );
    const before = writes(w).length;
    const outcome = await applyRepoint({ aws }, "req-stale-r53", plan.action as RepointPathAction);
    expect(outcome.state).toBe("STALE");
    expect(outcome.message).toMatch(/no longer the ones approved/);
    expect(writes(w)).toHaveLength(before);
    const [now] = await aws.recordSets(zoneId, "worker.example.com");
    expect(JSON.stringify(now)).toContain("maintenance.example.net");
  });

  it("ALBs of other stacks with no evidence: no step for that origin, an honest question; --to must serve the host", async () => {
    opened = await openAwsWorld("seed-incident.yaml");
    const { w, c } = opened;
    // Re-created Ingresses that are not the worker: nothing says either replaces the worker's origin.
    await recoverSeed(w, ["myapp-web-a", "myapp-web-b"]);
    const aws = createAwsAdapter(c);
    const kube = createKubeAdapter(w.kube.kubeconfig());
    const ns = await planPathRepair(aws, kube, { namespace: "myapp" }, () => new Date());
    const q = ns.plan.questions.find((x) => x.startsWith("test.example.com"));
    expect(q).toMatch(/cannot be established/);
    expect(q).toMatch(/--to/);
    expect(q).not.toMatch(/candidate/);
    expect(ns.plan.action?.steps.some((s) => s.kind === "cloudfront-origin")).toBeFalsy();

    // The requester names one (its rule names no host: it serves any): planned, the unknown old
    // owner said as the risk.
    const lbs = await aws.allLoadBalancers();
    const chosen = lbs.find((l) => l.dnsName === hostOf(w, "myapp-web-b"));
    expect(chosen).toBeDefined();
    const picked = await planPathRepair(
      aws,
      kube,
      { hostnames: ["test.example.com"] },
      () => new Date(),
      chosen ? { choose: chosen.name } : {},
    );
    const step = picked.plan.action?.steps[0];
    expect(step?.kind).toBe("cloudfront-origin");
    expect(step?.kind === "cloudfront-origin" ? step.to : "").toBe(chosen?.dnsName);
    expect(picked.plan.action?.targets?.[0]).toMatchObject({
      loadBalancer: chosen?.name,
      owner: "Ingress myapp/myapp-web-b",
      serves: ["*"],
    });
    expect(picked.plan.action?.risks?.[0]).toMatch(/could not be established; Ingress myapp\/myapp-web-b/);

    const unknown = await planPathRepair(aws, kube, { hostnames: ["test.example.com"] }, () => new Date(), {
      choose: "k8s-nope-0000000000",
    });
    expect(unknown.plan.action).toBeUndefined();
    expect(unknown.plan.refused[0]).toMatch(/No load balancer is named k8s-nope-0000000000/);
  });
});
