/**
 * `/unstuck ns` asked again about the same namespace, as happens all through an incident: the AWS
 * reads the last answer made leave as soon as the namespace reads as Terminating, without waiting
 * for its Ingress and then its load balancer, and the answer is still the whole one.
 */
import { describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { CHANNEL, REQUESTER, setup, slash } from "./edge-runtime.js";

const INGRESSES = "/apis/networking.k8s.io/v1/namespaces/myapp/ingresses";

describe("ns asked again", () => {
  it("asks AWS for the last answer's load balancer while the namespace's Ingress is still being listed", async () => {
    const s = await setup("seed-incident.yaml", { UNSTUCK_DIAGNOSIS_DEADLINE_SECONDS: "3" });
    const cards = () =>
      s.fake
        .calls()
        .filter(
          (c) =>
            c.method === "chat.postMessage" &&
            c.body["channel"] === CHANNEL &&
            String(c.body["text"]).includes("Namespace myapp:"),
        );
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
});
