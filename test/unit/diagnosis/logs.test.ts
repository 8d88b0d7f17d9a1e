import { describe, expect, it } from "vitest";
import { evidenceFromLogs } from "../../../src/diagnosis/logs.js";

const target = { namespace: "myapp", name: "myapp-worker-ingress", kind: "Ingress" };
const from = "kube-system/aws-load-balancer-controller-abc/aws-load-balancer-controller";

function reconcilerError(ts: string, name = "myapp-worker-ingress"): string {
  return JSON.stringify({
    level: "error",
    ts,
    msg: "Reconciler error",
    controller: "ingress",
    object: { name, namespace: "myapp" },
    namespace: "myapp",
    name,
    reconcileID: Math.random().toString(16).slice(2),
    error: "failed to delete securityGroup: timed out waiting for the condition",
  });
}

describe("evidenceFromLogs", () => {
  it("collapses repeated reconciler errors about the object into one line with a count and the last time", () => {
    const lines = ["2026-02-12T08:48:21Z", "2026-02-12T08:49:57Z", "2026-02-12T08:52:00Z"].map((ts) => ({
      from,
      line: reconcilerError(ts),
    }));
    const ev = evidenceFromLogs(lines, target, 5);
    expect(ev).toHaveLength(1);
    expect(ev[0]).toMatchObject({
      source: "log",
      error: true,
      time: "2026-02-12T08:52:00Z",
      text: "Reconciler error: failed to delete securityGroup: timed out waiting for the condition (×3)",
    });
  });

  it("ignores lines about other objects and unrelated info lines", () => {
    const lines = [
      { from, line: reconcilerError("2026-02-12T08:48:21Z", "other-ingress") },
      {
        from,
        line: JSON.stringify({
          level: "info",
          ts: 1,
          msg: "successfully deployed model",
          ingressGroup: "x/y",
        }),
      },
    ];
    expect(evidenceFromLogs(lines, target, 5)).toEqual([]);
  });

  it("understands klog text lines that name the object", () => {
    const lines = [
      {
        from,
        line: 'E0212 08:49:57.123456 1 controller.go:329] "Reconciler error" err="boom" Ingress="myapp/myapp-worker-ingress"',
      },
    ];
    const ev = evidenceFromLogs(lines, target, 5);
    expect(ev[0]?.error).toBe(true);
    expect(ev[0]?.text).toContain("Reconciler error");
  });

  it("keeps at most `max` items, errors first", () => {
    const lines = Array.from({ length: 10 }, (_, i) => ({
      from,
      line: JSON.stringify({ level: i % 2 ? "info" : "error", msg: `m${i}`, name: "myapp-worker-ingress" }),
    }));
    const ev = evidenceFromLogs(lines, target, 3);
    expect(ev).toHaveLength(3);
    expect(ev.every((e) => e.error)).toBe(true);
  });
});
