/**
 * `trace <hostname>` after the incident's recovery: the namespace was forced out and Argo CD
 * re-created it, so the controller gave the worker Ingress a new ALB under the same derived name
 * and a new DNS name. The CloudFront origin of test.example.com still names the deleted ALB. The
 * hostname trace proves the replacement from ownership evidence (the dead name is exactly the one
 * the controller derives for the worker Ingress, whose live ALB serves test.example.com) and offers
 * the repair — reading a few records, not the zone.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createAwsAdapter } from "../../../src/aws/sdk-adapter.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { planPathRepair } from "../../../src/traffic/repoint.js";
import { traceHostnames } from "../../../src/traffic/trace.js";
import { openAwsWorld, recoverSeed, type AwsWorld } from "../helpers/aws-world.js";

let opened: AwsWorld | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});

describe("trace <hostname> after the stack was re-created under a new name", () => {
  it("names the new ALB as the origin's replacement on ownership evidence, and plans the repair", async () => {
    opened = await openAwsWorld("seed-incident.yaml");
    const { w, c } = opened;
    await recoverSeed(w, ["myapp-worker-ingress"]);
    const ing = w.kube.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress") as {
      status: { loadBalancer: { ingress: { hostname: string }[] } };
    };
    const fresh = ing.status.loadBalancer.ingress[0]?.hostname ?? "";
    expect(fresh).not.toBe("");

    const aws = createAwsAdapter(c);
    const kube = createKubeAdapter(w.kube.kubeconfig());
    w.aws.resetCalls();
    const trace = await traceHostnames(aws, kube, ["test.example.com"], () => new Date());
    const hops = trace.paths.flatMap((p) => p.hops);
    const origin = hops.find(
      (h) => h.kind === "origin" && (h.verdict === "stale" || h.verdict === "mismatched"),
    );
    expect(origin, JSON.stringify(hops.map((h) => [h.kind, h.verdict, h.label]))).toBeDefined();
    expect(origin?.replacement?.dnsName).toBe(fresh);
    // A few names were asked for (the traced one and ExternalDNS ownership records), not the zone.
    const named = w.aws.calls().filter((x) => x.action === "ListResourceRecordSets");
    expect(named.length).toBeLessThanOrEqual(1 + 10);

    const { plan } = await planPathRepair(aws, kube, { hostnames: ["test.example.com"] }, () => new Date());
    expect(plan.questions.filter((q) => q.startsWith("test.example.com"))).toEqual([]);
    expect(JSON.stringify(plan)).toContain(fresh);
  });
});
