/**
 * The way an on-call engineer actually gets from "stuck" to "gone": `/unstuck ns myapp` → "Request finalizer
 * removal" on the diagnosis → a modal asking why → the request message with evidence and clean-up plan →
 * another engineer approves → one guarded patch → the namespace disappears from the simulator.
 */
import { finalizerRemoval } from "../../src/requests/model.js";
import { afterEach, describe, expect, it } from "vitest";
import { REQUEST_FINALIZE_ACTION } from "../../src/slack/blocks/diagnosis.js";
import { FINALIZE_SUBMIT_CALLBACK, FinalizeModalField } from "../../src/slack/finalize-form.js";
import { REQUESTER_STATEMENTS, type ApprovalRequest } from "../../src/requests/model.js";
import type { SlackCall } from "../sim/slack/index.js";
import { deferred } from "./slack-harness.js";
import {
  APPROVE,
  BOB,
  DETAILS,
  buttonIds,
  CHANNEL,
  REQUESTER,
  startFixture,
  WORKER_INGRESS,
  type Fixture,
  type FixtureOptions,
} from "./approval-fixture.js";
import { eventually } from "../helpers/eventually.js";

const fixtures: Fixture[] = [];
afterEach(async () => {
  while (fixtures.length > 0) await fixtures.pop()?.stop();
});

async function setup(options: FixtureOptions = {}): Promise<Fixture> {
  const f = await startFixture(options);
  fixtures.push(f);
  return f;
}

const REASON =
  "ALB controller cannot delete the SG (DependencyViolation); myapp is down until the namespace is gone. Recovery first.";

/** Every button in a message: action id and value. */
function buttons(blocks: unknown): { action_id: string; value?: string }[] {
  const found: { action_id: string; value?: string }[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== "object" || node === null) return;
    const r = node as Record<string, unknown>;
    if (r["type"] === "button" && typeof r["action_id"] === "string") {
      found.push({
        action_id: r["action_id"],
        ...(typeof r["value"] === "string" ? { value: r["value"] } : {}),
      });
    }
    Object.values(r).forEach(visit);
  };
  visit(blocks);
  return found;
}

/** Diagnose the seed incident in the channel and click its "Request finalizer removal" button. */
async function openModalFromDiagnosis(f: Fixture): Promise<Record<string, unknown>> {
  await f.h.command("ns myapp", { channelId: CHANNEL, userId: REQUESTER.userId });
  const diagnosis = await f.h.fake.waitFor(
    "chat.postMessage",
    (c) => buttons(c.body["blocks"]).some((b) => b.action_id === REQUEST_FINALIZE_ACTION),
    20_000,
  );
  const button = buttons(diagnosis.body["blocks"]).find((b) => b.action_id === REQUEST_FINALIZE_ACTION)!;
  expect(JSON.parse(button.value ?? "{}")).toMatchObject(WORKER_INGRESS);
  await f.h.action({
    actionId: REQUEST_FINALIZE_ACTION,
    value: button.value ?? "",
    userId: REQUESTER.userId,
    teamId: REQUESTER.teamId,
    channelId: CHANNEL,
    triggerId: "1337.99.modal",
  });
  const opened = await f.h.fake.waitFor("views.open", (c) => c.body["trigger_id"] === "1337.99.modal");
  return opened.body["view"] as Record<string, unknown>;
}

/** The three statement checkboxes as Slack sends them: block id → action id → the ticked option values. */
type Ticks = Record<string, Record<string, { selected: string[] }>>;
const ALL_TICKED: Ticks = Object.fromEntries(
  REQUESTER_STATEMENTS.map((st) => [st.id, { [st.id]: { selected: [st.id] } }]),
);

function submit(
  f: Fixture,
  view: Record<string, unknown>,
  reason: string,
  finalizer: string | null = null,
  ticks: Ticks = ALL_TICKED,
) {
  return f.h.viewSubmission({
    callbackId: String(view["callback_id"]),
    privateMetadata: String(view["private_metadata"]),
    values: {
      [FinalizeModalField.Reason]: { [FinalizeModalField.Reason]: reason },
      [FinalizeModalField.Finalizer]: { [FinalizeModalField.Finalizer]: finalizer },
      ...ticks,
    },
    userId: REQUESTER.userId,
    teamId: REQUESTER.teamId,
  });
}

/** The modal's required checkboxes: one input block per statement, not optional. */
function checkboxBlocks(
  view: Record<string, unknown>,
): { block_id: string; optional?: boolean; text: string }[] {
  return (view["blocks"] as Record<string, unknown>[])
    .filter((b) => (b["element"] as Record<string, unknown> | undefined)?.["type"] === "checkboxes")
    .map((b) => ({
      block_id: String(b["block_id"]),
      ...(b["optional"] !== undefined ? { optional: Boolean(b["optional"]) } : {}),
      text: JSON.stringify(b["element"]),
    }));
}

function isRequestPost(c: SlackCall): boolean {
  return buttonIds(c.body["blocks"]).includes(APPROVE);
}

describe("Request finalizer removal → modal → approval → recovery", () => {
  it("the seed recovery: request via the modal, approved by another user → DONE → namespace myapp is gone", async () => {
    const f = await setup();
    const view = await openModalFromDiagnosis(f);
    expect(view["callback_id"]).toBe(FINALIZE_SUBMIT_CALLBACK);
    expect(JSON.stringify(view["blocks"])).toContain("myapp/myapp-worker-ingress");
    // Three required checkboxes, one per condition, in the requester's words.
    expect(checkboxBlocks(view).map((b) => b.block_id)).toEqual([
      "cause-confirmed",
      "recovery-first",
      "cleanup-plan",
    ]);
    expect(checkboxBlocks(view).every((b) => b.optional !== true)).toBe(true);

    const sent = await submit(f, view, REASON, "ingress.k8s.aws/resources");
    expect(sent.status).toBe(200);
    expect(sent.text).toBe(""); // a plain ack closes the modal

    const post = await f.h.fake.waitFor("chat.postMessage", isRequestPost, 10_000);
    expect(post.body["channel"]).toBe(CHANNEL);
    const card = JSON.stringify(post.body["blocks"]);
    expect(card).toContain("PENDING");
    expect(card).toContain(`*Asked by* <@${REQUESTER.userId}>`);
    expect(String(post.body["text"])).toContain("asks to remove finalizer");

    const requestId = buttons(post.body["blocks"]).find((b) => b.action_id === APPROVE)?.value ?? "";
    const ts = await eventually(async () => (await f.workflow.get(requestId)).message?.ts);
    const request = await f.workflow.get(requestId);
    expect(request.requester).toEqual(REQUESTER);
    expect(request.reason).toBe(REASON);
    expect(request.statements).toEqual(REQUESTER_STATEMENTS.map((st) => ({ id: st.id, text: st.text })));
    expect(finalizerRemoval(request.action).remove).toEqual(["ingress.k8s.aws/resources"]);

    // Details, answered to the one who clicks: the evidence, the requester's statements, the patch.
    const text = JSON.stringify((await f.answer(await f.click(DETAILS, requestId, BOB, ts))).body["blocks"]);
    expect(text).toContain("deleting since");
    expect(text).toContain("orphaned ALB");
    expect(text).toContain("NXDOMAIN");
    expect(text).toContain("DependencyViolation");
    // Approvers read risk and clean-up plan first, then the requester's own statements, then the patch.
    expect(text).toContain(`<@${REQUESTER.userId}> confirms:`);
    for (const st of REQUESTER_STATEMENTS) expect(text).toContain(st.text);
    expect(text).not.toContain(":white_check_mark: *Cause confirmed*"); // no bot-ticked checklist
    const at = (needle: string): number => text.indexOf(needle);
    expect(at("*Risk*")).toBeGreaterThan(-1);
    expect(at("*Risk*")).toBeLessThan(at("*Clean-up plan*"));
    expect(at("*Clean-up plan*")).toBeLessThan(at("confirms:"));
    expect(at("confirms:")).toBeLessThan(at("*Change*"));
    expect(at("*Change*")).toBeLessThan(at('\\"op\\": \\"test\\"'));

    await f.click(APPROVE, requestId, BOB, ts);
    const done = await f.settled(requestId);
    expect(done.state).toBe("DONE");
    expect(f.patches()).toHaveLength(1);
    await eventually(() => (f.message(ts).text?.includes("[DONE]") ? true : undefined));
    expect(buttonIds(f.message(ts).blocks)).toEqual([DETAILS]);
    await eventually(
      () => (f.sim.store.get("v1", "Namespace", undefined, "myapp") === undefined ? true : undefined),
      20_000,
    );
  });

  it("an empty reason, a bad finalizer name or tampered metadata is answered in the modal; no request is made", async () => {
    const f = await setup();
    const view = await openModalFromDiagnosis(f);
    const empty = await submit(f, view, "   ");
    expect(JSON.parse(empty.text)).toMatchObject({
      response_action: "errors",
      errors: { [FinalizeModalField.Reason]: expect.any(String) as string },
    });
    const badFinalizer = await submit(f, view, REASON, "not a finalizer!");
    expect(JSON.parse(badFinalizer.text)).toMatchObject({
      response_action: "errors",
      errors: { [FinalizeModalField.Finalizer]: expect.stringContaining("not a finalizer") as string },
    });
    const meta = JSON.parse(String(view["private_metadata"])) as { target: object; channelId: string };
    for (const privateMetadata of [
      JSON.stringify({ ...meta, target: { ...meta.target, namespace: "kube-system;rm" } }),
      JSON.stringify({ ...meta, channelId: "not-a-channel" }),
      "{not json",
    ]) {
      const sent = await submit(f, { ...view, private_metadata: privateMetadata }, REASON);
      expect(JSON.parse(sent.text)).toMatchObject({ response_action: "errors" });
    }
    expect(await f.workflow.listPending()).toEqual([]);
    expect(f.h.fake.calls().filter(isRequestPost)).toEqual([]);
  });

  it("a form for a channel the bot is not enabled in is refused in the form by the shared chain; no request is made", async () => {
    const f = await setup();
    const view = await openModalFromDiagnosis(f);
    const meta = JSON.parse(String(view["private_metadata"])) as { channelId: string };
    expect(meta.channelId).toBe(CHANNEL);
    const sent = await submit(
      f,
      { ...view, private_metadata: JSON.stringify({ ...meta, channelId: "C0ELSEWHERE1" }) },
      REASON,
    );
    const answer = JSON.parse(sent.text) as { response_action: string; errors: Record<string, string> };
    expect(answer.response_action).toBe("errors");
    expect(answer.errors[FinalizeModalField.Reason]).toContain("not enabled in <#C0ELSEWHERE1>");
    expect(await f.workflow.listPending()).toEqual([]);
    expect(f.h.fake.calls().filter(isRequestPost)).toEqual([]);
  });

  it("a submission without all three statements ticked is refused in the modal under each missing one; nothing is stored", async () => {
    const f = await setup();
    const view = await openModalFromDiagnosis(f);
    const [cause, recovery, cleanup] = REQUESTER_STATEMENTS.map((st) => st.id);
    const none = await submit(f, view, REASON, null, {});
    expect(JSON.parse(none.text)).toEqual({
      response_action: "errors",
      errors: {
        [cause!]: expect.stringContaining("Tick this") as string,
        [recovery!]: expect.stringContaining("Tick this") as string,
        [cleanup!]: expect.stringContaining("Tick this") as string,
      },
    });
    const twoOfThree = Object.fromEntries(Object.entries(ALL_TICKED).filter(([id]) => id !== cleanup));
    const two = await submit(f, view, REASON, null, twoOfThree);
    expect(Object.keys((JSON.parse(two.text) as { errors: object }).errors)).toEqual([cleanup]);
    // A crafted submission that moves an option to another block, or sends another value, confirms nothing.
    const moved = await submit(f, view, REASON, null, {
      ...twoOfThree,
      [cleanup!]: { [cleanup!]: { selected: [cause!] } },
    });
    expect(Object.keys((JSON.parse(moved.text) as { errors: object }).errors)).toEqual([cleanup]);
    const unticked = await submit(f, view, REASON, null, {
      ...twoOfThree,
      [cleanup!]: { [cleanup!]: { selected: [] } },
    });
    expect(Object.keys((JSON.parse(unticked.text) as { errors: object }).errors)).toEqual([cleanup]);

    expect(await f.workflow.listPending()).toEqual([]);
    expect(await f.redis.keys(`${f.storePrefix}:req:*`)).toEqual([]);
    expect(f.h.fake.calls().filter(isRequestPost)).toEqual([]);
  });

  it("the statements are part of the signed request: altered in Redis, a vote is refused and a forced approval is refused TAMPERED", async () => {
    const f = await setup();
    const view = await openModalFromDiagnosis(f);
    await submit(f, view, REASON, "ingress.k8s.aws/resources");
    const post = await f.h.fake.waitFor("chat.postMessage", isRequestPost, 10_000);
    const requestId = buttons(post.body["blocks"]).find((b) => b.action_id === APPROVE)?.value ?? "";
    const ts = await eventually(async () => (await f.workflow.get(requestId)).message?.ts);

    // Someone with write access to Redis rewords what the requester confirmed.
    const key = `${f.storePrefix}:req:${requestId}`;
    const doc = JSON.parse((await f.redis.hget(key, "doc")) ?? "{}") as ApprovalRequest;
    expect(doc.statements).toHaveLength(3);
    const edited = {
      ...doc,
      statements: (doc.statements ?? []).map((st, i) =>
        i === 0 ? { ...st, text: "I did not check the cause." } : st,
      ),
    };
    await f.redis.hset(key, "doc", JSON.stringify(edited));

    // The approval is refused with why: the record can never lead to an execution.
    const click = await f.click(APPROVE, requestId, BOB, ts);
    expect(String((await f.answer(click)).body["text"])).toMatch(/can no longer be executed/);
    expect((await f.workflow.get(requestId)).state).toBe("PENDING");
    // Marked APPROVED through Redis as well: the executor refuses it.
    await f.redis.hset(key, "state", "APPROVED");
    await f.redis.zadd(`${f.storePrefix}:approved`, Date.now(), requestId);
    await f.workflow.requeueApproved(0);
    const final = await f.settled(requestId, ["DONE", "FAILED", "STALE", "TAMPERED"]);
    expect(final.state).toBe("TAMPERED");
    expect(f.patches()).toEqual([]);
  });

  it("an object that is gone, or no eligible approver, is shown in the modal", async () => {
    const f = await setup({ approvers: [REQUESTER.userId] });
    const view = await openModalFromDiagnosis(f);
    const noApprover = await submit(f, view, REASON);
    const errors = (JSON.parse(noApprover.text) as { errors: Record<string, string> }).errors;
    expect(errors[FinalizeModalField.Reason]).toContain("eligible approver");

    const g = await setup();
    const view2 = await openModalFromDiagnosis(g);
    const meta = JSON.parse(String(view2["private_metadata"])) as { target: object; channelId: string };
    const gone = await submit(
      g,
      {
        ...view2,
        private_metadata: JSON.stringify({ ...meta, target: { ...meta.target, name: "no-such-ingress" } }),
      },
      REASON,
    );
    const goneErrors = (JSON.parse(gone.text) as { errors: Record<string, string> }).errors;
    expect(goneErrors[FinalizeModalField.Reason]).toContain("does not exist");
    expect(await g.workflow.listPending()).toEqual([]);
  });

  it("a submission slower than the budget closes the modal, then posts the request or tells the requester why not", async () => {
    const gate = deferred();
    const f = await setup({ beforeCreate: () => gate.promise, submitBudgetMs: 50 });
    const view = await openModalFromDiagnosis(f);
    const sent = await submit(f, view, REASON);
    expect(sent.text).toBe(""); // closed by the budget while the request is still being created
    gate.resolve();
    const post = await f.h.fake.waitFor("chat.postMessage", isRequestPost, 10_000);
    expect(post.body["channel"]).toBe(CHANNEL);

    const refusedGate = deferred();
    const g = await setup({
      approvers: [REQUESTER.userId],
      beforeCreate: () => refusedGate.promise,
      submitBudgetMs: 50,
    });
    const view2 = await openModalFromDiagnosis(g);
    const sent2 = await submit(g, view2, REASON);
    expect(sent2.text).toBe("");
    refusedGate.resolve();
    const ephemeral = await g.h.fake.waitFor("chat.postEphemeral", undefined, 10_000);
    expect(ephemeral.body["user"]).toBe(REQUESTER.userId);
    expect(ephemeral.body["channel"]).toBe(CHANNEL);
    expect(String(ephemeral.body["text"])).toContain("eligible approver");
    expect(g.h.fake.calls().filter(isRequestPost)).toEqual([]);
  });

  it("a malformed button value is refused ephemerally and opens no modal", async () => {
    const f = await setup();
    for (const value of ["{not json", JSON.stringify({ ...WORKER_INGRESS, kind: "<script>" })]) {
      const sent = await f.h.action({
        actionId: REQUEST_FINALIZE_ACTION,
        value,
        userId: REQUESTER.userId,
        channelId: CHANNEL,
      });
      const answer = await f.h.fake.waitForResponse((r) => r.id === sent.responseId);
      expect(answer.body["response_type"]).toBe("ephemeral");
      expect(String(answer.body["text"])).toContain("does not name a valid object");
    }
    expect(f.h.fake.views()).toEqual([]);
  });
});
