/**
 * Process RSS ≤ 200 MiB (docs/design.md, Performance targets): the bot's module graph (src/main.ts,
 * its runtime and start-up checks) loads the AWS SDK only when AWS is configured — the start-up check
 * imports it on demand, the services build their AWS port on first use. The SDK's clients' code is
 * about 60 MiB of a ready bot's resident set (bench/rss.ts). Checked by the packages a real process
 * resolves while importing the modules (a module hook in the child).
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);

const HOOK = `
import { registerHooks } from "node:module";
const seen = new Set();
registerHooks({
  resolve(specifier, context, next) {
    const r = next(specifier, context);
    const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(r.url);
    if (m) seen.add(m[1]);
    return r;
  },
});
process.on("exit", () => process.stderr.write("LOADED " + [...seen].sort().join(",") + "\\n"));
`;

describe("what the bot loads without AWS", () => {
  let dir: string;
  let hook: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "unstuck-bot-imports-"));
    hook = join(dir, "hook.mjs");
    await writeFile(hook, HOOK);
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("the runtime and the start-up checks import no AWS SDK", async () => {
    const script = `
      const { createRuntime } = await import("./src/runtime.ts");
      const { checkStartup } = await import("./src/startup.ts");
      if (typeof createRuntime !== "function" || typeof checkStartup !== "function") process.exit(3);
    `;
    const { stderr } = await run(
      process.execPath,
      ["--import", hook, "--import", "tsx", "--input-type=module", "-e", script],
      { env: { PATH: process.env.PATH ?? "", HOME: dir, NODE_DISABLE_COMPILE_CACHE: "1" } },
    );
    const loaded = (stderr.split("\n").find((l) => l.startsWith("LOADED ")) ?? "LOADED ")
      .slice("LOADED ".length)
      .split(",")
      .filter((p) => p !== "");
    // The bot's own clients are there (the graph was really loaded), the AWS SDK is not.
    expect(loaded).toEqual(expect.arrayContaining(["@kubernetes/client-node", "@slack/bolt", "bullmq"]));
    expect(loaded.filter((p) => p.startsWith("@aws-sdk/") || p.startsWith("@smithy/"))).toEqual([]);
  }, 60_000);
});
