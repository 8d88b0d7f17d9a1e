/**
 * An answer cut off mid-body (the API server restarting, a load balancer dropping the connection):
 * the request fails as an unreachable server, never as a truncated answer read as a whole one.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";

describe("kube adapter: an answer cut off mid-body", () => {
  let sim: KubeSim;
  let server: Server;
  let url: string;

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
    // Promises a namespace of 4 KiB, sends its first bytes, then drops the connection.
    server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "4096" });
      res.write('{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"cut"');
      setTimeout(() => res.socket?.destroy(), 10);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await sim.stop();
  });

  it("fails as unreachable, naming the server", async () => {
    const kube = createKubeAdapter(sim.kubeconfig().replace(sim.url, url));
    const failed = await kube.getNamespace("cut").then(
      () => undefined,
      (err: unknown) => err,
    );
    expect((failed as Error | undefined)?.message).toBe(
      `Cannot reach the Kubernetes API server at ${url} (ECONNRESET).`,
    );
  });
});
