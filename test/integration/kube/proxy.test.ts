/**
 * A cluster behind an HTTP proxy (`proxy-url` in the kubeconfig, as a bastion or a corporate proxy
 * gives it): every request of the adapter goes through the proxy, with its credentials, and the
 * answers are the cluster's. A cluster without one is reached directly (Node's own client), and the
 * proxy sees nothing of it. The proxy here forwards and tunnels as undici's proxy agent asks.
 */
import { createServer, request, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";

const NS = "behind-proxy";

describe("kube adapter: a cluster behind an HTTP proxy", () => {
  let sim: KubeSim;
  let proxy: Server;
  let proxyUrl: string;
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    for (let i = 0; i < 3; i++)
      sim.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i}`, namespace: NS } });
    // A request for an http:// server comes in absolute form and is forwarded; an https:// one is
    // tunnelled (CONNECT).
    proxy = createServer((req, res) => {
      const target = new URL(req.url ?? "/");
      tunnels.push(target.host);
      const upstream = request(
        {
          host: target.hostname,
          port: target.port,
          path: `${target.pathname}${target.search}`,
          method: req.method,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on("error", () => res.writeHead(502).end());
      req.pipe(upstream);
    });
    proxy.on("connect", (req, client: Socket, head: Buffer) => {
      const target = req.url ?? "";
      tunnels.push(target);
      const [host, port] = target.split(":");
      const upstream = connect(Number(port), host, () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.write(head);
        client.pipe(upstream).pipe(client);
      });
      sockets.add(client).add(upstream);
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on("error", end).on("close", end);
      upstream.on("error", end).on("close", end);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => proxy.close(resolve));
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
});
