/**
 * The adapter's reads (discovery, every list, gets) go out with undici's `request`, authenticated by
 * client-node. What fetch did for them must still hold: a token read from a file with its trailing
 * newline authenticates (fetch's Headers trimmed it; request refuses such a value), and a server
 * that drops the connection is "unreachable", as it is for the reads that still go through fetch —
 * one outage, one error code.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import { gzipSync } from "node:zlib";
import type { AddressInfo } from "node:net";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml, stringify as toYaml } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { ResourceType } from "../../../src/kube/types.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { kubectl } from "../../sim/kube/testing.js";

const NS = "reads";
const CONFIGMAPS: ResourceType = {
  group: "",
  version: "v1",
  apiVersion: "v1",
  resource: "configmaps",
  kind: "ConfigMap",
  namespaced: true,
  verbs: ["get", "list"],
};

interface Kubeconfig {
  users: { name: string; user: Record<string, unknown> }[];
  clusters: { name: string; cluster: Record<string, unknown> }[];
}

describe("the adapter's raw reads (undici request)", () => {
  let sim: KubeSim;
  let dir: string;
  const servers: Server[] = [];
  const sockets: Socket[] = [];

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    sim.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "one", namespace: NS } });
    dir = await mkdtemp(join(tmpdir(), "unstuck-raw-reads-"));
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("a token file ending in a newline authenticates every read, as it did through fetch", async () => {
    const config = parseYaml(sim.kubeconfig()) as Kubeconfig;
    const user = config.users[0];
    expect(user).toBeDefined();
    if (user === undefined) return;
    const tokenFile = join(dir, "token");
    await writeFile(tokenFile, `${String(user.user.token)}\n`);
    // As client-node configures itself in a pod: the service account's token file, re-read every minute.
    user.user = { "auth-provider": { name: "tokenFile", config: { tokenFile } } };
    const kube = createKubeAdapter(toYaml(config));
    sim.resetRequests();
    expect((await kube.discover()).resources.some((r) => r.resource === "configmaps")).toBe(true);
    expect((await kube.listObjects(CONFIGMAPS, NS)).map((o) => o.name)).toEqual(["kube-root-ca.crt", "one"]);
    expect((await kube.getNamespace(NS))?.name).toBe(NS);
    const users = new Set(sim.requests().map((r) => r.user));
    expect([...users]).toEqual(["unstuck"]);
  });

  it("asks for gzip, and reads a big list the server compresses (kube-apiserver: 128 KiB and more)", async () => {
    const big = "bigreads";
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: big } });
    for (let i = 0; i < 600; i++) {
      sim.store.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `cm-${String(i)}`, namespace: big, labels: { app: "x".repeat(200) } },
      });
    }
    // The server's side: a list past the threshold comes gzip-encoded when gzip is offered (this is
    // what real kubectl, which offers it, also reads below), a small one as it is.
    const url = `${sim.url}/api/v1/namespaces/${big}/configmaps?limit=500`;
    const token = String((parseYaml(sim.kubeconfig()) as Kubeconfig).users[0]?.user.token);
    const head = async (path: string) =>
      (await fetch(path, { headers: { authorization: `Bearer ${token}`, "accept-encoding": "gzip" } }))
        .headers;
    expect((await head(url)).get("content-encoding")).toBe("gzip");
    expect((await head(`${sim.url}/api/v1/namespaces/${NS}/configmaps`)).get("content-encoding")).toBeNull();
    sim.resetRequests();
    const kube = createKubeAdapter(sim.kubeconfig());
    // 600 and the namespace's CA bundle (`kube-root-ca.crt`).
    expect(await kube.listObjects(CONFIGMAPS, big)).toHaveLength(601);
    expect(sim.requests().filter((r) => r.path.endsWith("/configmaps"))).toHaveLength(2); // two pages
    const kubeconfig = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kubeconfig);
    const listed = await kubectl(kubeconfig, join(dir, "cache"), [
      "get",
      "configmaps",
      "-n",
      big,
      "-o",
      "name",
    ]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split("\n")).toHaveLength(601);
  });

  /** A server that reads a request and then `behave`s; the kubeconfig that points at it. */
  async function fakeServer(behave: (socket: Socket) => void): Promise<string> {
    const server = createServer((socket) => {
      sockets.push(socket);
      socket.once("data", () => behave(socket));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const config = parseYaml(sim.kubeconfig()) as Kubeconfig;
    const cluster = config.clusters[0];
    if (cluster)
      cluster.cluster.server = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
    return toYaml(config);
  }

  const failure = async (p: Promise<unknown>): Promise<UnstuckError> => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnstuckError);
    return err as UnstuckError;
  };

  it("a connection closed before the answer is unreachable, for a list as for the namespace read", async () => {
    const kube = createKubeAdapter(await fakeServer((s) => s.destroy()), { maxAttempts: 1 });
    const list = await failure(kube.listObjects(CONFIGMAPS, NS));
    const get = await failure(kube.getNamespace(NS));
    expect(list.code).toBe(ErrorCode.Unreachable);
    expect(get.code).toBe(ErrorCode.Unreachable);
    expect(list.message).toContain("Cannot reach the Kubernetes API server at http://127.0.0.1:");
  });

  it("an error answer whose gzip body cannot be decoded keeps its status: a 503 is still retried", async () => {
    let requests = 0;
    const kube = createKubeAdapter(
      await fakeServer((s) => {
        requests++;
        s.end(
          "HTTP/1.1 503 Service Unavailable\r\ncontent-encoding: gzip\r\ncontent-length: 7\r\n\r\nnotgzip",
        );
      }),
      { maxAttempts: 2, sleep: () => Promise.resolve() },
    );
    const list = await failure(kube.listObjects(CONFIGMAPS, NS));
    expect(requests).toBe(2);
    expect(list.details.status).toBe(503);
    expect(list.message).toContain("could not be decoded");
  });

  it("reads a page compressed past a MiB as well as a small one (gunzipped off the event loop)", async () => {
    // Random names barely compress: 60,000 of them make a page whose gzip body passes 1 MiB.
    const names = Array.from({ length: 60_000 }, () => randomBytes(16).toString("hex"));
    const page = JSON.stringify({
      kind: "PartialObjectMetadataList",
      apiVersion: "meta.k8s.io/v1",
      metadata: {},
      items: names.map((name) => ({ metadata: { name, namespace: NS, finalizers: ["example.com/hold"] } })),
    });
    const body = gzipSync(page);
    expect(body.length).toBeGreaterThan(1024 * 1024);
    const kube = createKubeAdapter(
      await fakeServer((s) => {
        s.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\ncontent-length: ${String(body.length)}\r\n\r\n`,
        );
        s.end(body);
      }),
      { maxAttempts: 1 },
    );
    const listed = await kube.listObjects(CONFIGMAPS, NS);
    expect(listed.map((o) => o.name)).toEqual(names);
    expect(listed[0]?.finalizers).toEqual(["example.com/hold"]);
  });

  it("a connection closed in the middle of the body is unreachable too", async () => {
    const kube = createKubeAdapter(
      await fakeServer((s) => {
        s.write(
          "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n" +
            '{"kind":"ConfigMapList","items":[',
        );
        setTimeout(() => s.destroy(), 20);
      }),
      { maxAttempts: 1 },
    );
    const list = await failure(kube.listObjects(CONFIGMAPS, NS));
    expect(list.code).toBe(ErrorCode.Unreachable);
  });
});
