/**
 * The deletion guard's annotation value: `v2;req=<id>;until=<UTC second>;sig=<key id>.<signature>`,
 * signed by the cluster's workers and bound to the namespace's name and uid. Anything else — the bot's
 * key, another cluster's workers' key, another namespace, an edited field, a value of another shape —
 * does not verify.
 */
import { describe, expect, it } from "vitest";
import {
  DeletionGuardSigner,
  GUARD_VALUE_PATTERN,
  guardRequestId,
  parseGuardValue,
} from "../../../src/approvals/deletion-guard-token.js";
import { newRequestId } from "../../../src/requests/model.js";
import { ErrorCode } from "../../../src/errors.js";
import {
  BOT,
  clusterOwner,
  generateKeyText,
  Keyring,
  parsePrivateKey,
  SigningKey,
  type KeyOwner,
} from "../../../src/trust/keys.js";

const key = (owner: KeyOwner) => new SigningKey(parsePrivateKey(generateKeyText().privateKey, "V"), owner);
const c1 = key(clusterOwner("c1"));
const c1Next = key(clusterOwner("c1"));
const c2 = key(clusterOwner("c2"));
const bot = key(BOT);
const keyring = new Keyring([c1, c1Next, c2, bot].map((k) => ({ key: k.publicKey, owner: k.owner })));
const signer = new DeletionGuardSigner({ cluster: "c1", keyring, worker: c1 });
const BINDING = { namespace: "shop", uid: "8d3e1c2a-0000-4000-8000-000000000001" };
const UNTIL = new Date("2030-05-06T07:08:09.750Z");

describe("the deletion guard's annotation value", () => {
  it("carries the request id and the end of the window (whole seconds, UTC), in the shape the chart checks", () => {
    const id = newRequestId();
    const value = signer.sign(BINDING, id, UNTIL);
    expect(value).toMatch(new RegExp(GUARD_VALUE_PATTERN));
    expect(value.startsWith(`v2;req=${id};until=2030-05-06T07:08:09Z;sig=${c1.keyId}.`)).toBe(true);
    expect(parseGuardValue(value)).toEqual({
      requestId: id,
      until: new Date("2030-05-06T07:08:09Z"),
      sig: value.slice(value.indexOf(";sig=") + 5),
    });
    expect(guardRequestId(value)).toBe(id);
    expect(signer.verify(value, BINDING)?.requestId).toBe(id);
  });

  it("verifies only for the namespace and uid it was signed for, unedited, as this cluster's workers'", () => {
    const id = newRequestId();
    const value = signer.sign(BINDING, id, UNTIL);
    expect(signer.verify(value, { ...BINDING, namespace: "cart" })).toBeUndefined();
    expect(signer.verify(value, { ...BINDING, uid: "another" })).toBeUndefined();
    // Another cluster's workers, who hold c2's key: their value is not c1's, nor is c1's theirs.
    const c2Signer = new DeletionGuardSigner({ cluster: "c2", keyring, worker: c2 });
    expect(c2Signer.verify(value, BINDING)).toBeUndefined();
    expect(signer.verify(c2Signer.sign(BINDING, id, UNTIL), BINDING)).toBeUndefined();
    // A later window, another request, another signature: each edit breaks it.
    expect(signer.verify(value.replace("2030-05-06", "2031-05-06"), BINDING)).toBeUndefined();
    expect(signer.verify(value.replace(id, newRequestId()), BINDING)).toBeUndefined();
    const sig = value.slice(-86);
    const flipped = `${value.slice(0, -86)}${sig[0] === "A" ? "B" : "A"}${sig.slice(1)}`;
    expect(signer.verify(flipped, BINDING)).toBeUndefined();
    expect(signer.verify(undefined, BINDING)).toBeUndefined();
  });

  it("verifies what a rotated-out key of the cluster signed while its public half is listed", () => {
    const old = signer.sign(BINDING, newRequestId(), UNTIL);
    const rotated = new DeletionGuardSigner({ cluster: "c1", keyring, worker: c1Next });
    expect(rotated.verify(old, BINDING)).toBeDefined();
    const dropped = new DeletionGuardSigner({
      cluster: "c1",
      keyring: new Keyring([{ key: c1Next.publicKey, owner: c1Next.owner }]),
      worker: c1Next,
    });
    expect(dropped.verify(old, BINDING)).toBeUndefined();
  });

  it("refuses what is not of the bot's shape, and signs only where a worker key is held", () => {
    const good = signer.sign(BINDING, newRequestId(), UNTIL);
    for (const value of [
      "",
      "abc",
      "true",
      good.toUpperCase(),
      `${good} `,
      good.replace("v2;", "v1;"),
      good.replace(/until=[^;]+/, "until=2030-02-30T00:00:00Z"),
      good.replace(/until=[^;]+/, "until=2030-05-06T25:00:00Z"),
    ]) {
      expect(parseGuardValue(value), value).toBeUndefined();
      expect(signer.verify(value, BINDING), value).toBeUndefined();
    }
    expect(() => signer.sign(BINDING, "not-a-request-id", UNTIL)).toThrow(/request id/);
    expect(() =>
      new DeletionGuardSigner({ cluster: "c1", keyring }).sign(BINDING, newRequestId(), UNTIL),
    ).toThrow(expect.objectContaining({ code: ErrorCode.Config }) as Error);
    expect(JSON.stringify({ signer })).not.toContain("PRIVATE");
  });
});
