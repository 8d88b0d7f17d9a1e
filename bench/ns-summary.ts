/** What the `ns` benchmark checks of a diagnosis, small enough to pass between processes. */
import type { NamespaceDiagnosis } from "../src/diagnosis/types.js";

export interface DiagnosisSummary {
  readonly blockers: number;
  readonly remaining: readonly { readonly resource: string; readonly count: number }[];
  readonly conditions: readonly { readonly type: string; readonly message?: string }[];
  readonly warnings: readonly string[];
  readonly discoveryFailures: number;
}

export function summarize(d: NamespaceDiagnosis): DiagnosisSummary {
  return {
    blockers: d.blockers.length,
    remaining: d.remaining.map((r) => ({ resource: r.resource, count: r.count })),
    conditions: d.conditions.map((c) => ({
      type: c.type,
      ...(c.message !== undefined ? { message: c.message } : {}),
    })),
    warnings: [...d.warnings],
    discoveryFailures: d.discoveryFailures.length,
  };
}
