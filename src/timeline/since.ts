/** `--since`: an ISO-8601 time, or a duration back from now (`90s`, `30m`, `2h`, `1d`). */
import { ErrorCode, UnstuckError } from "../errors.js";

export type SinceSpec =
  { readonly kind: "at"; readonly at: string } | { readonly kind: "ago"; readonly ms: number };

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** The stream keeps about 100 000 entries; a window longer than 90 days is a typo. */
const MAX_AGO_MS = 90 * 86_400_000;

export function parseSince(raw: string): SinceSpec {
  const rel = /^(\d{1,6})([smhd])$/i.exec(raw.trim());
  if (rel) {
    const ms = Number(rel[1]) * (UNIT_MS[(rel[2] ?? "").toLowerCase()] ?? 0);
    if (ms > 0 && ms <= MAX_AGO_MS) return { kind: "ago", ms };
  } else if (
    /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(raw.trim())
  ) {
    // A time without a zone is UTC (the timeline's own clock), never the terminal's local time.
    const text = raw.trim();
    const t = Date.parse(/T[\d:.]+$/.test(text) ? `${text}Z` : text);
    if (Number.isFinite(t)) return { kind: "at", at: new Date(t).toISOString() };
  }
  throw new UnstuckError(
    ErrorCode.BadInput,
    `--since takes an ISO-8601 time (2026-02-12T08:30:00Z) or a duration up to 90d (30m, 2h, 1d); got "${raw.slice(0, 40)}".`,
  );
}

export function resolveSince(spec: SinceSpec, now: Date): string {
  return spec.kind === "at" ? spec.at : new Date(now.getTime() - spec.ms).toISOString();
}
