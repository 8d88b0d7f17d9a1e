/**
 * The README's configuration table against the code: every variable the bot reads is documented
 * there, and every variable documented there is read — `loadConfig`'s schema, the ops endpoint's
 * settings, and any `process.env.X` read elsewhere in src/.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES } from "../../../src/config/env.js";
import { OPS_VARIABLES } from "../../../src/ops/config.js";

/** The variable names in the first column of the README's configuration table. */
function documented(readme: string): Set<string> {
  const start = readme.indexOf("## Configuration");
  const section = readme.slice(start, readme.indexOf("\n#", start + 1));
  const names = new Set<string>();
  for (const line of section.split("\n")) {
    const first = /^\| ([^|]+)\|/.exec(line)?.[1] ?? "";
    for (const m of first.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) if (m[1] !== undefined) names.add(m[1]);
  }
  return names;
}

async function readDirectly(): Promise<Set<string>> {
  const names = new Set<string>();
  for (const entry of await readdir("src", { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const text = await readFile(join(entry.parentPath, entry.name), "utf8");
    for (const m of text.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g))
      if (m[1] !== undefined) names.add(m[1]);
  }
  return names;
}

describe("the README's configuration table", () => {
  it("documents exactly the variables the code reads", async () => {
    const doc = documented(await readFile("README.md", "utf8"));
    const read = new Set([...CONFIG_VARIABLES, ...OPS_VARIABLES, ...(await readDirectly())]);
    expect(read.size).toBeGreaterThan(40);
    expect([...read].filter((v) => !doc.has(v)).sort(), "read but not documented").toEqual([]);
    expect([...doc].filter((v) => !read.has(v)).sort(), "documented but not read").toEqual([]);
  });
});
