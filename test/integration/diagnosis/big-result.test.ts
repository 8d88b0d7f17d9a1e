/**
 * A big result is summarised for people and complete for programs. A Terminating
 * namespace with 2,201 objects holding finalizers (1,200 ConfigMaps: three pages of the simulator's
 * `limit`/`continue`): the terminal text counts them by type and by finalizer — the same counts as
 * the namespace controller's conditions — shows the first 20 and says how to see the rest; `--all`
 * lists every one; `--json` has all; the Slack card and its Details reply summarise within Block
 * Kit's limits.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../src/cli.js";
import { diagnoseNamespace } from "../../../src/diagnosis/diagnose.js";
import type { NamespaceDiagnosis } from "../../../src/diagnosis/types.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { SUMMARY_FIRST } from "../../../src/render/blocker-summary.js";
import { renderDiagnosisBlocks, renderDiagnosisDetails } from "../../../src/slack/blocks/diagnosis.js";
import { lintMessage } from "../../sim/slack/block-kit-lint.js";
import { startKubeSim, type KubeSim } from "../../sim/kube/index.js";
import { linesIo } from "../../helpers/cli-io.js";

const NS = "bigns";
const GROUP = "big.example.com";
const HOLD = "example.com/hold";
const CLEANUP = `${GROUP}/cleanup`;
const COUNTS = { configmaps: 1200, secrets: 500, widgets: 501 } as const;
const TOTAL = COUNTS.configmaps + COUNTS.secrets + COUNTS.widgets;

/** `"configmaps. has 1200 resource instances, …"` → { "configmaps": 1200, … } (core types end in "."). */
function conditionCounts(message: string | undefined, pattern: RegExp): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of (message ?? "").matchAll(pattern)) out.set((m[1] ?? "").replace(/\.$/, ""), Number(m[2]));
  return out;
}

/** `  by type:      configmaps 1,200 · secrets 500` → { configmaps: 1200, secrets: 500 }. */
function printedCounts(text: string, label: string): Map<string, number> {
  const line = text.split("\n").find((l) => l.trimStart().startsWith(`${label}:`));
  const out = new Map<string, number>();
  for (const part of (line ?? "").replace(/^\s*[a-z ]+:\s*/, "").split(" · ")) {
    const m = /^(\S+) ([\d,]+)$/.exec(part.trim());
    if (m) out.set(m[1] ?? "", Number((m[2] ?? "").replace(/,/g, "")));
  }
  return out;
}

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const code = await runCli(args, {}, linesIo(out));
  return { code, out: out.join("\n") };
}

describe("a big diagnosis: summarised text and Slack, --all and --json complete", () => {
  let sim: KubeSim;
  let dir: string;
  let kubeconfig: string;
  let d: NamespaceDiagnosis;
  let byType: Map<string, number>;
  let byFinalizer: Map<string, number>;

  beforeAll(async () => {
    sim = await startKubeSim({ controllerIntervalMs: 3_600_000 });
    const { store } = sim;
    store.create({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `widgets.${GROUP}` },
      spec: {
        group: GROUP,
        scope: "Namespaced",
        names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
        ],
      },
    });
    store.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    for (let i = 0; i < COUNTS.configmaps; i++)
      store.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `cm-${String(i)}`, namespace: NS, finalizers: [HOLD] },
      });
    for (let i = 0; i < COUNTS.secrets; i++)
      store.create({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: `s-${String(i)}`, namespace: NS, finalizers: [HOLD] },
      });
    for (let i = 0; i < COUNTS.widgets; i++)
      store.create({
        apiVersion: `${GROUP}/v1`,
        kind: "Widget",
        metadata: { name: `w-${String(i)}`, namespace: NS, finalizers: [CLEANUP] },
      });
    store.delete("v1", "Namespace", undefined, NS);
    await sim.reconcileNow();
    dir = await mkdtemp(join(tmpdir(), "unstuck-big-"));
    kubeconfig = join(dir, "kubeconfig");
    await sim.writeKubeconfig(kubeconfig);

    d = await diagnoseNamespace(createKubeAdapter(sim.kubeconfig(), { maxAttempts: 1 }), NS, {
      now: () => new Date(),
    });
    const content = d.conditions.find((c) => c.type === "NamespaceContentRemaining");
    const finals = d.conditions.find((c) => c.type === "NamespaceFinalizersRemaining");
    byType = conditionCounts(content?.message, /([a-z0-9.-]+) has (\d+) resource instances/g);
    byFinalizer = conditionCounts(finals?.message, /([a-z0-9./-]+) in (\d+) resource instances/g);
  }, 120_000);

  afterAll(async () => {
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("reads what the namespace controller counts (the world is what the test means)", () => {
    expect(byType).toEqual(
      new Map([
        ["configmaps", COUNTS.configmaps],
        ["secrets", COUNTS.secrets],
        [`widgets.${GROUP}`, COUNTS.widgets],
      ]),
    );
    expect(byFinalizer).toEqual(
      new Map([
        [HOLD, COUNTS.configmaps + COUNTS.secrets],
        [CLEANUP, COUNTS.widgets],
      ]),
    );
    expect(d.blockers).toHaveLength(TOTAL);
  });

  it("prints counts by type and by finalizer that agree with the conditions, the first 20 and how to see the rest", async () => {
    const { code, out } = await cli(["ns", NS, "--kubeconfig", kubeconfig]);
    expect(code).toBe(0);
    expect(out).toContain(`Objects with finalizers: 2,201`);
    expect(printedCounts(out, "by type")).toEqual(byType);
    expect(printedCounts(out, "by finalizer")).toEqual(byFinalizer);
    const shown = out.split("\n").filter((l) => l.startsWith("Blocker: "));
    expect(shown).toHaveLength(SUMMARY_FIRST);
    expect(out).toContain(
      `… and ${(TOTAL - SUMMARY_FIRST).toLocaleString("en-US")} more objects with finalizers`,
    );
    expect(out).toMatch(/--all to list every one/);
    expect(out).toMatch(/--json for all/);
    // Remaining resources are counted in full too (few types: every one listed).
    for (const [resource, n] of byType)
      expect(out).toMatch(new RegExp(`^  ${resource}\\.?: ${String(n)}$`, "m"));
    // Readable: a summary, not a dump of 2,201 objects.
    expect(out.split("\n").length).toBeLessThan(400);
  });

  it("lists every object with --all, once each", async () => {
    const { code, out } = await cli(["ns", NS, "--all", "--kubeconfig", kubeconfig]);
    expect(code).toBe(0);
    const shown = out.split("\n").filter((l) => l.startsWith("Blocker: "));
    expect(shown).toHaveLength(TOTAL);
    const names = new Set(shown.map((l) => /^Blocker: \S+ \S+\/(\S+) /.exec(l)?.[1]));
    expect(names.size).toBe(TOTAL);
    for (let i = 0; i < COUNTS.configmaps; i++) expect(names.has(`cm-${String(i)}`)).toBe(true);
    expect(out).not.toMatch(/more objects with finalizers, not shown/);
    expect(printedCounts(out, "by type")).toEqual(byType);
  });

  it("keeps --json complete, with or without --all", async () => {
    for (const args of [
      ["ns", NS, "--json"],
      ["ns", NS, "--json", "--all"],
    ]) {
      const { code, out } = await cli([...args, "--kubeconfig", kubeconfig]);
      expect(code).toBe(0);
      const json = JSON.parse(out) as NamespaceDiagnosis;
      expect(json.blockers).toHaveLength(TOTAL);
      expect(new Set(json.blockers.map((b) => `${b.resource}/${b.name}`)).size).toBe(TOTAL);
      expect(new Map(json.remaining.map((r) => [r.resource, r.count]))).toEqual(byType);
    }
  });

  it("summarises the Slack card and its Details within Block Kit's limits", () => {
    const card = renderDiagnosisBlocks(d);
    const details = renderDiagnosisDetails(d);
    for (const m of [card, details]) {
      expect(lintMessage(m).filter((p) => p.severity === "error")).toEqual([]);
      expect(m.blocks.length).toBeLessThanOrEqual(50);
    }
    const cardText = JSON.stringify(card.blocks);
    expect(cardText).toContain("2,201 objects remain (configmaps 1,200");
    expect(cardText).toContain("2,201 with finalizers");

    const texts = details.blocks.map((b) => (b as { text?: { text?: string } }).text?.text ?? "");
    const counts = texts.find((t) => t.startsWith("*2,201 objects with finalizers*")) ?? "";
    const parse = (label: string): Map<string, number> => {
      const line = counts.split("\n").find((l) => l.startsWith(`_${label}:_ `)) ?? "";
      return printedCounts(line.replace(/^_[a-z ]+:_ /, `${label}: `), label);
    };
    expect(parse("by type")).toEqual(byType);
    expect(parse("by finalizer")).toEqual(byFinalizer);
    const objects = texts.filter((t) => t.includes("finalizers: `"));
    expect(objects).toHaveLength(SUMMARY_FIRST);
    const all = JSON.stringify(details.blocks);
    expect(all).toContain(
      `…and ${(TOTAL - SUMMARY_FIRST).toLocaleString("en-US")} more objects with finalizers`,
    );
    expect(all).toContain(`ns ${NS} --all`);
    expect(all).toContain("Next steps");
  });
});
