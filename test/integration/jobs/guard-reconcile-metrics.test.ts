/**
 * What the deletion guard's reconcile loop tells `/metrics`: the guards open at its last pass, those
 * past their window (or not the bot's) it could not close — deletion stays allowed there, which is
 * what a platform team pages on — and when it last could look.
 */
import { describe, expect, it } from "vitest";
import { DELETION_APPROVED_ANNOTATION } from "../../../src/requests/model.js";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import { startGuardReconciler } from "../../../src/jobs/guard-reconcile.js";
import type { NamespaceSnapshot } from "../../../src/kube/types.js";
import { silentLogger } from "../../../src/log.js";
import { exposition } from "../../../src/ops/metrics.js";
import { eventually } from "../../helpers/eventually.js";
import { testGuardSigner } from "../../helpers/keys.js";

function namespace(name: string, guard: string | undefined): NamespaceSnapshot {
  return {
    name,
    uid: `uid-${name}`,
    phase: "Active",
    specFinalizers: ["kubernetes"],
    finalizers: [],
    conditions: [],
    labels: {},
    annotations: guard === undefined ? {} : { [DELETION_APPROVED_ANNOTATION]: guard },
  };
}

const value = (text: string, name: string): number | undefined => {
  const m = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
  return m ? Number(m[1]) : undefined;
};

describe("the deletion guard reconcile loop's metrics", () => {
  it("counts the guards open and those it could not close, and stamps each pass that could list", async () => {
    // Two namespaces carry a value the bot never signed; the API server refuses one removal.
    const removable = new Set(["shop"]);
    const before = Date.now() / 1000;
    const loop = startGuardReconciler(
      {
        kube: {
          listNamespaces: () =>
            Promise.resolve([
              namespace("shop", "forged"),
              namespace("billing", "forged"),
              namespace("idle", undefined),
            ]),
          removeNamespaceAnnotation: (name) =>
            removable.has(name)
              ? Promise.resolve("removed" as const)
              : Promise.reject(new UnstuckError(ErrorCode.Forbidden, "forbidden: patch namespaces")),
        },
        signer: testGuardSigner(),
        now: () => new Date(),
        log: silentLogger(),
      },
      { everyMs: 50 },
    );
    try {
      const text = await eventually(
        async () => {
          const t = await exposition([]);
          return value(t, "unstuck_deletion_guard_reconcile_last_pass_timestamp_seconds") !== undefined &&
            (value(t, "unstuck_deletion_guard_reconcile_last_pass_timestamp_seconds") ?? 0) >= before
            ? t
            : undefined;
        },
        5_000,
        "a pass",
      );
      // shop closed; billing still open, past its check, not closed.
      expect(value(text, "unstuck_deletion_guards_open")).toBe(1);
      expect(value(text, "unstuck_deletion_guards_overdue")).toBe(1);
      // Once the refusal is lifted, the next pass closes it.
      removable.add("billing");
      await eventually(
        async () =>
          (value(await exposition([]), "unstuck_deletion_guards_overdue") ?? 1) === 0 ? true : undefined,
        5_000,
        "billing closed",
      );
    } finally {
      await loop.stop();
    }
  });
});
