/**
 * Audit out of Redis: every entry the audit stream receives — from a transition's own script or
 * appended by the bot — is also one info log line with the same event, in one stable shape (request,
 * requester, voter, approvers, the exact change, before/after, result), and no secret reaches the
 * log: not the approval key, not a MAC, not the cluster token. Real Redis, the Kubernetes simulator
 * through the real adapter, the executor.
 */
import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { executeApproved } from "../../../src/actions/execute.js";
import { ApprovalPolicy } from "../../../src/approvals/policy.js";
import { ApprovalStore } from "../../../src/approvals/store.js";
import { finalizerRemoval, type Vote } from "../../../src/requests/model.js";
import { ApprovalWorkflow } from "../../../src/approvals/workflow.js";
import type { AuditLogLine } from "../../../src/audit/entry.js";
import { AuditLog } from "../../../src/audit/log.js";
import { auditObserver } from "../../../src/audit/observe.js";
import { createKubeAdapter } from "../../../src/kube/client-node-adapter.js";
import { startKubeSim } from "../../sim/kube/index.js";
import { INGRESS } from "./helpers/fake-kube.js";
import { alice, bob, CHANNEL, testSigner } from "./helpers/harness.js";
import { TEST_BOT_KEY, TEST_WORKER_KEY } from "../../helpers/keys.js";
import { connect, deleteKeys, uniquePrefix } from "../../helpers/redis.js";

const SEED = "test/fixtures/scenarios/seed-incident.yaml";

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()?.();
});

interface Line {
  level: number;
  msg: string;
  audit: AuditLogLine;
}

/** A pino logger writing JSON lines into memory, as the bot's logger writes them to stdout. */
function capture(): { log: pino.Logger; lines: Line[]; raw: string[] } {
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw.push(
        ...chunk
          .toString("utf8")
          .split("\n")
          .filter((l) => l !== ""),
      );
      done();
    },
  });
  const lines: Line[] = [];
  const log = pino({ level: "info" }, sink);
  return {
    log,
    raw,
    get lines() {
      lines.length = 0;
      for (const l of raw) {
        const parsed = JSON.parse(l) as Partial<Line>;
        if (parsed.msg === "audit" && parsed.audit !== undefined) lines.push(parsed as Line);
      }
      return lines;
    },
  };
}

describe("every audit entry is also a structured log line", () => {
  it("a request's whole life: one info line per stream entry, same events, the change, no secret", async () => {
    const sim = await startKubeSim({ scenario: SEED, controllerIntervalMs: 50 });
    stops.push(() => sim.stop());
    const kube = createKubeAdapter(sim.kubeconfig());
    const redis = connect();
    const prefix = uniquePrefix("audit-lines");
    stops.push(async () => {
      await deleteKeys(redis, prefix);
      await redis.quit();
    });
    const out = capture();
    const now = () => new Date();
    const store = new ApprovalStore(redis, {
      prefix: `${prefix}:approvals`,
      signer: testSigner,
      auditKey: `${prefix}:audit`,
      log: out.log,
    });
    const audit = new AuditLog(redis, { key: `${prefix}:audit`, log: out.log });
    const policy = new ApprovalPolicy({ channels: [CHANNEL], approvers: [bob.userId], now });
    const workflow = new ApprovalWorkflow({
      store,
      policy,
      audit,
      kube,
      enqueueExecution: () => Promise.resolve(),
      now,
      approvalsRequired: 1,
      requestTtlSeconds: 1800,
      log: out.log,
    });

    const request = await workflow.requestFinalizerRemoval({
      type: INGRESS,
      namespace: "myapp",
      name: "myapp-worker-ingress",
      reason: "SG deletion blocked by DependencyViolation; recovery first",
      requester: alice,
      channelId: CHANNEL,
    });
    await workflow.attachMessage(request.id, { channel: CHANNEL, ts: "1700000000.000100" });
    await workflow.vote(request.id, bob, "approve", { channelId: CHANNEL });
    const outcome = await executeApproved(
      { store, signer: testSigner, policy, kube, audit, now, log: out.log },
      request.id,
      { token: randomUUID(), finalAttempt: true },
    );
    expect(outcome).toMatchObject({ kind: "finished", state: "DONE" });
    await auditObserver(
      audit,
      now,
    )({
      kind: "diagnosis",
      component: "ns",
      target: "namespace myapp",
      result: "blocked by 1 object",
    });

    // One line per stream entry, in the stream's order, with the stream's event and states.
    const stream = (await audit.latest(100)).reverse();
    const lines = out.lines;
    expect(lines.map((l) => [l.audit.event, l.audit.requestId ?? "", l.audit.before, l.audit.after])).toEqual(
      stream.map((e) => [e.event, e.requestId, e.before ?? null, e.after ?? null]),
    );
    expect(stream.map((e) => e.event)).toEqual([
      "request.created",
      "request.posted",
      "vote.approve",
      "execution.enqueued",
      "execution.claimed",
      "execution.done",
      "observed.diagnosis",
    ]);
    expect(lines.every((l) => l.level === 30)).toBe(true);
    const keys = Object.keys(lines[0]?.audit ?? {}).sort();
    expect(lines.every((l) => JSON.stringify(Object.keys(l.audit).sort()) === JSON.stringify(keys))).toBe(
      true,
    );

    const byEvent = (event: string) => lines.find((l) => l.audit.event === event)?.audit;
    const patch = finalizerRemoval(request.action).patch;
    for (const event of ["request.created", "vote.approve", "execution.claimed", "execution.done"]) {
      const line = byEvent(event);
      expect(line?.requestId, event).toBe(request.id);
      expect(line?.requester, event).toEqual({ userId: alice.userId, teamId: alice.teamId });
      expect(line?.change, event).toMatchObject({
        type: "remove-finalizer",
        target: "Ingress myapp/myapp-worker-ingress",
        object: { kind: "Ingress", namespace: "myapp", name: "myapp-worker-ingress" },
        patch,
      });
    }
    expect(byEvent("vote.approve")).toMatchObject({
      voter: { userId: bob.userId, teamId: bob.teamId },
      approvers: [bob.userId],
      before: "PENDING",
      after: "APPROVED",
      result: "1/1 approvals",
    });
    expect(byEvent("execution.done")).toMatchObject({
      actor: { kind: "system", component: "executor" },
      voter: null,
      approvers: [bob.userId],
      before: "EXECUTING",
      after: "DONE",
      result: expect.stringContaining("Removed [ingress.k8s.aws/resources]") as unknown,
    });
    expect(byEvent("observed.diagnosis")).toMatchObject({ requestId: null, change: null, approvers: [] });
    // The stream stays short: the change is in the log line, not in Redis.
    expect(stream.some((e) => "change" in e)).toBe(false);

    // No secret: the signing keys, the record's signatures, the cluster's bearer token.
    const key = `${prefix}:approvals:req:${request.id}`;
    const [docMac, stateMac] = await redis.hmget(key, "docMac", "stateMac");
    const votes = (await redis.lrange(`${key}:votes`, 0, -1)).map((v) => JSON.parse(v) as Vote);
    const token = /token: (\S+)/.exec(sim.kubeconfig())?.[1];
    const secrets = [
      TEST_BOT_KEY.privateKey,
      TEST_WORKER_KEY.privateKey,
      docMac,
      stateMac,
      ...votes.map((v) => v.mac),
      token,
    ];
    expect(secrets.every((s) => typeof s === "string" && s.length > 10)).toBe(true);
    const text = out.raw.join("\n");
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/"mac"|Mac"/);
  });
});
