/**
 * The `remove-finalizer` action: act only on the exact state that was approved. Re-read the
 * object, require it to be the same object (uid) and being deleted, compare resourceVersion and
 * finalizers with the frozen precondition, and send a JSON patch whose `test` operations make the
 * API server itself refuse the change if anything moved in between. A write is never retried
 * blindly: after an ambiguous failure (5xx, timeout, reset) the object is re-read first.
 */
import { setTimeout as delay } from "node:timers/promises";
import { ErrorCode, isUnstuckError, toUserError } from "../errors.js";
import type { ObjectSnapshot, ResourceType } from "../kube/types.js";
import type { ObjectTarget, RemoveFinalizerAction } from "../requests/model.js";
import { describeTarget } from "../requests/model.js";
import type { ActionOutcome, ActionRun } from "./deps.js";
import { isAmbiguous } from "./ambiguous.js";

// The one rule of ambiguous.ts, still offered here beside the other decisions of this executor.
export { isAmbiguous };

/** What to do after re-reading the object. */
export type Verdict =
  | { readonly kind: "apply" }
  | { readonly kind: "stale"; readonly message: string }
  | { readonly kind: "done"; readonly message: string };

function list(values: readonly string[]): string {
  return `[${values.join(", ")}]`;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/**
 * Compare the object as it is now with the approved precondition. `resumed` says an earlier
 * attempt claimed the request and died, so its patch may already have been applied.
 */
export function judge(
  action: RemoveFinalizerAction,
  current: ObjectSnapshot | null,
  resumed: boolean,
): Verdict {
  const { precondition, remove } = action;
  if (current === null) {
    return resumed
      ? {
          kind: "done",
          message:
            "Completed by the interrupted attempt: the object is gone, so its finalizers were released and deletion finished.",
        }
      : { kind: "stale", message: "Not applied: the object is gone." };
  }
  const rvNow = current.resourceVersion ?? "(none)";
  const rvSame = rvNow === precondition.resourceVersion;
  const finSame = sameList(current.finalizers, precondition.finalizers);
  if (rvSame && finSame) return { kind: "apply" };
  const expectedAfter = precondition.finalizers.filter((f) => !remove.includes(f));
  if (resumed && sameList(current.finalizers, expectedAfter)) {
    return {
      kind: "done",
      message: `Completed by the interrupted attempt: finalizers are now ${list(current.finalizers)}.`,
    };
  }
  const changes: string[] = [];
  if (!rvSame) changes.push(`resourceVersion ${precondition.resourceVersion} → ${rvNow}`);
  changes.push(
    finSame
      ? "finalizers unchanged"
      : `finalizers ${list(precondition.finalizers)} → ${list(current.finalizers)}`,
  );
  return {
    kind: "stale",
    message: `Not applied: the object changed since approval (${changes.join("; ")}).`,
  };
}

function errorCode(err: unknown): string {
  return isUnstuckError(err) ? err.code : "unknown";
}

/** Decide from a re-read after an ambiguous patch failure. */
export function afterAmbiguous(
  action: RemoveFinalizerAction,
  seen: ObjectSnapshot | null,
): { kind: "done"; message: string } | { kind: "retry" } | { kind: "stale"; message: string } {
  const target = describeTarget(action.target);
  if (seen === null) {
    return {
      kind: "done",
      message: `Removed ${list(action.remove)} from ${target}: the object is gone, so deletion finished`,
    };
  }
  const { precondition, remove } = action;
  const expectedAfter = precondition.finalizers.filter((f) => !remove.includes(f));
  if (sameList(seen.finalizers, expectedAfter)) {
    return {
      kind: "done",
      message: `Removed ${list(remove)} from ${target}; finalizers now ${list(seen.finalizers)}`,
    };
  }
  if (
    seen.resourceVersion === precondition.resourceVersion &&
    sameList(seen.finalizers, precondition.finalizers)
  ) {
    return { kind: "retry" };
  }
  return {
    kind: "stale",
    message: `Not applied: after the API server's answer was lost, the object had changed (resourceVersion ${precondition.resourceVersion} → ${seen.resourceVersion ?? "(none)"}; finalizers ${list(precondition.finalizers)} → ${list(seen.finalizers)}).`,
  };
}

/** The `ResourceType` the kube port needs, rebuilt from the frozen target. */
export function resourceTypeOf(target: ObjectTarget): ResourceType {
  return {
    group: target.group,
    version: target.version,
    apiVersion: target.apiVersion,
    kind: target.kind,
    resource: target.resource,
    namespaced: true,
    verbs: ["get", "patch"],
  };
}

function outcome(state: ActionOutcome["state"], message: string, object?: ObjectSnapshot): ActionOutcome {
  return { state, message, ...(object !== undefined ? { object } : {}) };
}

/** Run an approved finalizer removal; throws what the job should retry or fail on. */
export async function runRemoveFinalizer(
  run: ActionRun,
  action: RemoveFinalizerAction,
): Promise<ActionOutcome> {
  const { requestId, resumed, target } = run;
  const { kube } = run.deps;
  const type = resourceTypeOf(action.target);
  const { namespace, name } = action.target;
  const current = await kube.getObject(type, namespace, name);
  if (current !== null && action.target.uid !== undefined && current.uid !== action.target.uid) {
    return outcome(
      "STALE",
      `Not applied: ${target} is a different object now (uid ${current.uid ?? "(none)"}, approved ${action.target.uid}).`,
    );
  }
  if (current !== null && !current.deletionTimestamp) {
    return outcome(
      "STALE",
      `Not applied: ${target} is not being deleted (no deletionTimestamp), so its finalizers still guard a live object.`,
    );
  }
  const verdict = judge(action, current, resumed);
  if (verdict.kind === "stale") return outcome("STALE", verdict.message);
  if (verdict.kind === "done") return outcome("DONE", verdict.message, current ?? undefined);
  const maxAttempts = Math.max(1, run.deps.patchAttempts ?? 3);
  for (let patchAttempt = 1; ; patchAttempt++) {
    let after: ObjectSnapshot;
    try {
      // Named for the API server's audit log: field manager and User-Agent carry the request id.
      after = await kube.removeFinalizers(type, namespace, name, action.precondition, action.remove, {
        requestId,
      });
    } catch (err) {
      if (isUnstuckError(err) && err.code === ErrorCode.Stale) {
        return outcome("STALE", "Not applied: the object changed between the check and the patch.");
      }
      if (!isAmbiguous(err)) throw err;
      // The write may or may not have been applied: look before deciding.
      const why = toUserError(err).message;
      run.deps.log?.warn(
        { requestId, patchAttempt, code: errorCode(err) },
        "ambiguous patch failure; re-reading",
      );
      const seen = await kube.getObject(type, namespace, name);
      const check = afterAmbiguous(action, seen);
      if (check.kind === "done") {
        return outcome(
          "DONE",
          `${check.message} (confirmed by re-read after the API server's answer was lost: ${why})`,
          seen ?? undefined,
        );
      }
      if (check.kind === "stale") return outcome("STALE", check.message);
      if (patchAttempt >= maxAttempts) throw err;
      await delay((run.deps.patchRetryDelayMs ?? 250) * patchAttempt);
      continue;
    }
    await run.deps.hooks?.afterPatch?.(requestId);
    return outcome(
      "DONE",
      `Removed ${list(action.remove)} from ${target}; finalizers now ${list(after.finalizers)}.`,
      after,
    );
  }
}
