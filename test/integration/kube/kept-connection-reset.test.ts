/**
 * A kept connection the far side closes just as it is reused (an API server or load balancer
 * ending an idle connection): the request fails before any answer. A read is sent again, once, on a
 * new connection; a write is not (it may have been applied), and says the server is unreachable.
 * Staged with a TCP proxy in front of the simulator that resets every connection on its second
 * request.
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { ResourceType } from "../../../src/kube/types.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";

const NS = "kept";
const CONFIGMAPS: ResourceType = {
  group: "",
  version: "v1",
  apiVersion: "v1",
  kind: "ConfigMap",
  resource: "configmaps",
  namespaced: true,
  verbs: ["get", "list", "patch"],
};

describe("kube adapter: a kept connection reset as it is reused", () => {
  let sim: KubeSim;
  let proxy: Server;
  let kubeconfig: string;
  let resets = 0;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    sim.store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "held", namespace: NS, finalizers: ["example.com/hold"] },
    });
    const target = new URL(sim.url);
    proxy = createServer((client) => {
      let requests = 0;
      const upstream = connect(Number(target.port), target.hostname);
      sockets.add(client).add(upstream);
      client.on("data", (chunk: Buffer) => {
        if (/^(GET|PATCH) /.test(chunk.toString("latin1", 0, 6))) requests++;
        if (requests >= 2) {
          resets++;
          client.resetAndDestroy();
          upstream.destroy();
          return;
        }
        upstream.write(chunk);
      });
      upstream.pipe(client);
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on("close", end).on("error", end);
      upstream.on("close", end).on("error", end);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const port = (proxy.address() as AddressInfo).port;
    kubeconfig = sim.kubeconfig().replace(sim.url, `http://127.0.0.1:${port}`);
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => proxy.close(resolve));
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
    const kube = createKubeAdapter(kubeconfig);
    // The read keeps its connection; the write is that connection's second request.
    const seen = await kube.getObject(CONFIGMAPS, NS, "held");
    expect(seen?.finalizers).toEqual(["example.com/hold"]);
    sim.resetRequests();
    resets = 0;
    const failed = await kube
      .removeFinalizers(
        CONFIGMAPS,
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
