/**
 * Ed25519 keys as configured and checked: every accepted form of a key parses to the same key, a
 * signature verifies only over its own domain and fields, under a key the keyring holds for an owner
 * the caller accepts; nothing prints a private key.
 */
import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ErrorCode, UnstuckError } from "../../../src/errors.js";
import {
  BOT,
  byBot,
  byCluster,
  clusterOwner,
  generateKeyText,
  keyIdOf,
  keyIdOfSignature,
  Keyring,
  parsePrivateKey,
  parsePublicKey,
  publicKeyText,
  SigningKey,
} from "../../../src/trust/keys.js";

function configError(run: () => unknown): UnstuckError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(UnstuckError);
    return err as UnstuckError;
  }
  throw new Error("expected a configuration error");
}

describe("key text", () => {
  it("reads a private key as a PEM, a base64url seed or a base64 PKCS#8 DER, all the same key", () => {
    const { privateKey } = generateKeyPairSync("ed25519");
    const pem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
    const der = privateKey.export({ format: "der", type: "pkcs8" }).toString("base64");
    const seed = privateKey.export({ format: "jwk" }).d ?? "";
    const ids = [pem, der, seed].map((t) => new SigningKey(parsePrivateKey(t, "V"), BOT).keyId);
    expect(new Set(ids).size).toBe(1);
  });

  it("reads a public key as base64url of its 32 bytes, a PEM or a base64 SPKI DER, all the same key", () => {
    const { publicKey } = generateKeyPairSync("ed25519");
    const pem = publicKey.export({ format: "pem", type: "spki" }).toString();
    const der = publicKey.export({ format: "der", type: "spki" }).toString("base64");
    const raw = publicKeyText(publicKey);
    expect(raw).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const ids = [pem, der, raw].map((t) => keyIdOf(parsePublicKey(t, "V")));
    expect(new Set(ids)).toEqual(new Set([keyIdOf(publicKey)]));
  });

  it("reads what openssl makes (the commands the install guide gives)", () => {
    // openssl is installed by .ci/run (the Redis-over-TLS test makes its CA with it too).
    const pem = execFileSync("openssl", ["genpkey", "-algorithm", "ed25519"], { encoding: "utf8" });
    const pub = execFileSync("openssl", ["pkey", "-pubout"], { input: pem, encoding: "utf8" });
    const signing = new SigningKey(parsePrivateKey(pem, "V"), BOT);
    expect(keyIdOf(parsePublicKey(pub, "V"))).toBe(signing.keyId);
  });

  it("refuses what is not an Ed25519 key, naming the variable and showing nothing of the value", () => {
    const { privateKey: rsa } = generateKeyPairSync("rsa", { modulusLength: 1024 });
    const rsaPem = rsa.export({ format: "pem", type: "pkcs8" }).toString();
    for (const text of ["not a key", "c2hvcnQ", rsaPem]) {
      const err = configError(() => parsePrivateKey(text, "UNSTUCK_BOT_SIGNING_KEY"));
      expect(err.code).toBe(ErrorCode.Config);
      expect(err.details.variable).toBe("UNSTUCK_BOT_SIGNING_KEY");
      expect(err.message).not.toContain(text.slice(0, 20));
    }
    const err = configError(() => parsePublicKey("AAAA", "UNSTUCK_BOT_PUBLIC_KEYS"));
    expect(err.details.variable).toBe("UNSTUCK_BOT_PUBLIC_KEYS");
  });

  it("makes key pairs whose halves belong together", () => {
    const pair = generateKeyText();
    const signing = new SigningKey(parsePrivateKey(pair.privateKey, "V"), BOT);
    expect(publicKeyText(signing.publicKey)).toBe(pair.publicKey);
  });
});

describe("signatures", () => {
  const bot = new SigningKey(parsePrivateKey(generateKeyText().privateKey, "V"), BOT);
  const c1 = new SigningKey(parsePrivateKey(generateKeyText().privateKey, "V"), clusterOwner("c1"));
  const c2 = new SigningKey(parsePrivateKey(generateKeyText().privateKey, "V"), clusterOwner("c2"));
  const ring = new Keyring([
    { key: bot.publicKey, owner: BOT },
    { key: c1.publicKey, owner: clusterOwner("c1") },
    { key: c2.publicKey, owner: clusterOwner("c2") },
  ]);

  it("verify only over the same domain and fields, under the signer's own key id", () => {
    const sig = bot.sign("request", ["id", "doc"]);
    expect(keyIdOfSignature(sig)).toBe(bot.keyId);
    expect(ring.verify("request", ["id", "doc"], sig, byBot)).toEqual({
      ok: true,
      owner: BOT,
      keyId: bot.keyId,
    });
    expect(ring.verify("vote", ["id", "doc"], sig, byBot).ok).toBe(false);
    expect(ring.verify("request", ["id", "doc2"], sig, byBot).ok).toBe(false);
    expect(ring.verify("request", ["id", "doc", ""], sig, byBot).ok).toBe(false);
    // Another key's id in front of this signature: the bytes do not verify under that key.
    const relabelled = `${c1.keyId}.${sig.slice(sig.indexOf(".") + 1)}`;
    expect(ring.verify("request", ["id", "doc"], relabelled, () => true)).toMatchObject({ ok: false });
  });

  it("a signer the caller does not accept fails, saying who signed: one cluster never signs for another", () => {
    const sig = c1.sign("state", ["x"]);
    expect(ring.verify("state", ["x"], sig, byCluster("c1")).ok).toBe(true);
    const other = ring.verify("state", ["x"], sig, byCluster("c2"));
    expect(other).toEqual({ ok: false, why: "signed by cluster c1's workers, who may not sign it" });
    expect(ring.verify("state", ["x"], sig, byBot).ok).toBe(false);
  });

  it("a key id the keyring does not hold is a forgery, named; malformed or missing is no signature", () => {
    const stranger = new SigningKey(parsePrivateKey(generateKeyText().privateKey, "V"), BOT);
    const sig = stranger.sign("request", ["id"]);
    expect(ring.verify("request", ["id"], sig, byBot)).toEqual({
      ok: false,
      why: `signed by an unknown key (key id ${stranger.keyId})`,
    });
    for (const bad of [undefined, "", "nodot", `${bot.keyId}.short`, 42]) {
      expect(ring.verify("request", ["id"], bad, byBot)).toEqual({ ok: false, why: "no signature" });
    }
  });

  it("refuses one public key configured for two owners", () => {
    const err = configError(() => new Keyring().add(c1.publicKey, clusterOwner("c1")).add(c1.publicKey, BOT));
    expect(err.message).toMatch(/each signer needs its own key pair/);
  });

  it("never prints a private key", () => {
    const pair = generateKeyText();
    const key = new SigningKey(parsePrivateKey(pair.privateKey, "V"), BOT);
    expect(JSON.stringify({ key })).not.toContain(pair.privateKey);
    expect(String(Object.values(key))).not.toContain(pair.privateKey);
  });
});
