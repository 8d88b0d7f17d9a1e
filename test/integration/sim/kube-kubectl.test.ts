/**
 * The real kubectl (v1.32) against the simulator: discovery, OpenAPI-driven create/apply with
 * server-side field validation, patch, delete, CRDs, finalizers, logs, and error messages.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";

import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { kubectl, type KubectlResult } from "../../sim/kube/testing.js";

describe("kubectl against the kube simulator", () => {
  let sim: KubeSim;
  let dir: string;
  let k: (...args: string[]) => Promise<KubectlResult>;
  let file: (name: string, text: string) => Promise<string>;
  const ns = `kt-${process.pid}`;

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 50 });
    dir = await mkdtemp(join(tmpdir(), "kube-sim-kubectl-"));
    const kc = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kc);
    k = (...args) => kubectl(kc, join(dir, "cache"), args);
    file = async (name, text) => {
      const p = join(dir, name);
      await writeFile(p, text);
      return p;
    };
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  });
  afterAll(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("lists API resources from discovery, including scope and short names", async () => {
    const r = await k("api-resources");
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout.split("\n").map((l) => l.trim().split(/\s+/));
    const ing = rows.find((c) => c[0] === "ingresses");
    expect(ing).toEqual(["ingresses", "ing", "networking.k8s.io/v1", "true", "Ingress"]);
    const nsRow = rows.find((c) => c[0] === "namespaces");
    expect(nsRow).toEqual(["namespaces", "ns", "v1", "false", "Namespace"]);
    for (const name of ["pods", "deployments", "customresourcedefinitions", "apiservices", "events"]) {
      expect(rows.some((c) => c[0] === name)).toBe(true);
    }
  });

  it("shows a base namespace as YAML with the kubernetes finalizer", async () => {
    const r = await k("get", "ns", "kube-system", "-o", "yaml");
    expect(r.code, r.stderr).toBe(0);
    const obj = parseYaml(r.stdout);
    expect(obj.kind).toBe("Namespace");
    expect(obj.spec.finalizers).toEqual(["kubernetes"]);
    expect(obj.status.phase).toBe("Active");
    expect(obj.metadata.labels["kubernetes.io/metadata.name"]).toBe("kube-system");
    expect(Number(obj.metadata.resourceVersion)).toBeGreaterThan(0);
  });

  it("creates with server-side validation and refuses a duplicate with the real message", async () => {
    sim.resetRequests();
    const p = await file(
      "cm-create.yaml",
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: made, namespace: ${ns}}\ndata: {a: "1"}\n`,
    );
    const first = await k("create", "-f", p);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim()).toBe("configmap/made created");
    const post = sim.requests().find((q) => q.method === "POST");
    expect(post?.query).toContain("fieldValidation=Strict");
    const again = await k("create", "-f", p);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(
      `Error from server (AlreadyExists): error when creating "${p}": configmaps "made" already exists`,
    );
  });

  it("rejects an invalid name with the real 422 Invalid message", async () => {
    const p = await file(
      "bad.yaml",
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name, namespace: ${ns}}\n`,
    );
    const r = await k("create", "-f", p);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      'The ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain',
    );
  });

  it("applies a new object, leaves it unchanged on a second apply, and configures a change", async () => {
    const text = (v: string) =>
      `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ${ns}, labels: {app: web}}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        image: nginx:${v}\n        ports: [{containerPort: 80}]\n      - name: sidecar\n        image: busybox:1\n`;
    const p = await file("deploy.yaml", text("1.25"));
    const created = await k("apply", "-f", p);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout.trim()).toBe("deployment.apps/web created");
    const same = await k("apply", "-f", p);
    expect(same.stdout.trim()).toBe("deployment.apps/web unchanged");
    await writeFile(p, text("1.27"));
    const changed = await k("apply", "-f", p);
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stdout.trim()).toBe("deployment.apps/web configured");
    const live = JSON.parse((await k("-n", ns, "get", "deploy", "web", "-o", "json")).stdout);
    // strategic merge by container name: the image changed, the other container and ports survived
    expect(
      live.spec.template.spec.containers.map((c: { name: string; image: string }) => `${c.name}=${c.image}`),
    ).toEqual(["web=nginx:1.27", "sidecar=busybox:1"]);
    expect(live.spec.template.spec.containers[0].ports).toEqual([{ containerPort: 80 }]);
    expect(live.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]).toContain(
      "nginx:1.27",
    );
    expect(live.metadata.generation).toBe(2);
  });

  it("patches with --type=merge and deletes", async () => {
    sim.store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "patchme", namespace: ns },
      data: { a: "1" },
    });
    const p = await k(
      "-n",
      ns,
      "patch",
      "configmap",
      "patchme",
      "--type=merge",
      "-p",
      '{"data":{"b":"2","a":null}}',
    );
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout.trim()).toBe("configmap/patchme patched");
    expect(sim.store.get("v1", "ConfigMap", ns, "patchme")?.data).toEqual({ b: "2" });
    const d = await k("-n", ns, "delete", "configmap", "patchme");
    expect(d.code, d.stderr).toBe(0);
    expect(d.stdout.trim()).toBe('configmap "patchme" deleted');
    const g = await k("-n", ns, "get", "configmap", "patchme");
    expect(g.stderr.trim()).toBe('Error from server (NotFound): configmaps "patchme" not found');
  });

  it("serves a CRD's type as soon as it is created, and its objects", async () => {
    const crd = await file(
      "crd.yaml",
      `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wg]}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`,
    );
    expect((await k("create", "-f", crd)).code).toBe(0);
    const w = await file(
      "w.yaml",
      `apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: ${ns}}\nspec: {size: 3}\n`,
    );
    const created = await k("create", "-f", w);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout.trim()).toBe("widget.example.com/w1 created");
    const applied = await k("apply", "-f", w);
    expect(applied.code, applied.stderr).toBe(0);
    const list = JSON.parse((await k("-n", ns, "get", "wg", "-o", "json")).stdout);
    expect(list.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(["w1"]);
    expect(list.items[0].spec).toEqual({ size: 3 });
    const res = await k("api-resources", "--api-group=example.com", "-o", "name");
    expect(res.stdout.trim()).toBe("widgets.example.com");
  });

  it("keeps a deleted object with a finalizer until the finalizer is patched away", async () => {
    const ing = await file(
      "ing.yaml",
      `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: held, namespace: ${ns}, finalizers: [ingress.k8s.aws/resources]}
spec: {ingressClassName: alb, defaultBackend: {service: {name: web, port: {number: 80}}}}
`,
    );
    expect((await k("create", "-f", ing)).code).toBe(0);
    const del = await k("-n", ns, "delete", "ingress", "held", "--wait=false");
    expect(del.code, del.stderr).toBe(0);
    const held = JSON.parse((await k("-n", ns, "get", "ingress", "held", "-o", "json")).stdout);
    expect(held.metadata.deletionTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(held.metadata.deletionGracePeriodSeconds).toBe(0);
    expect(held.metadata.finalizers).toEqual(["ingress.k8s.aws/resources"]);
    const patch = await k(
      "-n",
      ns,
      "patch",
      "ingress",
      "held",
      "--type=merge",
      "-p",
      '{"metadata":{"finalizers":[]}}',
    );
    expect(patch.code, patch.stderr).toBe(0);
    const gone = await k("-n", ns, "get", "ingress", "held");
    expect(gone.stderr.trim()).toBe(
      'Error from server (NotFound): ingresses.networking.k8s.io "held" not found',
    );
  });

  it("marks a deleted namespace Terminating with a timestamp and no grace period, as the namespace store does", async () => {
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "graceless" } });
    // Something inside with a finalizer keeps it Terminating.
    sim.store.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "kept", namespace: "graceless", finalizers: ["example.com/hold"] },
    });
    const del = await k("delete", "namespace", "graceless", "--wait=false");
    expect(del.code, del.stderr).toBe(0);
    const nsObj = JSON.parse((await k("get", "namespace", "graceless", "-o", "json")).stdout);
    expect(nsObj.metadata.deletionTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(nsObj.metadata).not.toHaveProperty("deletionGracePeriodSeconds");
    expect(nsObj.status.phase).toBe("Terminating");
  });

  it("gives every new namespace its CA bundle and default ServiceAccount, back when deleted, none once Terminating", async () => {
    const made = await k(
      "create",
      "-f",
      await file("pub-ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: published}\n"),
    );
    expect(made.code, made.stderr).toBe(0);
    const cm = JSON.parse(
      (await k("-n", "published", "get", "configmap", "kube-root-ca.crt", "-o", "json")).stdout,
    );
    expect(cm.data["ca.crt"]).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    expect(cm.metadata.annotations["kubernetes.io/description"]).toContain("CA bundle");
    const sa = await k("-n", "published", "get", "serviceaccounts", "-o", "name");
    expect(sa.stdout.trim()).toBe("serviceaccount/default");
    // The root-CA publisher puts it back at once.
    const del = await k("-n", "published", "delete", "configmap", "kube-root-ca.crt");
    expect(del.code, del.stderr).toBe(0);
    const back = await k("-n", "published", "get", "configmap", "-o", "name");
    expect(back.stdout.trim()).toBe("configmap/kube-root-ca.crt");
    // Deleting the namespace deletes them with the rest, and nothing publishes them again.
    const gone = await k("delete", "namespace", "published");
    expect(gone.code, gone.stderr).toBe(0);
    expect(sim.store.list("v1", "ConfigMap", "published")).toEqual([]);
    expect(sim.store.list("v1", "ServiceAccount", "published")).toEqual([]);
  });

  it("sets a generation only on the types whose create strategy sets one", async () => {
    const manifest = [
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gen-cm, namespace: ${ns}}\ndata: {a: "1"}`,
      `apiVersion: v1\nkind: Pod\nmetadata: {name: gen-pod, namespace: ${ns}}\nspec: {containers: [{name: c, image: "nginx:1.27"}]}`,
      `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: gen-ing, namespace: ${ns}}\nspec: {defaultBackend: {service: {name: web, port: {number: 80}}}}`,
    ].join("\n---\n");
    const made = await k("create", "-f", await file("gen.yaml", manifest));
    expect(made.code, made.stderr).toBe(0);
    const get = async (what: string) => JSON.parse((await k("-n", ns, "get", what, "-o", "json")).stdout);
    expect((await get("configmap/gen-cm")).metadata).not.toHaveProperty("generation");
    expect((await get("pod/gen-pod")).metadata).not.toHaveProperty("generation");
    expect((await get("ingress/gen-ing")).metadata.generation).toBe(1);
    // A change to a ConfigMap's data still gives it none.
    const patched = await k(
      "-n",
      ns,
      "patch",
      "configmap",
      "gen-cm",
      "--type=merge",
      "-p",
      '{"data":{"a":"2"}}',
    );
    expect(patched.code, patched.stderr).toBe(0);
    expect((await get("configmap/gen-cm")).metadata).not.toHaveProperty("generation");
  });

  it("serves the namespaced built-in types every 1.32 API server serves, RBAC and autoscaling included", async () => {
    const res = await k("api-resources", "--namespaced=true", "-o", "name");
    expect(res.code, res.stderr).toBe(0);
    const names = res.stdout.trim().split("\n");
    for (const t of [
      "roles.rbac.authorization.k8s.io",
      "rolebindings.rbac.authorization.k8s.io",
      "poddisruptionbudgets.policy",
      "horizontalpodautoscalers.autoscaling",
      "controllerrevisions.apps",
      "csistoragecapacities.storage.k8s.io",
    ])
      expect(names).toContain(t);
  });

  it("refuses a field manager over 128 bytes, as an invalid PatchOptions, and changes nothing", async () => {
    sim.store.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "fm", namespace: ns } });
    const patchAs = (manager: string) =>
      k(
        "-n",
        ns,
        "patch",
        "configmap",
        "fm",
        "--type=merge",
        "-p",
        '{"data":{"a":"1"}}',
        `--field-manager=${manager}`,
      );
    const long = await patchAs("m".repeat(129));
    expect(long.code).not.toBe(0);
    expect(long.stderr).toContain("fieldManager: Too long: may not be more than 128 bytes");
    expect(sim.store.get("v1", "ConfigMap", ns, "fm")).not.toHaveProperty("data");
    const ok = await patchAs("m".repeat(128));
    expect(ok.code, ok.stderr).toBe(0);
  });

  it("reads pod logs with --tail and --since", async () => {
    sim.store.create({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "talker", namespace: ns },
      spec: { containers: [{ name: "main", image: "busybox" }] },
    });
    sim.appendLog(ns, "talker", "main", ["one", "two", "three"]);
    const tail = await k("-n", ns, "logs", "talker", "--tail=2");
    expect(tail.code, tail.stderr).toBe(0);
    expect(tail.stdout).toBe("two\nthree\n");
    const ts = await k("-n", ns, "logs", "talker", "--tail=1", "--timestamps");
    expect(ts.stdout).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z three\n$/);
  });

  it("prints tables with the server's columns", async () => {
    const r = await k("get", "ns");
    expect(r.code, r.stderr).toBe(0);
    const header = r.stdout.split("\n")[0]?.split(/\s+/);
    expect(header).toEqual(["NAME", "STATUS", "AGE"]);
    expect(r.stdout).toMatch(new RegExp(`${ns}\\s+Active`));
  });

  it("serves the core Events again under events.k8s.io, one storage converted both ways", async () => {
    sim.store.create({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "web.1", namespace: ns },
      involvedObject: { kind: "Ingress", namespace: ns, name: "web" },
      reason: "FailedDeployModel",
      message: "Failed deploy model due to AccessDenied",
      type: "Warning",
      count: 3,
      source: { component: "ingress" },
    });
    const v1 = await k("get", "events.v1.events.k8s.io", "-n", ns, "web.1", "-o", "json");
    expect(v1.code, v1.stderr).toBe(0);
    const ev = JSON.parse(v1.stdout);
    expect(ev.apiVersion).toBe("events.k8s.io/v1");
    expect(ev.regarding.name).toBe("web");
    expect(ev.note).toBe("Failed deploy model due to AccessDenied");
    expect(ev.deprecatedCount).toBe(3);
    expect(ev.deprecatedSource).toEqual({ component: "ingress" });
    expect(ev.message).toBeUndefined();

    // Written through events.k8s.io, read through the core group.
    const p = await file(
      "ev.yaml",
      `apiVersion: events.k8s.io/v1\nkind: Event\nmetadata: {name: web.2, namespace: ${ns}}\nregarding: {kind: Ingress, namespace: ${ns}, name: web}\nreason: Deleted\nnote: gone\ntype: Normal\neventTime: "2026-01-01T00:00:00.000000Z"\nreportingController: sim\nreportingInstance: sim-1\naction: Delete\n`,
    );
    const made = await k("create", "-f", p);
    expect(made.code, made.stderr).toBe(0);
    const core = await k("get", "events", "-n", ns, "web.2", "-o", "json");
    expect(core.code, core.stderr).toBe(0);
    const c = JSON.parse(core.stdout);
    expect(c.involvedObject.name).toBe("web");
    expect(c.message).toBe("gone");
    expect(c.reportingComponent).toBe("sim");
    const both = await k("get", "events.events.k8s.io", "-n", ns, "-o", "name");
    expect(both.stdout.trim().split("\n").sort()).toEqual([
      "event.events.k8s.io/web.1",
      "event.events.k8s.io/web.2",
    ]);
  });
});
