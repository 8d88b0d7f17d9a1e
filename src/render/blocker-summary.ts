/**
 * A big diagnosis as a person reads it: the objects that keep finalizers counted by
 * type and by finalizer, then the first few in full, the ones that carry findings first. Shared by
 * the terminal text (the rest behind `--all`) and the Slack Details reply (the rest behind the
 * terminal and `--json`); `--json` always holds every object.
 */
import { resourceLabel } from "../diagnosis/analyze.js";
import type { Blocker } from "../diagnosis/types.js";
import { compareText } from "../util/collate.js";

/** How many objects a summary shows in full before it only counts. */
export const SUMMARY_FIRST = 20;

/** One row of a count, most first. */
export interface CountRow {
  readonly key: string;
  readonly count: number;
}

export interface BlockerSummary {
  readonly total: number;
  /** By resource as the namespace condition names it (`configmaps`, `widgets.example.com`). */
  readonly byType: readonly CountRow[];
  /** By finalizer: an object with two finalizers counts under each, as the namespace condition does. */
  readonly byFinalizer: readonly CountRow[];
  /** The objects shown in full: every one when not summarised, else the first {@link SUMMARY_FIRST}. */
  readonly shown: readonly Blocker[];
  /** How many are left out of `shown`. */
  readonly hidden: number;
}

/** `paging.example.com/v1` → `paging.example.com`; `v1` → `` (the core group). */
function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

/** The label of a blocker's type, as in `remaining` and the namespace condition. */
export function blockerType(b: Pick<Blocker, "resource" | "apiVersion">): string {
  return resourceLabel({ resource: b.resource, group: groupOf(b.apiVersion) });
}

function countRows(counts: Map<string, number>): CountRow[] {
  return [...counts]
    .map(([key, count]) => ({ key, count }))
    .sort((a, b) => b.count - a.count || compareText(a.key, b.key));
}

/** An object with something to read (AWS findings, a controller error, a controller not there) first. */
function interest(b: Blocker): number {
  if (b.aws !== undefined) return 0;
  if (b.evidence.some((e) => e.error)) return 1;
  if (b.owners.some((o) => o.status === "not-installed" || !o.known)) return 2;
  if (b.evidence.length > 0) return 3;
  return 4;
}

/**
 * Counts and the objects to show. `all` (the terminal's `--all`) shows every one; otherwise more than
 * `first` objects are summarised, those with findings first (the order is otherwise kept).
 */
export function summarizeBlockers(
  blockers: readonly Blocker[],
  options: { readonly all?: boolean; readonly first?: number } = {},
): BlockerSummary {
  const first = options.first ?? SUMMARY_FIRST;
  const byType = new Map<string, number>();
  const byFinalizer = new Map<string, number>();
  for (const b of blockers) {
    const t = blockerType(b);
    byType.set(t, (byType.get(t) ?? 0) + 1);
    for (const f of new Set(b.finalizers)) byFinalizer.set(f, (byFinalizer.get(f) ?? 0) + 1);
  }
  const summarised = options.all !== true && blockers.length > first;
  const shown = summarised
    ? blockers
        .map((b, i) => ({ b, i, rank: interest(b) }))
        .sort((x, y) => x.rank - y.rank || x.i - y.i)
        .slice(0, first)
        .map((x) => x.b)
    : blockers;
  return {
    total: blockers.length,
    byType: countRows(byType),
    byFinalizer: countRows(byFinalizer),
    shown,
    hidden: blockers.length - shown.length,
  };
}

/**
 * For what {@link count} does not group itself. Made on first need: making it loads the locale's
 * data (about 20 ms of CPU, a tenth of a cold terminal `ns`).
 */
let numbers: Intl.NumberFormat | undefined;

/**
 * `1234567` → `1,234,567` (counts a person reads; fixed locale so output does not depend on the
 * machine). A whole number's digits are grouped here by threes, as en-US writes them; anything
 * else (a fraction, a number too big to be exact, -0) goes to `Intl.NumberFormat`.
 */
export function count(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0))
    return (numbers ??= new Intl.NumberFormat("en-US")).format(n);
  const digits = String(Math.abs(n));
  let out = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return n < 0 ? `-${out}` : out;
}

/** `configmaps 1,200 · secrets 500 · … 3 more (12)`: at most `max` rows, the rest counted. */
export function countLine(rows: readonly CountRow[], max: number, separator = " · "): string {
  const head = rows.slice(0, max).map((r) => `${r.key} ${count(r.count)}`);
  const rest = rows.slice(max);
  if (rest.length > 0)
    head.push(`… ${count(rest.length)} more (${count(rest.reduce((n, r) => n + r.count, 0))})`);
  return head.join(separator);
}
