import { KubeConfig, type Cluster } from "@kubernetes/client-node";
import type { AgentOptions } from "node:https";
import { describe, expect, it } from "vitest";
import { ConnectionPool, MAX_POOLED_DISPATCHERS } from "../../../src/kube/pool.js";

const HTTPS: Cluster = { name: "eks", server: "https://eks.example.com", skipTLSVerify: false };
const HTTP: Cluster = { name: "local", server: "http://127.0.0.1:8001", skipTLSVerify: true };

/** TLS options as client-node makes them for each request: new Buffers every time. */
const tls = (identity: string): AgentOptions => ({
  ca: Buffer.from(`ca of the cluster`),
  cert: Buffer.from(`certificate of ${identity}`),
  key: Buffer.from(`key of ${identity}`),
});

async function agentOf(pool: ConnectionPool, cluster: Cluster, options: AgentOptions): Promise<unknown> {
  const connection = await pool.connectionFor(cluster, options);
  if (connection.via !== "node") throw new Error(`expected Node's own client, got ${connection.via}`);
  return connection.agent;
}

describe("ConnectionPool", () => {
  it("gives requests with the same TLS identity one kept agent, whatever objects carry it", async () => {
    const pool = new ConnectionPool(new KubeConfig());
    const first = await agentOf(pool, HTTPS, tls("alice"));
    expect(await agentOf(pool, HTTPS, tls("alice"))).toBe(first);
    expect(await agentOf(pool, HTTPS, { ...tls("alice") })).toBe(first);
  });

  it("gives a rotated client certificate, another CA or plain HTTP an agent of its own", async () => {
    const pool = new ConnectionPool(new KubeConfig());
    const alice = await agentOf(pool, HTTPS, tls("alice"));
    const rotated = await agentOf(pool, HTTPS, {
      ...tls("alice"),
      cert: Buffer.from("certificate of alice, v2"),
    });
    const otherCa = await agentOf(pool, HTTPS, { ...tls("alice"), ca: Buffer.from("another CA") });
    const plain = await agentOf(pool, HTTP, tls("alice"));
    expect(new Set([alice, rotated, otherCa, plain]).size).toBe(4);
  });

  it("forgets the least recently used identity beyond its bound, and keeps the ones in use", async () => {
    const pool = new ConnectionPool(new KubeConfig());
    const ids = Array.from({ length: MAX_POOLED_DISPATCHERS }, (_, i) => `user-${String(i)}`);
    const agents = new Map<string, unknown>();
    for (const id of ids) agents.set(id, await agentOf(pool, HTTPS, tls(id)));
    // user-0 used again: user-1 is now the least recently used.
    expect(await agentOf(pool, HTTPS, tls("user-0"))).toBe(agents.get("user-0"));
    await agentOf(pool, HTTPS, tls("one more"));
    expect(await agentOf(pool, HTTPS, tls("user-0"))).toBe(agents.get("user-0"));
    expect(await agentOf(pool, HTTPS, tls("user-1"))).not.toBe(agents.get("user-1"));
  });
});
