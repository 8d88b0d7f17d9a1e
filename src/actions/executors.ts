/**
 * One executor per action type: the table below is the only place that knows them all. Adding an
 * action type means one entry here and one new module that runs it; the claim, the verification,
 * the audit and the outcome around it stay in `execute.ts` (`executeApproved`).
 */
import type { ApprovalAction } from "../requests/model.js";
import type { ActionOutcome, ActionRun } from "./deps.js";
import { applyDeleteOrphans } from "./delete-orphans.js";
import { applyOpenDeletionGuard } from "./deletion-guard.js";
import { runRemoveFinalizer } from "./finalizer.js";
import { applyRepoint } from "./repoint-path.js";

export type { ActionOutcome, ActionRun } from "./deps.js";

type Runner<T extends ApprovalAction["type"]> = (
  run: ActionRun,
  action: Extract<ApprovalAction, { readonly type: T }>,
) => Promise<ActionOutcome>;

const NO_AWS = (what: string): ActionOutcome => ({
  state: "FAILED",
  message: `Failed: AWS is not configured for the bot (no region), so nothing was ${what}.`,
});

export const EXECUTORS: { readonly [T in ApprovalAction["type"]]: Runner<T> } = {
  "remove-finalizer": runRemoveFinalizer,
  "open-deletion-guard": ({ deps, request }, action) =>
    applyOpenDeletionGuard(
      {
        kube: deps.kube,
        now: deps.now,
        ...(deps.scheduleGuardClose ? { scheduleClose: deps.scheduleGuardClose } : {}),
        ...(deps.guardSigner ? { signer: deps.guardSigner } : {}),
        ...(deps.log ? { log: deps.log } : {}),
      },
      request,
      action,
    ),
  "delete-orphans": async ({ deps }, action) =>
    deps.aws === undefined
      ? NO_AWS("deleted")
      : applyDeleteOrphans(
          { aws: deps.aws, kube: deps.kube, ...(deps.log ? { log: deps.log } : {}) },
          action,
        ),
  "repoint-path": async ({ deps, requestId }, action) =>
    deps.aws === undefined
      ? NO_AWS("changed")
      : applyRepoint({ aws: deps.aws, ...(deps.log ? { log: deps.log } : {}) }, requestId, action),
};

/** Run the action with its own executor. */
export function runAction(run: ActionRun, action: ApprovalAction): Promise<ActionOutcome> {
  const runner = EXECUTORS[action.type] as Runner<ApprovalAction["type"]>;
  return runner(run, action);
}
