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
        "as nobody",
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
    // A user the workspace does not have is refused, naming who it has.
    expect(out).toContain("(no such user: nobody; the workspace has U0ONCALL1 (oncall, requester)");
    expect(out).toContain("== DONE: remove finalizer from Ingress myapp/myapp-worker-ingress ==");
    // Quitting says what it stopped and cleaned.
    expect(out).toMatch(
      /Stopped: the bot and its workers are down; [1-9]\d* Redis keys under unstuck-sandbox-[0-9a-f]+ removed\./,
    );
  }, 90_000);

  it("honours the person's own UNSTUCK_* settings, says which the world keeps, and shows a form's errors", async () => {
    const { code, out } = await runSandbox(
      [
        "/unstuck ns myapp",
        "click Request finalizer removal",
        "reason short",
        "reason cause confirmed: ENI holds the SG; recovery first",
        "quit",
        "",
      ].join("\n"),
      { UNSTUCK_REQUEST_TTL_SECONDS: "120", UNSTUCK_APPROVERS: "U0SOMEONE" },
    );
    expect(code).toBe(0);
    expect(out).toContain("Your settings: UNSTUCK_REQUEST_TTL_SECONDS=120");
    expect(out).toContain("Not yours to set here (the sandbox's world sets them): UNSTUCK_APPROVERS");
    // A reason the bot refuses keeps the form open and says why; the next one is taken.
    expect(out).toMatch(/the form refused it: Say why recovery comes first in at least \d+ characters/);
    // The request expires after the two minutes asked for, not the default thirty.
    expect(out).toMatch(/expires \S+.*\(in 2 min\)/);
  }, 90_000);
});
