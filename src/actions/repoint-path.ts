/**
 * Applies an approved traffic-path repair (`repoint-path`): Route 53 change batches and CloudFront
 * origin updates, each exactly as the request showed it, each guarded by what was approved.
 *
 * - Route 53: one batch per zone, DELETE with the values read at planning + CREATE. Route 53 applies
 *   it atomically or refuses it (InvalidChangeBatch) when a record changed: STALE, nothing written.
 * - CloudFront: the config is read, the one origin's `DomainName` changed, and the config sent back
 *   with `If-Match` = the ETag read at planning: an edit since then is refused (412): STALE.
 *
 * Writes are not retried blindly. Before each step (and after an ambiguous failure) the current
 * state is read: already as planned → that step is done (a resumed attempt or a lost answer);
 * as approved → send it; otherwise → STALE. Steps run in order; a STALE step after applied ones
 * says exactly which were applied.
 */
import type { RecordChange, RepointAwsWrites } from "../aws/port.js";
import type { RecordSetSnapshot } from "../aws/types.js";
import type { RepointPathAction } from "../requests/model.js";
import type { CloudFrontOriginStep, RepointStep, Route53RepointStep } from "../edge/repoint-steps.js";
import { ErrorCode, isUnstuckError, toUserError } from "../errors.js";
import type { Logger } from "../log.js";
import { isAmbiguous } from "./ambiguous.js";

/** What the waits after a repair follow: Route 53 change ids and updated distributions. */
export interface RepointApplied {
  readonly route53Changes: readonly { readonly zoneId: string; readonly changeId: string }[];
  readonly distributions: readonly string[];
}

export type RepointOutcome =
  | { readonly state: "DONE"; readonly message: string; readonly applied: RepointApplied }
  | { readonly state: "STALE"; readonly message: string; readonly applied: RepointApplied };

function sameRecord(a: RecordSetSnapshot, b: RecordSetSnapshot): boolean {
  const norm = (r: RecordSetSnapshot) =>
    JSON.stringify([
      r.name.toLowerCase(),
      r.type,
      r.setIdentifier ?? "",
      r.alias ? [r.alias.hostedZoneId, r.alias.dnsName.toLowerCase().replace(/\.$/, "")] : null,
      r.alias ? null : [r.ttl ?? null, [...r.values].sort()],
      r.weight ?? null,
      r.failover ?? null,
      r.region ?? null,
    ]);
  return norm(a) === norm(b);
}

function identity(r: RecordSetSnapshot): string {
  return `${r.name.toLowerCase()}|${r.type}|${r.setIdentifier ?? ""}`;
}

function describeStep(step: RepointStep): string {
  if (step.kind === "route53") {
    return step.edits.map((e) => `${e.type} ${e.name} → ${e.to}`).join("; ");
  }
  return `CloudFront ${step.distributionId} origin ${step.originId} → ${step.to}`;
}

type StepState = "planned" | "applied" | "changed";

/** Where a Route 53 step stands now: every DELETE still present (planned), every CREATE present (applied). */
async function route53State(aws: RepointAwsWrites, step: Route53RepointStep): Promise<StepState> {
  const names = [...new Set(step.changes.map((c) => c.record.name))];
  const current = (await Promise.all(names.map((n) => aws.recordSets(step.zoneId, n)))).flat();
  const present = (r: RecordSetSnapshot) => current.some((c) => sameRecord(c, r));
  const deletes = step.changes.filter((c) => c.action === "DELETE").map((c) => c.record);
  const creates = step.changes.filter((c) => c.action === "CREATE").map((c) => c.record);
  if (creates.every(present) && !deletes.some(present)) return "applied";
  // Planned: every DELETE still matches exactly and no CREATE's identity is taken by another record.
  const createIds = new Set(creates.map(identity));
  const deleteIds = new Set(deletes.map(identity));
  const blocking = current.filter((c) => createIds.has(identity(c)) && !deleteIds.has(identity(c)));
  if (deletes.every(present) && blocking.length === 0) return "planned";
  return "changed";
}

async function cloudFrontState(aws: RepointAwsWrites, step: CloudFrontOriginStep): Promise<StepState> {
  const { etag, config } = await aws.distributionConfig(step.distributionId);
  const origin = config.Origins?.Items?.find((o) => o.Id === step.originId);
  if (origin?.DomainName?.toLowerCase() === step.to.toLowerCase()) return "applied";
  if (etag === step.etag && origin?.DomainName?.toLowerCase() === step.from.toLowerCase()) return "planned";
  return "changed";
}

async function applyRoute53(aws: RepointAwsWrites, step: Route53RepointStep, comment: string) {
  const changes: RecordChange[] = [...step.changes];
  return aws.changeRecordSets(step.zoneId, changes, comment);
}

async function applyCloudFront(aws: RepointAwsWrites, step: CloudFrontOriginStep): Promise<void> {
  const { config } = await aws.distributionConfig(step.distributionId);
  const items = config.Origins?.Items ?? [];
  const updated = {
    ...config,
    Origins: {
      ...config.Origins,
      Quantity: items.length,
      Items: items.map((o) => (o.Id === step.originId ? { ...o, DomainName: step.to } : o)),
    },
  };
  // If-Match is the ETag approved, not the one just read: any edit since planning is refused.
  await aws.updateDistribution(step.distributionId, updated, step.etag);
}

export interface RepointDeps {
  readonly aws: RepointAwsWrites;
  readonly log?: Logger;
  /** Re-sends of one step after an ambiguous failure that left it as planned (default 3). */
  readonly writeAttempts?: number;
}

/**
 * Run the steps in order. Returns DONE or STALE with what was applied; throws on a transient error
 * (the job retries; the next attempt re-reads and skips what is already applied).
 */
export async function applyRepoint(
  deps: RepointDeps,
  requestId: string,
  action: RepointPathAction,
): Promise<RepointOutcome> {
  const { aws } = deps;
  const route53Changes: { zoneId: string; changeId: string }[] = [];
  const distributions: string[] = [];
  const done: string[] = [];
  const applied = (): RepointApplied => ({ route53Changes, distributions });
  const staleAfter = (step: RepointStep, why: string): RepointOutcome => ({
    state: "STALE",
    message: `Not applied: ${describeStep(step)} — ${why}.${done.length > 0 ? ` Already applied: ${done.join("; ")}.` : " Nothing was changed."} Trace again and ask for a new approval.`,
    applied: applied(),
  });

  for (const step of action.steps) {
    const attempts = Math.max(1, deps.writeAttempts ?? 3);
    for (let attempt = 1; ; attempt++) {
      const state =
        step.kind === "route53" ? await route53State(aws, step) : await cloudFrontState(aws, step);
      if (state === "applied") {
        if (step.kind === "cloudfront-origin") distributions.push(step.distributionId);
        done.push(`${describeStep(step)} (found already applied)`);
        break;
      }
      if (state === "changed") {
        return staleAfter(
          step,
          step.kind === "route53"
            ? `the records in zone ${step.zoneName} are no longer the ones approved`
            : `distribution ${step.distributionId} changed since the plan (ETag ${step.etag} or origin ${step.originId})`,
        );
      }
      try {
        if (step.kind === "route53") {
          const change = await applyRoute53(aws, step, `unstuck request ${requestId}`);
          route53Changes.push({ zoneId: step.zoneId, changeId: change.changeId });
        } else {
          await applyCloudFront(aws, step);
          distributions.push(step.distributionId);
        }
        done.push(describeStep(step));
        break;
      } catch (err) {
        if (isUnstuckError(err) && err.code === ErrorCode.Stale) return staleAfter(step, err.message);
        if (!isAmbiguous(err) || attempt >= attempts) throw err;
        deps.log?.warn(
          { requestId, step: step.kind, attempt, err: { message: toUserError(err).message } },
          "ambiguous AWS write failure; re-reading before deciding",
        );
      }
    }
  }
  return {
    state: "DONE",
    message: `Repointed: ${done.join("; ")}.`,
    applied: applied(),
  };
}
