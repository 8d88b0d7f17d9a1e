import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../src/cli.js";
import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import { planFinalizerRemoval } from "../../../src/diagnosis/removal-plan.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import type { KubePort } from "../../../src/kube/port.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { eventually } from "../../helpers/eventually.js";
import { linesIo } from "../../helpers/cli-io.js";

const SEED = "test/fixtures/scenarios/seed-incident.yaml";

describe("ns diagnosis against the Kubernetes simulator (seed incident)", () => {
  let sim: KubeSim;
  let kube: KubePort;
  let dir: string;
  let kubeconfigPath: string;

  beforeAll(async () => {
    sim = await startKubeSim({ scenario: SEED, controllerIntervalMs: 100 });
    kube = createKubeAdapter(sim.kubeconfig(), { maxAttempts: 1 });
    dir = await mkdtemp(join(tmpdir(), "unstuck-ns-"));
    kubeconfigPath = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kubeconfigPath);
  });
  afterAll(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });
  afterEach(() => sim.setFaults({}));

  it("names the stuck Ingress, its finalizer, both controllers and their error logs", async () => {
    const d = await diagnoseNamespace(kube, "myapp", { now: () => new Date() });
    expect(d.verdict).toBe("blocked");
    expect(d.phase).toBe("Terminating");
    expect(d.terminatingSeconds).toBeGreaterThan(300);
    expect(d.conditions.map((c) => c.message)).toEqual(
      expect.arrayContaining([
        "Some resources are remaining: ingresses.networking.k8s.io has 1 resource instances",
        "Some content in the namespace has finalizers remaining: ingress.k8s.aws/resources in 1 resource instances",
      ]),
    );
    expect(d.remaining).toContainEqual({ resource: "ingresses.networking.k8s.io", count: 1 });
    const ingress = d.blockers.find((b) => b.name === "myapp-worker-ingress");
    expect(ingress).toBeDefined();
    expect(ingress?.kind).toBe("Ingress");
    expect(ingress?.finalizers).toEqual(["ingress.k8s.aws/resources"]);
    expect(ingress?.deletionTimestamp).toBeTruthy();
    const owner = ingress?.owners[0];
    expect(owner?.controller).toBe("AWS Load Balancer Controller");
    expect(owner?.candidates.map((c) => c.name).sort()).toEqual([
      "aws-load-balancer-controller",
      "myapp-aws-load-balancer-controller",
    ]);
    const logErrors = ingress?.evidence.filter((e) => e.source === "log" && e.error) ?? [];
    expect(
      logErrors.some((e) =>
        e.text.includes("failed to delete securityGroup: timed out waiting for the condition"),
      ),
    ).toBe(true);
    // both controllers' pods were read
    expect(
      new Set(logErrors.map((e) => e.from.split("/")[1]?.replace(/-[a-z0-9]+-[a-z0-9]+$/, ""))).size,
    ).toBe(2);
    // objects elsewhere in the cluster are not blockers of myapp
    expect(d.blockers.every((b) => b.namespace === "myapp")).toBe(true);
  });

  it("reports a namespace whose content is gone but whose own finalizer remains, with upstream's condition wording", async () => {
    sim.store.create({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "custom-fin" },
      spec: { finalizers: ["kubernetes", "example.com/ns-keep"] },
    });
    sim.store.delete("v1", "Namespace", undefined, "custom-fin");
    await sim.reconcileNow();
    const d = await diagnoseNamespace(kube, "custom-fin", { now: () => new Date(), blockedAfterSeconds: 0 });
    expect(d.remaining).toEqual([]);
    expect(d.namespaceFinalizers).toContain("example.com/ns-keep");
    expect(d.verdict).toBe("blocked");
    expect(d.conditions).toContainEqual(
      expect.objectContaining({
        type: "NamespaceFinalizersRemaining",
        status: "False",
        reason: "ContentHasNoFinalizers",
        message: "All content-preserving finalizers finished",
      }),
    );
  });

  it("refuses to plan a finalizer removal for an object that is not being deleted", async () => {
    const type = (await kube.discover()).resources.find((t) => t.resource === "ingresses")!;
    const live = await kube.getObject(type, "payments", "payments-api-ingress");
    expect(live?.finalizers.length).toBeGreaterThan(0);
    expect(live?.deletionTimestamp).toBeUndefined();
    await expect(
      planFinalizerRemoval(
        kube,
        { type, namespace: "payments", name: "payments-api-ingress" },
        { now: () => new Date() },
      ),
    ).rejects.toMatchObject({
      code: ErrorCode.InvalidState,
      message: expect.stringContaining("not being deleted"),
    });
  });

  it("reports not-found and active verdicts", async () => {
    expect((await diagnoseNamespace(kube, "does-not-exist", { now: () => new Date() })).verdict).toBe(
      "not-found",
    );
    expect((await diagnoseNamespace(kube, "default", { now: () => new Date() })).verdict).toBe("active");
  });

  it("suggests the nearest namespace for a typo, from the terminal; none for a far-off name", async () => {
    const ask = async (name: string) => {
      const out: string[] = [];
      const code = await runCli(["ns", name, "--kubeconfig", kubeconfigPath], {}, linesIo(out));
      return { code, text: out.join("\n") };
    };
    const typo = await ask("myap");
    expect(typo.text).toContain("NOT FOUND");
    expect(typo.text).toContain("Did you mean `myapp`? No namespace is named `myap`.");
    const far = await ask("payments-prod");
    expect(far.text).not.toContain("Did you mean");
    expect(far.text).toContain("kubectl get namespaces");
    // Without the right to list namespaces only the suggestion is lost.
    sim.setFaults({ forbid: [{ verb: "list", resource: "namespaces" }] });
    try {
      const refused = await ask("myap");
      expect(refused.text).toContain("NOT FOUND");
      expect(refused.text).not.toContain("Did you mean");
    } finally {
      sim.setFaults({});
    }
  });

  it("says which verb and resource RBAC forbids, and keeps the rest of the diagnosis", async () => {
    sim.setFaults({ forbid: [{ verb: "list", resource: "deployments", group: "apps" }] });
    const d = await diagnoseNamespace(kube, "myapp", { now: () => new Date() });
    expect(d.blockers.some((b) => b.name === "myapp-worker-ingress")).toBe(true);
    expect(d.warnings.join("\n")).toMatch(/cannot list deployments/);
    // A type the namespace's own condition says is gone is not unread, even when it may not be listed
    // (Secrets are not even asked for: the condition names only ingresses).
    sim.setFaults({
      forbid: [
        { verb: "list", resource: "secrets" },
        { verb: "list", resource: "configmaps" },
      ],
    });
    const narrow = await diagnoseNamespace(kube, "myapp", { now: () => new Date() });
    expect(narrow.blockers.some((b) => b.name === "myapp-worker-ingress")).toBe(true);
    expect(narrow.warnings.join("\n")).not.toMatch(/secrets|configmaps/);

    sim.setFaults({ forbid: [{ verb: "get", resource: "namespaces" }] });
    const err = await diagnoseNamespace(kube, "myapp", { now: () => new Date() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnstuckError);
    expect((err as UnstuckError).code).toBe(ErrorCode.Forbidden);
    expect((err as UnstuckError).message).toMatch(/cannot get namespaces/);
  });

  it("retries a throttled API server and still answers", async () => {
    const patient = createKubeAdapter(sim.kubeconfig(), { maxAttempts: 4, maxRetryAfterSeconds: 0 });
    sim.setFaults({ throttle: { count: 3, retryAfterSeconds: 1 } });
    const d = await diagnoseNamespace(patient, "myapp", { now: () => new Date() });
    expect(d.verdict).toBe("blocked");
  });

  it("reports an unreachable API server as such", async () => {
    const dead = createKubeAdapter(sim.kubeconfig().replace(/127\.0\.0\.1:\d+/, "127.0.0.1:1"), {
      maxAttempts: 1,
    });
    const err = await diagnoseNamespace(dead, "myapp", { now: () => new Date() }).catch((e: unknown) => e);
    expect((err as UnstuckError).code).toBe(ErrorCode.Unreachable);
    expect((err as UnstuckError).message).toMatch(
      /Cannot reach the Kubernetes API server at http:\/\/127\.0\.0\.1:1/,
    );
  });

  it("answers the terminal form with the documented JSON, and refuses a bad name without any request", async () => {
    const out: string[] = [];
    const code = await runCli(["ns", "myapp", "--json", "--kubeconfig", kubeconfigPath], {}, linesIo(out));
    expect(code).toBe(0);
    const json = JSON.parse(out.join("\n")) as Record<string, unknown>;
    for (const key of [
      "namespace",
      "phase",
      "verdict",
      "terminatingSeconds",
      "conditions",
      "remaining",
      "blockers",
    ]) {
      expect(json).toHaveProperty(key);
    }
    const blocker = (json.blockers as Record<string, unknown>[])[0]!;
    for (const key of [
      "apiVersion",
      "kind",
      "namespace",
      "name",
      "finalizers",
      "deletionTimestamp",
      "owners",
      "evidence",
    ]) {
      expect(blocker).toHaveProperty(key);
    }

    sim.resetRequests();
    const errOut: string[] = [];
    const bad = await runCli(["ns", "My_App", "--kubeconfig", kubeconfigPath], {}, linesIo(errOut));
    expect(bad).toBe(2);
    expect(errOut.join("\n")).toMatch(/not a valid namespace name/);
    expect(sim.requests()).toEqual([]);
  });

  it("reads the controllers' logs while the namespace's content is still listed, each pod's once", async () => {
    // The namespace's own lists answer only once a controller's log has been asked for (or after
    // 3 s, and then `late` says so): the logs must not wait for the blockers.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      release();
    }, 3_000);
    const logsAsked: string[] = [];
    const held: KubePort = new Proxy(kube, {
      get: (target, key, receiver) =>
        key === "listObjects"
          ? async (type: Parameters<KubePort["listObjects"]>[0], ns?: string) => {
              if (ns === "myapp") await released;
              return target.listObjects(type, ns);
            }
          : key === "podLog"
            ? (...args: Parameters<KubePort["podLog"]>) => {
                logsAsked.push(args[1]);
                release();
                return target.podLog(...args);
              }
            : (Reflect.get(target, key, receiver) as unknown),
    });
    const d = await diagnoseNamespace(held, "myapp", { now: () => new Date() });
    clearTimeout(timer);
    expect(late).toBe(false);
    expect(logsAsked.length).toBeGreaterThan(0);
    expect(logsAsked.length).toBe(new Set(logsAsked).size);
    // The same evidence as a diagnosis that reads nothing ahead finds.
    const plain = await diagnoseNamespace(kube, "myapp", { now: () => new Date() });
    const logs = (x: typeof d) =>
      x.blockers.map((b) => b.evidence.filter((e) => e.source === "log").map((e) => `${e.from} ${e.text}`));
    expect(logs(d).flat().length).toBeGreaterThan(0);
    expect(logs(d)).toEqual(logs(plain));
  });

  it("reads the namespace, discovery and each log once from the terminal, and nothing for a line it refuses", async () => {
    const run = async (argv: string[], env: Record<string, string> = {}): Promise<[number, string]> => {
      const out: string[] = [];
      const code = await runCli([...argv, "--kubeconfig", kubeconfigPath], env, linesIo(out));
      return [code, out.join("\n")];
    };
    const reads = (): string[] =>
      sim
        .requests()
        .map((r) => `${r.method} ${r.path}`)
        .filter((r) => /^GET \/(api|apis|api\/v1\/namespaces\/myapp)$/.test(r))
        .sort();

    // Sent before the terminal parses the line, and handed to the diagnosis: one of each.
    sim.resetRequests();
    const [code, out] = await run(["ns", "myapp", "--json"]);
    expect(code).toBe(0);
    expect((JSON.parse(out) as { verdict: string }).verdict).toBe("blocked");
    expect(reads()).toEqual(["GET /api", "GET /api/v1/namespaces/myapp", "GET /apis"]);
    // The controllers' logs, read ahead of the blockers, are read once each too.
    const logs = sim
      .requests()
      .filter((r) => r.path.endsWith("/log"))
      .map((r) => r.path);
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).toEqual([...new Set(logs)]);

    // A line the parser or the configuration refuses sends nothing, however much it looks like one.
    for (const [argv, env, message] of [
      [["ns", "myapp", "--timeout", "soon"], {}, /--timeout takes a number of seconds/],
      [["ns", "myapp", "--timeout", "-5"], {}, /--timeout takes a number of seconds/],
      [["ns", "myapp", "extra"], {}, /./],
      [["ns", "myapp"], { UNSTUCK_KUBE_TIMEOUT_SECONDS: "-1" }, /UNSTUCK_KUBE_TIMEOUT_SECONDS/],
    ] as const) {
      sim.resetRequests();
      const [bad, said] = await run([...argv], { ...env });
      expect(bad, said).toBe(2);
      expect(said).toMatch(message);
      // A read sent early would still be on its way when the refusal is printed: give it time to land.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(sim.requests()).toEqual([]);
    }
  });

  it("sees the namespace go once the finalizer is removed with the approved precondition", async () => {
    const d = await diagnoseNamespace(kube, "myapp", { now: () => new Date() });
    const b = d.blockers.find((x) => x.name === "myapp-worker-ingress")!;
    const type = (await kube.discover()).resources.find((t) => t.resource === "ingresses")!;
    // A stale precondition is refused by the API server and changes nothing.
    await expect(
      kube.removeFinalizers(
        type,
        "myapp",
        b.name,
        { resourceVersion: "1", finalizers: b.finalizers },
        b.finalizers,
      ),
    ).rejects.toMatchObject({ code: ErrorCode.Stale });
    expect((await kube.getObject(type, "myapp", b.name))?.finalizers).toEqual(b.finalizers);

    await kube.removeFinalizers(
      type,
      "myapp",
      b.name,
      { resourceVersion: b.resourceVersion!, finalizers: b.finalizers },
      b.finalizers,
    );
    await eventually(async () => ((await kube.getNamespace("myapp")) === null ? true : undefined));
    expect((await diagnoseNamespace(kube, "myapp", { now: () => new Date() })).verdict).toBe("not-found");
  });
});
