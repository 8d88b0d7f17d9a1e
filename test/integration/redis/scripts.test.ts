/**
 * The one script loader: every Lua script is a file named with its key count, loaded by a module
 * that runs it, run by SHA, and its source sent again only to a server whose script cache is empty.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadScript, type ScriptRedis } from "../../../src/redis/scripts.js";
import { client, deleteKeys, uniquePrefix } from "../../helpers/redis.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const LUA = join(ROOT, "src", "redis", "lua");
const redis = client();
const prefix = uniquePrefix("scripts");
afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name));
}

/** What `src/` asks of the loader, file by file. */
const loaded = sourcesUnder(join(ROOT, "src")).flatMap((f) =>
  [...readFileSync(f, "utf8").matchAll(/(?:loadScript|transition)\("([^"]+)"/g)].map((m) => m[1]),
);

describe("Lua scripts", () => {
  const files = readdirSync(LUA).filter((f) => f.endsWith(".lua"));

  it("are each named with the number of keys the script reads, and loaded by a module", () => {
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      if (file.startsWith("approval-prelude-")) {
        expect(readFileSync(join(ROOT, "src", "approvals", "store.ts"), "utf8")).toContain(
          file.replace(/^approval-prelude-(.+)\.lua$/, '"$1"'),
        );
        continue;
      }
      const named = /^[a-z][a-z0-9-]*\.(\d+)\.lua$/.exec(file);
      expect(named, file).not.toBeNull();
      const body = readFileSync(join(LUA, file), "utf8");
      const indices = [...body.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]));
      // The highest key a script names is its count (the approval transitions name their last key
      // `KEYS[#KEYS]`, the audit stream, so theirs may be one more than the highest literal index).
      const highest = Math.max(0, ...indices);
      const count = Number(named?.[1]);
      expect(body.includes("KEYS[#KEYS]") ? [highest, highest + 1] : [highest], file).toContain(count);
      expect(loaded, `${file} is loaded by no module`).toContain(file);
    }
    for (const file of loaded) expect(files, `${file} is loaded but missing`).toContain(file);
  });

  it("are run by no module but the loader", () => {
    const runners = sourcesUnder(join(ROOT, "src")).filter((f) =>
      /\.(eval|evalsha)\(|defineCommand\(/.test(readFileSync(f, "utf8")),
    );
    expect(runners.map((f) => f.slice(ROOT.length + 1))).toEqual(["src/redis/scripts.ts"]);
  });

  it("are run by SHA; the source goes only to a server whose cache is empty", async () => {
    const calls: string[] = [];
    const recording: ScriptRedis = {
      evalsha: async (sha, n, ...rest) => {
        calls.push("evalsha");
        return redis.evalsha(sha, n, ...rest);
      },
      eval: async (source, n, ...rest) => {
        calls.push("eval");
        return redis.eval(source, n, ...rest);
      },
    };
    const record = loadScript("post-record.1.lua");
    const key = `${prefix}:record`;
    await redis.script("FLUSH");
    await record.run(recording, [key], ["posted:1", 60]);
    expect(calls).toEqual(["evalsha", "eval"]);
    const sha = createHash("sha1")
      .update(readFileSync(join(LUA, "post-record.1.lua")))
      .digest("hex");
    expect(await redis.script("EXISTS", sha)).toEqual([1]);
    calls.length = 0;
    await record.run(recording, [key], ["posted:2", 60]);
    expect(calls).toEqual(["evalsha"]);
    expect(await redis.get(key)).toBe("posted:2");
  });

  it("refuses a call with the wrong number of keys before Redis sees it", async () => {
    const write = loadScript("look-write.2.lua");
    await expect(write.run(redis, [`${prefix}:look`], ["{}", 1, 1000, ""])).rejects.toThrow(
      "look-write.2.lua takes 2 keys, was given 1",
    );
    expect(await redis.exists(`${prefix}:look`)).toBe(0);
  });

  it("refuses a file not named with its key count", () => {
    expect(() => loadScript("approval-prelude-audit.lua")).toThrow(/<name>\.<number of keys>\.lua/);
  });
});
