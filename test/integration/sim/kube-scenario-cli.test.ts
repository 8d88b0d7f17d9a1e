/* eslint-disable @typescript-eslint/no-unsafe-class-instance-assignment --
   client-node's generated models are plain JSON on the wire; its own examples pass object literals. */
/**
 * Scenario loading (relative times, pass-through sections, errors), `npm run sim`, and watches.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, KubeConfig, Watch } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { loadScenario } from "../../sim/scenario.js";
import { startKubeSim } from "../../sim/kube/index.js";
import { kubectl } from "../../sim/kube/testing.js";
import { eventually } from "../../helpers/eventually.js";

const SEED = "test/fixtures/scenarios/seed-incident.yaml";

describe("scenario loading", () => {
  it("resolves relative times against the given clock and keeps unknown sections", () => {
    const now = new Date("2026-02-12T09:10:47Z");
    const s = loadScenario(
      `name: t\ncluster: {name: c}\naws: {anything: [1, 2]}\nkube:\n  objects:\n  - apiVersion: v1\n    kind: Namespace\n    metadata: {name: a, deletionTimestamp: now-32m, annotations: {at: "now-31m47s"}}\n  logs:\n  - pod: a/p\n    container: c\n    lines: ['{"ts":"{{now-1h30m}}"}']\n`,
      { now },
    );
    expect(s.aws).toEqual({ anything: [1, 2] });
    const meta = s.kube?.objects[0]?.metadata as unknown as {
      deletionTimestamp: string;
      annotations: { at: string };
    };
    expect(meta.deletionTimestamp).toBe("2026-02-12T08:38:47Z");
    expect(meta.annotations.at).toBe("2026-02-12T08:39:00Z");
    expect(s.kube?.logs[0]?.lines[0]).toBe('{"ts":"2026-02-12T07:40:47.000Z"}');
  });

  it("names the problem in a malformed scenario", () => {
    expect(() => loadScenario("name: x\nkube:\n  objects:\n  - kind: Pod\n")).toThrow(
      /kube.objects\[0\] needs apiVersion and kind/,
    );
    expect(() => loadScenario("description: no name\nkube: {}\n")).toThrow(/`name` is required/);
    expect(() => loadScenario("test/fixtures/scenarios/missing.yaml")).toThrow(/no such file/);
  });

  it("the seed scenario is fresh: the namespace has been terminating for 32 minutes by the sim's clock", async () => {
    const at = new Date("2030-01-01T00:00:00Z");
    const sim = await startKubeSim({ scenario: SEED, now: () => at });
    try {
      const ns = sim.store.get("v1", "Namespace", undefined, "myapp");
      expect(ns?.metadata?.deletionTimestamp).toBe("2029-12-31T23:28:00Z");
      expect(
        sim.store.get("networking.k8s.io/v1", "Ingress", "myapp", "myapp-worker-ingress")?.metadata
          ?.deletionTimestamp,
      ).toBe("2029-12-31T23:28:13Z");
    } finally {
      await sim.stop();
    }
  });
});

describe("npm run sim", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "kube-sim-cli-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const run = (args: string[]) =>
    spawn("node_modules/.bin/tsx", ["test/sim/main.ts", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const exitOf = (child: ReturnType<typeof run>) =>
    new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

  it("writes a kubeconfig, prints one line per endpoint, serves the scenario and exits 0 on SIGTERM", async () => {
    const kc = join(dir, "kubeconfig");
    const child = run(["--kubeconfig", kc, "--scenario", SEED]);
    const exited = exitOf(child);
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    const lines = await eventually(
      () => (out.split("\n").length > 2 ? out.split("\n") : undefined),
      20_000,
      "listening lines",
    );
    expect(lines[0]).toMatch(
      new RegExp(
        `^kube API simulator listening on http://127\\.0\\.0\\.1:\\d+; kubeconfig written to ${kc}$`,
      ),
    );
    // The seed scenario is one world: its AWS account is served too (see world.test.ts).
    expect(lines[1]).toMatch(/^AWS simulator listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(await readFile(kc, "utf8")).toContain("current-context: sim");
    const r = await kubectl(kc, join(dir, "cache"), ["get", "ns", "myapp", "-o", "jsonpath={.status.phase}"]);
    expect(r.stdout).toBe("Terminating");
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("rejects bad arguments with exit code 2 and a message", async () => {
    for (const args of [[], ["--kubeconfig", join(dir, "k"), "--port", "nope"], ["--bogus"]]) {
      const child = run(args);
      let err = "";
      child.stderr.on("data", (b: Buffer) => (err += b.toString()));
      expect(await exitOf(child)).toBe(2);
      expect(err).toMatch(/^sim: .+\nusage: /);
    }
  });
});

describe("watches", () => {
  it("streams changes to client-node's Watch, filtered by namespace", async () => {
    const sim = await startKubeSim();
    try {
      const kc = new KubeConfig();
      kc.loadFromString(sim.kubeconfig());
      const core = kc.makeApiClient(CoreV1Api);
      const seen: string[] = [];
      const list = await core.listNamespacedConfigMap({ namespace: "default" });
      const req = await new Watch(kc).watch(
        "/api/v1/namespaces/default/configmaps",
        { resourceVersion: list.metadata?.resourceVersion },
        (type: string, obj: { metadata?: { name?: string } }) =>
          seen.push(`${type} ${obj.metadata?.name ?? ""}`),
        () => undefined,
      );
      await core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "w" } } });
      await core.createNamespacedConfigMap({
        namespace: "kube-public",
        body: { metadata: { name: "elsewhere" } },
      });
      await core.deleteNamespacedConfigMap({ name: "w", namespace: "default" });
      await eventually(() => (seen.length >= 2 ? true : undefined), 5_000, "watch events");
      expect(seen).toEqual(["ADDED w", "DELETED w"]);
      req.abort();
    } finally {
      await sim.stop();
    }
  });
});
