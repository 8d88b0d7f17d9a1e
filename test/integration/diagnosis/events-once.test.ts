/**
 * A real API server serves the core Events a second time under `events.k8s.io` (one storage). The
 * full scan of a namespace lists every namespaced type, so it must count those Events once, as the
 * namespace controller does.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../src/cli.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { linesIo } from "../../helpers/cli-io.js";

const NS = "noisy";

describe("a Terminating namespace that still holds Events", () => {
  let sim: KubeSim;
  let dir: string;
  let kubeconfig: string;

  beforeAll(async () => {
    // No namespace controller: its report never comes, so the diagnosis scans every type.
    sim = await startKubeSim({ namespaceController: false });
    sim.store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    for (const n of [1, 2, 3])
      sim.store.create({
        apiVersion: "v1",
        kind: "Event",
        metadata: { name: `web.${n}`, namespace: NS },
        involvedObject: { kind: "Pod", namespace: NS, name: "web" },
        reason: "Killing",
        message: "Stopping container web",
        type: "Normal",
      });
    sim.store.delete("v1", "Namespace", undefined, NS);
    dir = await mkdtemp(join(tmpdir(), "unstuck-events-once-"));
    kubeconfig = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kubeconfig);
  });
  afterAll(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("counts them once although discovery serves them in two groups", async () => {
    const served = (await (await fetch(`${sim.url}/apis/events.k8s.io/v1`)).json()) as {
      resources: { name: string }[];
    };
    expect(served.resources.map((r) => r.name)).toContain("events");
    const out: string[] = [];
    const code = await runCli(["ns", NS, "--json", "--kubeconfig", kubeconfig], {}, linesIo(out));
    expect(code, out.join("\n")).toBe(0);
    const json = JSON.parse(out.join("\n")) as {
      remaining: { resource: string; count: number }[];
      scan: { path: string };
    };
    expect(json.scan.path).toBe("full");
    // What every namespace holds (its CA bundle, its default ServiceAccount), and the Events once.
    expect(json.remaining).toEqual([
      { resource: "configmaps", count: 1 },
      { resource: "events", count: 3 },
      { resource: "serviceaccounts", count: 1 },
    ]);
  });
});
