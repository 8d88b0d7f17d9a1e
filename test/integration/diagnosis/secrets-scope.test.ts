/**
 * Secrets are listed only where the namespace says they remain. RBAC authorizes the verb, not the
 * representation: the bot's metadata-only list of Secrets rests on a grant that returns every
 * Secret's data to whoever asks for the full form. So the diagnosis asks the namespace first: it
 * lists a Terminating namespace's Secrets (metadata only) only when its own
 * `NamespaceContentRemaining` condition names `secrets.` — or when that condition is missing — and
 * a live namespace's never. A type the bot may not list (`rbac.readScope=explicit`) that the
 * condition does not name is not reported as unread.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentMayRemain } from "../../../src/diagnosis/content-collect.js";
import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../../src/kube/port.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";

const NOW = () => new Date();

describe("listing Secrets only where the namespace says they remain", () => {
  let sim: KubeSim;
  let kube: KubePort;

  beforeAll(async () => {
    // The namespace controller runs only when asked (reconcileNow): the conditions are the test's.
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
    kube = createKubeAdapter(sim.kubeconfig(), { maxAttempts: 1 });
    const { store } = sim;
    for (const name of ["no-secrets", "with-secrets", "unsynced", "live"]) {
      store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    }
    // Content held by a ConfigMap's finalizer, and a Secret without one (deleted with the namespace).
    store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "held", namespace: "no-secrets", finalizers: ["example.com/config-sync"] },
    });
    store.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "gone-with-it", namespace: "no-secrets" },
      data: { k: Buffer.from("v").toString("base64") },
    });
    // A Secret that stays: its finalizer holds it.
    store.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "db", namespace: "with-secrets", finalizers: ["example.com/vault-sync"] },
      data: { k: Buffer.from("v").toString("base64") },
    });
    for (const name of ["unsynced", "live"]) {
      store.create({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "s", namespace: name, finalizers: ["example.com/vault-sync"] },
      });
    }
    for (const name of ["no-secrets", "with-secrets", "unsynced"])
      store.delete("v1", "Namespace", undefined, name);
    await sim.reconcileNow();
  }, 60_000);

  afterAll(async () => {
    await sim.stop();
  });

  const secretLists = (ns: string) =>
    sim.requests().filter((r) => r.method === "GET" && r.path === `/api/v1/namespaces/${ns}/secrets`);

  it("does not list Secrets when the condition names other content only", async () => {
    const ns = await kube.getNamespace("no-secrets");
    const condition = ns?.conditions.find((c) => c.type === "NamespaceContentRemaining");
    expect(condition?.message).toMatch(/configmaps\. has 1 resource instances/);
    expect(condition?.message).not.toMatch(/secrets/);
    sim.resetRequests();
    const d = await diagnoseNamespace(kube, "no-secrets", { now: NOW });
    expect(secretLists("no-secrets")).toEqual([]);
    expect(d.blockers.map((b) => `${b.kind}/${b.name}`)).toEqual(["ConfigMap/held"]);
    expect(d.remaining).toEqual([{ resource: "configmaps", count: 1 }]);
  });

  it("lists them, metadata only, when the condition names secrets, and finds the blocker", async () => {
    sim.resetRequests();
    const d = await diagnoseNamespace(kube, "with-secrets", { now: NOW });
    const lists = secretLists("with-secrets");
    expect(lists.length).toBeGreaterThan(0);
    for (const r of lists) expect(r.accept).toContain("as=PartialObjectMetadataList");
    expect(d.blockers.map((b) => `${b.kind}/${b.name}`)).toEqual(["Secret/db"]);
  });

  it("lists them when the condition is missing (the namespace controller has not counted yet)", async () => {
    // The simulator's controller counts at once; a real one may not have yet: read it without.
    const uncounted: KubePort = {
      ...kube,
      getNamespace: async (name) => {
        const ns = await kube.getNamespace(name);
        return ns && { ...ns, conditions: [] };
      },
    };
    sim.resetRequests();
    const d = await diagnoseNamespace(uncounted, "unsynced", { now: NOW });
    expect(secretLists("unsynced").length).toBeGreaterThan(0);
    expect(d.blockers.map((b) => `${b.kind}/${b.name}`)).toEqual(["Secret/s"]);
  });

  it("never lists a live namespace's Secrets", async () => {
    sim.resetRequests();
    const d = await diagnoseNamespace(kube, "live", { now: NOW });
    expect(d.verdict).toBe("active");
    expect(secretLists("live")).toEqual([]);
  });

  it("does not report a type it may not list as unread when the condition says none is left", async () => {
    // rbac.readScope=explicit without these types: 403 on their lists.
    sim.setFaults({
      forbid: [
        { verb: "list", resource: "secrets" },
        { verb: "list", resource: "serviceaccounts" },
      ],
    });
    try {
      const gone = await diagnoseNamespace(kube, "no-secrets", { now: NOW });
      expect(gone.warnings.filter((w) => /secrets|serviceaccounts/.test(w))).toEqual([]);
      expect(gone.blockers.map((b) => `${b.kind}/${b.name}`)).toEqual(["ConfigMap/held"]);
      // Named by the condition: unread, said so.
      const held = await diagnoseNamespace(kube, "with-secrets", { now: NOW });
      expect(held.warnings.some((w) => /Could not list secrets/.test(w))).toBe(true);
    } finally {
      sim.setFaults({});
    }
  });

  it("reads the condition as the namespace controller writes it", () => {
    const secrets = { group: "", resource: "secrets" };
    const condition = (status: string, message?: string) => ({
      conditions: [
        { type: "NamespaceContentRemaining", status, ...(message !== undefined ? { message } : {}) },
      ],
    });
    expect(contentMayRemain(null, secrets)).toBe(true);
    expect(contentMayRemain({ conditions: [] }, secrets)).toBe(true);
    expect(contentMayRemain(condition("False", "All content successfully removed"), secrets)).toBe(false);
    expect(contentMayRemain(condition("Unknown"), secrets)).toBe(true);
    expect(contentMayRemain(condition("True", "something else"), secrets)).toBe(true);
    expect(
      contentMayRemain(
        condition(
          "True",
          "Some resources are remaining: configmaps. has 1 resource instances, secrets. has 2 resource instances",
        ),
        secrets,
      ),
    ).toBe(true);
    expect(
      contentMayRemain(
        condition("True", "Some resources are remaining: configmaps. has 1 resource instances"),
        secrets,
      ),
    ).toBe(false);
    // Another group's `secrets` is not the core type.
    expect(
      contentMayRemain(
        condition("True", "Some resources are remaining: secrets.example.com has 1 resource instances"),
        secrets,
      ),
    ).toBe(false);
    expect(
      contentMayRemain(
        condition("True", "Some resources are remaining: secrets.example.com has 1 resource instances"),
        { group: "example.com", resource: "secrets" },
      ),
    ).toBe(true);
  });
});
