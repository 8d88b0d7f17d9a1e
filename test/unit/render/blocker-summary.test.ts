/**
 * How a big diagnosis reads. The summary counts objects by type and by finalizer as
 * the namespace controller does, shows the ones with findings first, and the terminal text stays
 * readable at 600 types and 80,000 objects while `--all` keeps every line.
 */
import { describe, expect, it } from "vitest";
import { analyzeNamespace } from "../../../src/diagnosis/analyze.js";
import type { ResourceType } from "../../../src/kube/types.js";
import {
  blockerType,
  count,
  countLine,
  SUMMARY_FIRST,
  summarizeBlockers,
} from "../../../src/render/blocker-summary.js";
import { renderDiagnosisText } from "../../../src/render/diagnosis-text.js";
import { renderDiagnosisBlocks, renderDiagnosisDetails } from "../../../src/slack/blocks/diagnosis.js";
import { lintMessage } from "../../sim/slack/block-kit-lint.js";
import { held, podType, terminatingNs } from "../diagnosis/fixtures.js";

const now = new Date("2026-02-12T09:10:00Z");

function crd(i: number): ResourceType {
  const group = `g${String(i).padStart(3, "0")}.example.com`;
  return {
    group,
    version: "v1",
    apiVersion: `${group}/v1`,
    kind: `Widget${String(i)}`,
    resource: "widgets",
    namespaced: true,
    verbs: ["get", "list", "delete"],
  };
}

/** `types` CRDs holding `perType` objects each with finalizer `example.com/hold`, and a few pods. */
function bigDiagnosis(types: number, perType: number) {
  const listed = Array.from({ length: types }, (_, i) => {
    const type = crd(i);
    return {
      type,
      objects: Array.from({ length: perType + (i === types - 1 ? 7 : 0) }, (_, k) =>
        held(type, `w-${String(k)}`, ["example.com/hold"]),
      ),
    };
  });
  const pods = Array.from({ length: 3 }, (_, k) =>
    held(podType, `p-${String(k)}`, ["example.com/hold", "example.com/other"]),
  );
  const message = `Some resources are remaining: ${listed.map((l) => `widgets.${l.type.group} has ${String(l.objects.length)} resource instances`).join(", ")}`;
  return analyzeNamespace({
    name: "myapp",
    namespace: terminatingNs("myapp", new Date(now.getTime() - 3_600_000), {
      conditions: [
        { type: "NamespaceContentRemaining", status: "True", reason: "SomeResourcesRemain", message },
      ],
    }),
    listed: [...listed, { type: podType, objects: pods }],
    deployments: [],
    discoveryFailures: [],
    evidence: new Map(),
    warnings: [],
    now,
    blockedAfterSeconds: 300,
  });
}

describe("the summary of a big diagnosis", () => {
  it("counts by type as the namespace condition names them and by finalizer, each object once per finalizer", () => {
    const d = bigDiagnosis(3, 10);
    const s = summarizeBlockers(d.blockers);
    expect(s.total).toBe(3 * 10 + 7 + 3);
    expect(s.byType[0]).toEqual({ key: "widgets.g002.example.com", count: 17 });
    expect(s.byType).toContainEqual({ key: "pods", count: 3 });
    expect(s.byFinalizer).toEqual([
      { key: "example.com/hold", count: 40 },
      { key: "example.com/other", count: 3 },
    ]);
    expect(s.shown).toHaveLength(SUMMARY_FIRST);
    expect(s.hidden).toBe(40 - SUMMARY_FIRST);
    expect(summarizeBlockers(d.blockers, { all: true }).shown).toHaveLength(40);
    expect(blockerType({ resource: "configmaps", apiVersion: "v1" })).toBe("configmaps");
  });

  it("shows the objects with findings first, the others in their order", () => {
    const d = bigDiagnosis(2, 15);
    const withError = {
      ...d.blockers[29]!,
      evidence: [{ source: "log" as const, from: "c", text: "failed", error: true }],
    };
    const blockers = d.blockers.map((b, i) => (i === 29 ? withError : b));
    const shown = summarizeBlockers(blockers).shown;
    expect(shown[0]).toBe(withError);
    expect(shown.slice(1, 4)).toEqual(blockers.filter((b) => b !== withError).slice(0, 3));
  });

  it("counts the rows it leaves out", () => {
    const rows = [
      { key: "a", count: 1200 },
      { key: "b", count: 5 },
      { key: "c", count: 3 },
    ];
    expect(countLine(rows, 1)).toBe("a 1,200 · … 2 more (8)");
    expect(countLine(rows, 3)).toBe("a 1,200 · b 5 · c 3");
  });

  it("keeps the terminal text readable at 600 types and 80,000 objects; --all lists every object and type", () => {
    const d = bigDiagnosis(600, 133);
    const total = d.blockers.length;
    expect(total).toBe(600 * 133 + 7 + 3);
    const text = renderDiagnosisText(d);
    const lines = text.split("\n");
    expect(lines.length).toBeLessThan(250);
    expect(lines.filter((l) => l.startsWith("Blocker: "))).toHaveLength(SUMMARY_FIRST);
    expect(text).toContain(`Objects with finalizers: ${total.toLocaleString("en-US")}`);
    expect(text).toContain(`Remaining resources (${total.toLocaleString("en-US")} in 601 types):`);
    // The biggest type first, then 19 more, the rest counted.
    expect(text).toMatch(/^ {2}widgets\.g599\.example\.com: 140$/m);
    expect(text).toContain("… 581 more types with");
    // The condition's message is cut, not 30,000 characters on one line.
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(1000);
    expect(text).toContain(
      `… and ${(total - SUMMARY_FIRST).toLocaleString("en-US")} more objects with finalizers`,
    );

    const all = renderDiagnosisText(d, { all: true });
    expect(all.split("\n").filter((l) => l.startsWith("Blocker: "))).toHaveLength(total);
    expect(all).not.toContain("more types with");
    expect(all).toContain("widgets.g000.example.com has 133 resource instances");
  });

  it("keeps the Slack card and Details within Block Kit's limits at that size", () => {
    const d = bigDiagnosis(600, 133);
    for (const m of [renderDiagnosisBlocks(d), renderDiagnosisDetails(d)]) {
      expect(lintMessage(m).filter((p) => p.severity === "error")).toEqual([]);
      expect(m.blocks.length).toBeLessThanOrEqual(50);
      expect(JSON.stringify(m).length).toBeLessThan(40_000);
    }
    const card = JSON.stringify(renderDiagnosisBlocks(d).blocks);
    expect(card).toContain("79,810 objects remain (widgets.g599.example.com 140");
    const details = JSON.stringify(renderDiagnosisDetails(d).blocks);
    expect(details).toContain("*79,810 objects with finalizers*");
    expect(details).toContain("… 586 more (");
  });
});

describe("count", () => {
  it("writes every number as en-US does", () => {
    const intl = new Intl.NumberFormat("en-US");
    const edges = [
      0, -0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10_000, 999_999, 1_000_000, -1, -1000, -999_999,
    ];
    const big = [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 60, 1.5, -0.25, 1234.5678];
    // Seeded: every digit count from 1 to 16, and both signs.
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const sampled = Array.from({ length: 20_000 }, (_, i) => {
      const digits = (i % 16) + 1;
      const n = Math.floor(random() * 10 ** digits);
      return i % 5 === 0 ? -n : n;
    });
    for (const n of [...edges, ...big, ...sampled]) expect(count(n), String(n)).toBe(intl.format(n));
  });
});
