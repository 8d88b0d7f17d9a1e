/**
 * Size limits of the shipped code, so a module or a function stays readable in one sitting: no file
 * of src/ or commands/ over 600 lines, no function over 120, `src/runtime.ts` (composition only) at
 * most 300. Something over a limit may only be listed below with its size as a ceiling: it may shrink
 * (and must leave the list once within the limit), never grow; nothing new may join it. Today the
 * lists are empty.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");
const FILE_LIMIT = 600;
const FUNCTION_LIMIT = 120;
const RUNTIME_LIMIT = 300;

/** Files over the limit, with their size as the ceiling until they are split: none today. */
const LARGE_FILES: Record<string, number> = {};

/** Functions over the limit (`file#name`), with their length as the ceiling until split: none today. */
const LONG_FUNCTIONS: Record<string, number> = {};

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)).split("\\").join("/"))
    .sort();
}

const FILES = [...sources("src"), ...sources("commands")];

function lineCount(file: string): number {
  const text = readFileSync(join(ROOT, file), "utf8");
  return text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
}

/** The name a function is known by: its own, or the variable, property or method it is assigned to. */
function nameOf(node: ts.Node): string {
  const named = node as { name?: ts.Node };
  if (named.name !== undefined && ts.isIdentifier(named.name)) return named.name.text;
  const parent = node.parent as ts.Node & { name?: ts.Node };
  if (parent.name !== undefined && ts.isIdentifier(parent.name)) return parent.name.text;
  return "<anonymous>";
}

/** Every function of a file with its length in lines, the longest of each name. */
function functionLengths(file: string): Map<string, number> {
  const sf = ts.createSourceFile(file, readFileSync(join(ROOT, file), "utf8"), ts.ScriptTarget.Latest, true);
  const lengths = new Map<string, number>();
  const visit = (node: ts.Node): void => {
    if (
      ts.isFunctionDeclaration(node) ||
      ts.isFunctionExpression(node) ||
      ts.isArrowFunction(node) ||
      ts.isMethodDeclaration(node)
    ) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const key = `${file}#${nameOf(node)}`;
      lengths.set(key, Math.max(lengths.get(key) ?? 0, last - first + 1));
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return lengths;
}

/** What is over `limit` against the ceilings: grown, new, or listed but now within the limit. */
function against(sizes: Map<string, number>, limit: number, ceilings: Record<string, number>): string[] {
  const problems: string[] = [];
  for (const [key, size] of sizes) {
    const ceiling = ceilings[key];
    if (size > limit && ceiling === undefined)
      problems.push(`${key}: ${String(size)} lines (limit ${String(limit)})`);
    if (ceiling !== undefined && size > ceiling)
      problems.push(`${key}: ${String(size)} lines, grew past ${String(ceiling)}`);
  }
  for (const [key, ceiling] of Object.entries(ceilings)) {
    const size = sizes.get(key);
    if (size === undefined || size <= limit)
      problems.push(
        `${key}: within ${String(limit)} now (${String(size ?? 0)} lines, was ${String(ceiling)}): take it off the list`,
      );
  }
  return problems.sort();
}

describe("size limits", () => {
  it(`keeps every file within ${String(FILE_LIMIT)} lines, or below its ceiling`, () => {
    const sizes = new Map(FILES.map((f) => [f, lineCount(f)] as const));
    expect(against(sizes, FILE_LIMIT, LARGE_FILES)).toEqual([]);
  });

  it(`keeps every function within ${String(FUNCTION_LIMIT)} lines, or below its ceiling`, () => {
    const sizes = new Map(FILES.flatMap((f) => [...functionLengths(f)]));
    expect(sizes.size).toBeGreaterThan(1000);
    expect(against(sizes, FUNCTION_LIMIT, LONG_FUNCTIONS)).toEqual([]);
  });

  it(`keeps src/runtime.ts, composition only, within ${String(RUNTIME_LIMIT)} lines`, () => {
    expect(lineCount("src/runtime.ts")).toBeLessThanOrEqual(RUNTIME_LIMIT);
  });

  it("reports a function that grew, a new long one, and one that left the limit", () => {
    const sizes = new Map([
      ["a.ts#grown", 140],
      ["a.ts#fresh", 121],
      ["a.ts#fine", 120],
      ["a.ts#shrunk", 90],
    ]);
    expect(against(sizes, 120, { "a.ts#grown": 130, "a.ts#shrunk": 125 })).toEqual([
      "a.ts#fresh: 121 lines (limit 120)",
      "a.ts#grown: 140 lines, grew past 130",
      "a.ts#shrunk: within 120 now (90 lines, was 125): take it off the list",
    ]);
  });
});
