/** Words and times as every message writes them: one helper each, so no two surfaces differ. */

/** `1 blocker`, `3 blockers`. */
export function plural(n: number, one: string, many: string): string {
  return `${String(n)} ${n === 1 ? one : many}`;
}

export interface ClockFormat {
  /** To the minute: `08:39Z`. */
  readonly minutes?: boolean;
  /** The UTC day first: `2026-02-12 08:39:00Z`. */
  readonly date?: boolean;
  /** `false` leaves the `Z` off, where the sentence itself says UTC. */
  readonly zone?: boolean;
}

/** The UTC time of day of an epoch time in milliseconds: `08:39:00Z`. */
export function clock(ms: number, format: ClockFormat = {}): string {
  const iso = new Date(ms).toISOString();
  const day = format.date === true ? `${iso.slice(0, 10)} ` : "";
  return `${day}${iso.slice(11, format.minutes === true ? 16 : 19)}${format.zone === false ? "" : "Z"}`;
}
