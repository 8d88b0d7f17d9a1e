/**
 * The deletion guard's reconcile loop: what bounds an open guard, whatever happened to its close job.
 *
 * Every worker process (roles `worker` and `all`) runs it on its own timer, not as a BullMQ job:
 * it needs nothing from Redis, so a close job deleted from Redis, a Redis that lost its data, or a
 * Redis that is down does not keep a guard open. Each pass lists the namespaces, metadata only (one
 * `PartialObjectMetadataList`, a few hundred bytes per namespace), and takes
 * `unstuck.dev/deletion-approved` off every namespace where it
 *
 * - does not verify (`deletion-guard-token.ts`: not of the bot's shape, a MAC that fails under the
 *   approval key, or a value bound to another namespace or uid): at once;
 * - verifies but its `until` has passed by more than `graceMs`: the close job, due at `until`, has
 *   normally closed it already and said so in the request's thread; this is the backstop.
 *
 * Each removal is a JSON patch that `test`s the exact value it read, so a value written between the
 * list and the patch (a re-approval) is never undone, and several workers doing the same pass do it
 * once. The bound on an open guard is therefore `until + graceMs + everyMs` (+ one list and patch).
 */
import { withoutSharedBudget } from "../kube/limiter.js";
import type { AuditLog } from "../audit/log.js";
import { DELETION_APPROVED_ANNOTATION } from "../requests/model.js";
import { guardRequestId, type DeletionGuardSigner } from "../approvals/deletion-guard-token.js";
import { ErrorCode, isUnstuckError, toUserError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import type { Logger } from "../log.js";
import { metricSink } from "../ops/metric-sink.js";
import { renderGuardReconcileStatus } from "../render/guard-status.js";

/** Default period of a pass. */
export const GUARD_RECONCILE_EVERY_MS = 10_000;
/** Default grace past `until` left to the close job (its thread report) before the loop acts. */
export const GUARD_RECONCILE_GRACE_MS = 5_000;

export interface GuardReconcileDeps {
  readonly kube: Pick<KubePort, "listNamespaces" | "removeNamespaceAnnotation">;
  /** Verifies the annotation's MAC (`UNSTUCK_APPROVAL_KEY`). */
  readonly signer: DeletionGuardSigner;
  readonly now: () => Date;
  /** Audits each removal (a write failure is logged, never stops the pass). */
  readonly audit?: Pick<AuditLog, "append">;
  readonly log?: Logger;
  /** How long past `until` a verified value may stay (default 5 s). */
  readonly graceMs?: number;
  /**
   * The deletion window (`UNSTUCK_DELETION_WINDOW_SECONDS`, in ms): a value whose `until` lies further
   * ahead than that was not written by an approval of this install (a fast clock, a forged value) and
   * is removed as invalid. Absent: not checked.
   */
  readonly windowMs?: number;
}

export interface GuardReconcileRemoval {
  readonly namespace: string;
  /** `expired`: verified, past its window; `invalid`: not a value the bot wrote for this namespace. */
  readonly why: "expired" | "invalid";
  readonly requestId?: string;
}

export interface GuardReconcileReport {
  /** Namespaces that carried the annotation. */
  readonly open: number;
  readonly removed: readonly GuardReconcileRemoval[];
  /** Namespaces whose removal failed (read again next pass). */
  readonly failed: readonly { readonly namespace: string; readonly message: string }[];
}

/** One pass. Throws only when the namespaces could not be listed. */
export async function reconcileDeletionGuards(deps: GuardReconcileDeps): Promise<GuardReconcileReport> {
  const { kube, signer } = deps;
  const graceMs = deps.graceMs ?? GUARD_RECONCILE_GRACE_MS;
  const namespaces = (await kube.listNamespaces()).filter(
    (ns) => ns.annotations[DELETION_APPROVED_ANNOTATION] !== undefined,
  );
  const removed: GuardReconcileRemoval[] = [];
  const failed: { namespace: string; message: string }[] = [];
  for (const ns of namespaces) {
    const value = ns.annotations[DELETION_APPROVED_ANNOTATION] ?? "";
    const verified =
      ns.uid !== undefined ? signer.verify(value, { namespace: ns.name, uid: ns.uid }) : undefined;
    const now = deps.now().getTime();
    const tooLong =
      verified !== undefined &&
      deps.windowMs !== undefined &&
      verified.until.getTime() > now + deps.windowMs + graceMs;
    const why =
      verified === undefined || tooLong
        ? "invalid"
        : now >= verified.until.getTime() + graceMs
          ? "expired"
          : undefined;
    if (why === undefined || ns.uid === undefined) continue;
    try {
      const outcome = await kube.removeNamespaceAnnotation(ns.name, DELETION_APPROVED_ANNOTATION, {
        uid: ns.uid,
        value,
      });
      // `changed`: someone wrote a new value since the list (read next pass); `gone`: nothing to close.
      if (outcome !== "removed") continue;
    } catch (err) {
      const message = toUserError(err).message;
      failed.push({ namespace: ns.name, message });
      continue;
    }
    const requestId = verified?.requestId ?? guardRequestId(value);
    const removal: GuardReconcileRemoval = {
      namespace: ns.name,
      why,
      ...(requestId !== undefined ? { requestId } : {}),
    };
    removed.push(removal);
    const text = renderGuardReconcileStatus(
      why === "expired"
        ? { kind: "expired", namespace: ns.name, until: verified?.until.toISOString() ?? "?" }
        : { kind: "invalid", namespace: ns.name },
    );
    deps.log?.warn({ namespace: ns.name, why, requestId }, "deletion guard closed by the reconcile loop");
    try {
      await deps.audit?.append({
        at: deps.now().toISOString(),
        actor: { kind: "system", component: "deletion-guard-reconcile" },
        event: `deletion-guard.reconciled-${why}`,
        requestId: requestId ?? "",
        action: "open-deletion-guard",
        target: `deletion guard of namespace ${ns.name}`,
        result: text,
      });
    } catch (err) {
      deps.log?.warn(
        { namespace: ns.name, err: { message: toUserError(err).message } },
        "could not audit the reconcile loop's close",
      );
    }
  }
  return { open: namespaces.length, removed, failed };
}

export interface GuardReconciler {
  /** Ends the timer and waits for a pass in flight. */
  stop(): Promise<void>;
}

/** Run a pass now and then every `everyMs` (default 10 s), one at a time, until stopped. */
export function startGuardReconciler(
  deps: GuardReconcileDeps,
  options: { readonly everyMs?: number } = {},
): GuardReconciler {
  const everyMs = options.everyMs ?? GUARD_RECONCILE_EVERY_MS;
  let running = true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pass: Promise<void> = Promise.resolve();
  // A refusal repeats every pass: said once until it changes.
  let lastProblem = "";
  const tick = async (): Promise<void> => {
    try {
      // A guard past its window is closed whatever the fleet's request budget holds.
      const report = await withoutSharedBudget(() => reconcileDeletionGuards(deps));
      metricSink()?.guardPass(report.open - report.removed.length, report.failed.length);
      const problem = report.failed.map((f) => `${f.namespace}: ${f.message}`).join("; ");
      if (problem !== "" && problem !== lastProblem) {
        deps.log?.error(
          { failed: report.failed },
          "deletion guard reconcile: could not remove the annotation",
        );
      }
      lastProblem = problem;
    } catch (err) {
      const message = toUserError(err).message;
      if (message !== lastProblem) {
        const forbidden = isUnstuckError(err) && err.code === ErrorCode.Forbidden;
        deps.log?.[forbidden ? "error" : "warn"](
          { err: { message } },
          "deletion guard reconcile: could not list namespaces",
        );
      }
      lastProblem = message;
    }
  };
  const schedule = (ms: number): void => {
    timer = setTimeout(() => {
      pass = tick().finally(() => {
        if (running) schedule(everyMs);
      });
    }, ms);
    timer.unref();
  };
  schedule(0);
  return {
    async stop() {
      running = false;
      if (timer !== undefined) clearTimeout(timer);
      await pass;
    },
  };
}
