/**
 * Property: whatever a user or a cluster writes, nothing the bot posts to Slack carries live markup
 * (`<!channel>`, `<!here>`, `<!subteam^…>`, `<@U…>`, `<#C…>`, `<http…|…>`) unless the bot wrote it
 * itself, and every text stays within its bound. Inputs come from a seeded generator (mulberry32) that
 * mixes Slack control sequences, entities, mrkdwn characters, unicode, control characters and huge
 * strings; a failing case names its seed so it can be replayed.
 *
 * The bot's own markup is allow-listed exactly: mentions of the request's requester and voters (user
 * ids from signed payloads), `<#C…>` for the channel a request was posted in, and `<!date^…>` stamps.
 */
import type { webApi } from "@slack/bolt";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { defaultRegistry } from "../../commands/index.js";
import type { CommandResult } from "../../commands/types.js";
import type { AuditEntry, StoredAuditEntry } from "../../src/audit/entry.js";
import { RequestState, type ApprovalRequest, type Vote } from "../../src/requests/model.js";
import { buildFinalizerPatch } from "../../src/approvals/workflow.js";
import { analyzeNamespace } from "../../src/diagnosis/analyze.js";
import type { AwsFindings } from "../../src/diagnosis/aws.js";
import type { Blocker, Evidence, NamespaceDiagnosis } from "../../src/diagnosis/types.js";
import { ErrorCode } from "../../src/errors.js";
import type { KubePort } from "../../src/kube/port.js";
import {
  createSlackApprovalNotifier,
  createSlackAuditMirror,
  createSlackThreadReporter,
} from "../../src/slack/notifier.js";
import { renderAuditLine } from "../../src/slack/blocks/approval.js";
import { renderSlackMessage, type SlackMessage } from "../../src/slack/blocks/index.js";
import { renderDiagnosisDetails } from "../../src/slack/blocks/diagnosis.js";
import { SlackLimit } from "../../src/slack/blocks/text.js";
import { tracePaths } from "../../src/edge/path.js";
import type { TraceResult } from "../../src/edge/trace-result.js";
import type { OrphanReport } from "../../src/edge/orphans.js";
import type { PreflightReport } from "../../src/preflight/analyze.js";
import {
  allowedFor,
  assertSafeMessage,
  assertSafeText,
  HOSTILE_TOKENS,
  hostile,
  mulberry32,
  USER_ID,
  type Allowed,
} from "./hostile.js";
import { ingressType, lbcDeployment, obj, terminatingNs } from "../unit/diagnosis/fixtures.js";

function userId(r: () => number): string {
  // Mostly the ids Slack issues; sometimes junk, which must never be rendered as a mention.
  return r() < 0.8
    ? `U0${Math.floor(r() * 1e6)
        .toString(36)
        .toUpperCase()}`
    : hostile(r, 3);
}

function evidence(r: () => number): Evidence {
  return {
    source: r() < 0.5 ? "log" : "event",
    from: hostile(r),
    text: hostile(r),
    ...(r() < 0.5 ? { time: hostile(r, 2) } : {}),
    error: r() < 0.5,
  };
}

function awsFindings(r: () => number): AwsFindings {
  const remedy = {
    kind: "detach-interface",
    target: hostile(r, 2),
    what: hostile(r),
    action: hostile(r),
    commands: [hostile(r)],
    actionable: r() < 0.5,
  };
  return {
    cluster: hostile(r, 3),
    stack: hostile(r, 3),
    resources: [
      { type: "SecurityGroup", id: hostile(r, 2), name: hostile(r, 3), exists: true },
      { type: "LoadBalancer", id: hostile(r, 2), exists: false },
    ],
    blockedGroups: [
      {
        groupId: hostile(r, 2),
        groupName: hostile(r, 2),
        role: "managed",
        networkInterfaces: [],
        referencingRules: [],
        deleteFailures: [],
        remedies: [remedy],
      },
    ],
    stays: [{ type: "LoadBalancer", id: hostile(r, 2), usedBy: [hostile(r, 2)], why: hostile(r) }],
    forceAdvised: r() < 0.5,
    problems: [hostile(r)],
    summary: hostile(r),
  } as unknown as AwsFindings;
}

/** A diagnosis as a cluster full of hostile text would make it, through the real analysis. */
function diagnosis(r: () => number): NamespaceDiagnosis {
  const now = new Date("2026-02-12T09:10:00Z");
  const objects = Array.from({ length: 1 + Math.floor(r() * 3) }, (_, i) =>
    obj(ingressType, `ing-${String(i)}`, {
      finalizers: [hostile(r, 3), "ingress.k8s.aws/resources"],
      deletionTimestamp: now.toISOString(),
      ...(r() < 0.5 ? { loadBalancerHostnames: [hostile(r, 3)] } : {}),
    }),
  );
  const analyzed = analyzeNamespace({
    name: "myapp",
    namespace: terminatingNs("myapp", new Date(now.getTime() - 3_600_000), {
      conditions: [
        {
          type: hostile(r, 3),
          status: "True",
          reason: hostile(r, 3),
          message: hostile(r),
        },
      ],
      specFinalizers: [hostile(r, 2)],
    }),
    listed: [{ type: ingressType, objects }],
    deployments: [lbcDeployment(hostile(r, 2))],
    discoveryFailures: [
      {
        groupVersion: hostile(r, 2),
        message: hostile(r),
        apiService: {
          name: hostile(r, 2),
          service: hostile(r, 2),
          available: hostile(r, 1),
          reason: hostile(r, 2),
          message: hostile(r),
        },
      },
    ],
    evidence: new Map(objects.map((o) => [`ingresses/${o.name}`, [evidence(r), evidence(r)]])),
    aws: new Map(objects.map((o) => [`ingresses/${o.name}`, awsFindings(r)])),
    warnings: [hostile(r)],
    now,
    blockedAfterSeconds: 300,
  });
  // Fields the analysis fills from tables are replaced too, as a hostile cluster could make them.
  const blockers: Blocker[] = analyzed.blockers.map((b) => ({
    ...b,
    kind: hostile(r, 2),
    apiVersion: hostile(r, 2),
    namespace: hostile(r, 2),
    name: hostile(r, 3),
    owners: b.owners.map((o) => ({
      ...o,
      controller: hostile(r, 3),
      cleanup: hostile(r),
      candidates: [
        {
          namespace: hostile(r, 2),
          name: hostile(r, 2),
          kind: "Deployment",
          replicas: 1,
          readyReplicas: 0,
          healthy: false,
          images: [],
        },
      ],
    })),
  }));
  return {
    ...analyzed,
    namespace: hostile(r, 3),
    remedies: [...analyzed.remedies, { kind: "fix-argo-ownership", redFlag: hostile(r) }],
    remaining: [{ resource: hostile(r, 2), count: 3 }],
    blockers,
  };
}

const STATES = Object.values(RequestState);

function approvalRequest(r: () => number): ApprovalRequest {
  const remove = [hostile(r, 3)];
  const precondition = { resourceVersion: hostile(r, 2), finalizers: [...remove, hostile(r, 2)] };
  const votes: Vote[] = Array.from({ length: Math.floor(r() * 3) }, () => ({
    voter: { userId: userId(r), teamId: "T1" },
    decision: r() < 0.7 ? "approve" : "deny",
    at: r() < 0.8 ? "2026-02-12T08:47:00Z" : hostile(r, 2),
  }));
  const state = STATES[Math.floor(r() * STATES.length)] ?? "PENDING";
  const channel = r() < 0.8 ? "C0INCIDENT" : hostile(r, 2);
  return {
    id: r() < 0.8 ? "abcdefghijklmnopqrstuvwxyz" : hostile(r, 2),
    action: {
      type: "remove-finalizer",
      target: {
        resource: "ingresses",
        group: hostile(r, 2),
        version: hostile(r, 1),
        apiVersion: hostile(r, 2),
        kind: hostile(r, 2),
        namespace: hostile(r, 2),
        name: hostile(r, 3),
      },
      precondition,
      remove,
      patch: buildFinalizerPatch(precondition, remove),
    },
    requester: { userId: userId(r), teamId: "T1" },
    channelId: channel,
    message: { channel, ts: "1.000001" },
    reason: hostile(r),
    evidence: [hostile(r), hostile(r)],
    cleanupPlan: [hostile(r)],
    createdAt: r() < 0.8 ? "2026-02-12T08:45:00Z" : hostile(r, 2),
    expiresAt: r() < 0.8 ? "2026-02-12T09:15:00Z" : hostile(r, 2),
    updatedAt: "2026-02-12T08:46:00Z",
    approvalsRequired: 1,
    state,
    votes,
    executionAttempts: 1,
    ...(r() < 0.5
      ? {
          result: {
            outcome: "failed" as const,
            message: hostile(r),
            at: "2026-02-12T08:48:00Z",
            resourceVersionAfter: hostile(r, 2),
            finalizersAfter: [hostile(r, 2)],
          },
        }
      : {}),
  };
}

function requestAllowed(req: ApprovalRequest): Allowed {
  return allowedFor(
    [req.requester.userId, ...req.votes.map((v) => v.voter.userId)],
    req.message ? [req.message.channel] : [],
  );
}

function auditEntry(r: () => number, i: number): StoredAuditEntry {
  const entry: AuditEntry = {
    at: r() < 0.8 ? "2026-02-12T08:45:00Z" : hostile(r, 2),
    actor:
      r() < 0.6
        ? { kind: "user", userId: userId(r), teamId: "T1" }
        : { kind: "system", component: hostile(r, 2) },
    event: hostile(r, 2),
    requestId: hostile(r, 2),
    action: "remove-finalizer",
    target: hostile(r, 3),
    ...(r() < 0.5 ? { before: hostile(r, 1), after: hostile(r, 1) } : {}),
    ...(r() < 0.8 ? { result: hostile(r) } : {}),
  };
  return { ...entry, streamId: `${String(i)}-0` };
}

function auditAllowed(entries: readonly AuditEntry[]): Allowed {
  return allowedFor(entries.flatMap((e) => (e.actor.kind === "user" ? [e.actor.userId] : [])));
}

/** A WebClient stand-in that records what would be posted (the wire itself is covered by the fuzz test). */
function recordingClient(): { client: webApi.WebClient; posted: Record<string, unknown>[] } {
  const posted: Record<string, unknown>[] = [];
  const record = (args: Record<string, unknown>) => {
    posted.push(args);
    return Promise.resolve({ ok: true, ts: "2.000001", channel: String(args["channel"]) });
  };
  const client = { chat: { postMessage: record, update: record, postEphemeral: record } };
  return { client: client as unknown as webApi.WebClient, posted };
}

const CASES = 400;

describe("nothing a user or a cluster writes reaches Slack as live markup", () => {
  it("diagnosis and watch cards (blocker names, finalizers, log lines, AWS text)", () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const r = mulberry32(seed);
      const d = diagnosis(r);
      const none = allowedFor([]);
      assertSafeMessage(
        renderSlackMessage({ type: "diagnosis", diagnosis: d }),
        none,
        `seed ${String(seed)} diagnosis`,
      );
      // The Details reply carries every blocker, evidence line and step.
      assertSafeMessage(renderDiagnosisDetails(d), none, `seed ${String(seed)} diagnosis details`);
      assertSafeMessage(
        renderSlackMessage({ type: "watch", namespace: hostile(r, 3), diagnosis: d }),
        none,
        `seed ${String(seed)} watch`,
      );
    }
  });

  it("approval requests in every state, with reasons, outcomes and votes; lists of them", () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const r = mulberry32(seed);
      const req = approvalRequest(r);
      assertSafeMessage(
        renderSlackMessage({ type: "approval-request", request: req }),
        requestAllowed(req),
        `seed ${String(seed)} request ${req.state}`,
      );
      const reqs = [req, approvalRequest(r), approvalRequest(r)];
      const allowed: Allowed = {
        users: new Set(reqs.flatMap((q) => [...requestAllowed(q).users])),
        channels: new Set(reqs.flatMap((q) => [...requestAllowed(q).channels])),
      };
      assertSafeMessage(
        renderSlackMessage({ type: "approvals", requests: reqs, now: "2026-02-12T08:50:00Z" }),
        allowed,
        `seed ${String(seed)} approvals`,
      );
    }
  });

  it("audit entries: the /unstuck audit card and the audit-channel mirror", async () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const r = mulberry32(seed);
      const entries = Array.from({ length: 1 + Math.floor(r() * 5) }, (_, i) => auditEntry(r, i));
      const allowed = auditAllowed(entries);
      assertSafeMessage(
        renderSlackMessage({ type: "audit", entries }),
        allowed,
        `seed ${String(seed)} audit`,
      );
      const { client, posted } = recordingClient();
      const mirror = createSlackAuditMirror(client, "CAUDIT");
      for (const e of entries) {
        await mirror.postEntry?.(e);
        await mirror.postToChannel(renderAuditLine(e));
      }
      expect(posted).toHaveLength(entries.length * 2);
      for (const p of posted) {
        assertSafeText(String(p["text"]), SlackLimit.Section, allowed, `seed ${String(seed)} mirror`);
        expect(p["unfurl_links"]).toBe(false);
      }
    }
  });

  it("error replies and help, as the command registry produces them from hostile command text", async () => {
    const registry = defaultRegistry("/unstuck");
    const kube = new Proxy({} as KubePort, {
      get: () => () => Promise.reject(new Error(`cluster says ${HOSTILE_TOKENS.join(" ")}`)),
    });
    const services = { kube, now: () => new Date("2026-02-12T08:50:00Z"), log: pino({ level: "silent" }) };
    const verbs = [
      "",
      "ns ",
      "diagnose namespace ",
      "finalize ",
      "watch ns ",
      "audit ",
      "approvals --limit ",
      "help ",
    ];
    for (let seed = 1; seed <= CASES; seed++) {
      const r = mulberry32(seed);
      const verb = verbs[Math.floor(r() * verbs.length)] ?? "";
      const text =
        verb === "finalize "
          ? `finalize ${hostile(r, 2)} -n ${hostile(r, 2)} --reason "${hostile(r)}"`
          : `${verb}${hostile(r)}`;
      const result: CommandResult = await registry.dispatch(
        text,
        { actor: { userId: "U0ALICE", teamId: "T1", channelId: "C0INCIDENT", surface: "slack" }, services },
        "/unstuck",
      );
      assertSafeMessage(
        renderSlackMessage(result),
        allowedFor([]),
        `seed ${String(seed)} ${result.type} for ${JSON.stringify(text.slice(0, 60))}`,
      );
    }
    // Every coded error, with a message quoting hostile input, renders safely with help attached.
    const help = registry.help();
    for (const code of Object.values(ErrorCode)) {
      const r = mulberry32(code.length);
      assertSafeMessage(
        renderSlackMessage({ type: "error", error: { code, message: hostile(r), details: {} }, help }),
        allowedFor([]),
        `error ${code}`,
      );
    }
    assertSafeMessage(renderSlackMessage({ type: "help", help }), allowedFor([]), "help");
  });

  it("a 3.5 MB name comes back bounded in the error reply's text and blocks", async () => {
    const registry = defaultRegistry("/unstuck");
    const huge = `<!channel>${"a".repeat(3_500_000)}`;
    const kube = new Proxy({} as KubePort, { get: () => () => Promise.resolve(null) });
    const result = await registry.dispatch(
      `ns ${huge}`,
      {
        actor: { userId: "U0ALICE", teamId: "T1", surface: "slack" },
        services: { kube, now: () => new Date(), log: pino({ level: "silent" }) },
      },
      "/unstuck",
    );
    const m = renderSlackMessage(result);
    expect(result.type).toBe("error");
    assertSafeMessage(m, allowedFor([]), "huge name");
    expect(JSON.stringify(m).length).toBeLessThan(20_000);
  });

  it("thread replies (votes, outcomes) keep only a participant's leading mention; wait status lines keep none", async () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const r = mulberry32(seed);
      const req = approvalRequest(r);
      const { client, posted } = recordingClient();
      const notifier = createSlackApprovalNotifier({
        client,
        now: () => new Date("2026-02-12T08:50:00Z"),
        log: pino({ level: "silent" }),
      });
      const voter = req.votes[0]?.voter.userId ?? req.requester.userId;
      // The shapes the workflow and the executor write: a leading mention, or an outcome sentence.
      await notifier.threadReply(req, {
        kind: "vote",
        voter,
        decision: "approve",
        tally: { approvals: 1, required: 1 },
      });
      await notifier.threadReply(req, { kind: "cancelled", by: voter });
      await notifier.threadReply(req, { kind: "outcome", state: "FAILED", message: hostile(r) });
      await notifier.threadReply(req, {
        kind: "outcome",
        state: "TAMPERED",
        message: `<@U0STRANGER> ${hostile(r)}`,
      });
      await notifier.requestUpdated(req);
      const reporter = createSlackThreadReporter(client);
      await reporter.post("C0INCIDENT", "1.000001", `⏳ Namespace myapp is still Terminating, ${hostile(r)}`);
      await reporter.update("C0INCIDENT", "2.000001", hostile(r));
      const allowed = requestAllowed(req);
      for (const p of posted) {
        const label = `seed ${String(seed)} thread`;
        assertSafeText(String(p["text"]), SlackLimit.Fallback, allowed, label);
        if (p["blocks"] !== undefined) {
          assertSafeMessage(
            { text: String(p["text"]), blocks: p["blocks"] as SlackMessage["blocks"] },
            allowed,
            label,
          );
        }
      }
      if (USER_ID.test(voter)) expect(String(posted[0]?.["text"])).toContain(`<@${voter}>`);
    }
  });
  it("traffic-path cards (record names, origins, load balancers, owners, warnings from the world)", () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const r = mulberry32(seed);
      const host = `${hostile(r, 2)}.example.com`;
      const lbDns = `${hostile(r, 2)}-1.ap-northeast-2.elb.amazonaws.com`;
      const paths = tracePaths({
        hostnames: [host],
        zones: [{ id: "Z1", name: "example.com", private: r() < 0.5 }],
        records: [
          {
            zoneId: "Z1",
            name: host.toLowerCase(),
            type: "A",
            values: [],
            alias: {
              hostedZoneId: "Z2",
              dnsName: r() < 0.5 ? "d1.cloudfront.net" : lbDns,
              evaluateTargetHealth: false,
            },
            ...(r() < 0.5 ? { setIdentifier: hostile(r, 2), weight: 10 } : {}),
          },
        ],
        distributions: [
          {
            id: hostile(r, 1),
            domainName: "d1.cloudfront.net",
            status: hostile(r, 1),
            enabled: true,
            aliases: [hostile(r, 2)],
            origins: [{ id: hostile(r, 2), domainName: r() < 0.5 ? lbDns : hostile(r, 3) }],
            originGroups: [],
            defaultTarget: hostile(r, 1),
            behaviors: [{ pathPattern: hostile(r, 2), target: hostile(r, 1) }],
          },
        ],
        loadBalancers:
          r() < 0.5
            ? [
                {
                  arn: hostile(r, 1),
                  name: hostile(r, 2),
                  dnsName: lbDns,
                  state: hostile(r, 1),
                  type: "application",
                  securityGroups: [],
                  tags: { "ingress.k8s.aws/stack": hostile(r, 2) },
                },
              ]
            : [],
        owners: [],
      });
      const trace: TraceResult = {
        subject: r() < 0.5 ? { hostnames: [host] } : { namespace: hostile(r, 2) },
        paths,
        warnings: [hostile(r, 4)],
        notes: [hostile(r, 4)],
        ownersGone: false,
        checkedAt: new Date(0).toISOString(),
      };
      assertSafeMessage(
        renderSlackMessage({ type: "trace", trace }),
        allowedFor([]),
        `seed ${String(seed)} trace`,
      );
    }
  });
  it("orphan cards (names, descriptions and reasons from the account)", () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const r = mulberry32(seed);
      const report: OrphanReport = {
        cluster: hostile(r, 2),
        ...(r() < 0.5 ? { namespace: hostile(r, 2) } : {}),
        orphans: [
          {
            type: "NetworkInterface",
            id: hostile(r, 1),
            name: hostile(r, 3),
            why: hostile(r, 5),
            ...(r() < 0.5 ? { cost: hostile(r, 2) } : {}),
            remove: [hostile(r, 3)],
            removableNow: r() < 0.5,
          },
        ],
        inProgress: [{ type: "SecurityGroup", id: hostile(r, 2), why: hostile(r, 3) }],
        liveCount: 3,
        warnings: [hostile(r, 4)],
      };
      assertSafeMessage(
        renderSlackMessage({ type: "orphans", report }),
        allowedFor([]),
        `seed ${String(seed)} orphans`,
      );
    }
  });
  it("preflight cards (reasons, names and hostnames from the cluster and the account)", () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const r = mulberry32(seed);
      const report: PreflightReport = {
        namespace: hostile(r, 2),
        verdict: r() < 0.5 ? "risky" : "blocked",
        reasons: [hostile(r, 5), hostile(r, 3)],
        finalizerObjects: [],
        awsDeleted: [{ type: "LoadBalancer", id: hostile(r, 1), name: hostile(r, 2) }],
        hostnames: [{ hostname: hostile(r, 2), effect: hostile(r, 4) }],
        warnings: [hostile(r, 3)],
      };
      assertSafeMessage(
        renderSlackMessage({ type: "preflight", report }),
        allowedFor([]),
        `seed ${String(seed)} preflight`,
      );
    }
  });
});
