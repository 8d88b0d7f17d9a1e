/**
 * A simulator stands for the real system, so it must never borrow the product's code: if the bot
 * and the simulated controller shared a naming rule, a wrong rule would pass every test.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const SIM = "test/sim";
/** Not a simulator: the local sandbox runs the real bot against the simulated world, so it must import it. */
const HARNESS = new Set([join(SIM, "sandbox.ts")]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.(ts|mts|js|mjs)$/.test(e.name) ? [path] : [];
  });
}

/** Every module specifier in static imports, re-exports and dynamic imports. */
function specifiers(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\b(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) out.push(m[1] ?? "");
  return out;
}

describe("simulators", () => {
  it("import nothing from src/", () => {
    const files = sources(SIM).filter((f) => !HARNESS.has(f));
    expect(files.length).toBeGreaterThan(10);
    const offending = files.flatMap((f) =>
      specifiers(readFileSync(f, "utf8"))
        .filter((s) => /(^|\/)src\//.test(s) && s.startsWith("."))
        .map((s) => `${f}: ${s}`),
    );
    expect(offending).toEqual([]);
  });

  it("the check itself sees a product import", () => {
    expect(specifiers(`import { x } from "../../../src/diagnosis/lbc-names.js";`)).toEqual([
      "../../../src/diagnosis/lbc-names.js",
    ]);
  });
});
