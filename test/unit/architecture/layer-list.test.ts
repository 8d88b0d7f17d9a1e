/**
 * The one ordered list of layers (`layers.cjs`) is the whole truth: every module of src/ and
 * commands/ is in exactly one layer, and the diagram in docs/architecture.md is the list drawn (the
 * import rules made from it are checked by `layers.test.ts`).
 */
import { readdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

interface Layer {
  readonly name: string;
  readonly says: string;
  readonly patterns: readonly string[];
}

interface LayerList {
  readonly LAYERS: readonly Layer[];
  matches(pattern: string, path: string): boolean;
  layerOf(path: string): Layer | undefined;
  diagram(): string;
}

const ROOT = resolve(import.meta.dirname, "../../..");
const list = createRequire(import.meta.url)(join(ROOT, "layers.cjs")) as LayerList;

async function modules(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(".ts"))
      out.push(relative(ROOT, join(entry.parentPath, entry.name)).split("\\").join("/"));
  }
  return out.sort();
}

describe("the layer list", () => {
  it("puts every module of src/ and commands/ in exactly one layer", async () => {
    const all = [...(await modules("src")), ...(await modules("commands"))];
    expect(all.length).toBeGreaterThan(100);
    const outside = all.filter((m) => list.layerOf(m) === undefined);
    expect(outside).toEqual([]);
    // Exactly one: no module is matched by two patterns of the same length in different layers.
    const ties = all.filter((m) => {
      const hits = list.LAYERS.flatMap((l) =>
        l.patterns.filter((p) => list.matches(p, m)).map((p) => ({ l, p })),
      );
      const longest = Math.max(...hits.map((h) => h.p.length));
      return new Set(hits.filter((h) => h.p.length === longest).map((h) => h.l.name)).size > 1;
    });
    expect(ties).toEqual([]);
  });

  it("names no pattern that matches nothing", async () => {
    const all = [...(await modules("src")), ...(await modules("commands"))];
    const unused = list.LAYERS.flatMap((l) => l.patterns).filter((p) => !all.some((m) => list.matches(p, m)));
    expect(unused).toEqual([]);
  });

  it("carves a file out of a folder by the longer pattern", () => {
    expect(list.layerOf("src/slack/blocks/approval.ts")?.name).toBe("pure core");
    expect(list.layerOf("src/slack/approvals.ts")?.name).toBe("surfaces");
    expect(list.layerOf("src/diagnosis/diagnose.ts")?.name).toBe("collectors");
    expect(list.layerOf("src/diagnosis/analyze.ts")?.name).toBe("pure core");
    expect(list.layerOf("src/audit/log.ts")?.name).toBe("engine");
    expect(list.layerOf("src/audit/entry.ts")?.name).toBe("pure core");
    expect(list.layerOf("src/nowhere.ts")).toBeUndefined();
  });

  it("is the diagram in docs/architecture.md", async () => {
    const doc = await readFile(join(ROOT, "docs/architecture.md"), "utf8");
    const section = doc.slice(doc.indexOf("## Layers"));
    const block = /```\n([\s\S]*?)\n```/.exec(section)?.[1];
    expect(block).toBe(list.diagram());
  });
});
