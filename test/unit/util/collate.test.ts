/**
 * `compareText` orders as English collation (ICU's `Intl.Collator("en")`) does, on the characters it
 * orders itself and on any other, which it leaves to the collator. Judged against the collator on
 * generated strings: every pair of one or two characters of its own alphabet, and random strings
 * mixing it with characters it does not order itself.
 */
import { describe, expect, it } from "vitest";
import { compareText } from "../../../src/util/collate.js";

const english = new Intl.Collator("en");
const OWN = " _-:./0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
/** Characters left to the collator: other punctuation, accents, non-Latin, a control character. */
const OTHER = "~#+*,;!?'\"()[]{}@\\&%`^<=>|$éÉßøåı中\u0000\t";

/** A small seeded generator (mulberry32), so a failure is the same on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function disagreements(pairs: Iterable<[string, string]>): string[] {
  const out: string[] = [];
  for (const [a, b] of pairs) {
    const mine = Math.sign(compareText(a, b));
    const theirs = Math.sign(english.compare(a, b));
    if (mine !== theirs && out.length < 10)
      out.push(`${JSON.stringify(a)} vs ${JSON.stringify(b)}: ${String(mine)}, collator ${String(theirs)}`);
  }
  return out;
}

describe("compareText", () => {
  it("orders every string of one or two of its own characters as the English collator does", () => {
    const strings = [""];
    for (const x of OWN) {
      strings.push(x);
      for (const y of OWN) strings.push(x + y);
    }
    function* pairs(): Generator<[string, string]> {
      const next = random(1);
      for (const a of strings)
        for (let k = 0; k < 40; k++) yield [a, strings[Math.floor(next() * strings.length)] ?? ""];
    }
    expect(disagreements(pairs())).toEqual([]);
  });

  it("orders random names, kinds and timestamps, with characters of any kind, as the collator does", () => {
    const next = random(2);
    const pick = (alphabet: string): string => alphabet[Math.floor(next() * alphabet.length)] ?? "";
    const word = (): string => {
      let s = "";
      const length = Math.floor(next() * 8);
      for (let i = 0; i < length; i++) s += next() < 0.1 ? pick(OTHER) : pick(OWN);
      return s;
    };
    function* pairs(): Generator<[string, string]> {
      for (let k = 0; k < 100_000; k++) {
        const a = word();
        // Often a shared prefix, so that later characters and case decide.
        yield [a, next() < 0.5 ? a.slice(0, Math.floor(next() * (a.length + 1))) + word() : word()];
      }
    }
    expect(disagreements(pairs())).toEqual([]);
  });

  it("sorts as the collator sorts: case, hyphens, dots and numbers in Kubernetes names", () => {
    const names = [
      "web-2",
      "Web-1",
      "web.v1",
      "web10",
      "web-10",
      "web_1",
      "Deployment",
      "deployments.apps",
      "DaemonSet",
      "2026-12-05T19:31:03Z",
      "2026-12-05T19:31:03.5Z",
      "café",
      "cafe",
    ];
    expect([...names].sort(compareText)).toEqual([...names].sort((a, b) => english.compare(a, b)));
  });
});
