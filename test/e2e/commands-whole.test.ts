/**
 * A command is never cut. Every card type (diagnosis and its details, watch, trace with and without a
 * repair plan, orphans, preflight, the approval request of a repair and of a finalizer removal, and the
 * request once it ended) is rendered for the terminal and for Slack from the same results — the
 * collectors' answers against the seed worlds of the simulators, with the namespace and hostnames
 * lengthened to the longest names Kubernetes and DNS allow — and each command the terminal prints
 * must appear whole in the Slack text, byte for byte once Slack's own escapes are read back: no
 * ellipsis inside a code span, code spans and blocks balanced, every block within Slack's limits.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultRegistry } from "../../commands/index.js";
import type { ApprovalRequest, RepointPathAction } from "../../src/requests/model.js";
import type { CommandResult } from "../../src/command-result.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { renderApprovalText, renderText } from "../../src/render/text.js";
import { createServices } from "../../src/services.js";
import { renderApprovalDetails, renderApprovalRequest } from "../../src/slack/blocks/approval.js";
import { renderDiagnosisDetails } from "../../src/slack/blocks/diagnosis.js";
import { renderSlackMessage, type SlackMessage } from "../../src/slack/blocks/index.js";
import { lintMessage } from "../sim/slack/block-kit-lint.js";
import { startWorld, type World } from "../sim/world.js";

/** 63 characters: the longest namespace name. */
const LONG_NS = `myapp-${"payments-settlement-".repeat(2)}eu-central-prod-blue01`.slice(0, 63);
/** A long DNS suffix: hostnames of 80+ characters. */
const LONG_ZONE = "payments.eu-central-1.internal-customer-facing.example.com";

/** The result as if every name in it were long: the same words, with the longest names. */
function lengthen<T>(result: T): T {
  return JSON.parse(
    JSON.stringify(result)
      .replace(/\bmyapp\b/g, LONG_NS)
      .replace(/\.example\.com\b/g, `.${LONG_ZONE}`),
  ) as T;
}

/** What a person sees in Slack and copies: every text of the message, Slack's escapes read back. */
function slackTexts(m: SlackMessage): string[] {
  const out: string[] = [m.text];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === "object") {
      const o = v as Record<string, unknown>;
      if (o["type"] === "mrkdwn" && typeof o["text"] === "string") out.push(o["text"]);
      Object.values(o).forEach(walk);
    }
  };
  walk(m.blocks);
  return out;
}
const unescape = (s: string): string => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

/** The commands of a terminal text: `$ …` lines, code spans that run something, a plan's numbered calls. */
function terminalCommands(text: string): string[] {
  const out = new Set<string>();
  for (const line of text.split("\n")) {
    const dollar = /^\s*\$ (.+)$/.exec(line);
    if (dollar?.[1] !== undefined) out.add(dollar[1]);
    const call = /^\s*(\d+\. (?:Route 53|CloudFront|elasticloadbalancing|ec2) .+)$/.exec(line);
    if (call?.[1] !== undefined) out.add(call[1]);
    const request = /^\s*request: (.+)$/.exec(line);
    if (request?.[1] !== undefined) out.add(request[1]);
  }
  for (const m of text.matchAll(/`([^`\n]+)`/g)) {
    const c = m[1] ?? "";
    if (/^(aws|kubectl|\/unstuck|npm) /.test(c)) out.add(c);
  }
  return [...out];
}

/** Every Slack-side property a copyable command needs, for one message. */
function expectWellFormed(m: SlackMessage): void {
  expect(lintMessage({ text: m.text, blocks: m.blocks }).filter((p) => p.severity === "error")).toEqual([]);
  for (const t of slackTexts(m)) {
    expect(t.length).toBeLessThanOrEqual(3000);
    const fences = (t.match(/```/g) ?? []).length;
    expect(fences % 2, `unbalanced code block in: ${t.slice(0, 200)}`).toBe(0);
    const rest = t.replace(/```[\s\S]*?```/g, "");
    expect((rest.match(/`/g) ?? []).length % 2, `unbalanced code span in: ${t.slice(0, 200)}`).toBe(0);
    for (const span of rest.matchAll(/`([^`]*)`/g)) expect(span[1]).not.toMatch(/…$/);
  }
}

/**
 * Each command of the terminal text is whole in Slack, or Slack does not name it at all (a card shows
 * less than the terminal; it never shows a part). `required` must be there.
 */
function expectWhole(
  terminal: string,
  slack: readonly SlackMessage[],
  required: readonly string[] = [],
): void {
  for (const m of slack) expectWellFormed(m);
  const seen = unescape(slack.flatMap(slackTexts).join("\n"));
  const commands = terminalCommands(terminal);
  for (const r of required) expect(commands).toContain(r);
  for (const c of commands) {
    if (seen.includes(c)) continue;
    expect(required).not.toContain(c);
    // Not shown: then not half-shown either.
    expect(seen, `a part of ${c}`).not.toContain(c.slice(0, Math.min(c.length - 1, 48)));
  }
  for (const r of required) expect(seen).toContain(r);
}

const registry = defaultRegistry("unstuck");

async function results(
  scenario: string,
  lines: readonly string[],
): Promise<{ world: World; got: Map<string, CommandResult> }> {
  const world = await startWorld({ scenario: `test/fixtures/scenarios/${scenario}` });
  const dir = await mkdtemp(join(tmpdir(), "commands-whole-"));
  await world.kube.writeKubeconfig(join(dir, "kubeconfig"));
  const config = loadConfig({ ...world.aws.env(), KUBECONFIG: join(dir, "kubeconfig") });
  const services = createServices(config, createLogger({ level: "silent", name: "commands-whole" }));
  const got = new Map<string, CommandResult>();
  for (const line of lines) {
    got.set(
      line,
      await registry.dispatch(
        line,
        { actor: { userId: "cli:test", teamId: "local", surface: "cli" }, services },
        "unstuck",
      ),
    );
  }
  return { world, got };
}

describe("a command is never cut: the terminal's commands appear whole in Slack", () => {
  let seed: { world: World; got: Map<string, CommandResult> };
  let recovered: { world: World; got: Map<string, CommandResult> };

  beforeAll(async () => {
    seed = await results("seed-incident.yaml", [
      "ns myapp",
      "watch ns myapp",
      "trace ns myapp",
      "orphans myapp",
      "preflight delete ns myapp",
    ]);
    recovered = await results("seed-recovered.yaml", ["trace ns myapp", "orphans"]);
  }, 60_000);

  afterAll(async () => {
    await seed.world.stop();
    await recovered.world.stop();
  });

  const result = (from: { got: Map<string, CommandResult> }, line: string): CommandResult => {
    const r = from.got.get(line);
    if (r === undefined || r.type === "error") throw new Error(`${line}: ${JSON.stringify(r)}`);
    return lengthen(r);
  };

  it("diagnosis: the root cause's commands, whole in the details; the card and its details within limits", () => {
    const r = result(seed, "ns myapp");
    if (r.type !== "diagnosis") throw new Error(r.type);
    const terminal = renderText(r);
    expectWhole(
      terminal,
      [
        renderSlackMessage(r, { command: "/unstuck" }),
        renderDiagnosisDetails(r.diagnosis, { command: "/unstuck" }),
      ],
      [
        "aws ec2 delete-network-interface --network-interface-id eni-0c9d8e7f6a5b4c3d2   # once available",
        "aws ec2 describe-network-interfaces --network-interface-ids eni-0c9d8e7f6a5b4c3d2 --query 'NetworkInterfaces[0].Status'",
      ],
    );
    // The force command of the recommendation names the long namespace whole.
    const details = unescape(slackTexts(renderDiagnosisDetails(r.diagnosis)).join("\n"));
    expect(details).toContain(
      `\`/unstuck finalize ingress/${LONG_NS}-worker-ingress -n ${LONG_NS} --reason "<why>"\``,
    );
  });

  it("watch, orphans and preflight: within limits, no command cut", () => {
    for (const line of ["watch ns myapp", "orphans myapp", "preflight delete ns myapp"]) {
      const r = result(seed, line);
      expectWhole(renderText(r), [renderSlackMessage(r)]);
    }
    const orphans = result(recovered, "orphans");
    expectWhole(renderText(orphans), [renderSlackMessage(orphans)]);
  });

  it("trace: the repair plan's calls and the request command, line for line", () => {
    const broken = result(seed, "trace ns myapp");
    expectWhole(renderText(broken), [renderSlackMessage(broken)]);
    const r = result(recovered, "trace ns myapp");
    if (r.type !== "trace" || r.repair?.action === undefined) throw new Error("no repair plan");
    const terminal = renderText(r);
    const calls = terminalCommands(terminal).filter((c) => /^\d+\. /.test(c));
    expect(calls.length).toBeGreaterThan(0);
    // The request command is the *Fix the path* button there: not shown, so never shown in part.
    expectWhole(terminal, [renderSlackMessage(r)], calls);
  });

  it("approval request and outcome of a repair: every call whole, evidence only for what the plan changes", () => {
    const r = result(recovered, "trace ns myapp");
    if (r.type !== "trace" || r.repair?.action === undefined) throw new Error("no repair plan");
    const action: RepointPathAction = r.repair.action;
    const request: ApprovalRequest = {
      id: "01JREQUESTREPOINTPATH0000000",
      action,
      requester: { userId: "U0ONCALL1", teamId: "T1" },
      channelId: "C0INCIDENT",
      reason: "worker -> new ALB after the re-creation; 502 since 08:52",
      evidence: [
        `test.${LONG_ZONE}: origin stale`,
        `4 other hostnames are still broken: see \`trace ns ${LONG_NS}\``,
      ],
      // As requests made before the wording was fixed carry it: a line ending in a colon.
      cleanupPlan: [
        "wait for it to take effect: CloudFront UpdateDistribution E2MYAPPTEST0001:",
        "the bot waits",
      ],
      createdAt: "2026-02-12T08:45:00Z",
      expiresAt: "2026-02-12T09:15:00Z",
      updatedAt: "2026-02-12T08:45:00Z",
      approvalsRequired: 1,
      state: "PENDING",
      votes: [],
      executionAttempts: 0,
    };
    const now = new Date("2026-02-12T08:50:00Z");
    const terminal = renderApprovalText(request, now);
    const calls = terminalCommands(terminal).filter((c) => /^\d+\. /.test(c));
    expect(calls.length).toBe(action.steps.length);
    // The card names no call; Details names each whole.
    const pending = renderApprovalRequest(request, now);
    expectWhole(terminal, [pending]);
    const details = renderApprovalDetails(request);
    expectWhole(terminal, [pending, details], calls);
    const all = unescape(slackTexts(details).join("\n"));
    // The form was not the finalize form: no claim about it; the reason as typed.
    expect(all).not.toContain("asked without the form");
    expect(all).toContain("worker -> new ALB");
    expect(all).toContain(`4 other hostnames are still broken: see \`trace ns ${LONG_NS}\``);
    // No clean-up or evidence line ends on a dangling colon.
    expect(all.replace(/```[\s\S]*?```/g, "")).not.toMatch(/^(?:\d+\.|•) .*:$/m);
    expect(all).toContain("1. wait for it to take effect: CloudFront UpdateDistribution E2MYAPPTEST0001\n");

    const done: ApprovalRequest = {
      ...request,
      state: "DONE",
      result: { outcome: "done", message: "Repointed: every call answered.", at: "2026-02-12T08:52:00Z" },
    };
    const outcome = renderApprovalRequest(done, now);
    expectWhole(renderApprovalText(done, now), [outcome, renderApprovalDetails(done)], calls);
    // Only Details is left to click.
    expect(JSON.stringify(outcome.blocks.filter((b) => b.type === "actions"))).not.toMatch(
      /approval:(approve|deny|cancel)/,
    );
  });
});
