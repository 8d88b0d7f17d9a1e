/**
 * The traffic half of the seed incident in the sandbox's terminal driver (docs/incident.md, steps 8–11),
 * as `npm start` runs it with no credentials: the namespace freed through an approved request,
 * `argo sync myapp` re-creating it (a new ALB; CloudFront keeps the old origin), the bot's re-check
 * offering *Fix the path*, the repair requested through its form and approved by a second person,
 * and the request's thread saying CloudFront is Deployed and test.example.com answers 200.
 */
import { describe, expect, it } from "vitest";
import { runSandbox } from "./sandbox-run.js";

describe("the sandbox's terminal driver, traffic path", () => {
  it("argo sync after the namespace is gone → Fix the path → approved → Deployed and 200 in the thread", async () => {
    const { code, out } = await runSandbox(
      [
        "argo sync myapp",
        '/unstuck finalize ingress/myapp-worker-ingress -n myapp --reason "cause confirmed: ENI holds the SG; recovery first"',
        "as U0APPROVER1",
        "click Approve",
        "wait Namespace myapp is gone",
        "argo sync myapp",
        "wait After the re-creation",
        "/unstuck trace test.example.com",
        "wait Traffic path of test.example.com is broken",
        "as U0ONCALL1",
        "click Fix the path",
        "reason test.example.com answers 502: the CloudFront origin names the deleted ALB",
        "as U0APPROVER2",
        "click Approve",
        "wait E2MYAPPTEST0001 is Deployed",
        "wait test.example.com answers 200",
        "wait This card showed the path before the repair",
        "quit",
        "",
      ].join("\n"),
    );
    expect(code).toBe(0);
    // Too early: the namespace is still Terminating; Argo CD cannot re-create it (nothing is touched).
    expect(out).toContain("Argo CD: namespace myapp is still Terminating; nothing to sync until it is gone.");
    // Once it is gone: the namespace and the Ingress back, the controller's new ALB named.
    expect(out).toContain(
      "Argo CD synced myapp: namespace myapp and Ingress myapp-worker-ingress re-created.",
    );
    expect(out).toMatch(/myapp-worker-ingress → new ALB k8s-myapp-[a-z0-9.-]+\.elb\.amazonaws\.com/);
    expect(out).toContain("has re-created load balancers for myapp");
    expect(out).toMatch(/After the re-creation: .*orphan/);
    // The hostname's own trace proves the replacement too (a sibling record of the same old stack).
    expect(out).toMatch(
      /Traffic path of test\.example\.com is broken[^\n]*\n(?:(?!\[U0)[^\n]*\n)*?[^\n]*Repair plan[^\n]*\n(?:(?!\[U0)[^\n]*\n)*?\[\d+\] Fix the path/,
    );
    // The repair: planned with the ETag, approved by another person, then the waits in its thread.
    expect(out).toMatch(/CloudFront UpdateDistribution E2MYAPPTEST0001, If-Match/);
    expect(out).toMatch(/== DONE: repoint/);
    expect(out).toMatch(/CloudFront E2MYAPPTEST0001 is Deployed after/);
    expect(out).toMatch(/✅ test\.example\.com answers 200 \(GET https:\/\/test\.example\.com\/\)/);
    // The card the repair was asked from says it was repaired, and by whom, before anything else.
    expect(out).toMatch(/Repaired\*? — the traffic path of test\.example\.com[^\n]*approved by/);
    expect(out).not.toContain("(not seen within");
    expect(out).not.toContain("no such button");
  }, 180_000);
});
