import type { KnownBlock } from "@slack/types";
import { describe, expect, it } from "vitest";
import type { StoredAuditEntry } from "../../../src/audit/entry.js";
import { buildFinalizerPatch } from "../../../src/approvals/workflow.js";
import {
  REQUESTER_STATEMENTS,
  RequestState,
  TERMINAL_STATES,
  type ApprovalRequest,
  type RequestState as State,
} from "../../../src/requests/model.js";
import {
  ApprovalActionId,
  renderApprovalDetails,
  renderApprovalList,
  renderApprovalRequest,
  renderAuditEntries,
} from "../../../src/slack/blocks/approval.js";
import { ONE_OF_EACH, WORKER_INGRESS } from "../approvals/fixtures.js";

const NOW = new Date("2026-02-12T08:50:00Z");
const ID = "abcdefghijklmnopqrstuvwxyz";

function request(overrides: Partial<ApprovalRequest> = {}): ApprovalRequest {
  const precondition = { resourceVersion: "4711", finalizers: ["ingress.k8s.aws/resources"] };
  return {
    id: ID,
    action: {
      type: "remove-finalizer",
      target: WORKER_INGRESS,
      precondition,
      remove: ["ingress.k8s.aws/resources"],
      patch: buildFinalizerPatch(precondition, ["ingress.k8s.aws/resources"]),
    },
    requester: { userId: "UALICE", teamId: "T1" },
    channelId: "COPS",
    message: { channel: "COPS", ts: "1.000001" },
    reason: "SG delete fails with DependencyViolation <b>&</b>; recovery first",
    evidence: ["Reconciler error: failed to delete securityGroup"],
    cleanupPlan: ["check ALB/TG/SG/ENI orphans", "old DNS names NXDOMAIN"],
    createdAt: "2026-02-12T08:45:00Z",
    expiresAt: "2026-02-12T09:15:00Z",
    updatedAt: "2026-02-12T08:45:00Z",
    approvalsRequired: 1,
    state: RequestState.Pending,
    votes: [],
    executionAttempts: 0,
    ...overrides,
  };
}

function all(message: { text: string; blocks: KnownBlock[] }): string {
  return `${message.text}\n${JSON.stringify(message.blocks)}`;
}

function actionBlocks(blocks: KnownBlock[]) {
  return blocks.filter((b) => b.type === "actions");
}

function buttonIdsOf(blocks: KnownBlock[]): string[] {
  return actionBlocks(blocks).flatMap((b) =>
    b.type === "actions" ? b.elements.map((e) => ("action_id" in e ? (e.action_id ?? "") : "")) : [],
  );
}

describe("renderApprovalRequest", () => {
  it("while PENDING: what changes, why, what it leaves and who asks above four buttons carrying only the id; the rest in Details", () => {
    const req = request();
    const m = renderApprovalRequest(req, NOW);
    const text = all(m);
    expect(text).toContain("PENDING");
    expect(text).toContain(
      "*Changes*: remove `ingress.k8s.aws/resources` from Ingress `myapp/myapp-worker-ingress`",
    );
    expect(text).toContain(`*Why*: ${req.evidence[0] ?? "?"}`);
    expect(text).toContain(`*Leaves behind*: ${req.cleanupPlan[0] ?? "?"} (and 1 more step in Details)`);
    expect(text).toContain("*Asked by* <@UALICE>");
    expect(text).toContain(req.expiresAt);
    expect(text).toContain("in 25 min");
    // User text is escaped, so it cannot inject mentions or links.
    expect(text).toContain("&lt;b&gt;&amp;&lt;/b&gt;");
    expect(text).not.toContain("<b>");
    // What an approver decides on fits above the buttons: a header and at most seven lines.
    const above = m.blocks.slice(
      0,
      m.blocks.findIndex((b) => b.type === "actions"),
    );
    const lines = above.flatMap((b) =>
      b.type === "section" || b.type === "header"
        ? (b.text?.text ?? "").split("\n")
        : b.type === "context"
          ? [""]
          : [],
    );
    expect(lines.length).toBeLessThanOrEqual(8);
    // The binding and the patch are behind Details.
    expect(text).not.toContain("4711");
    const details = all(renderApprovalDetails(req));
    expect(details).toContain("4711");
    expect(details).toContain('\\"op\\": \\"test\\"');
    expect(details).toContain("/metadata/finalizers");
    for (const line of [...req.evidence, ...req.cleanupPlan]) expect(details).toContain(line);

    const [actions] = actionBlocks(m.blocks);
    expect(actions?.type).toBe("actions");
    const buttons = actions?.type === "actions" ? actions.elements : [];
    expect(buttons.map((b) => ("action_id" in b ? b.action_id : ""))).toEqual([
      ApprovalActionId.Approve,
      ApprovalActionId.Deny,
      ApprovalActionId.Cancel,
      ApprovalActionId.Details,
    ]);
    for (const b of buttons) {
      expect(b.type).toBe("button");
      if (b.type !== "button") continue;
      expect(b.value).toBe(ID);
      // Approve and Cancel confirm in a dialog; Deny opens a form (with an optional reason); Details reads.
      expect(b.confirm !== undefined).toBe(
        b.action_id === ApprovalActionId.Approve || b.action_id === ApprovalActionId.Cancel,
      );
    }
    const styles = buttons.map((b) => (b.type === "button" ? b.style : undefined));
    expect(styles).toEqual(["primary", "danger", undefined, undefined]);
  });

  it.each(TERMINAL_STATES)(
    "%s: only Details (TAMPERED: nothing), the state named, an outcome shown",
    (state: State) => {
      const result =
        state === "DONE" || state === "FAILED" || state === "STALE" || state === "TAMPERED"
          ? {
              outcome: state.toLowerCase() as "done" | "failed" | "stale" | "tampered",
              message: `outcome for ${state}: resourceVersion 4711 → 4712`,
              at: "2026-02-12T08:52:00Z",
            }
          : undefined;
      const m = renderApprovalRequest(
        request({
          state,
          ...(result ? { result } : {}),
          votes:
            state === "DENIED"
              ? [{ voter: { userId: "UBOB", teamId: "T1" }, decision: "deny", at: "2026-02-12T08:51:00Z" }]
              : [],
        }),
        NOW,
      );
      // A record that failed verification offers nothing to click.
      expect(buttonIdsOf(m.blocks)).toEqual(state === "TAMPERED" ? [] : [ApprovalActionId.Details]);
      const text = all(m);
      expect(text).toContain(state);
      // What happened is said once, in the thread's reply; Details repeats it for whoever asks.
      if (state === "DONE" || state === "FAILED" || state === "STALE" || state === "DENIED")
        expect(text).toContain("What happened is in the thread.");
      const details = all(renderApprovalDetails(request({ state, ...(result ? { result } : {}) })));
      if (result) expect(details).toContain(result.message);
    },
  );

  it("shows how many votes there are and how many are needed; who, in Details", () => {
    const m = renderApprovalRequest(
      request({
        approvalsRequired: 2,
        votes: [{ voter: { userId: "UBOB", teamId: "T1" }, decision: "approve", at: "2026-02-12T08:46:00Z" }],
      }),
      NOW,
    );
    expect(all(m)).toContain("1/2 approvals");
    // Who voted is said in the thread (and in Details), not again on the card.
    expect(all(m)).not.toContain("<@UBOB>");
    expect(
      all(
        renderApprovalDetails(
          request({
            approvalsRequired: 2,
            votes: [
              { voter: { userId: "UBOB", teamId: "T1" }, decision: "approve", at: "2026-02-12T08:46:00Z" },
            ],
          }),
        ),
      ),
    ).toContain("<@UBOB> approved");
  });

  it("a PENDING request past its expiry shows no vote buttons (the sweep has not run yet)", () => {
    const m = renderApprovalRequest(request(), new Date("2026-02-12T09:20:00Z"));
    expect(buttonIdsOf(m.blocks)).toEqual([ApprovalActionId.Details]);
    expect(all(m)).toContain("expiry passed");
  });

  it("stays within Block Kit limits with huge evidence, card and Details alike", () => {
    const huge = request({ evidence: Array.from({ length: 500 }, (_, i) => `line ${i} ${"x".repeat(80)}`) });
    for (const m of [renderApprovalRequest(huge, NOW), renderApprovalDetails(huge)]) {
      expect(m.blocks.length).toBeLessThanOrEqual(50);
      for (const b of m.blocks) {
        if (b.type === "section" && b.text) expect(b.text.text.length).toBeLessThanOrEqual(3000);
      }
    }
    // A long list is shortened by whole items, and says how many more.
    expect(all(renderApprovalDetails(huge))).toContain("…and 480 more");
  });

  it("Details leads with risk and clean-up plan; the requester's statements in their name; the exact change after", () => {
    const statements = REQUESTER_STATEMENTS.map((st) => ({ id: st.id, text: st.text }));
    const m = renderApprovalDetails(request({ statements }));
    const sections = m.blocks.flatMap((b) => (b.type === "section" && b.text ? [b.text.text] : []));
    const at = (needle: string): number => sections.findIndex((t) => t.includes(needle));
    expect(at("*Risk*")).toBeGreaterThan(-1);
    expect(at("*Clean-up plan*")).toBe(at("*Risk*"));
    expect(at("<@UALICE> confirms:")).toBeGreaterThan(at("*Risk*"));
    expect(at('"op": "test"')).toBeGreaterThan(at("<@UALICE> confirms:"));
    for (const st of statements) expect(sections[at("confirms:")]).toContain(st.text);
    // The bot ticks nothing for the requester any more.
    expect(all(m)).not.toContain(":white_check_mark: *Cause confirmed*");
    expect(m.blocks.length).toBeLessThanOrEqual(9);
  });

  it("a request made without the form says its conditions were not confirmed one by one", () => {
    const text = all(renderApprovalDetails(request()));
    expect(text).not.toContain("confirms:");
    expect(text).toContain("not confirmed one by one");
  });

  it("warns when the checklist is incomplete", () => {
    const bare = request({ evidence: [], cleanupPlan: [] });
    expect(all(renderApprovalRequest(bare, NOW))).toContain("no evidence attached");
    const text = all(renderApprovalDetails(bare));
    expect(text).toContain("no evidence attached");
    expect(text).toContain("no clean-up plan attached");
  });
});

describe("every kind of action, from its one table of words", () => {
  it("says what changes, why, what it leaves and who asks, and its Details the exact change", () => {
    for (const action of Object.values(ONE_OF_EACH)) {
      const req = request({
        action,
        evidence: ["the cause, in one sentence."],
        cleanupPlan: ["what stays."],
      });
      const first = renderApprovalRequest(req, NOW).blocks.find((b) => b.type === "section");
      const card = first?.type === "section" ? (first.text?.text ?? "") : "";
      expect(card, action.type).toMatch(
        /\*Changes\*: .+\n\*Why\*: .+\n\*Leaves behind\*: .+\n(?:.*\n)?\*Asked by\* /,
      );
      expect(all(renderApprovalDetails(req)), action.type).toMatch(/\*Change\*: /);
    }
  });
});

describe("renderApprovalList", () => {
  it("says so when nothing waits", () => {
    expect(renderApprovalList([], NOW).text).toContain("No approval requests");
  });

  it("lists each request and caps the blocks", () => {
    const reqs = Array.from({ length: 60 }, (_, i) => request({ id: `${ID.slice(0, 24)}${i}`.slice(0, 26) }));
    const m = renderApprovalList(reqs, NOW);
    expect(m.blocks.length).toBeLessThanOrEqual(50);
    expect(all(m)).toContain("Approval requests (60)");
    expect(all(m)).toContain("more");
    expect(all(m)).toContain("<@UALICE>");
  });
});

describe("renderAuditEntries", () => {
  it("renders entries with real mentions and escaped text, within Block Kit limits", () => {
    const entries: StoredAuditEntry[] = Array.from({ length: 1000 }, (_, i) => ({
      streamId: `${i}-0`,
      at: "2026-02-12T08:46:00Z",
      actor:
        i % 2 === 0
          ? { kind: "user", userId: "UBOB", teamId: "T1" }
          : { kind: "system", component: "executor" },
      event: "vote.approve",
      requestId: ID,
      action: "remove-finalizer",
      target: "Ingress myapp/<x>",
      before: "PENDING",
      after: "APPROVED",
      result: `1/1 approvals #${i}`,
    }));
    const m = renderAuditEntries(entries);
    expect(m.blocks.length).toBeLessThanOrEqual(50);
    const text = all(m);
    expect(text).toContain("<@UBOB>");
    expect(text).toContain("Ingress myapp/&lt;x&gt;");
    expect(text).toContain("#0");
    expect(text).toContain("older entries not shown");
    for (const b of m.blocks) {
      if (b.type === "section" && b.text) expect(b.text.text.length).toBeLessThanOrEqual(3000);
    }
  });

  it("says so when the log is empty", () => {
    expect(renderAuditEntries([]).text).toContain("no entries");
  });
});

describe("renderApprovalRequest: a repoint names every target's owner", () => {
  const repoint = (risks?: readonly string[]): ApprovalRequest =>
    request({
      action: {
        type: "repoint-path",
        hostnames: ["test.example.com"],
        steps: [
          {
            kind: "cloudfront-origin",
            distributionId: "E2MYAPPTEST0001",
            originId: "myapp-worker-alb",
            from: "k8s-myapp-myappwor-0733a56cbb-1570616586.ap-northeast-2.elb.amazonaws.com",
            to: "k8s-sandbox-claim-54d1c4a2b7-77.ap-northeast-2.elb.amazonaws.com",
            etag: "E3QWRUHAPOMQZL",
            hostnames: ["test.example.com"],
          },
        ],
        targets: [
          {
            loadBalancer: "k8s-sandbox-claim-54d1c4a2b7",
            dnsName: "k8s-sandbox-claim-54d1c4a2b7-77.ap-northeast-2.elb.amazonaws.com",
            owner: "Ingress sandbox/<claim>",
            namespaces: ["sandbox"],
            cluster: "prod-eks",
            serves: ["test.example.com", "*"],
            established: "named by the requester with --to",
            hostnames: ["test.example.com"],
          },
        ],
        ...(risks !== undefined ? { risks } : {}),
      },
    });

  it("owner (escaped), namespace, cluster, served hosts and how it was established are in Details", () => {
    const text = all(renderApprovalDetails(repoint()));
    expect(text).toContain("owner Ingress sandbox/&lt;claim&gt; (namespace sandbox)");
    expect(text).toContain("cluster tag prod-eks");
    expect(text).toContain("serves test.example.com, any host");
    expect(text).toContain("established: named by the requester with --to");
    expect(text).not.toContain("<claim>");
  });

  it("a target of another namespace is a line of the card, and the first risk in Details", () => {
    const req = repoint([
      "test.example.com moves to Ingress sandbox/claim (namespace sandbox) — another namespace",
    ]);
    expect(all(renderApprovalRequest(req, NOW))).toContain(
      ":warning: *Risk*: test.example.com moves to Ingress sandbox/claim (namespace sandbox) — another namespace",
    );
    const m = renderApprovalDetails(req);
    const riskBlock = JSON.stringify(m.blocks).indexOf("*Risk*");
    const first = JSON.stringify(m.blocks).slice(riskBlock - 12, riskBlock + 80);
    expect(first).toMatch(/:warning: \*Risk\*: test\.example\.com moves to Ingress sandbox\/claim/);
    expect(JSON.stringify(m.blocks).indexOf("another namespace")).toBeLessThan(
      JSON.stringify(m.blocks).indexOf("live traffic moves"),
    );
  });
});
