/**
 * A kept connection the far side closes just as it is reused (an API server or load balancer
 * ending an idle connection): the request fails before any answer. A read is sent again, once, on a
 * new connection; a write is not (it may have been applied), and says the server is unreachable.
 * Staged with a TCP proxy in front of the simulator that resets every connection on its second
 * request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { startTcpProxy, type TcpProxy } from "../../helpers/tcp-proxy.js";

const NS = "kept";

describe("kube adapter: a kept connection reset as it is reused", () => {
  let sim: KubeSim;
  let proxy: TcpProxy;
  let kubeconfig: string;
  let resets = 0;

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    sim.store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "held", namespace: NS, finalizers: ["example.com/hold"] },
    });
    proxy = await startTcpProxy(sim.url, {
      cut: () => {
        let requests = 0;
        return (chunk) => {
          if (/^(GET|PATCH) /.test(chunk.toString("latin1", 0, 6))) requests++;
          if (requests < 2) return false;
          resets++;
          return true;
        };
      },
    });
    kubeconfig = sim.kubeconfig().replace(sim.url, proxy.url);
  });

  afterAll(async () => {
    await proxy.close();
    await sim.stop();
  });

  it("sends a read again on a new connection, once", async () => {
    const kube = createKubeAdapter(kubeconfig);
    resets = 0;
    for (let i = 0; i < 4; i++) expect((await kube.getNamespace(NS))?.name).toBe(NS);
    // Every read after the first met a reset connection and was answered on a new one.
    expect(resets).toBe(3);
  });

  it("does not send a write again: it fails as unreachable, and was never applied", async () => {
    // The type from discovery, read directly: through the proxy the write is a connection's second request.
    const configmaps = (await createKubeAdapter(sim.kubeconfig()).discover()).resources.find(
      (t) => t.group === "" && t.resource === "configmaps",
    );
    if (configmaps === undefined) throw new Error("no configmaps in discovery");
    const kube = createKubeAdapter(kubeconfig);
    // The read keeps its connection; the write is that connection's second request.
    const seen = await kube.getObject(configmaps, NS, "held");
    expect(seen?.finalizers).toEqual(["example.com/hold"]);
    sim.resetRequests();
    resets = 0;
    const failed = await kube
      .removeFinalizers(
        configmaps,
        NS,
        "held",
        { resourceVersion: seen?.resourceVersion ?? "", finalizers: seen?.finalizers ?? [] },
        ["example.com/hold"],
      )
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(resets).toBe(1);
    expect((failed as Error | undefined)?.message).toMatch(/Cannot reach the Kubernetes API server/);
    expect(sim.requests().filter((r) => r.method === "PATCH")).toEqual([]);
    expect(sim.store.get("v1", "ConfigMap", NS, "held")?.metadata?.finalizers).toEqual(["example.com/hold"]);
  });
});
