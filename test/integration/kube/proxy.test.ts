/**
 * A cluster behind a proxy (`proxy-url` in the kubeconfig, as a bastion or a corporate proxy gives
 * it): every request of the adapter goes through the proxy, with its credentials, and the answers
 * are the cluster's. A cluster without one is reached directly (Node's own client), and the proxy
 * sees nothing of it. An HTTP proxy forwards and tunnels as undici's proxy agent asks; a SOCKS5
 * proxy connects as client-node's SOCKS connector asks.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { startHttpProxy, startSocks5Proxy, type ForwardProxy } from "../../helpers/proxies.js";

const NS = "behind-proxy";

describe("kube adapter: a cluster behind an HTTP or SOCKS5 proxy", () => {
  let sim: KubeSim;
  let proxy: ForwardProxy;
  let proxyUrl: string;
  let tunnels: string[];

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    for (let i = 0; i < 3; i++)
      sim.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i}`, namespace: NS } });
    proxy = await startHttpProxy();
    proxyUrl = proxy.url;
    tunnels = proxy.targets;
  });

  afterAll(async () => {
    await proxy.stop();
    await sim.stop();
  });

  it("sends every request through the proxy, and none when the kubeconfig names no proxy", async () => {
    const server = new URL(sim.url).host;
    const proxied = sim
      .kubeconfig()
      .replace(`server: ${sim.url}`, `server: ${sim.url}\n      proxy-url: ${proxyUrl}`);
    expect(proxied).toContain(`proxy-url: ${proxyUrl}`);

    tunnels.length = 0;
    sim.resetRequests();
    const viaProxy = createKubeAdapter(proxied);
    const type = (await viaProxy.discover()).resources.find(
      (t) => t.group === "" && t.resource === "configmaps",
    );
    expect(type).toBeDefined();
    if (type === undefined) return;
    const names = (await viaProxy.listObjects(type, NS)).map((o) => o.name).sort();
    expect(names).toEqual(["cm-0", "cm-1", "cm-2", "kube-root-ca.crt"]);
    expect(tunnels.length).toBeGreaterThan(0);
    expect(new Set(tunnels)).toEqual(new Set([server]));
    // Authenticated as the kubeconfig's user through the tunnel: the simulator saw the requests.
    expect(sim.requests().length).toBeGreaterThan(0);

    tunnels.length = 0;
    const direct = createKubeAdapter(sim.kubeconfig());
    expect((await direct.listObjects(type, NS)).map((o) => o.name).sort()).toEqual(names);
    expect(tunnels).toEqual([]);
  });

  it("says the proxy cannot be reached, naming it without its credentials", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const kube = createKubeAdapter(
      sim
        .kubeconfig()
        .replace(
          `server: ${sim.url}`,
          `server: ${sim.url}\n      proxy-url: http://someone:hunter2@127.0.0.1:${port}`,
        ),
    );
    const failed = await kube.getNamespace(NS).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(Error);
    const message = (failed as Error).message;
    expect(message).toContain(
      `Cannot reach the Kubernetes API server at ${sim.url} through the proxy http://127.0.0.1:${port}`,
    );
    expect(message).not.toMatch(/someone|hunter2/);
  });

  it("reaches a cluster behind a SOCKS5 proxy the same way, every connection through it", async () => {
    const socks = await startSocks5Proxy();
    try {
      const kube = createKubeAdapter(
        sim.kubeconfig().replace(`server: ${sim.url}`, `server: ${sim.url}\n      proxy-url: ${socks.url}`),
      );
      const type = (await kube.discover()).resources.find(
        (t) => t.group === "" && t.resource === "configmaps",
      );
      expect(type).toBeDefined();
      if (type === undefined) return;
      expect((await kube.listObjects(type, NS)).map((o) => o.name).sort()).toEqual([
        "cm-0",
        "cm-1",
        "cm-2",
        "kube-root-ca.crt",
      ]);
      expect(socks.targets.length).toBeGreaterThan(0);
      expect(new Set(socks.targets)).toEqual(new Set([new URL(sim.url).host]));
    } finally {
      await socks.stop();
    }
  });
});
