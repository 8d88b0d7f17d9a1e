/**
 * `events.k8s.io/v1` Events, as the real API server serves them: a second view of the core `v1`
 * Event storage (one REST storage, two groups, converted field by field on the way in and out —
 * `involvedObject` is `regarding`, `message` is `note`, `source` is `deprecatedSource`, …). An
 * Event written through either group is read through both. The namespace controller and the
 * garbage collector see the one storage once.
 */
import { isRecord, type KubeObject } from "./object.js";

/** Core `v1` field ↔ `events.k8s.io/v1` field (those named alike are the same). */
const RENAMED: readonly (readonly [core: string, v1: string])[] = [
  ["involvedObject", "regarding"],
  ["message", "note"],
  ["source", "deprecatedSource"],
  ["firstTimestamp", "deprecatedFirstTimestamp"],
  ["lastTimestamp", "deprecatedLastTimestamp"],
  ["count", "deprecatedCount"],
  ["reportingComponent", "reportingController"],
];

export function isEventsView(d: { readonly group: string; readonly resource: string }): boolean {
  return d.group === "events.k8s.io" && d.resource === "events";
}

function rename(o: KubeObject, pairs: readonly (readonly [string, string])[]): KubeObject {
  const out: Record<string, unknown> = {};
  const to = new Map(pairs);
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) continue;
    out[to.get(k) ?? k] = v;
  }
  return out;
}

/** A stored (core) Event as `events.k8s.io/v1` shows it. */
export function toEventsView(o: KubeObject): KubeObject {
  const out = rename(o, RENAMED);
  // The core zero values that events.k8s.io/v1 omits.
  if (out.deprecatedCount === 0) delete out.deprecatedCount;
  if (isRecord(out.deprecatedSource) && Object.keys(out.deprecatedSource).length === 0)
    delete out.deprecatedSource;
  return out;
}

/** An Event written through `events.k8s.io/v1`, as the core storage keeps it. */
export function fromEventsView(o: KubeObject): KubeObject {
  return rename(
    o,
    RENAMED.map(([core, v1]) => [v1, core] as const),
  );
}
