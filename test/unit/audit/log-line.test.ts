/** The audit entry's log line: one stable shape for a SIEM, only the fields it names, no secret. */
import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { auditLogLine, streamFields, type AuditEntry } from "../../../src/audit/entry.js";
import { logAuditEntry } from "../../../src/audit/log.js";

const KEYS = [
  "event",
  "at",
  "requestId",
  "actor",
  "requester",
  "voter",
  "approvers",
  "action",
  "target",
  "change",
  "before",
  "after",
  "result",
  "channel",
  "threadTs",
];

describe("auditLogLine", () => {
  it("has every key of the shape whatever the entry holds, null or [] when not known", () => {
    const observation: AuditEntry = {
      at: "2026-02-12T09:00:00.000Z",
      actor: { kind: "system", component: "ns" },
      event: "observed.diagnosis",
      requestId: "",
      action: "observe",
      target: "namespace myapp",
      result: "blocked",
    };
    const line = auditLogLine(observation);
    expect(Object.keys(line).sort()).toEqual([...KEYS].sort());
    expect(line).toMatchObject({
      requestId: null,
      requester: null,
      voter: null,
      approvers: [],
      change: null,
      before: null,
      actor: { kind: "system", userId: null, teamId: null, component: "ns" },
    });
  });

  it("names the voter of a vote, and copies nothing an entry carries beyond the shape", () => {
    const vote = {
      at: "2026-02-12T09:05:00.000Z",
      actor: { kind: "user", userId: "UBOB", teamId: "T1", token: "xoxb-secret" },
      event: "vote.approve",
      requestId: "abcdefghijklmnopqrstuvwxyz",
      action: "remove-finalizer",
      target: "Ingress myapp/x",
      requester: { userId: "UALICE", teamId: "T1" },
      approvers: ["UBOB"],
      before: "PENDING",
      after: "APPROVED",
      mac: "k.secret-mac",
      stateMac: "k.secret-state-mac",
    } as unknown as AuditEntry;
    const line = auditLogLine(vote);
    expect(line.voter).toEqual({ userId: "UBOB", teamId: "T1" });
    expect(line.requester).toEqual({ userId: "UALICE", teamId: "T1" });
    expect(line.approvers).toEqual(["UBOB"]);
    const text = JSON.stringify(line);
    expect(text).not.toContain("secret");
  });

  it("is logged at info with the message `audit`", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(
          ...chunk
            .toString("utf8")
            .split("\n")
            .filter((l) => l !== ""),
        );
        done();
      },
    });
    logAuditEntry(pino({ level: "info" }, sink), {
      at: "2026-02-12T09:05:00.000Z",
      actor: { kind: "system", component: "sweep" },
      event: "execution.requeued",
      requestId: "abcdefghijklmnopqrstuvwxyz",
      action: "remove-finalizer",
      target: "Ingress myapp/x",
    });
    expect(lines).toHaveLength(1);
    const parsed = JSON.parse(lines[0] ?? "{}") as { level: number; msg: string; audit: { event: string } };
    expect([parsed.level, parsed.msg, parsed.audit.event]).toEqual([30, "audit", "execution.requeued"]);
  });
});

describe("streamFields", () => {
  it("keeps the change out of the stream, and an empty approver list", () => {
    const stored = streamFields({
      at: "t",
      actor: { kind: "system", component: "x" },
      event: "e",
      requestId: "r",
      action: "a",
      target: "t",
      approvers: [],
      change: { type: "remove-finalizer", target: "t", patch: [] },
    });
    expect(stored).not.toHaveProperty("change");
    expect(stored).not.toHaveProperty("approvers");
  });
});
