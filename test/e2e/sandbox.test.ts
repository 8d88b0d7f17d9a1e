/**
 * The README's quick start: `npm start` with no Slack credentials starts the local sandbox. Driven
 * here as a user would, with a script on standard input, in a child process with an empty
 * environment (no credentials, no kubeconfig, no AWS settings).
 */
import { describe, expect, it } from "vitest";
import { runSandbox } from "./sandbox-run.js";

describe("npm start without Slack credentials", () => {
  it("names the missing variables, then runs the sandbox: diagnose, request, approve, recover", async () => {
    const { code, out } = await runSandbox(
      [
        "/unstuck ns myapp",
        '/unstuck finalize ingress/myapp-worker-ingress -n myapp --reason "cause confirmed: ENI holds the SG; recovery first"',
        "click Approve",
        "as U0APPROVER1",
        "click Approve",
        "/unstuck watch ns myapp",
        "quit",
        "",
      ].join("\n"),
    );
    expect(code).toBe(0);
    expect(out).toContain("missing SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET");
    expect(out).toContain("== Namespace myapp: BLOCKED ==");
    expect(out).toMatch(/held by network interface eni-[0-9a-f]+/);
    // The requester's own click is refused, privately; the approver's executes the request.
    expect(out).toMatch(/only visible to you\n.*someone else/i);
    expect(out).toContain("== DONE: remove finalizer from Ingress myapp/myapp-worker-ingress ==");
  }, 90_000);
});
