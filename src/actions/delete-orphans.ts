/**
 * Applies an approved orphan clean-up (`delete-orphans`). The precondition is re-checked from a fresh
 * read before anything is deleted: each resource must still be an orphan of the cluster (no live or
 * deleting Ingress/Service owns it, per the edge model) and still removable (unattached). Anything that
 * has gained an owner or a user since the approval is left alone and named. AWS refusing a delete
 * because the resource is in use is reported the same way; a resource already gone counts as deleted.
 * Order: load balancers, target groups, security groups (each frees the next).
 */
import type { OrphanAwsDeletes, OrphanAwsReads } from "../aws/port.js";
import type { DeleteOrphansAction, OrphanTarget } from "../requests/model.js";
import { ErrorCode, isUnstuckError } from "../errors.js";
import { collectOrphans, type OrphanKube } from "../orphans/collect.js";
import type { Logger } from "../log.js";

const ORDER: Record<OrphanTarget["type"], number> = {
  LoadBalancer: 0,
  TargetGroup: 1,
  SecurityGroup: 2,
};

export interface DeleteOrphansOutcome {
  readonly state: "DONE" | "STALE";
  readonly message: string;
  readonly deleted: readonly OrphanTarget[];
}

function label(r: OrphanTarget): string {
  return `${r.type} ${r.name !== undefined && r.name !== r.id ? `${r.name} (${r.id})` : r.id}`;
}

async function remove(aws: OrphanAwsDeletes, r: OrphanTarget): Promise<void> {
  switch (r.type) {
    case "LoadBalancer":
      return aws.deleteLoadBalancer(r.id);
    case "TargetGroup":
      return aws.deleteTargetGroup(r.id);
    case "SecurityGroup":
      return aws.deleteSecurityGroup(r.id);
  }
}

export async function applyDeleteOrphans(
  deps: { readonly aws: OrphanAwsReads & OrphanAwsDeletes; readonly kube: OrphanKube; readonly log?: Logger },
  action: DeleteOrphansAction,
): Promise<DeleteOrphansOutcome> {
  // The precondition, from a fresh read: still orphans, still removable.
  const now = await collectOrphans(deps.aws, deps.kube, {
    cluster: action.cluster,
    ...(action.namespace !== undefined ? { namespace: action.namespace } : {}),
  });
  if (now.warnings.length > 0 && now.orphans.length === 0) {
    return {
      state: "STALE",
      message: `Not applied: the orphans could not be re-checked (${now.warnings.join("; ")}), so nothing was deleted.`,
      deleted: [],
    };
  }
  const removable = new Set(now.orphans.filter((o) => o.removableNow).map((o) => o.id));
  const deleted: OrphanTarget[] = [];
  const left: string[] = [];
  for (const r of [...action.resources].sort((a, b) => ORDER[a.type] - ORDER[b.type])) {
    if (!removable.has(r.id)) {
      const still = now.orphans.find((o) => o.id === r.id);
      const inProgress = now.inProgress.find((o) => o.id === r.id);
      left.push(
        `${label(r)}: ${still ? `no longer removable now (${still.why})` : inProgress ? `the controller is deleting it (${inProgress.why})` : "no longer an orphan (owned or in use again) or already gone"}`,
      );
      continue;
    }
    try {
      await remove(deps.aws, r);
      deleted.push(r);
    } catch (err) {
      if (isUnstuckError(err) && err.code === ErrorCode.Conflict) {
        left.push(`${label(r)}: AWS refused, still in use (${err.message})`);
        continue;
      }
      throw err;
    }
  }
  const done = deleted.length > 0 ? `Deleted ${deleted.map(label).join(", ")}.` : "Nothing was deleted.";
  if (left.length === 0) return { state: "DONE", message: done, deleted };
  return {
    state: "STALE",
    message: `${done} Left alone, as things changed since the approval: ${left.join("; ")}.`,
    deleted,
  };
}
