/** "Did you mean": the names nearest a mistyped one. Pure. */
import { compareText } from "./collate.js";

/** Levenshtein distance (a string over 64 characters counts as its length: too long to be a typo). */
export function editDistance(a: string, b: string): number {
  if (a.length > 64) return a.length;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(
        (prev[j] ?? 0) + 1,
        (cur[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/**
 * The names within a typo of `typed` (at most 2 edits, or 1 for names of up to 4 characters),
 * nearest first, at most `max`; never `typed` itself.
 */
export function nearestNames(typed: string, names: readonly string[], max = 3): string[] {
  const limit = typed.length <= 4 ? 1 : 2;
  return names
    .filter((n) => n !== typed)
    .map((n) => ({ n, d: editDistance(typed, n) }))
    .filter((x) => x.d <= limit)
    .sort((a, b) => a.d - b.d || compareText(a.n, b.n))
    .slice(0, max)
    .map((x) => x.n);
}
