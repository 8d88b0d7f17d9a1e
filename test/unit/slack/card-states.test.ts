/**
 * Cards that say what is true now: a diagnosis card repainted GONE says gone and what comes next,
 * never the old verdict, advice or buttons; a missing namespace reads as a sentence; an error about a
 * huge input keeps its explanation; the emoji the bot writes render anywhere.
 */
import type { KnownBlock } from "@slack/types";
import { describe, expect, it } from "vitest";
import { analyzeNamespace, type AnalyzeInput } from "../../../src/diagnosis/analyze.js";
import { ErrorCode } from "../../../src/errors.js";
import { renderDiagnosisBlocks } from "../../../src/slack/blocks/diagnosis.js";
import { renderErrorBlocks } from "../../../src/slack/blocks/help.js";
import { renderDiagnosisGone, renderWatchFinished } from "../../../src/slack/blocks/watch.js";
import { lintMessage } from "../../sim/slack/block-kit-lint.js";
import { ingressType, lbcDeployment, obj, terminatingNs } from "../diagnosis/fixtures.js";

const now = new Date("2026-02-12T09:10:00Z");

function blockedInput(): AnalyzeInput {
  const ingress = obj(ingressType, "myapp-worker-ingress", {
    finalizers: ["ingress.k8s.aws/resources"],
    deletionTimestamp: "2026-02-12T08:39:00Z",
  });
  return {
    name: "myapp",
    namespace: terminatingNs("myapp", new Date("2026-02-12T08:38:47Z")),
    listed: [{ type: ingressType, objects: [ingress] }],
    deployments: [lbcDeployment("aws-load-balancer-controller")],
    discoveryFailures: [],
    evidence: new Map(),
    warnings: [],
    now,
    blockedAfterSeconds: 300,
  };
}

const texts = (blocks: readonly KnownBlock[]): string => JSON.stringify(blocks);
const buttons = (blocks: readonly KnownBlock[]): KnownBlock[] => blocks.filter((b) => b.type === "actions");

describe("a diagnosis card once the namespace is gone", () => {
  const card = renderDiagnosisBlocks(analyzeNamespace(blockedInput()), { command: "/unstuck" });

  it("the posted card is BLOCKED with its advice and a button (what the repaint replaces)", () => {
    expect(texts(card.blocks)).toContain("*BLOCKED*");
    expect(texts(card.blocks)).toContain("Recommended");
    expect(buttons(card.blocks).length).toBeGreaterThan(0);
  });

  it("says GONE and offers the orphan check and the trace; no verdict, advice or button left", () => {
    const gone = renderDiagnosisGone("myapp", new Date("2026-02-12T09:30:00Z"));
    const all = texts(gone.blocks);
    expect(all).toContain("Namespace myapp: GONE");
    expect(all).toContain("*GONE*");
    expect(all).not.toContain("BLOCKED");
    expect(all).not.toContain(":red_circle:");
    expect(all).not.toContain("Recommended");
    expect(all).not.toContain("Request finalizer removal");
    expect(buttons(gone.blocks)).toEqual([]);
    expect(all).toContain("`/unstuck orphans myapp`");
    expect(all).toContain("`/unstuck trace ns myapp`");
    // Rendered from the namespace alone: nothing of the card as posted (its blocker, its words) is kept.
    expect(texts(card.blocks)).toContain("myapp-worker-ingress");
    expect(all).not.toContain("myapp-worker-ingress");
    expect(gone.text).toContain("gone");
    expect(lintMessage(gone).filter((p) => p.severity === "error")).toEqual([]);
  });

  it("the watch message done: the same GONE card under *Done*, nothing stale", () => {
    const done = renderWatchFinished("myapp", "gone", new Date());
    const all = texts(done.blocks);
    expect(all).toContain("*Done*");
    expect(all).toContain("myapp: GONE");
    expect(all).not.toContain("Recommended");
    expect(buttons(done.blocks)).toEqual([]);
  });
});

describe("wording", () => {
  it("a namespace that does not exist reads as a sentence", () => {
    const d = analyzeNamespace({ ...blockedInput(), name: "myap", namespace: null, listed: [] });
    expect(d.verdict).toBe("not-found");
    const headline = JSON.stringify(renderDiagnosisBlocks(d).blocks);
    expect(headline).toContain("namespace `myap` does not exist: it was deleted, or the name is misspelt.");
    expect(headline).not.toContain("it does not exist");
  });

  it("the recommendation's emoji is Unicode (no shortcode a plain renderer shows raw)", () => {
    const all = texts(renderDiagnosisBlocks(analyzeNamespace(blockedInput())).blocks);
    expect(all).not.toContain(":point_right:");
    expect(all).toContain("👉");
  });

  it("an error about a 4,000-character input keeps its whole explanation; the echo is shortened", () => {
    const typed = "x".repeat(4000);
    const explanation =
      "is not a valid namespace name: it must be an RFC 1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters).";
    const m = renderErrorBlocks({
      code: ErrorCode.InvalidName,
      message: `"${typed}" ${explanation}`,
      details: {},
    });
    const first = (m.blocks[0] as { text: { text: string } }).text.text;
    expect(first).toContain(explanation.replace(/'/g, "'"));
    expect(first.length).toBeLessThan(400);
    expect(first).toContain("…");
    expect(m.text).toContain(explanation);
  });
});
