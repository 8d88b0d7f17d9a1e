/**
 * The exact API calls of a repoint plan, numbered in the order the executor sends them: made once
 * here from the approved action, and rendered by each surface that shows them (the terminal, the
 * approval card, the request's clean-up plan).
 */
import type { RecordSetSnapshot } from "../aws/types.js";
import type { RepointPathAction } from "../requests/model.js";
import type { RepointStep } from "./repoint-steps.js";

/** One call of the plan. */
export interface RepointCall {
  /** Its place in the plan, from 1. */
  readonly step: number;
  /** The API call and what it is bound to: `CloudFront UpdateDistribution E2…, If-Match E3…`. */
  readonly call: string;
  /** What it changes: one line per record of a Route 53 batch, the one origin of a CloudFront update. */
  readonly changes: readonly string[];
}

function recordTarget(r: RecordSetSnapshot): string {
  if (r.alias)
    return `ALIAS ${r.alias.dnsName} (zone ${r.alias.hostedZoneId}, evaluate health ${String(r.alias.evaluateTargetHealth)})`;
  return `${r.values.join(" ")} (TTL ${String(r.ttl ?? 300)})`;
}

function callOf(s: RepointStep, step: number): RepointCall {
  if (s.kind === "route53") {
    return {
      step,
      call: `Route 53 ChangeResourceRecordSets, zone ${s.zoneName} (${s.zoneId}), one atomic batch`,
      changes: s.changes.map(
        (c) =>
          `${c.action} ${c.record.type} ${c.record.name}${c.record.setIdentifier ? ` [${c.record.setIdentifier}]` : ""} → ${recordTarget(c.record)}`,
      ),
    };
  }
  return {
    step,
    call: `CloudFront UpdateDistribution ${s.distributionId}, If-Match ${s.etag}`,
    changes: [
      `origin ${s.originId} DomainName ${s.from} → ${s.to}${s.hostnames.length > 0 ? ` (serves ${s.hostnames.join(", ")})` : ""}`,
    ],
  };
}

export function repointCalls(action: RepointPathAction): RepointCall[] {
  return action.steps.map((s, i) => callOf(s, i + 1));
}
