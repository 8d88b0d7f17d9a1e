/**
 * The `--json` answer written in pieces: over generated values (long and short arrays at every
 * depth, values JSON leaves out or turns into null, `toJSON`, objects without a prototype, strings
 * that need escaping), the pieces joined are exactly `JSON.stringify`, at every piece size.
 */
import { describe, expect, it } from "vitest";
import { jsonChunks } from "../../../src/util/json-chunks.js";
import { mulberry32 } from "../../security/hostile.js";

const STRINGS = [
  "",
  "a",
  'quote " and \\ backslash',
  "line\nbreak\t<&>",
  "ünïcødé ✓ \u2028",
  "\u0000\u001f",
  "𝄞",
];

function generate(random: () => number, depth: number): unknown {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  // Long arrays near the top only: one under another is walked too, and the values stay small.
  const kinds =
    depth > 3
      ? ["scalar", "odd"]
      : depth > 1
        ? ["scalar", "odd", "array", "object"]
        : ["scalar", "odd", "array", "long", "object", "object"];
  const kind = pick(kinds);
  switch (kind) {
    case "scalar":
      return pick<unknown>([0, -1.5, 1e21, 42, true, false, null, ...STRINGS]);
    case "odd":
      // What JSON.stringify drops from objects, writes as null in arrays, or converts.
      return pick<unknown>([
        undefined,
        () => 1,
        Symbol("s"),
        Number.NaN,
        Number.POSITIVE_INFINITY,
        new Date(Date.UTC(2026, 11, 6, 11, 0, 0)),
        { toJSON: () => ({ replaced: true }) },
        { toJSON: () => undefined },
        Object.assign(Object.create(null) as object, { bare: 1 }),
      ]);
    case "array":
      return Array.from({ length: Math.floor(random() * 5) }, () => generate(random, depth + 1));
    case "long":
      return Array.from({ length: 30 + Math.floor(random() * 80) }, () => generate(random, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(random() * 6); i > 0; i--)
        o[pick(["k", "blockers", "é", '"q"', String(i)])] = generate(random, depth + 1);
      return o;
    }
  }
}

describe("jsonChunks", () => {
  it("joins to exactly JSON.stringify over generated values, at every piece size", () => {
    const random = mulberry32(20261206);
    for (let run = 0; run < 300; run++) {
      const value = generate(random, 0);
      const expected = JSON.stringify(value);
      for (const size of [1, 7, 1024, 64 * 1024]) {
        expect([...jsonChunks(value, size)].join(""), `run ${String(run)}, size ${String(size)}`).toBe(
          expected ?? "",
        );
      }
    }
  });

  it("gives a big answer in pieces of about the size asked, none held whole", () => {
    const blockers = Array.from({ length: 5_000 }, (_, i) => ({
      kind: "ConfigMap",
      name: `cm-${String(i)}`,
      finalizers: ["example.com/hold"],
      gone: undefined,
    }));
    const answer = {
      namespace: "bench",
      blockers,
      cause: [{ kind: "finalizers-remain", objects: blockers }],
    };
    const chunks = [...jsonChunks(answer, 64 * 1024)];
    expect(chunks.join("")).toBe(JSON.stringify(answer));
    expect(chunks.length).toBeGreaterThan(5);
    // Each piece is the size asked, the last one shorter.
    for (const c of chunks.slice(0, -1)) expect(c.length).toBe(64 * 1024);
    expect(chunks.at(-1)?.length).toBeLessThanOrEqual(64 * 1024);
  });

  it("never cuts a surrogate pair in two, whatever the piece size", () => {
    // Each piece is encoded on its own: half a pair would reach the reader as U+FFFD.
    const names = Array.from({ length: 100 }, (_, i) => ({
      name: `cm-${String(i)}`,
      note: "🔒 held 🧊".repeat(i % 4),
    }));
    const answer = { blockers: names, owner: "équipe 🚒" };
    for (let size = 1; size <= 40; size++) {
      const chunks = [...jsonChunks(answer, size)];
      expect(chunks.join("")).toBe(JSON.stringify(answer));
      for (const c of chunks) {
        expect(Buffer.from(c, "utf8").toString("utf8"), `size ${String(size)}`).toBe(c);
        expect(c.length).toBeLessThanOrEqual(size + 1);
      }
    }
  });
});
