/**
 * The real kubectl (v1.32) pages through the simulator as through kube-apiserver: `limit` and
 * `continue`, `metadata.remainingItemCount`, tokens in the storage layer's format, every page of
 * a chunked list from the first page's revision, and the real 410 Expired / 400 BadRequest
 * Status bodies for a compacted or malformed token.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { kubectl, type KubectlResult } from "../../sim/kube/testing.js";

interface ListBody {
  kind: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: { metadata: { name: string; namespace?: string } }[];
}

const NS = "kp-many";
const NS_500 = "kp-500";
const NS_501 = "kp-501";
const NS_EMPTY = "kp-empty";
const MANY = 1200;

function lines(text: string): string[] {
  return text.split("\n").filter((l) => l.trim() !== "");
}

describe("kubectl pages through the kube simulator", () => {
  let sim: KubeSim;
  let dir: string;
  let k: (...args: string[]) => Promise<KubectlResult>;
  const raw = async (path: string): Promise<ListBody> => {
    const r = await k("get", "--raw", path);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as ListBody;
  };
  const configmapLists = () =>
    sim.requests().filter((q) => q.method === "GET" && q.path.endsWith("/configmaps"));

  beforeAll(async () => {
    // Counts and lists are exact per namespace: no CA bundle or default ServiceAccount published.
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000, namespacePublishers: false });
    dir = await mkdtemp(join(tmpdir(), "kube-sim-paging-"));
    const kc = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kc);
    k = (...args) => kubectl(kc, join(dir, "cache"), args);
    const seed = { [NS]: MANY, [NS_500]: 500, [NS_501]: 501, [NS_EMPTY]: 0 };
    for (const [ns, n] of Object.entries(seed)) {
      sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
      for (let i = 0; i < n; i++) {
        sim.store.create({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: `cm-${i}`, namespace: ns, labels: { half: String(i % 2) } },
        });
      }
    }
  }, 60_000);
  afterAll(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("counts every object with --chunk-size=500, one request per page", async () => {
    sim.resetRequests();
    const r = await k("get", "configmaps", "-n", NS, "--chunk-size=500", "-o", "name");
    expect(r.code, r.stderr).toBe(0);
    const names = lines(r.stdout);
    expect(names).toHaveLength(MANY);
    expect(new Set(names).size).toBe(MANY);
    const pages = configmapLists();
    expect(pages).toHaveLength(Math.ceil(MANY / 500));
    for (const p of pages) expect(new URLSearchParams(p.query).get("limit")).toBe("500");
  });

  it("counts every row of the default table output, and across all namespaces", async () => {
    const table = await k("get", "configmaps", "-n", NS, "--no-headers");
    expect(table.code, table.stderr).toBe(0);
    expect(lines(table.stdout)).toHaveLength(MANY);

    const all = await k("get", "configmaps", "-A", "--chunk-size=500", "-o", "name");
    expect(all.code, all.stderr).toBe(0);
    // -o name drops the namespace: count per namespace from the table's first column.
    const perNs = await k("get", "configmaps", "-A", "--chunk-size=500", "--no-headers");
    const rows = lines(perNs.stdout).map((l) => l.split(/\s+/)[0]);
    expect(rows.filter((ns) => ns === NS)).toHaveLength(MANY);
    expect(rows.filter((ns) => ns === NS_500)).toHaveLength(500);
    expect(rows.filter((ns) => ns === NS_501)).toHaveLength(501);
    expect(rows.filter((ns) => ns === NS_EMPTY)).toHaveLength(0);
    expect(lines(all.stdout)).toHaveLength(rows.length);
    expect(rows).toHaveLength(sim.store.list("v1", "ConfigMap").length);
  });

  it("shows continue and remainingItemCount on a raw page, and the token leads to the rest", async () => {
    const first = await raw(`/api/v1/namespaces/${NS}/configmaps?limit=500`);
    expect(first.kind).toBe("ConfigMapList");
    expect(first.items).toHaveLength(500);
    expect(first.metadata.remainingItemCount).toBe(MANY - 500);
    const token = first.metadata.continue ?? "";
    expect(token).not.toBe("");
    // The storage layer's token: unpadded base64url JSON with the list's revision and start key.
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    const decoded = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Record<string, unknown>;
    expect(decoded.v).toBe("meta.k8s.io/v1");
    expect(decoded.rv).toBe(Number(first.metadata.resourceVersion));
    expect(decoded.start).toBe(`${first.items[499]?.metadata.name ?? ""}\u0000`);

    const seen = first.items.map((o) => o.metadata.name);
    let cont: string | undefined = token;
    while (cont !== undefined) {
      const page = await raw(`/api/v1/namespaces/${NS}/configmaps?limit=500&continue=${cont}`);
      expect(page.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
      seen.push(...page.items.map((o) => o.metadata.name));
      cont = page.metadata.continue;
      if (cont === undefined) expect(page.metadata.remainingItemCount).toBeUndefined();
    }
    expect(seen).toHaveLength(MANY);
    expect(new Set(seen).size).toBe(MANY);
  });

  it("ends a list of exactly the page size without a token, and one more with one", async () => {
    const exact = await raw(`/api/v1/namespaces/${NS_500}/configmaps?limit=500`);
    expect(exact.items).toHaveLength(500);
    expect(exact.metadata.continue).toBeUndefined();
    expect(exact.metadata.remainingItemCount).toBeUndefined();

    const over = await raw(`/api/v1/namespaces/${NS_501}/configmaps?limit=500`);
    expect(over.items).toHaveLength(500);
    expect(over.metadata.remainingItemCount).toBe(1);
    const last = await raw(
      `/api/v1/namespaces/${NS_501}/configmaps?limit=500&continue=${over.metadata.continue ?? ""}`,
    );
    expect(last.items).toHaveLength(1);
    expect(last.metadata.continue).toBeUndefined();

    const empty = await raw(`/api/v1/namespaces/${NS_EMPTY}/configmaps?limit=500`);
    expect(empty.items).toEqual([]);
    expect(empty.metadata.continue).toBeUndefined();
  });

  it("pages with a label selector without a remaining count, as etcd cannot count matches", async () => {
    const first = await raw(`/api/v1/namespaces/${NS}/configmaps?limit=500&labelSelector=half%3D1`);
    expect(first.items).toHaveLength(500);
    expect(first.metadata.continue).toBeDefined();
    expect(first.metadata.remainingItemCount).toBeUndefined();
    const r = await k("get", "configmaps", "-n", NS, "-l", "half=1", "--chunk-size=500", "-o", "name");
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stdout)).toHaveLength(MANY / 2);
  });

  it("serves later pages from the first page's revision: later writes do not show up", async () => {
    const first = await raw(`/api/v1/namespaces/${NS}/configmaps?limit=500`);
    sim.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "zz-late", namespace: NS } });
    sim.store.delete("v1", "ConfigMap", NS, "cm-999");
    const names = first.items.map((o) => o.metadata.name);
    let cont = first.metadata.continue;
    while (cont !== undefined) {
      const page = await raw(`/api/v1/namespaces/${NS}/configmaps?limit=500&continue=${cont}`);
      names.push(...page.items.map((o) => o.metadata.name));
      cont = page.metadata.continue;
    }
    expect(names).toHaveLength(MANY);
    expect(names).not.toContain("zz-late");
    expect(names).toContain("cm-999");
    // A new list sees the writes.
    const now = await k("get", "configmaps", "-n", NS, "--chunk-size=500", "-o", "name");
    expect(lines(now.stdout)).toContain("configmap/zz-late");
    expect(lines(now.stdout)).not.toContain("configmap/cm-999");
    sim.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm-999", namespace: NS } });
    sim.store.delete("v1", "ConfigMap", NS, "zz-late");
  });

  it("answers a compacted token with the real 410 Expired Status, whose token continues at the latest revision", async () => {
    const first = await raw(`/api/v1/namespaces/${NS}/configmaps?limit=500`);
    sim.store.compact();
    const path = `/api/v1/namespaces/${NS}/configmaps?limit=500&continue=${first.metadata.continue ?? ""}`;
    const r = await k("get", "--raw", path);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      "Error from server (Expired): The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results.",
    );
    const res = await fetch(`${sim.url}${path}`);
    expect(res.status).toBe(410);
    const status = (await res.json()) as Record<string, unknown>;
    expect(status).toMatchObject({
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      reason: "Expired",
      code: 410,
    });
    const inconsistent = (status.metadata as { continue?: string }).continue ?? "";
    const offered = JSON.parse(Buffer.from(inconsistent, "base64url").toString("utf8")) as Record<
      string,
      unknown
    >;
    expect(offered.rv).toBe(-1);
    const rest = await raw(`/api/v1/namespaces/${NS}/configmaps?limit=500&continue=${inconsistent}`);
    expect(rest.items[0]?.metadata.name).not.toBe(first.items[0]?.metadata.name);
    expect(rest.items.length + first.items.length).toBeLessThanOrEqual(MANY);
  });

  it("refuses a malformed token and resourceVersion with continue with the real 400s", async () => {
    const bad = await k("get", "--raw", `/api/v1/namespaces/${NS}/configmaps?limit=500&continue=!!!`);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain(
      "Error from server (BadRequest): invalid continue token: continue key is not valid: illegal base64 data at input byte 0",
    );
    const wrongVersion = Buffer.from(JSON.stringify({ v: "v1", rv: 5, start: "a" })).toString("base64url");
    const other = await k("get", "--raw", `/api/v1/namespaces/${NS}/configmaps?continue=${wrongVersion}`);
    expect(other.stderr).toContain(
      "continue key is not valid: server does not recognize this encoded version v1",
    );
    const first = await raw(`/api/v1/namespaces/${NS}/configmaps?limit=500`);
    const both = await k(
      "get",
      "--raw",
      `/api/v1/namespaces/${NS}/configmaps?limit=500&resourceVersion=5&continue=${first.metadata.continue ?? ""}`,
    );
    expect(both.stderr).toContain(
      "Error from server (BadRequest): specifying resource version is not allowed when using continue",
    );
  });
});
