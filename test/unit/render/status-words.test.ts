/**
 * The words of the waits' and the deletion guard's status lines: each typed event the engine emits
 * reads as one line that names its namespace and says what happened, what comes next and, where the
 * wait gave up, why. Every kind of each event is rendered here, so a new kind cannot go unworded
 * (the switch is exhaustive) and an old one cannot silently lose what it says.
 */
import { describe, expect, it } from "vitest";
import { DELETION_APPROVED_ANNOTATION } from "../../../src/requests/model.js";
import {
  renderGuardCloseStatus,
  renderGuardOpened,
  renderGuardReconcileStatus,
  type GuardCloseStatus,
} from "../../../src/render/guard-status.js";
import {
  orphansUnavailableText,
  renderOrphansFollowUp,
  traceUnavailableText,
} from "../../../src/render/orphans-text.js";
import {
  blockersLeftText,
  renderNamespaceWaitStatus,
  renderPathRecheckStatus,
  type NamespaceWaitStatus,
  type PathRecheckStatus,
} from "../../../src/render/wait-status.js";

describe("namespace wait status", () => {
  const ns = "team-a";
  const all: NamespaceWaitStatus[] = [
    { kind: "gone", namespace: ns, check: 4 },
    { kind: "timed-out", namespace: ns, phase: "Terminating", deadline: "09:00:00Z", blockers: "b" },
    {
      kind: "waiting",
      namespace: ns,
      phase: "Active",
      blockers: "b",
      check: 2,
      nextAt: "08:01:00Z",
      givesUpAt: "09:00:00Z",
    },
    { kind: "unconfirmed", namespace: ns, deadline: "09:00:00Z", message: "connection refused" },
    { kind: "check-failed", namespace: ns, check: 3, message: "connection refused", retryAt: "08:02:00Z" },
  ];

  it("every kind names the namespace on one line", () => {
    for (const e of all) {
      const text = renderNamespaceWaitStatus(e);
      expect(text, e.kind).toContain(`Namespace ${ns}`);
      expect(text, e.kind).not.toContain("\n");
    }
  });

  it("says what happened and what comes next", () => {
    const [gone, timedOut, waiting, unconfirmed, failed] = all.map(renderNamespaceWaitStatus);
    expect(gone).toMatch(/is gone.*check 4/);
    expect(timedOut).toMatch(/still Terminating at the deadline \(09:00:00Z\); b\./);
    // A namespace that is not Terminating is said to be not being deleted, not "still" anything.
    expect(waiting).toMatch(
      /is Active, not being deleted, b\..*check 2, next at 08:01:00Z, gives up at 09:00:00Z/,
    );
    expect(unconfirmed).toMatch(
      /could not confirm deletion by the deadline \(09:00:00Z\).*connection refused/,
    );
    expect(failed).toMatch(
      /check 3 could not read the cluster \(connection refused\); retrying at 08:02:00Z/,
    );
  });

  it("bounds a long API error to a status line", () => {
    const text = renderNamespaceWaitStatus({
      kind: "check-failed",
      namespace: ns,
      check: 1,
      message: "x".repeat(5_000),
      retryAt: "08:02:00Z",
    });
    expect(text.length).toBeLessThan(700);
    expect(text).toContain("…");
  });

  it("names five blockers at most, each bounded, and counts the rest", () => {
    expect(blockersLeftText([])).toMatch(/no blocking objects found yet/);
    expect(blockersLeftText(["ingress/a"])).toBe("1 blocker left: ingress/a");
    const many = Array.from({ length: 8 }, (_, i) => `configmap/${"n".repeat(400)}${String(i)}`);
    const text = blockersLeftText(many);
    expect(text).toMatch(/^8 blockers left: /);
    expect(text).toMatch(/, and 3 more$/);
    expect(text.match(/configmap\//g)).toHaveLength(5);
    expect(text.length).toBeLessThan(5 * 310 + 60);
  });
});

describe("path re-check status", () => {
  const ns = "shop";
  const all: PathRecheckStatus[] = [
    { kind: "repairable", namespace: ns },
    { kind: "intact", namespace: ns, check: 3 },
    { kind: "no-replacement", namespace: ns, after: "30 min", summary: "2 stale links." },
    {
      kind: "waiting",
      namespace: ns,
      summary: "2 stale links.",
      check: 2,
      nextIn: "1 min",
      givesUpAfter: "30 min",
    },
    { kind: "unconfirmed", namespace: ns, message: "throttled" },
    { kind: "check-failed", namespace: ns, check: 2, message: "throttled", retryIn: "1 min" },
  ];

  it("every kind names the namespace and what comes next", () => {
    const texts = all.map(renderPathRecheckStatus);
    for (const text of texts) expect(text).toContain(ns);
    const [repairable, intact, none, waiting, unconfirmed, failed] = texts;
    expect(repairable).toMatch(/re-created load balancers.*can be planned now/);
    expect(intact).toMatch(/intact again \(check 3\)/);
    // At the deadline the way forward is said: the command that repoints by hand.
    expect(none).toMatch(
      /after 30 min.*2 stale links\..*\/unstuck repoint <hostname> --to <load-balancer-name>/,
    );
    expect(waiting).toMatch(/check 2, next in 1 min, gives up after 30 min/);
    expect(unconfirmed).toMatch(/by the deadline: throttled/);
    expect(failed).toMatch(/Re-trace 2 .* failed \(throttled\); retrying in 1 min/);
  });
});

describe("deletion guard status", () => {
  const ns = "payments";
  const at = { namespace: ns, window: "15 min" };

  it("each way a close can end says whether the guard was touched, and why not", () => {
    const cases: [GuardCloseStatus, RegExp][] = [
      [{ kind: "gone", ...at }, /ended \(15 min\): the namespace is gone, nothing to close/],
      [{ kind: "already-closed", ...at, recreated: false }, /the guard was already closed\.$/],
      [{ kind: "already-closed", ...at, recreated: true }, /already closed \(it was re-created since\)\.$/],
      [
        { kind: "other-request", ...at, otherRequestId: "req-2", recreated: false },
        /for request req-2, another request's; left alone\.$/,
      ],
      [
        { kind: "foreign-value", ...at, recreated: true },
        /did not write; left alone .*\(it was re-created since\)\.$/,
      ],
      [
        { kind: "closed", ...at, deletionStarted: false },
        /window ended, .* removed; deleting it needs a new approval\.$/,
      ],
      [{ kind: "closed", ...at, deletionStarted: true }, /\(Its deletion had already started\.\)$/],
    ];
    for (const [e, pattern] of cases) {
      const text = renderGuardCloseStatus(e);
      expect(text, e.kind).toContain(`namespace ${ns}`);
      expect(text, e.kind).toMatch(pattern);
    }
    expect(renderGuardCloseStatus({ kind: "closed", ...at, deletionStarted: false })).toContain(
      DELETION_APPROVED_ANNOTATION,
    );
  });

  it("the reconcile loop says which of its two reasons it acted on", () => {
    expect(
      renderGuardReconcileStatus({ kind: "expired", namespace: ns, until: "2026-12-02T08:00:00.000Z" }),
    ).toMatch(/namespace payments by reconciliation: its window ended at 2026-12-02T08:00:00.000Z/);
    expect(renderGuardReconcileStatus({ kind: "invalid", namespace: ns })).toMatch(
      /from namespace payments: its value is not one the bot signed/,
    );
  });

  it("an opened guard says until when, for which request, and the command to run", () => {
    const until = new Date("2026-12-02T08:15:00Z");
    const base = { namespace: ns, requestId: "req-1", until, windowSeconds: 900 };
    const fresh = renderGuardOpened({ ...base, resumed: false });
    expect(fresh).toMatch(/^🔓 Namespace payments may be deleted until about 08:15Z? \(15 min\)/);
    expect(fresh).toContain(`${DELETION_APPROVED_ANNOTATION} for request req-1`);
    expect(fresh).toContain("until 2026-12-02T08:15:00Z");
    expect(fresh).toContain("`kubectl delete namespace payments`");
    expect(renderGuardOpened({ ...base, resumed: true })).toMatch(
      /^🔓 Completed by the interrupted attempt: namespace payments may be deleted/,
    );
  });
});

describe("after a namespace is gone", () => {
  it("says which check could not run, and why", () => {
    expect(orphansUnavailableText("AccessDenied")).toMatch(/Could not check orphans: AccessDenied$/);
    expect(traceUnavailableText("AccessDenied")).toMatch(/Could not trace the traffic path: AccessDenied$/);
    const report = {
      cluster: "prod",
      namespace: "shop",
      orphans: [],
      inProgress: [],
      liveCount: 7,
      warnings: [],
    };
    expect(renderOrphansFollowUp(report, "deletion")).toMatch(
      /^🧹 No orphans for namespace shop \(7 resources/,
    );
    expect(renderOrphansFollowUp(report, "re-creation")).toMatch(
      /^🧹 After the re-creation: No orphans for namespace shop/,
    );
  });
});
