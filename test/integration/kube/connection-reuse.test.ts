/**
 * The adapter keeps its connections alive: client-node 2.0.1 builds a new undici
 * Agent for every request of a cluster with TLS options (here `insecure-skip-tls-verify`, as the
 * simulator's kubeconfig has; a CA or a client certificate does the same), so every request opened
 * its own connection — on a real cluster its own TLS handshake. Counted at a TCP proxy in front of
 * the simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_KUBE_CONCURRENCY } from "../../../src/kube/limiter.js";
import { createKubeAdapter, loadKubeConfig } from "../../../src/kube/client-node-adapter.js";
import { createNamespaceWatchIo } from "../../../src/kube/namespace-watch.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { startTcpProxy, type TcpProxy } from "../../helpers/tcp-proxy.js";

const NS = "reuse";

describe("kube adapter: connections kept alive", () => {
  let sim: KubeSim;
  let proxy: TcpProxy;
  let kubeconfig: string;

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    for (let i = 0; i < 5; i++) {
      sim.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i}`, namespace: NS } });
    }
    proxy = await startTcpProxy(sim.url);
    kubeconfig = sim.kubeconfig().replace(sim.url, proxy.url);
    expect(kubeconfig).toContain(proxy.url);
    expect(loadKubeConfig({ text: kubeconfig }).getCurrentCluster()?.skipTLSVerify).toBe(true);
  });

  afterAll(async () => {
    await proxy.close();
    await sim.stop();
  });

  it("60 requests one after another share a connection or two, 128 at once about the bound of 64", async () => {
    const kube = createKubeAdapter(kubeconfig);
    const type = (await kube.discover()).resources.find((t) => t.group === "" && t.resource === "configmaps");
    expect(type).toBeDefined();
    if (type === undefined) return;
    proxy.connections = 0;
    // Five of the test's own and the namespace's CA bundle (`kube-root-ca.crt`).
    for (let i = 0; i < 60; i++) expect(await kube.listObjects(type, NS)).toHaveLength(6);
    // Discovery's connections carry on (a second may open once, when the next request is sent
    // before the client has the first socket back); one per request without the pool.
    expect(proxy.connections).toBeLessThanOrEqual(2);
    proxy.connections = 0;
    await Promise.all(Array.from({ length: 2 * DEFAULT_KUBE_CONCURRENCY }, () => kube.listObjects(type, NS)));
    // About the bound (the same hand-back race may add a few); one per request without the pool.
    expect(proxy.connections).toBeLessThanOrEqual(DEFAULT_KUBE_CONCURRENCY + 4);
  });

  it("the namespace watcher's lists reuse their connection too", async () => {
    const io = createNamespaceWatchIo(kubeconfig);
    proxy.connections = 0;
    for (let i = 0; i < 20; i++) expect((await io.list()).items.some((n) => n.name === NS)).toBe(true);
    expect(proxy.connections).toBeLessThanOrEqual(2);
  });
});
