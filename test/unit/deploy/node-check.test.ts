/**
 * The Node.js version check `npm start` and `npm run unstuck` run before anything else
 * (deploy/node-check.cjs): one line naming the version needed when the running Node is older than
 * package.json's engines range, nothing otherwise.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { minimumOf, nodeCheck } from "../../../deploy/node-check.cjs";

const engines = (JSON.parse(readFileSync("package.json", "utf8")) as { engines: { node: string } }).engines
  .node;

describe("nodeCheck", () => {
  it("names the version needed and the running one when Node is older", () => {
    expect(nodeCheck("unstuck", "v20.20.2", ">=24")).toBe(
      "unstuck needs Node.js >= 24 (this is v20.20.2): nvm use, or see README",
    );
    expect(nodeCheck("unstuck", "v23.11.1", ">=24")).toContain("(this is v23.11.1)");
    expect(nodeCheck("unstuck", "18.0.0", ">= 24.1")).toBe(
      "unstuck needs Node.js >= 24.1 (this is v18.0.0): nvm use, or see README",
    );
  });

  it("passes a Node at or past the minimum, minor and patch compared in order", () => {
    expect(nodeCheck("unstuck", "v24.0.0", ">=24")).toBeNull();
    expect(nodeCheck("unstuck", "v25.1.0", ">=24")).toBeNull();
    expect(nodeCheck("unstuck", "v24.2.0", ">=24.1.5")).toBeNull();
    expect(nodeCheck("unstuck", "v24.1.5", ">=24.1.5")).toBeNull();
    expect(nodeCheck("unstuck", "v24.1.4", ">=24.1.5")).toContain(">= 24.1.5");
    expect(nodeCheck("unstuck", "v24.0.9", ">=24.1.5")).toContain(">= 24.1.5");
  });

  it("reads only `>=` ranges and leaves any other form to npm's own engine check", () => {
    expect(minimumOf(">=24")).toBe("24");
    expect(minimumOf(" >= v22.19.0 ")).toBe("22.19.0");
    expect(minimumOf("^24 || ^26")).toBeNull();
    expect(minimumOf(undefined)).toBeNull();
    expect(nodeCheck("unstuck", "v20.0.0", "^24 || ^26")).toBeNull();
  });

  it("the engines range package.json declares is one it reads, and the running Node passes it", () => {
    expect(minimumOf(engines)).not.toBeNull();
    expect(nodeCheck("unstuck", process.version, engines)).toBeNull();
  });
});
