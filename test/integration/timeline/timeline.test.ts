/**
 * `timeline` against a real Redis audit stream: a request made, approved and executed through the
 * approval engine (its scripts write the entries), then read back by the command module and by the
 * terminal (`runCli`), as Markdown and as JSON.
 */
import { afterEach, describe, expect, it } from "vitest";
import { timelineCommand } from "../../../commands/timeline.js";
import type { CommandContext, CommandResult } from "../../../commands/types.js";
import { REDIS_URL } from "../../helpers/redis.js";
import { INGRESS } from "../approvals/helpers/fake-kube.js";
import {
  alice,
  bob,
  CHANNEL,
  createHarness,
  seedIngress,
  TestClock,
  type Harness,
} from "../approvals/helpers/harness.js";
import { runCli } from "../../../src/cli.js";
import { silentLogger } from "../../../src/log.js";
import { renderSlackMessage } from "../../../src/slack/blocks/index.js";
import { linesIo } from "../../helpers/cli-io.js";

const START = new Date("2026-02-12T08:50:10Z");
const HOSTILE_REASON = "SG blocked <!channel> see <https://evil.example|runbook> `rm -rf`\n# not a heading";

const harnesses: Harness[] = [];
afterEach(async () => {
  while (harnesses.length > 0) await harnesses.pop()?.close();
});

/** The seed incident's forced removal, through the real engine: request, approval, execution. */
async function incident(): Promise<{ h: Harness; requestId: string }> {
  const clock = new TestClock(new Date(START));
  const h = createHarness({ clock, approvalsRequired: 1 });
  harnesses.push(h);
  seedIngress(h);
  const request = await h.workflow.requestFinalizerRemoval({
    type: INGRESS,
    namespace: "myapp",
    name: "myapp-worker-ingress",
    reason: HOSTILE_REASON,
    evidence: [],
    cleanupPlan: ["check ALB/TG/SG/ENI orphans"],
    requester: alice,
    channelId: CHANNEL,
  });
  clock.advance(52_000);
  await h.workflow.vote(request.id, bob, "approve");
  clock.advance(2_000);
  const executor = { kind: "system", component: "executor" } as const;
  await h.audit.append({
    at: clock.now().toISOString(),
    actor: executor,
    event: "execution.done",
    requestId: request.id,
    action: "remove-finalizer",
    target: "Ingress myapp/myapp-worker-ingress",
    before: "EXECUTING",
    after: "DONE",
    result: "removed ingress.k8s.aws/resources",
  });
  // Another request, hours earlier, on another namespace: outside `--request`, inside a wide window.
  await h.audit.append({
    at: "2026-02-12T03:00:00.000Z",
    actor: { kind: "user", userId: "UCAROL", teamId: "T0001" },
    event: "request.created",
    requestId: "cccccccccccccccccccccccccc",
    action: "remove-finalizer",
    target: "Ingress other/api",
    after: "PENDING",
    result: "unrelated",
  });
  return { h, requestId: request.id };
}

function context(h: Harness): CommandContext {
  return {
    actor: { userId: "UALICE", teamId: "T0001", surface: "slack", channelId: CHANNEL },
    services: {
      kube: h.fake,
      now: () => new Date("2026-02-12T09:00:00Z"),
      log: silentLogger(),
      approvals: { workflow: h.workflow, audit: h.audit },
    },
  };
}

async function cli(h: Harness, args: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runCli(
    args,
    { REDIS_URL, UNSTUCK_REDIS_PREFIX: h.prefix, HOME: "/nonexistent-home" },
    linesIo(lines),
  );
  return { code, out: lines.join("\n") };
}

function markdownOf(result: CommandResult): string {
  if (result.type !== "timeline") throw new Error(`expected a timeline, got ${JSON.stringify(result)}`);
  return result.markdown;
}

describe("timeline over the real audit stream", () => {
  it("drafts a request's lifecycle from the entries the engine wrote", async () => {
    const { h, requestId } = await incident();
    const result = await timelineCommand.run(
      timelineCommand.build({ positionals: [], flags: { request: requestId } }),
      context(h),
    );
    expect(result).toMatchObject({ type: "timeline", entries: 4 });
    const md = markdownOf(result);
    expect(md.split("\n")[0]).toBe("# Incident: namespace myapp — 2026-02-12");
    const section = md.split("## Timeline (UTC)")[1]?.split("## Recovery")[0] ?? "";
    const lines = section.split("\n").filter((l) => /^- \d\d:\d\d:\d\d /.test(l));
    expect(lines.map((l) => l.slice(2, 10))).toEqual(["08:50:10", "08:51:02", "08:51:02", "08:51:04"]);
    expect(lines[0]).toContain(
      "<@UALICE> — requested the finalizer removal on `Ingress myapp/myapp-worker-ingress`",
    );
    expect(lines[1]).toContain("<@UBOB> — approved");
    expect(lines[2]).toContain("unstuck (workflow) — queued the execution");
    expect(lines[3]).toContain("**done**");
    expect(md).toContain("<@UBOB> approved it.");
    // The reason is text: no Slack control sequence, no line of its own.
    expect(md).toContain(
      "`SG blocked ‹!channel› see ‹https://evil.example|runbook› ˋrm -rfˋ # not a heading`",
    );
    expect(md).not.toMatch(/<!channel>|<https:|^# not a heading/m);
    expect(md).not.toContain("Ingress other/api");

    const slack = renderSlackMessage(result);
    expect(slack.text).toBe("Post-mortem draft: 4 audit entries");
    expect(JSON.stringify(slack.blocks)).not.toMatch(/<!channel>|<@U/);
  });

  it("a window takes every request in it; an empty one says so", async () => {
    const { h } = await incident();
    const all = markdownOf(
      await timelineCommand.run(
        timelineCommand.build({ positionals: [], flags: { since: "2026-02-12T00:00:00Z" } }),
        context(h),
      ),
    );
    expect(all).toContain("Ingress other/api");
    expect(all).toContain("# Incident: namespace other, myapp — 2026-02-12");
    const none = await timelineCommand.run(
      timelineCommand.build({ positionals: [], flags: { since: "5m" } }),
      context(h),
    );
    expect(none).toMatchObject({ type: "timeline", entries: 0 });
    expect(markdownOf(none)).toContain("_No audit entries in this window");
  });

  it("prints the draft in the terminal, and {markdown, entries} with --json", async () => {
    const { h, requestId } = await incident();
    const text = await cli(h, ["timeline", "--request", requestId]);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^# Incident: namespace myapp — 2026-02-12\n/);
    expect(text.out).toContain("## Timeline (UTC)");
    expect(text.out).toContain("## Lessons\n\n_to be written:");

    const json = await cli(h, ["timeline", "--since", "2026-02-12T08:00:00Z", "--json"]);
    expect(json.code).toBe(0);
    const body = JSON.parse(json.out) as { markdown: string; entries: number };
    expect(body.entries).toBe(4);
    expect(body.markdown).toContain("08:51:04 unstuck (executor)");
  });

  it("says so when the request has no entries", async () => {
    const { h } = await incident();
    const out = await cli(h, ["timeline", "--request", "dddddddddddddddddddddddddd"]);
    expect(out.code).toBe(1);
    expect(out.out).toMatch(/no entries for request dddddddddddddddddddddddddd/);
  });
});
