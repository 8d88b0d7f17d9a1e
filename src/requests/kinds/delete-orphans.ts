/**
 * Deleting AWS resources a forced removal left behind (load balancers, target groups, security
 * groups), each re-checked first. Its executor is `src/actions/delete-orphans.ts`.
 */
import { orphanPlanLines } from "../../render/repoint-plan.js";
import { safe } from "../../slack/blocks/text.js";
import type { ActionKind, ActionOf } from "../kind.js";
import { asPlanned, codeBlock, NO_EVIDENCE } from "./words.js";

function orphansOf(a: ActionOf<"delete-orphans">): string {
  return `${String(a.resources.length)} AWS orphan${a.resources.length === 1 ? "" : "s"} of ${a.namespace !== undefined ? `namespace ${a.namespace}` : `cluster ${a.cluster}`}`;
}

/** The ids a clean-up may name: load balancer and target group ARNs, interface and group ids. */
const ORPHAN_ID = {
  LoadBalancer:
    /^arn:aws[a-z-]*:elasticloadbalancing:[a-z0-9-]+:\d{12}:loadbalancer\/(app|net)\/[A-Za-z0-9-]+\/[0-9a-f]+$/,
  TargetGroup:
    /^arn:aws[a-z-]*:elasticloadbalancing:[a-z0-9-]+:\d{12}:targetgroup\/[A-Za-z0-9-]+\/[0-9a-f]+$/,
  SecurityGroup: /^sg-[0-9a-f]{8,17}$/,
} as const;

export const deleteOrphans: ActionKind<ActionOf<"delete-orphans">> = {
  target: orphansOf,
  change: (a) => `delete ${orphansOf(a)}`,
  subject: (a) =>
    `orphans/${a.resources
      .map((r) => r.id)
      .sort()
      .join("+")}`,
  audit: (a, target) => ({
    type: a.type,
    target,
    plan: a.resources.map((r) => `delete ${r.type} ${r.id}${r.name !== undefined ? ` (${r.name})` : ""}`),
  }),
  filed: asPlanned,
  // Only ids of the kinds it deletes.
  wellFormed: (a) => a.resources.length > 0 && a.resources.every((r) => ORPHAN_ID[r.type].test(r.id)),
  terminal: {
    what: (a) => `delete ${orphansOf(a)}`,
    exact: (a) => orphanPlanLines(a),
  },
  card: {
    header: (a) => `delete ${orphansOf(a)}`,
    changes: (a) => `delete ${safe(orphansOf(a))}`,
    why: (_a, first) => first ?? NO_EVIDENCE,
    leaves: (_a, first) => first ?? "nothing: what it deletes cannot be undone",
    risks: () => [],
    risk: () =>
      "*Risk*: deleting AWS resources cannot be undone. Each is re-checked first and left alone if it has an owner or a user again.",
    exact: (a) =>
      [
        `*Change*: delete ${safe(orphansOf(a))} — exactly these calls, in order:`,
        codeBlock(orphanPlanLines(a).join("\n")),
        "Bound to what was approved: before deleting, the executor re-reads the cluster and AWS; anything that has an owner or a user again (or that the controller is deleting) is left alone and named. AWS itself refuses to delete what is still in use.",
      ].join("\n"),
    holds: () => "each resource it deletes is still an orphan, unattached,",
    withoutForm: "",
  },
  timeline: "deletion of",
  lessons: () => [],
  followedBy: () => null,
};
