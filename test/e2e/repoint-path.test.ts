/**
 * The outage half of the incident, end to end through the runtime's own wiring: signed slash commands,
 * clicks and a modal over HTTP, real Redis and BullMQ, the fake Slack, and the simulated world after
 * the namespace was re-created (six new ALBs, the CloudFront origin still naming the deleted one; the
 * world's DNS server and HTTP front answer as it says: test.example.com is 502).
 *
 * `trace ns myapp` → the card's *Fix the path* → the form → the plan posted as an approval request →
 * approved by a second person → UpdateDistribution with the planning ETag → the waits in the same
 * thread: CloudFront Deployed, then test.example.com answering 200 — which the HTTP front confirms.
 */
import { describe, expect, it } from "vitest";
import { REPAIR_PATH_ACTION } from "../../src/slack/blocks/trace.js";
import { eventually, pause } from "../helpers/eventually.js";
import { forceRemoveSeedFinalizer } from "../integration/helpers/aws-world.js";
import { recreateSeed } from "../sim/argo-sync.js";
import { postSigned, viewSubmissionBody } from "../sim/slack/index.js";
import { buttonValue } from "./block-kit.js";
import {
  APPROVE,
  APPROVER,
  CHANNEL,
  REQUESTER,
  SECRET,
  askRepair,
  askSeedRemoval,
  click,
  detailsOf,
  formOf,
  front,
  setup,
  slash,
} from "./edge-runtime.js";

describe("repairing the traffic path through the approval", () => {
  it("trace → Fix the path → form → approved → CloudFront Deployed → test.example.com answers 200, all in one thread", async () => {
    const s = await setup();
    expect(await front(s, "test.example.com")).toBe(502);

    await slash(s, "trace ns myapp");
    const card = await s.fake.waitFor(
      "chat.postMessage",
      (c) => JSON.stringify(c.body["blocks"] ?? "").includes(REPAIR_PATH_ACTION),
      20_000,
    );
    expect(JSON.stringify(card.body["blocks"])).toContain("UpdateDistribution E2MYAPPTEST0001");
    const value = buttonValue(card.body["blocks"], REPAIR_PATH_ACTION) ?? "";
    expect(JSON.parse(value)).toEqual({ ns: "myapp" });
    // Someone else traced it too: a second card, with its own Fix the path.
    await slash(s, "trace ns myapp", APPROVER, "cmd-2");
    const other = await s.fake.waitFor(
      "chat.postMessage",
      (c) =>
        c.response?.["ts"] !== card.response?.["ts"] &&
        JSON.stringify(c.body["blocks"] ?? "").includes(REPAIR_PATH_ACTION),
      20_000,
    );

    await click(s, REPAIR_PATH_ACTION, value, REQUESTER, String(card.response?.["ts"]), "1337.1.repair");
    const view = await formOf(s, "1337.1.repair");

    // A reason too short is refused in the form; nothing is requested.
    const short = await postSigned(
      s.events,
      SECRET,
      viewSubmissionBody({
        callbackId: String(view["callback_id"]),
        privateMetadata: String(view["private_metadata"]),
        values: { reason: { reason: "502" } },
        userId: REQUESTER,
      }),
    );
    expect(short.status).toBe(200);
    expect(short.text).toContain("at least");

    // The form names the card it was opened from; one whose card was forged is refused, nothing requested.
    const meta = JSON.parse(String(view["private_metadata"])) as Record<string, unknown>;
    expect(meta["cardTs"]).toBe(String(card.response?.["ts"]));
    const forged = await postSigned(
      s.events,
      SECRET,
      viewSubmissionBody({
        callbackId: String(view["callback_id"]),
        privateMetadata: JSON.stringify({ ...meta, cardTs: "C0OTHER:1.2" }),
        values: { reason: { reason: "test.example.com answers 502: origin names the deleted worker ALB" } },
        userId: REQUESTER,
      }),
    );
    expect(forged.text).toContain("invalid card");

    const sent = await postSigned(
      s.events,
      SECRET,
      viewSubmissionBody({
        callbackId: String(view["callback_id"]),
        privateMetadata: String(view["private_metadata"]),
        values: { reason: { reason: "test.example.com answers 502: origin names the deleted worker ALB" } },
        userId: REQUESTER,
      }),
    );
    expect(sent.status).toBe(200);
    const post = await s.fake.waitFor(
      "chat.postMessage",
      (c) => JSON.stringify(c.body["blocks"] ?? "").includes(APPROVE),
      20_000,
    );
    expect(JSON.stringify(post.body["blocks"])).toContain("repoint test.example.com");
    const id = buttonValue(post.body["blocks"], APPROVE) ?? "";
    const ts = String(post.response?.["ts"]);
    // The exact calls are behind Details, answered to whoever asks.
    expect(await detailsOf(s, id, ts)).toContain("If-Match");
    await eventually(
      async () => ((await s.runtime.workflow.get(id)).message ? true : undefined),
      10_000,
      "attached",
    );

    // The requester cannot approve their own repair.
    await click(s, APPROVE, id, REQUESTER, ts);
    const self = await s.fake.waitForResponse((p) => p.id === `click-${APPROVE}-${REQUESTER}`, 10_000);
    expect(String(self.body["text"])).toMatch(/You made this request/);
    expect(s.world.aws.calls().filter((c) => c.action === "UpdateDistribution")).toHaveLength(0);

    await click(s, APPROVE, id, APPROVER, ts);
    const done = await eventually(
      async () => {
        const r = await s.runtime.workflow.get(id);
        return r.state === "DONE" || r.state === "STALE" || r.state === "FAILED" ? r : undefined;
      },
      20_000,
      "executed",
    );
    expect(done.state).toBe("DONE");
    expect(s.world.aws.calls().filter((c) => c.action === "UpdateDistribution")).toHaveLength(1);

    // The waits report in the request's thread: Deployed, then the hostname answering.
    await eventually(
      () =>
        s.fake.thread(CHANNEL, ts).some((m) => /E2MYAPPTEST0001 is Deployed/.test(m.text ?? ""))
          ? true
          : undefined,
      30_000,
      "CloudFront Deployed in the thread",
    );
    await eventually(
      () =>
        s.fake
          .thread(CHANNEL, ts)
          .some((m) => /test\.example\.com.*answers 200/.test(m.text ?? "") && /readyz/.test(m.text ?? ""))
          ? true
          : undefined,
      30_000,
      "test.example.com/readyz answering 200 in the thread",
    );
    expect(await front(s, "test.example.com")).toBe(200);
    expect(await front(s, "test.example.com", "/readyz")).toBe(200);

    const audit = await s.runtime.audit.forRequest(id);
    expect(audit.map((e) => e.event)).toEqual(
      expect.arrayContaining(["request.created", "vote.approve", "execution.done"]),
    );

    // The card the repair was asked from can do nothing more: its button is gone, it says why.
    const cardTs = String(card.response?.["ts"]);
    const repainted = await eventually(
      () => {
        const m = s.fake.message(CHANNEL, cardTs);
        return m && !JSON.stringify(m.blocks).includes(REPAIR_PATH_ACTION) ? m : undefined;
      },
      20_000,
      "the card repainted without Fix the path",
    );
    // Its repaired state first, from the signed request: what changed, who asked and approved.
    expect(JSON.stringify(repainted.blocks)).toContain("*Repaired* — the traffic path of test.example.com");
    expect(JSON.stringify(repainted.blocks)).toMatch(/asked by <@U0ONCALL1>, approved by <@U0APPROVER1>/);

    // The other card's Fix the path: the form says there is nothing to repair, without asking why,
    // nothing is requested, and that card loses its button too, saying who checked.
    const otherTs = String(other.response?.["ts"]);
    const requests = s.fake.calls().filter((c) => JSON.stringify(c.body["blocks"] ?? "").includes(APPROVE));
    await click(s, REPAIR_PATH_ACTION, value, REQUESTER, otherTs, "1337.1.again");
    const answer = await eventually(
      () => {
        const v = s.fake.views().find((x) => x.triggerId === "1337.1.again")?.view;
        return v && /Nothing to repair/.test(JSON.stringify(v)) ? v : undefined;
      },
      20_000,
      "the form saying there is nothing to repair",
    );
    expect(answer["submit"]).toBeUndefined();
    const checked = await eventually(
      () => {
        const m = s.fake.message(CHANNEL, otherTs);
        return /checked again/.test(JSON.stringify(m?.blocks)) ? m : undefined;
      },
      10_000,
      "the other card saying it was checked again",
    );
    expect(JSON.stringify(checked.blocks)).not.toContain(REPAIR_PATH_ACTION);
    expect(JSON.stringify(checked.blocks)).toContain(`<@${REQUESTER}>`);
    // The repaired card, clicked again from a client still showing its button: answered the same
    // way, and left as it is (it already says Repaired).
    const updates = s.fake.message(CHANNEL, cardTs)?.updates;
    await click(s, REPAIR_PATH_ACTION, value, REQUESTER, cardTs, "1337.1.third");
    await eventually(
      () => {
        const v = s.fake.views().find((x) => x.triggerId === "1337.1.third")?.view;
        return v && /Nothing to repair/.test(JSON.stringify(v)) ? v : undefined;
      },
      20_000,
      "the third form saying there is nothing to repair",
    );
    await pause(300);
    expect(s.fake.message(CHANNEL, cardTs)?.updates).toBe(updates);
    expect(JSON.stringify(answer)).not.toContain('"type":"input"');
    await pause(500);
    expect(
      s.fake.calls().filter((c) => JSON.stringify(c.body["blocks"] ?? "").includes(APPROVE)),
    ).toHaveLength(requests.length);
  }, 90_000);

  it("the seed end to end: finalize → gone → path card (nothing to repoint yet) → Argo re-creates → the bot offers the repair → approved → INSYNC, Deployed, worker and test answer 200", async () => {
    const s = await setup("seed-incident.yaml");
    const { id, ts } = await askSeedRemoval(s);
    await click(s, APPROVE, id, APPROVER, ts);
    // Namespace gone → orphans and the path card in the thread; nothing replaces the ALBs yet.
    const first = await eventually(
      () =>
        s.fake
          .thread(CHANNEL, ts)
          .find((m) => /Traffic path of namespace myapp is broken/.test(m.text ?? "")),
      30_000,
      "the path card after the namespace is gone",
    );
    expect(JSON.stringify(first.blocks)).toContain("Nothing can be repointed yet");
    expect(JSON.stringify(first.blocks)).not.toContain(REPAIR_PATH_ACTION);
    await eventually(
      () =>
        s.fake.thread(CHANNEL, ts).some((m) => /Waiting for the controller to re-create/.test(m.text ?? ""))
          ? true
          : undefined,
      10_000,
      "the re-check waiting",
    );

    // Argo CD re-creates the namespace; the controller builds a new ALB for the worker Ingress.
    await recreateSeed(s.world, ["myapp-worker-ingress"]);
    await eventually(
      () =>
        s.fake.thread(CHANNEL, ts).some((m) => /has re-created load balancers for myapp/.test(m.text ?? ""))
          ? true
          : undefined,
      20_000,
      "the re-check noticing the new stack",
    );
    const offer = await eventually(
      () =>
        s.fake.thread(CHANNEL, ts).find((m) => JSON.stringify(m.blocks ?? "").includes(REPAIR_PATH_ACTION)),
      10_000,
      "the card with Fix the path",
    );
    const blocks = JSON.stringify(offer.blocks);
    expect(blocks).toContain("worker.example.com");
    // With the stack back, the orphans are checked again in the same thread.
    const again = await eventually(
      () => s.fake.thread(CHANNEL, ts).find((m) => /After the re-creation/.test(m.text ?? "")),
      10_000,
      "the orphan check after the re-creation",
    );
    expect(again.text).toMatch(/orphan/i);
    expect(blocks).toContain("UpdateDistribution E2MYAPPTEST0001");
    // Only the re-check's own card: the status message was edited in place, not re-posted.
    expect(s.fake.thread(CHANNEL, ts).filter((m) => /re-create/.test(m.text ?? ""))).toHaveLength(1);

    // The operator takes the offer: one plan (the worker alias and the CloudFront origin), approved.
    const { id: rid, ts: rts } = await askRepair(
      s,
      { ts: offer.ts, value: buttonValue(offer.blocks, REPAIR_PATH_ACTION) ?? "" },
      "worker.example.com and test.example.com still name the deleted ALBs",
      "1337.2.repair",
    );
    const repairBlocks = await detailsOf(s, rid, rts);
    expect(repairBlocks).toContain("ChangeResourceRecordSets");
    expect(repairBlocks).toContain("UpdateDistribution E2MYAPPTEST0001");
    await click(s, APPROVE, rid, APPROVER, rts);
    // In the request's thread: Route 53 INSYNC, CloudFront Deployed, both names answering 200.
    for (const [what, re] of [
      ["INSYNC", /Route 53 change .* is INSYNC/],
      ["Deployed", /E2MYAPPTEST0001 is Deployed/],
      ["worker 200", /worker\.example\.com.*answers 200/],
      ["test 200", /test\.example\.com.*answers 200/],
    ] as const) {
      await eventually(
        () => (s.fake.thread(CHANNEL, rts).some((m) => re.test(m.text ?? "")) ? true : undefined),
        30_000,
        `${what} in the repair's thread`,
      );
    }
    expect(await front(s, "test.example.com")).toBe(200);
    expect(await front(s, "worker.example.com")).toBe(200);

    // One reply per thing that happened, in order: the vote, the outcome, then one status message
    // per wait (CloudFront, Route 53, each name × each health path) edited to its result in place —
    // never the same result posted again below it.
    const waits = [
      /E2MYAPPTEST0001 is Deployed/,
      /Route 53 change .* is INSYNC/,
      /test\.example\.com answers 200 \(GET https:\/\/test\.example\.com\/\)/,
      /worker\.example\.com answers 200 \(GET https:\/\/worker\.example\.com\/\)/,
      /test\.example\.com answers 200 \(GET https:\/\/test\.example\.com\/readyz\)/,
      /worker\.example\.com answers 200 \(GET https:\/\/worker\.example\.com\/readyz\)/,
    ];
    await eventually(
      () =>
        waits.every((re) => s.fake.thread(CHANNEL, rts).some((m) => re.test(m.text ?? "")))
          ? true
          : undefined,
      30_000,
      "every wait's result in the repair's thread",
    );
    // Give a repeated result (the design this replaces) the time to show up.
    await pause(1_500);
    const replies = s.fake.thread(CHANNEL, rts);
    const texts = replies.map((m) => m.text ?? "");
    expect(texts, texts.join("\n")).toHaveLength(2 + waits.length);
    expect(texts[0]).toMatch(/approved/);
    expect(texts[1]).toMatch(/^Repointed: /);
    // The two AWS waits first, in the order they were started, then the names.
    expect(texts[2]).toMatch(waits[0] as RegExp);
    expect(texts[3]).toMatch(waits[1] as RegExp);
    for (const re of waits)
      expect(
        texts.filter((t) => re.test(t)),
        String(re),
      ).toHaveLength(1);
    // Each status message was posted by its wait's first check (a wait still waiting then edits it to
    // its result; one already answered posts the result at once): never a second message per wait.
    for (const m of replies.slice(2)) expect(m.text ?? "").toMatch(/^✅/);
    // The offer in the first thread lost its Fix the path once the repair was made.
    await eventually(
      () =>
        JSON.stringify(s.fake.message(CHANNEL, offer.ts)?.blocks).includes(REPAIR_PATH_ACTION)
          ? undefined
          : true,
      20_000,
      "the offer without its button",
    );
  }, 120_000);

  it("orphans myapp --delete: a clean-up request, approved by a second person, deletes only what is still an orphan", async () => {
    const s = await setup("seed-incident.yaml");
    // The forced removal, then ELB releases the old ALB's interface: the shared backend group is an orphan.
    await forceRemoveSeedFinalizer(s.world);
    // The controller's retry loop for the group ends (its reconcile is over; otherwise its next retry
    // would delete the group itself the moment the interface goes), then ELB releases the interface.
    await s.world.lbc?.stop();
    s.world.aws.world.networkInterfaces.delete("eni-0c9d8e7f6a5b4c3d2");
    await slash(s, 'orphans myapp --delete --reason "left by the forced removal; nothing uses it any more"');
    const post = await s.fake.waitFor(
      "chat.postMessage",
      (c) => JSON.stringify(c.body["blocks"] ?? "").includes(APPROVE),
      20_000,
    );
    const id = buttonValue(post.body["blocks"], APPROVE) ?? "";
    const ts = String(post.response?.["ts"]);
    const blocks = await detailsOf(s, id, ts);
    expect(blocks).toContain("ec2 DeleteSecurityGroup sg-0f1e2d3c4b5a69788");
    expect(blocks).not.toMatch(/payments/);
    expect(JSON.stringify(post.body["blocks"])).not.toMatch(/payments/);
    await eventually(
      async () => ((await s.runtime.workflow.get(id)).message ? true : undefined),
      10_000,
      "attached",
    );
    await click(s, APPROVE, id, APPROVER, ts);
    const done = await eventually(
      async () => {
        const r = await s.runtime.workflow.get(id);
        return ["DONE", "STALE", "FAILED"].includes(r.state) ? r : undefined;
      },
      20_000,
      "executed",
    );
    expect(done.state).toBe("DONE");
    expect(s.world.aws.world.securityGroups.has("sg-0f1e2d3c4b5a69788")).toBe(false);
    expect(s.world.aws.calls().filter((c) => c.action.startsWith("Delete") && c.status < 300)).toHaveLength(
      1,
    );
    const audit = await s.runtime.audit.forRequest(id);
    expect(audit.map((e) => e.event)).toEqual(expect.arrayContaining(["request.created", "execution.done"]));
  }, 60_000);

  it("repoint with bad input is refused with a clear message and no AWS write", async () => {
    const s = await setup();
    await slash(s, 'repoint not_a_host --reason "something is broken here"', REQUESTER, "bad-host");
    const bad = await s.fake.waitForResponse((p) => p.id === "bad-host", 10_000);
    expect(String(bad.body["text"])).toMatch(/is not a DNS host name/);
    await slash(
      s,
      'repoint test.example.com --to "no such lb!" --reason "something is broken"',
      REQUESTER,
      "bad-to",
    );
    const badTo = await s.fake.waitForResponse((p) => p.id === "bad-to", 10_000);
    expect(String(badTo.body["text"])).toMatch(/--to takes a load balancer name/);
    await slash(
      s,
      'repoint test.example.com --to k8s-nope-0000000000 --reason "pointing at a named ALB"',
      REQUESTER,
      "no-lb",
    );
    // Nothing to request: the trace and the plan's question go to the asker instead of a request.
    const noLb = await s.fake.waitForResponse((p) => p.id === "no-lb", 20_000);
    expect(noLb.body["response_type"]).toBe("ephemeral");
    // The refusal is the answer: it leads, and the card does not talk of repointing later instead.
    const first = (noLb.body["blocks"] as { text?: { text?: string } }[])[0]?.text?.text ?? "";
    expect(first).toMatch(/^:no_entry: \*Refused:\* No load balancer is named k8s-nope-0000000000/);
    expect(JSON.stringify(noLb.body["blocks"])).not.toContain("Nothing can be repointed yet");
    expect(JSON.stringify(noLb.body["blocks"])).not.toContain(APPROVE);
    // An unquoted reason runs to the next option: the --to after it is read, and refused.
    await slash(
      s,
      "repoint test.example.com --reason origin names the deleted worker ALB --to k8s-nope-0000000000",
      REQUESTER,
      "unquoted",
    );
    const unquoted = await s.fake.waitForResponse((p) => p.id === "unquoted", 20_000);
    expect(JSON.stringify(unquoted.body["blocks"])).toContain(
      "No load balancer is named k8s-nope-0000000000",
    );
    expect(JSON.stringify(unquoted.body)).not.toContain("Unexpected argument");
    // A namespace that is not back yet: said plainly, to the asker only, not as a partial read.
    await slash(s, "repoint ns notbackyet", REQUESTER, "not-yet");
    const notYet = await s.fake.waitForResponse((p) => p.id === "not-yet", 10_000);
    expect(notYet.body["response_type"]).toBe("ephemeral");
    expect(String(notYet.body["text"])).toMatch(/Namespace notbackyet does not exist yet/);
    expect(String(notYet.body["text"])).not.toMatch(/Partial|could not read/);
    // A name nothing answers for: refused to the asker, never an intact path in the channel.
    await slash(s, "trace tset.example.com", REQUESTER, "typo");
    const typo = await s.fake.waitForResponse((p) => p.id === "typo", 10_000);
    expect(typo.body["response_type"]).toBe("ephemeral");
    expect(String(typo.body["text"])).toMatch(
      /No such name: no A\/AAAA\/CNAME record named tset\.example\.com in zone example\.com/,
    );
    // The nearest name in the zone is suggested, as a command to run.
    expect(String(typo.body["text"])).toContain("Did you mean `trace test.example.com`?");
    expect(JSON.stringify(typo.body)).not.toMatch(/intact/);
    await slash(s, 'repoint test.example.com --reason "short"', REQUESTER, "short");
    const short = await s.fake.waitForResponse((p) => p.id === "short", 10_000);
    expect(String(short.body["text"])).toMatch(/at least 10 characters/);
    expect(
      s.world.aws
        .calls()
        .filter((c) => c.action === "UpdateDistribution" || c.action === "ChangeResourceRecordSets"),
    ).toEqual([]);
  }, 60_000);
});
