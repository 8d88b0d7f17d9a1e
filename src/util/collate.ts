/**
 * The order answers list names, kinds, resources and timestamps in: English collation, as
 * `a.localeCompare(b, "en")` gives it — case-insensitive first, lowercase before uppercase on a tie,
 * space and punctuation before digits before letters.
 *
 * Without its start-up cost: the first collation of a process sets up ICU's collator (~5 ms of every
 * cold terminal command). What is compared here is nearly always Kubernetes names, kinds and
 * RFC 3339 timestamps, whose characters (ASCII letters and digits, space, `_-:./`) are ordered below
 * directly, as the collator orders them; a string with any other character goes to the collator,
 * made on first need. English rather than the machine's locale, so an answer's order does not depend
 * on where it is asked from.
 */

/** Primary weight of each ASCII character ordered directly (0: left to the collator). */
const PRIMARY = new Uint8Array(128);
const ORDER = " _-:./0123456789abcdefghijklmnopqrstuvwxyz";
for (let i = 0; i < ORDER.length; i++) PRIMARY[ORDER.charCodeAt(i)] = i + 1;
for (let c = 65; c <= 90; c++) PRIMARY[c] = PRIMARY[c + 32] ?? 0;

let collator: Intl.Collator | undefined;

function collated(a: string, b: string): number {
  return (collator ??= new Intl.Collator("en")).compare(a, b);
}

function direct(s: string, from: number): boolean {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || PRIMARY[c] === 0) return false;
  }
  return true;
}

/** Negative, zero or positive as `a` sorts before, with or after `b` (English collation). */
export function compareText(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  // The first difference of case, which decides only between strings equal but for case.
  let byCase = 0;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    const px = x < 128 ? (PRIMARY[x] ?? 0) : 0;
    const py = y < 128 ? (PRIMARY[y] ?? 0) : 0;
    if (px === 0 || py === 0) return collated(a, b);
    if (px !== py) return px < py ? -1 : 1;
    // The same letter in another case: the lowercase one (the higher code) first.
    if (byCase === 0 && x !== y) byCase = x > y ? -1 : 1;
  }
  if (!direct(a, n) || !direct(b, n)) return collated(a, b);
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return byCase;
}
