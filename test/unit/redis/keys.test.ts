/**
 * The one key map: every key under the install's prefix (so a Cluster's hash tag holds them in one
 * slot and a prefix's keys can be listed and removed), no two kinds of key the same, and no key
 * built anywhere else in `src/`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ApprovalKeys, FleetKeys, RedisKeys, WatcherKeys } from "../../../src/redis/keys.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");

type Builder = (prefix: string, ...ids: string[]) => string;

/** Every builder, called under `p` (the sub-maps under the prefix their owner is given). */
function everyKey(p: string, id: string): Map<string, string> {
  const out = new Map<string, string>();
  const add = (group: string, map: Record<string, Builder>, prefix: string): void => {
    for (const [name, build] of Object.entries(map))
      out.set(`${group}.${name}`, build(prefix, id, `${id}x`, `${id}y`));
  };
  add("RedisKeys", RedisKeys, p);
  add("ApprovalKeys", ApprovalKeys, RedisKeys.approvals(p));
  add("WatcherKeys", WatcherKeys, RedisKeys.watcher(p));
  add("FleetKeys", FleetKeys, p);
  return out;
}

describe("Redis keys", () => {
  it("all live under the install's prefix, hash tag included", () => {
    for (const p of ["unstuck", "{unstuck}", "{team-a}:bot"])
      for (const [name, key] of everyKey(p, "r-1"))
        expect(key.startsWith(`${p}:`), `${name}: ${key}`).toBe(true);
  });

  it("never name the same key for two kinds", () => {
    const keys = everyKey("{u}", "id");
    const seen = new Map<string, string>();
    for (const [name, key] of keys) {
      expect(seen.get(key), `${name} and ${seen.get(key) ?? ""} both build ${key}`).toBeUndefined();
      seen.set(key, name);
    }
  });

  it("are built nowhere in src/ but the key map", () => {
    const files = readdirSync(join(ROOT, "src"), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith(".ts"))
      .map((e) => join(e.parentPath, e.name))
      .filter((f) => !f.endsWith(join("src", "redis", "keys.ts")));
    const builders: string[] = [];
    for (const f of files) {
      const text = readFileSync(f, "utf8");
      // A key is a prefix (or a key) followed by ':' and a part: `${prefix}:req:${id}`.
      for (const m of text.matchAll(/`\$\{[\w.]*(?:[pP]refix|[kK]ey)\}:[a-z{$]/g))
        builders.push(`${f.slice(ROOT.length + 1)}: ${m[0]}`);
    }
    expect(builders).toEqual([]);
  });
});
