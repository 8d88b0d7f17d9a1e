/**
 * The deletion guard's annotation value: `v1;req=<id>;until=<UTC second>;mac=<HMAC>`, signed under
 * a key derived from `UNSTUCK_APPROVAL_KEY` and bound to the namespace's name and uid. Anything else
 * — another key, another namespace, an edited field, a value of another shape — does not verify.
 */
import { describe, expect, it } from "vitest";
import {
  DeletionGuardSigner,
  GUARD_VALUE_PATTERN,
  guardRequestId,
  parseGuardValue,
} from "../../../src/approvals/deletion-guard-token.js";
import { ApprovalSigner, randomApprovalKey } from "../../../src/approvals/integrity.js";
import { newRequestId } from "../../../src/approvals/types.js";
import { ErrorCode } from "../../../src/errors.js";

const KEY = randomApprovalKey();
const signer = new DeletionGuardSigner(KEY);
const BINDING = { namespace: "shop", uid: "8d3e1c2a-0000-4000-8000-000000000001" };
const UNTIL = new Date("2030-05-06T07:08:09.750Z");

describe("the deletion guard's annotation value", () => {
  it("carries the request id and the end of the window (whole seconds, UTC), in the shape the chart checks", () => {
    const id = newRequestId();
    const value = signer.sign(BINDING, id, UNTIL);
    expect(value).toMatch(new RegExp(GUARD_VALUE_PATTERN));
    expect(value.startsWith(`v1;req=${id};until=2030-05-06T07:08:09Z;mac=`)).toBe(true);
    expect(parseGuardValue(value)).toEqual({
      requestId: id,
      until: new Date("2030-05-06T07:08:09Z"),
      mac: value.slice(value.indexOf(";mac=") + 5),
    });
    expect(guardRequestId(value)).toBe(id);
    expect(signer.verify(value, BINDING)?.requestId).toBe(id);
  });

  it("verifies only for the namespace, uid and key it was signed for, and only unedited", () => {
    const id = newRequestId();
    const value = signer.sign(BINDING, id, UNTIL);
    expect(signer.verify(value, { ...BINDING, namespace: "cart" })).toBeUndefined();
    expect(signer.verify(value, { ...BINDING, uid: "another" })).toBeUndefined();
    expect(new DeletionGuardSigner(randomApprovalKey()).verify(value, BINDING)).toBeUndefined();
    // A later window, another request, another MAC: each edit breaks it.
    expect(signer.verify(value.replace("2030-05-06", "2031-05-06"), BINDING)).toBeUndefined();
    expect(signer.verify(value.replace(id, newRequestId()), BINDING)).toBeUndefined();
    const mac = value.slice(-43);
    const flipped = `${value.slice(0, -43)}${mac[0] === "A" ? "B" : "A"}${mac.slice(1)}`;
    expect(signer.verify(flipped, BINDING)).toBeUndefined();
    expect(signer.verify(undefined, BINDING)).toBeUndefined();
  });

  it("is not an approval record's MAC under the same key (a derived key, its own domain)", () => {
    const id = newRequestId();
    const value = signer.sign(BINDING, id, UNTIL);
    const approval = new ApprovalSigner(KEY);
    expect(value).not.toContain(approval.requestMac(id, JSON.stringify(BINDING)));
  });

  it("still verifies with the previous key during a rotation, and signs only with the current one", () => {
    const previous = randomApprovalKey();
    const old = new DeletionGuardSigner(previous).sign(BINDING, newRequestId(), UNTIL);
    const rotated = new DeletionGuardSigner(randomApprovalKey(), { previous });
    expect(rotated.verify(old, BINDING)).toBeDefined();
    const fresh = rotated.sign(BINDING, newRequestId(), UNTIL);
    expect(new DeletionGuardSigner(previous).verify(fresh, BINDING)).toBeUndefined();
  });

  it("refuses what is not of the bot's shape", () => {
    const good = signer.sign(BINDING, newRequestId(), UNTIL);
    for (const value of [
      "",
      "abc",
      "true",
      good.toUpperCase(),
      `${good} `,
      good.replace("v1;", "v2;"),
      good.replace(/until=[^;]+/, "until=2030-02-30T00:00:00Z"),
      good.replace(/until=[^;]+/, "until=2030-05-06T25:00:00Z"),
    ]) {
      expect(parseGuardValue(value), value).toBeUndefined();
      expect(signer.verify(value, BINDING), value).toBeUndefined();
    }
    expect(() => signer.sign(BINDING, "not-a-request-id", UNTIL)).toThrow(/request id/);
    expect(() => new DeletionGuardSigner("too short")).toThrow(
      expect.objectContaining({ code: ErrorCode.Config }) as Error,
    );
    expect(JSON.stringify({ signer })).not.toContain(KEY);
  });
});
