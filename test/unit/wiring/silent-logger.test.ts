/**
 * The terminal's logger when no log level is asked for drops every line without loading pino; it
 * must answer every call the product makes as pino's own silent logger does.
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log-silent.js";

const METHODS = [
  "fatal",
  "error",
  "warn",
  "info",
  "debug",
  "trace",
  "silent",
  "child",
  "isLevelEnabled",
  "bindings",
  "setBindings",
  "flush",
] as const;

describe("silentLogger", () => {
  it("has pino's silent logger's level and methods, and its children are as silent", () => {
    const ours = silentLogger();
    const theirs = pino({ level: "silent" });
    expect(ours.level).toBe(theirs.level);
    for (const m of METHODS) {
      expect(typeof theirs[m], m).toBe("function");
      expect(typeof ours[m], m).toBe("function");
    }
    for (const level of ["fatal", "error", "warn", "info", "debug", "trace"])
      expect(ours.isLevelEnabled(level)).toBe(theirs.isLevelEnabled(level));
    const child = ours.child({ request: "r1" });
    expect(child.level).toBe("silent");
    expect(child.warn({ token: "secret" }, "dropped")).toBeUndefined();
    let flushed = false;
    ours.flush(() => (flushed = true));
    expect(flushed).toBe(true);
  });
});
