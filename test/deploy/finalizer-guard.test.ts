/**
 * The chart's finalizer-only guard (templates/guard-finalizer-only.yaml): a ValidatingAdmissionPolicy
 * that lets the bot's ServiceAccount remove finalizers and change its own unstuck.dev/ annotations,
 * and refuses every other change it could make. Its CEL is evaluated here with a conformant CEL
 * evaluator (@bufbuild/cel) on the old and new objects of the bot's real writes: the Kubernetes
 * adapter's finalizer patch sent to the kube simulator. (No real API server evaluates it here.)
 */
import { run, isCelError } from "@bufbuild/cel";
import { execFile } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { createKubeAdapter } from "../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../src/kube/port.js";
import type { ResourceType } from "../../src/kube/types.js";
import { startKubeSim, type KubeObject, type KubeSim } from "../sim/kube/index.js";

type Loose = ReturnType<typeof JSON.parse>;

const CHART = "deploy/chart/unstuck";
const NAMESPACE = "ops";
/** The workers' ServiceAccount (worker.enabled, the default): the release's only writer. */
const BOT = `system:serviceaccount:${NAMESPACE}:r-unstuck-worker`;
/** The Slack-facing bot's: it only reads, and the policy admits nothing of it. */
const SLACK_BOT = `system:serviceaccount:${NAMESPACE}:r-unstuck`;

interface Policy {
  matchConditions: { name: string; expression: string }[];
  variables: { name: string; expression: string }[];
  validations: { expression: string; message: string }[];
}

/** JSON as CEL input: objects as maps, integers as CEL ints (as Kubernetes' CEL sees them). */
function toCel(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toCel);
  if (v !== null && typeof v === "object") {
    return new Map(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, toCel(x)]));
  }
  if (typeof v === "number" && Number.isInteger(v)) return BigInt(v);
  return v;
}

function evaluate(expression: string, bindings: Record<string, unknown>): unknown {
  const result = run(expression, bindings as Parameters<typeof run>[1]);
  if (isCelError(result)) throw new Error(`CEL error in ${expression}: ${result.message}`);
  return result;
}

/** The policy's verdict on an UPDATE: undefined when not matched, else the failed messages. */
function admit(policy: Policy, username: string, oldObject: unknown, object: unknown): string[] | undefined {
  const request = toCel({ userInfo: { username }, operation: "UPDATE" });
  for (const c of policy.matchConditions) {
    if (evaluate(c.expression, { request }) !== true) return undefined;
  }
  const bindings: Record<string, unknown> = { request, object: toCel(object), oldObject: toCel(oldObject) };
  const variables = new Map<string, unknown>();
  for (const v of policy.variables) {
    variables.set(v.name, evaluate(v.expression, { ...bindings, variables }));
  }
  const failed: string[] = [];
  for (const v of policy.validations) {
    const ok = evaluate(v.expression, { ...bindings, variables });
    expect(typeof ok, v.expression).toBe("boolean");
    if (ok !== true) failed.push(v.message);
  }
  return failed;
}

function helmTemplate(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("helm", ["template", ...args], (err, stdout, stderr) => {
      if (err) reject(new Error(`helm template failed (helm 3 is required; .ci/run installs it): ${stderr}`));
      else resolve(stdout);
    });
  });
}

const clone = <T>(x: T): T => structuredClone(x);

describe("the finalizer-only guard", () => {
  let policy: Policy;
  let binding: Loose;
  let sim: KubeSim;
  let kube: KubePort;
  const ingress: ResourceType = {
    group: "networking.k8s.io",
    version: "v1",
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    resource: "ingresses",
    namespaced: true,
    verbs: ["get", "list", "patch"],
  };
  const service: ResourceType = {
    group: "",
    version: "v1",
    apiVersion: "v1",
    kind: "Service",
    resource: "services",
    namespaced: true,
    verbs: ["get", "list", "patch"],
  };

  beforeAll(async () => {
    const docs = parseAllDocuments(
      await helmTemplate(["r", CHART, "-n", NAMESPACE, "-f", `${CHART}/ci/default-values.yaml`]),
    ).map((d) => d.toJS());
    const vap = docs.find(
      (d) =>
        d?.kind === "ValidatingAdmissionPolicy" && String(d.metadata.name).endsWith("-finalizer-only-writes"),
    );
    binding = docs.find(
      (d) => d?.kind === "ValidatingAdmissionPolicyBinding" && d.spec.policyName === vap?.metadata.name,
    );
    expect(vap, "rendered by default").toBeDefined();
    policy = vap.spec as Policy;

    sim = await startKubeSim({ controllerIntervalMs: 200 });
    kube = createKubeAdapter(sim.kubeconfig(), { maxAttempts: 1 });
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
    sim.store.create({
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: {
        name: "web",
        namespace: "shop",
        labels: { app: "web" },
        annotations: { "alb.ingress.kubernetes.io/group.name": "shared", "unstuck.dev/note": "x" },
        finalizers: ["ingress.k8s.aws/resources", "example.com/keep"],
      },
      spec: { rules: [{ host: "shop.example.com" }] },
    });
    sim.store.create({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "nlb", namespace: "shop", finalizers: ["service.k8s.aws/resources"] },
      spec: { type: "LoadBalancer", ports: [{ port: 443 }] },
    });
  });
  afterAll(async () => {
    await sim.stop();
  });

  /** The bot's own write through the real adapter; the objects before and after it. */
  async function botRemoves(
    type: ResourceType,
    name: string,
    remove: string[],
  ): Promise<[KubeObject, KubeObject]> {
    const before = sim.store.get(type.apiVersion, type.kind, "shop", name);
    if (!before) throw new Error(`no ${name}`);
    await kube.removeFinalizers(
      type,
      "shop",
      name,
      {
        resourceVersion: before.metadata?.resourceVersion ?? "",
        finalizers: before.metadata?.finalizers ?? [],
      },
      remove,
    );
    const after = sim.store.get(type.apiVersion, type.kind, "shop", name);
    if (!after) throw new Error(`${name} gone`);
    return [before, after];
  }

  it("binds with Deny and matches only the bot's ServiceAccount", () => {
    expect(binding.spec.validationActions).toEqual(["Deny"]);
    expect(policy.matchConditions).toHaveLength(1);
    const obj = { metadata: { name: "a" }, spec: { x: 1n } };
    expect(admit(policy, BOT, obj, obj)).toEqual([]);
    expect(
      admit(policy, "system:serviceaccount:other:r-unstuck-worker", obj, { ...obj, spec: { x: 2 } }),
    ).toBeUndefined();
    // The Slack-facing bot's ServiceAccount is not the writer: RBAC gives it no patch at all.
    expect(admit(policy, SLACK_BOT, obj, { ...obj, spec: { x: 2 } })).toBeUndefined();
    expect(admit(policy, "kubernetes-admin", obj, { ...obj, spec: { x: 2 } })).toBeUndefined();
  });

  it("admits the bot's finalizer patches as sent to the simulator: one finalizer of two, and the last one", async () => {
    const [before, after] = await botRemoves(ingress, "web", ["ingress.k8s.aws/resources"]);
    expect(after.metadata?.finalizers).toEqual(["example.com/keep"]);
    expect(admit(policy, BOT, before, after)).toEqual([]);
    const [svcBefore, svcAfter] = await botRemoves(service, "nlb", ["service.k8s.aws/resources"]);
    expect(svcAfter.metadata?.finalizers).toBeUndefined();
    expect(admit(policy, BOT, svcBefore, svcAfter)).toEqual([]);
  });

  it("admits a change of the bot's own annotations", () => {
    const old = sim.store.get("networking.k8s.io/v1", "Ingress", "shop", "web") as Loose;
    const next = clone(old);
    next.metadata.annotations["unstuck.dev/request"] = "r-123";
    delete next.metadata.annotations["unstuck.dev/note"];
    expect(admit(policy, BOT, old, next)).toEqual([]);
  });

  it("refuses any other change the bot's ServiceAccount could make, naming what is wrong", () => {
    const old = sim.store.get("networking.k8s.io/v1", "Ingress", "shop", "web") as Loose;
    const outside =
      "unstuck may only remove finalizers: this update changes the object outside its metadata.";
    const metadata =
      "unstuck may only remove finalizers: this update changes metadata other than finalizers.";
    const adds = "unstuck may only remove finalizers, never add one.";
    const annotations = "unstuck may only change its own annotations (unstuck.dev/…).";
    const cases: [string, (o: Loose) => void, string[]][] = [
      ["a spec change", (o) => (o.spec.rules[0].host = "evil.example.com"), [outside]],
      ["a new top-level field", (o) => (o.data = { k: "v" }), [outside]],
      ["a removed spec", (o) => delete o.spec, [outside]],
      ["a status change", (o) => (o.status = { loadBalancer: { ingress: [{ hostname: "x" }] } }), [outside]],
      ["a label", (o) => (o.metadata.labels.app = "other"), [metadata]],
      ["labels removed", (o) => delete o.metadata.labels, [metadata]],
      ["an owner reference", (o) => (o.metadata.ownerReferences = [{ kind: "X", name: "y" }]), [metadata]],
      ["an added finalizer", (o) => o.metadata.finalizers.push("evil.example.com/hold"), [adds]],
      [
        "another's annotation changed",
        (o) => (o.metadata.annotations["alb.ingress.kubernetes.io/group.name"] = "x"),
        [annotations],
      ],
      [
        "another's annotation removed",
        (o) => delete o.metadata.annotations["alb.ingress.kubernetes.io/group.name"],
        [annotations],
      ],
      [
        "an annotation added",
        (o) => (o.metadata.annotations["kubectl.kubernetes.io/restartedAt"] = "now"),
        [annotations],
      ],
    ];
    for (const [what, change, expected] of cases) {
      const next = clone(old);
      change(next);
      expect(admit(policy, BOT, old, next), what).toEqual(expected);
    }
  });
});
