/**
 * A repoint plan's calls are made once (`repointCalls`) and rendered per surface: the terminal's
 * numbered lines and the approval card's code block show the same calls, the card escaped.
 */
import { describe, expect, it } from "vitest";
import type { RepointPathAction } from "../../../src/requests/model.js";
import { repointCalls } from "../../../src/edge/repoint-calls.js";
import { repointPlanLines } from "../../../src/render/repoint-plan.js";
import { renderApprovalDetails, renderApprovalRequest } from "../../../src/slack/blocks/approval.js";
import type { ApprovalRequest } from "../../../src/requests/model.js";

const action: RepointPathAction = {
  type: "repoint-path",
  hostnames: ["test.example.com"],
  steps: [
    {
      kind: "route53",
      zoneId: "Z123",
      zoneName: "example.com",
      changes: [
        {
          action: "DELETE",
          record: {
            zoneId: "Z123",
            name: "test.example.com",
            type: "A",
            values: [],
            alias: { hostedZoneId: "ZALB", dnsName: "old`<x>.elb.amazonaws.com", evaluateTargetHealth: true },
            setIdentifier: "blue",
          },
        },
        {
          action: "CREATE",
          record: { zoneId: "Z123", name: "c.example.com", type: "CNAME", values: ["a", "b"] },
        },
      ],
      edits: [],
    },
    {
      kind: "cloudfront-origin",
      distributionId: "E0",
      originId: "o0",
      from: "old.elb",
      to: "new.elb",
      etag: "ETAG",
      hostnames: ["test.example.com", "x.example.com"],
    },
  ],
};

describe("repointCalls: a repoint plan's calls, made once", () => {
  it("numbers each call in order, with what it changes", () => {
    expect(repointCalls(action)).toEqual([
      {
        step: 1,
        call: "Route 53 ChangeResourceRecordSets, zone example.com (Z123), one atomic batch",
        changes: [
          "DELETE A test.example.com [blue] → ALIAS old`<x>.elb.amazonaws.com (zone ZALB, evaluate health true)",
          "CREATE CNAME c.example.com → a b (TTL 300)",
        ],
      },
      {
        step: 2,
        call: "CloudFront UpdateDistribution E0, If-Match ETAG",
        changes: ["origin o0 DomainName old.elb → new.elb (serves test.example.com, x.example.com)"],
      },
    ]);
  });

  it("the terminal prints them numbered, the changes indented beneath", () => {
    expect(repointPlanLines(action)).toEqual([
      "1. Route 53 ChangeResourceRecordSets, zone example.com (Z123), one atomic batch:",
      "  DELETE A test.example.com [blue] → ALIAS old`<x>.elb.amazonaws.com (zone ZALB, evaluate health true)",
      "  CREATE CNAME c.example.com → a b (TTL 300)",
      "2. CloudFront UpdateDistribution E0, If-Match ETAG:",
      "  origin o0 DomainName old.elb → new.elb (serves test.example.com, x.example.com)",
    ]);
  });

  it("the approval card's Details shows the same lines in a code block, escaped", () => {
    const req = {
      id: "r1",
      action,
      state: "PENDING",
      votes: [],
      approvalsRequired: 2,
      requester: { userId: "U1", teamId: "T1" },
      reason: "the origin names the deleted worker ALB",
      evidence: [],
      cleanupPlan: [],
      createdAt: "2024-01-01T00:00:00Z",
      expiresAt: "2024-01-01T01:00:00Z",
    } as unknown as ApprovalRequest;
    // The card names the calls' count; Details shows each call.
    expect(JSON.stringify(renderApprovalRequest(req, new Date("2024-01-01T00:10:00Z")).blocks)).toContain(
      "2 calls to Route 53 and CloudFront",
    );
    const text = JSON.stringify(renderApprovalDetails(req).blocks);
    const block = [
      "1. Route 53 ChangeResourceRecordSets, zone example.com (Z123), one atomic batch:",
      "  DELETE A test.example.com [blue] → ALIAS oldˋ&lt;x&gt;.elb.amazonaws.com (zone ZALB, evaluate health true)",
      "  CREATE CNAME c.example.com → a b (TTL 300)",
      "2. CloudFront UpdateDistribution E0, If-Match ETAG:",
      "  origin o0 DomainName old.elb → new.elb (serves test.example.com, x.example.com)",
    ].join("\n");
    // A code block of its own lines (fences on their own lines), so the calls copy whole.
    expect(text).toContain(JSON.stringify("```\n" + block + "\n```").slice(1, -1));
  });
});
