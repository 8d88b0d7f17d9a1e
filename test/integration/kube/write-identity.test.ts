/**
 * The bot's writes name the approval they carry out, so the API server's audit log (which records the
 * request URI and the User-Agent) ties each write to its request: the finalizer patch and the deletion
 * guard's namespace patch carry `fieldManager=unstuck-<request id>` and a User-Agent naming the request,
 * through the real adapter against the Kubernetes simulator; and the executor names its request.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { silentLogger } from "../../../src/log.js";
import { createServices } from "../../../src/services.js";
import {
  createKubeAdapter,
  FIELD_MANAGER_MAX_LENGTH,
  writeIdentity,
} from "../../../src/kube/client-node-adapter.js";
import { newRequestId } from "../../../src/requests/model.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { INGRESS } from "../approvals/helpers/fake-kube.js";
import { APPROVE, BOB, INGRESS_PATH, startFixture, type Fixture } from "../../e2e/approval-fixture.js";

const SEED = "test/fixtures/scenarios/seed-incident.yaml";

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()?.();
});

async function sim(): Promise<KubeSim> {
  const s = await startKubeSim({ scenario: SEED, controllerIntervalMs: 50 });
  stops.push(() => s.stop());
  return s;
}

function patchesTo(s: KubeSim, path: string) {
  return s.requests().filter((r) => r.method === "PATCH" && r.path === path);
}

describe("writeIdentity", () => {
  it("names the request within Kubernetes' 128 printable characters, and `unstuck` for no request", () => {
    const id = newRequestId();
    expect(writeIdentity({ requestId: id })).toEqual({
      fieldManager: `unstuck-${id}`,
      userAgent: `unstuck (approval request ${id}; @kubernetes/client-node)`,
    });
    expect(writeIdentity().fieldManager).toBe("unstuck");
    const long = writeIdentity({ requestId: `${"a".repeat(200)}\n\u0000;&x=1` });
    expect(long.fieldManager.length).toBeLessThanOrEqual(FIELD_MANAGER_MAX_LENGTH);
    expect(long.fieldManager).toMatch(/^unstuck-[A-Za-z0-9._-]+$/);
    expect(long.userAgent).toMatch(/^[\x20-\x7e]+$/);
  });
});

describe("the adapter's patches name the request they carry out", () => {
  it("finalizer removal: fieldManager=unstuck-<id> and a User-Agent naming the request", async () => {
    const s = await sim();
    const kube = createKubeAdapter(s.kubeconfig());
    const id = newRequestId();
    const seen = await kube.getObject(INGRESS, "myapp", "myapp-worker-ingress");
    expect(seen).not.toBeNull();
    await kube.removeFinalizers(
      INGRESS,
      "myapp",
      "myapp-worker-ingress",
      { resourceVersion: seen?.resourceVersion ?? "", finalizers: seen?.finalizers ?? [] },
      ["ingress.k8s.aws/resources"],
      { requestId: id },
    );
    const [patch] = patchesTo(s, INGRESS_PATH);
    expect(patch?.status).toBe(200);
    expect(new URLSearchParams(patch?.query).getAll("fieldManager")).toEqual([`unstuck-${id}`]);
    expect(patch?.userAgent).toContain(`approval request ${id}`);
  });

  it("the namespace annotation patch too; a write for no request stays `unstuck`", async () => {
    const s = await sim();
    s.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
    const kube = createKubeAdapter(s.kubeconfig());
    const id = newRequestId();
    const read = async () => {
      const ns = await kube.getNamespace("shop");
      return {
        uid: ns?.uid ?? "",
        resourceVersion: ns?.resourceVersion ?? "",
        annotations: ns?.annotations ?? {},
      };
    };
    await kube.annotateNamespace?.("shop", "unstuck.dev/note", "x", await read(), { requestId: id });
    await kube.annotateNamespace?.("shop", "unstuck.dev/note", null, await read());
    const [named, bare] = patchesTo(s, "/api/v1/namespaces/shop");
    expect(new URLSearchParams(named?.query).get("fieldManager")).toBe(`unstuck-${id}`);
    expect(named?.userAgent).toContain(id);
    expect(new URLSearchParams(bare?.query).get("fieldManager")).toBe("unstuck");
    expect(bare?.userAgent).toBe("unstuck (@kubernetes/client-node; undici)");
  });
});

describe("the bot's services pass the request on to the adapter", () => {
  it("the lazily built port the runtime uses keeps the write context", async () => {
    const s = await sim();
    const dir = await mkdtemp(join(tmpdir(), "unstuck-write-identity-"));
    stops.push(() => rm(dir, { recursive: true, force: true }));
    await s.writeKubeconfig(join(dir, "kubeconfig"));
    const services = createServices(loadConfig({ KUBECONFIG: join(dir, "kubeconfig") }), silentLogger());
    stops.push(() => services.kube.close?.() ?? Promise.resolve());
    const id = newRequestId();
    const seen = await services.kube.getObject(INGRESS, "myapp", "myapp-worker-ingress");
    await services.kube.removeFinalizers(
      INGRESS,
      "myapp",
      "myapp-worker-ingress",
      { resourceVersion: seen?.resourceVersion ?? "", finalizers: seen?.finalizers ?? [] },
      ["ingress.k8s.aws/resources"],
      { requestId: id },
    );
    s.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
    const ns = await services.kube.getNamespace("shop");
    await services.kube.annotateNamespace?.(
      "shop",
      "unstuck.dev/note",
      "x",
      { uid: ns?.uid ?? "", resourceVersion: ns?.resourceVersion ?? "", annotations: ns?.annotations ?? {} },
      { requestId: id },
    );
    for (const path of [INGRESS_PATH, "/api/v1/namespaces/shop"]) {
      const [patch] = patchesTo(s, path);
      expect(new URLSearchParams(patch?.query).get("fieldManager"), path).toBe(`unstuck-${id}`);
      expect(patch?.userAgent, path).toContain(id);
    }
  });
});

describe("the executor names its request", () => {
  let f: Fixture | undefined;
  afterEach(async () => {
    await f?.stop();
    f = undefined;
  });

  it("an approved finalizer removal reaches the API server as unstuck-<request id>", async () => {
    f = await startFixture();
    const { request, ts } = await f.postRequest();
    await f.click(APPROVE, request.id, BOB, ts);
    expect((await f.settled(request.id)).state).toBe("DONE");
    const patches = f.sim.requests().filter((r) => r.method === "PATCH" && r.path === INGRESS_PATH);
    expect(patches).toHaveLength(1);
    expect(new URLSearchParams(patches[0]?.query).get("fieldManager")).toBe(`unstuck-${request.id}`);
    expect(patches[0]?.userAgent).toContain(`approval request ${request.id}`);
  });
});
