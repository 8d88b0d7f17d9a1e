/**
 * An old Node gets one line, not a bundle's stack: deploy/node-check.cjs run by the machine's own
 * Node when it is older than package.json's engines range (this machine's /usr/bin/node is 20),
 * else by this Node with an older version forged through `UNSTUCK_NODE_CHECK_VERSION`. Then the
 * npm scripts themselves: `npm start` and `npm run unstuck` stop at the check, before any build.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";

const CHECK = "deploy/node-check.cjs";
const SYSTEM_NODE = "/usr/bin/node";
const engines = (JSON.parse(readFileSync("package.json", "utf8")) as { engines: { node: string } }).engines
  .node;
const minimumMajor = Number(/\d+/.exec(engines)?.[0]);

function major(node: string): number | undefined {
  if (!existsSync(node)) return undefined;
  const r = spawnSync(node, ["-p", "process.versions.node.split('.')[0]"], { encoding: "utf8" });
  return r.status === 0 ? Number(r.stdout.trim()) : undefined;
}

const cleanEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  delete env["UNSTUCK_NODE_CHECK_VERSION"];
  return env;
};

function lines(text: string): string[] {
  return text.split("\n").filter((l) => l !== "");
}

describe("deploy/node-check.cjs", () => {
  it("an older Node: exactly one line naming the version needed and the running one, exit 1", () => {
    const systemMajor = major(SYSTEM_NODE);
    const old = systemMajor !== undefined && systemMajor < minimumMajor;
    // The machine's own old Node when it has one; otherwise this Node, told it is v20.20.2.
    const r = old
      ? spawnSync(SYSTEM_NODE, [CHECK, "unstuck"], { encoding: "utf8", env: cleanEnv() })
      : spawnSync(process.execPath, [CHECK, "unstuck"], {
          encoding: "utf8",
          env: { ...cleanEnv(), UNSTUCK_NODE_CHECK_VERSION: "v20.20.2" },
        });
    const version = old
      ? spawnSync(SYSTEM_NODE, ["--version"], { encoding: "utf8" }).stdout.trim()
      : "v20.20.2";
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(lines(r.stderr)).toEqual([
      `unstuck needs Node.js >= ${String(minimumMajor)} (this is ${version}): nvm use, or see README`,
    ]);
  });

  it("this Node (package.json's range): silent, exit 0", () => {
    const r = spawnSync(process.execPath, [CHECK, "unstuck"], { encoding: "utf8", env: cleanEnv() });
    expect(r.status).toBe(0);
    expect(r.stdout + r.stderr).toBe("");
  });

  it("`npm start` and `npm run unstuck` stop at the check: one line, exit 1, nothing built", () => {
    const built = existsSync("dist/.built") ? statSync("dist/.built").mtimeMs : undefined;
    for (const args of [
      ["start", "--silent"],
      ["run", "--silent", "unstuck", "--", "help"],
    ]) {
      const r = spawnSync("npm", args, {
        encoding: "utf8",
        env: { ...cleanEnv(), UNSTUCK_NODE_CHECK_VERSION: "v22.3.0" },
      });
      expect(r.error).toBeUndefined();
      expect({ args, status: r.status, stdout: r.stdout, stderr: lines(r.stderr) }).toEqual({
        args,
        status: 1,
        stdout: "",
        stderr: [
          `unstuck needs Node.js >= ${String(minimumMajor)} (this is v22.3.0): nvm use, or see README`,
        ],
      });
    }
    expect(existsSync("dist/.built") ? statSync("dist/.built").mtimeMs : undefined).toBe(built);
  });
});
