/**
 * `/unstuck ns` asked again about the same namespace, as happens all through an incident: the AWS
 * reads and the controllers' logs the last answer read leave as soon as the namespace reads as
 * Terminating, without waiting for its Ingress and then its load balancer, or for the controllers'
 * pods; what no list of the namespace decides leaves with its lists. The answer is still the whole one.
 */
import { describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { CHANNEL, REQUESTER, setup, slash, type Setup } from "./edge-runtime.js";

const INGRESSES = "/apis/networking.k8s.io/v1/namespaces/myapp/ingresses";
const CONTROLLER_PODS = "/api/v1/namespaces/kube-system/pods";

/** The answer cards about myapp posted in the channel so far. */
function answerCards(s: Setup) {
  return s.fake
    .calls()
    .filter(
      (c) =>
        c.method === "chat.postMessage" &&
        c.body["channel"] === CHANNEL &&
        String(c.body["text"]).includes("Namespace myapp:"),
    );
}

describe("ns asked again", () => {
  it("asks AWS for the last answer's load balancer while the namespace's Ingress is still being listed", async () => {
    const s = await setup("seed-incident.yaml", { UNSTUCK_DIAGNOSIS_DEADLINE_SECONDS: "3" });
    const cards = () => answerCards(s);
    await slash(s, "ns myapp", REQUESTER, "first");
    const first = await eventually(() => cards()[0], 20_000, "the first answer");
    expect(JSON.stringify(first.body)).toContain("k8s-myapp");
    const lookups = () => s.world.aws.calls().filter((c) => c.action === "DescribeLoadBalancers").length;
    const before = lookups();
    expect(before).toBeGreaterThan(0);

    // The namespace's Ingress list now never answers: only what the last answer read can name the
    // load balancer.
    s.world.kube.setFaults({ hang: { method: "GET", pathPrefix: INGRESSES } });
    await slash(s, "ns myapp", REQUESTER, "second");
    await eventually(
      () => (lookups() > before ? true : undefined),
      2_500,
      "the load balancer asked for again",
    );
    expect(cards()).toHaveLength(1);

    // The second answer still comes, by the deadline, and says what it could not read.
    const second = await eventually(() => cards()[1], 20_000, "the second answer");
    expect(JSON.stringify(second.body)).toMatch(/ingresses/i);
  });

  it("names among what missed the deadline only what the answer itself asked for", async () => {
    const s = await setup("seed-incident.yaml", { UNSTUCK_DIAGNOSIS_DEADLINE_SECONDS: "2" });
    const cards = () => answerCards(s);
    await slash(s, "ns myapp", REQUESTER, "first");
    await eventually(() => cards()[0], 20_000, "the first answer");
    const lookups = () => s.world.aws.calls().filter((c) => c.action === "DescribeLoadBalancers").length;
    const before = lookups();

    // The Ingress list hangs, so this answer never reaches its load balancer; the load balancer the
    // last answer read is asked for again all the same, and hangs too. Only the list was the answer's.
    s.world.kube.setFaults({ hang: { method: "GET", pathPrefix: INGRESSES } });
    s.world.aws.setFaults({ hang: ["DescribeLoadBalancers"] });
    await slash(s, "ns myapp", REQUESTER, "second");
    await eventually(() => (lookups() > before ? true : undefined), 2_000, "the load balancer asked again");
    const second = JSON.stringify((await eventually(() => cards()[1], 20_000, "the second answer")).body);
    expect(second).toContain("Partial result");
    expect(second).toContain("list ingresses.networking.k8s.io in myapp");
    // What answered before the deadline is not named with what did not.
    expect(second).not.toContain("get namespace myapp");
    expect(second).not.toContain("API discovery");
    expect(second).not.toContain("loadBalancersByName");
  });

  it("asks nothing ahead the first time a namespace is asked about", async () => {
    const s = await setup("seed-incident.yaml", { UNSTUCK_DIAGNOSIS_DEADLINE_SECONDS: "3" });
    s.world.kube.setFaults({ hang: { method: "GET", pathPrefix: INGRESSES } });
    await slash(s, "ns myapp", REQUESTER, "first");
    await eventually(
      () => s.fake.calls().find((c) => c.method === "chat.postMessage" && c.body["channel"] === CHANNEL),
      20_000,
      "the answer",
    );
    // Without the Ingress, and with nothing read before, no load balancer can be named.
    expect(s.world.aws.calls().filter((c) => c.action === "DescribeLoadBalancers")).toEqual([]);
  });

  it("reads the last answer's controller logs while the controllers' pods are still being listed", async () => {
    const s = await setup("seed-incident.yaml", { UNSTUCK_DIAGNOSIS_DEADLINE_SECONDS: "3" });
    await slash(s, "ns myapp", REQUESTER, "first");
    await eventually(
      () => s.fake.calls().find((c) => c.method === "chat.postMessage" && c.body["channel"] === CHANNEL),
      20_000,
      "the first answer",
    );
    const logs = () => s.world.kube.requests().filter((r) => r.path.endsWith("/log")).length;
    const before = logs();
    expect(before).toBeGreaterThan(0);
    // The controllers' pods can no longer be listed: only the last answer can name them.
    s.world.kube.setFaults({ hang: { method: "GET", path: CONTROLLER_PODS } });
    await slash(s, "ns myapp", REQUESTER, "second");
    await eventually(() => (logs() > before ? true : undefined), 2_500, "the logs read again");
  });

  it("lists Argo CD's Applications and the cluster's Ingresses and Services while the namespace's are listed", async () => {
    const s = await setup("seed-incident.yaml", { UNSTUCK_DIAGNOSIS_DEADLINE_SECONDS: "3" });
    s.world.kube.setFaults({ hang: { method: "GET", pathPrefix: INGRESSES } });
    await slash(s, "ns myapp", REQUESTER, "first");
    const listed = (path: string) =>
      s.world.kube.requests().some((r) => r.method === "GET" && r.path === path);
    for (const path of [
      "/apis/argoproj.io/v1alpha1/applications",
      "/apis/networking.k8s.io/v1/ingresses",
      "/api/v1/services",
    ])
      await eventually(() => (listed(path) ? true : undefined), 2_500, `${path} listed`);
  });
});
