/**
 * `preflight delete ns` on the incident's recovered world: the blast radius before anyone presses
 * delete — Argo CD owners (two is BLOCKED, said first), the AWS resources that go with the
 * namespace, the hostnames that would break — and nothing of another team's is counted.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { collectPreflight } from "../../../src/preflight/collect.js";
import { renderSlackMessage } from "../../../src/slack/blocks/index.js";
import type { KubeObject } from "../../sim/kube/index.js";
import { openAwsWorld, type AwsWorld } from "../helpers/aws-world.js";

let opened: AwsWorld | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

async function preflight(ns: string) {
  opened ??= await openAwsWorld("seed-recovered.yaml");
  const { w, c } = opened;
  return collectPreflight(
    createKubeAdapter(w.kube.kubeconfig()),
    { port: createAwsAdapter(c), cluster: "prod-eks" },
    ns,
  );
}

describe("preflight delete ns", () => {
  it("myapp: RISKY — its six ALBs go and six hostnames stop resolving; payments' ALB is not counted", async () => {
    const r = await preflight("myapp");
    expect(r.verdict).toBe("risky");
    expect(r.awsDeleted.filter((a) => a.type === "LoadBalancer")).toHaveLength(6);
    expect(r.awsDeleted.map((a) => a.name).join(" ")).not.toMatch(/payments/);
    expect(r.hostnames.map((h) => h.hostname).sort()).toEqual([
      "admin-api.example.com",
      "admin.example.com",
      "api.example.com",
      "cms-api.example.com",
      "cms.example.com",
      "worker.example.com",
    ]);
    expect(r.reasons.some((x) => /auto-sync \+ prune/.test(x))).toBe(true);
    expect(r.finalizerObjects.every((o) => o.owners.every((w) => w.status === "healthy"))).toBe(true);
    expect(renderSlackMessage({ type: "preflight", report: r }).text).toMatch(
      /^Delete namespace myapp: RISKY/,
    );
  });

  it("two Argo CD Applications owning the Namespace make it BLOCKED, said first", async () => {
    opened = await openAwsWorld("seed-recovered.yaml");
    const worker = opened.w.kube.store.get(
      "argoproj.io/v1alpha1",
      "Application",
      "argocd",
      "myapp-worker",
    ) as KubeObject & {
      status: { resources: unknown[] };
    };
    opened.w.kube.store.update({
      ...worker,
      status: {
        ...worker.status,
        resources: [...worker.status.resources, { version: "v1", kind: "Namespace", name: "myapp" }],
      },
    });
    const r = await preflight("myapp");
    expect(r.verdict).toBe("blocked");
    expect(r.reasons[0]).toMatch(/^2 Argo CD Applications manage Namespace myapp/);
  });

  it("a namespace that is already being deleted, or does not exist, is refused with the reason", async () => {
    expect((await preflight("nope")).reasons[0]).toMatch(/does not exist/);
  });
});
