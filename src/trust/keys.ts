/**
 * Ed25519 keys and who holds them: the trust model of docs/design.md ("Who holds which key").
 *
 * Two kinds of signer, never one key shared between them:
 * - the **bot** (the Slack-facing process, the only one that verifies Slack's signature) signs what a
 *   person did: requests, votes, the states a person moves a request to, the messages it posted for a
 *   request, the calls it sends to a cluster's workers;
 * - each **cluster**'s workers sign what they did with their own key: the states of an execution and its
 *   result, their answers to the bot's calls, what they posted, the deletion guard's annotation.
 *
 * Every process holds the public keys of both (`Keyring`): public keys are no secret, so a worker pod
 * holds no key that signs for the bot or for another cluster, and nothing in Redis can be forged from
 * what one pod holds.
 *
 * A signature is stored as `<key id>.<signature>`: the key id (8 bytes of a SHA-256 of the public key,
 * base64url) says which key to check it with. A key id the keyring does not hold is a forgery, not a
 * retired key: keep the public key of a rotated-out signer in the keyring as long as anything it signed
 * is still live (public keys cost nothing to keep). The signed bytes are a JSON array with a version and
 * a domain first, so no two kinds of record share an encoding.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from "node:crypto";
import { ErrorCode, UnstuckError } from "../errors.js";

/** Who a key signs for. */
export type KeyOwner = { readonly kind: "bot" } | { readonly kind: "cluster"; readonly cluster: string };

export const BOT: KeyOwner = { kind: "bot" };

export function clusterOwner(cluster: string): KeyOwner {
  return { kind: "cluster", cluster };
}

export function ownerLabel(owner: KeyOwner): string {
  return owner.kind === "bot" ? "the bot" : `cluster ${owner.cluster}'s workers`;
}

/** The PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows it. */
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const KEY_ID = /^[A-Za-z0-9_-]{11}$/;
const SIGNATURE = /^[A-Za-z0-9_-]{86}$/;

function invalid(variable: string, why: string): UnstuckError {
  return new UnstuckError(ErrorCode.Config, `Invalid ${variable}: ${why}.`, { variable });
}

function decodeBase64(text: string): Buffer | undefined {
  const t = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) return undefined;
  return Buffer.from(t.replace(/-/g, "+").replace(/_/g, "/"), "base64");
}

/**
 * An Ed25519 private key as configured: PEM (`openssl genpkey -algorithm ed25519`), or base64 /
 * base64url of its 32-byte seed (what `unstuck keys` prints) or of its PKCS#8 DER.
 */
export function parsePrivateKey(text: string, variable: string): KeyObject {
  let key: KeyObject;
  try {
    if (text.includes("-----BEGIN")) key = createPrivateKey(text);
    else {
      const raw = decodeBase64(text);
      if (raw === undefined) throw new Error("not base64");
      const der = raw.length === 32 ? Buffer.concat([PKCS8_PREFIX, raw]) : raw;
      key = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
    }
  } catch {
    throw invalid(
      variable,
      "not an Ed25519 private key (a PEM from `openssl genpkey -algorithm ed25519`, or the base64 seed `npm run unstuck -- keys` prints)",
    );
  }
  if (key.asymmetricKeyType !== "ed25519") throw invalid(variable, "the key must be Ed25519");
  return key;
}

/**
 * An Ed25519 public key as configured: base64url of its 32 raw bytes (what `unstuck keys` prints), or
 * PEM / base64 of its SPKI DER (`openssl pkey -pubout`).
 */
export function parsePublicKey(text: string, variable: string): KeyObject {
  let key: KeyObject;
  try {
    if (text.includes("-----BEGIN")) key = createPublicKey(text);
    else {
      const raw = decodeBase64(text);
      if (raw === undefined) throw new Error("not base64");
      key =
        raw.length === 32
          ? createPublicKey({
              key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") },
              format: "jwk",
            })
          : createPublicKey({ key: raw, format: "der", type: "spki" });
    }
  } catch {
    throw invalid(variable, "not an Ed25519 public key (base64url of its 32 bytes, or a PEM)");
  }
  if (key.asymmetricKeyType !== "ed25519") throw invalid(variable, "the key must be Ed25519");
  return key;
}

/** The 32 raw bytes of a public key, base64url: how keys are printed and configured. */
export function publicKeyText(key: KeyObject): string {
  const jwk = key.export({ format: "jwk" });
  if (typeof jwk.x !== "string") throw new Error("not an Ed25519 key");
  return jwk.x;
}

/** A key's id: 8 bytes of SHA-256 over its raw public bytes, base64url (11 characters). */
export function keyIdOf(publicKey: KeyObject): string {
  return createHash("sha256")
    .update("unstuck/key-id/v2\u0000")
    .update(Buffer.from(publicKeyText(publicKey), "base64url"))
    .digest()
    .subarray(0, 8)
    .toString("base64url");
}

/** A fresh key pair, as text (the private seed and the public key, both base64url). */
export function generateKeyText(): { readonly privateKey: string; readonly publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" });
  if (typeof jwk.d !== "string") throw new Error("not an Ed25519 key");
  return { privateKey: jwk.d, publicKey: publicKeyText(publicKey) };
}

/** The bytes a signature covers: a version, the domain, then the fields, as one JSON array. */
function message(domain: string, fields: readonly string[]): Buffer {
  return Buffer.from(JSON.stringify(["unstuck/v2", domain, ...fields]), "utf8");
}

/** A private key this process signs with, and whom it signs for. */
export class SigningKey {
  readonly #key: KeyObject;
  public readonly keyId: string;
  public readonly publicKey: KeyObject;

  public constructor(
    key: KeyObject,
    public readonly owner: KeyOwner,
  ) {
    if (key.type !== "private" || key.asymmetricKeyType !== "ed25519") {
      throw new Error("a signing key must be an Ed25519 private key");
    }
    this.#key = key;
    this.publicKey = createPublicKey(key);
    this.keyId = keyIdOf(this.publicKey);
  }

  /** Never print the key. */
  public toJSON(): string {
    return `[SigningKey ${this.keyId} for ${ownerLabel(this.owner)}]`;
  }

  public sign(domain: string, fields: readonly string[]): string {
    return `${this.keyId}.${sign(null, message(domain, fields), this.#key).toString("base64url")}`;
  }
}

/** How a signature checked out. */
export type SignatureCheck =
  | { readonly ok: true; readonly owner: KeyOwner; readonly keyId: string }
  | { readonly ok: false; readonly why: string };

/** The key id a stored signature names (`undefined`: not of the shape `<key id>.<signature>`). */
export function keyIdOfSignature(signature: unknown): string | undefined {
  if (typeof signature !== "string") return undefined;
  const dot = signature.indexOf(".");
  const id = dot < 0 ? "" : signature.slice(0, dot);
  return KEY_ID.test(id) ? id : undefined;
}

/** The public keys every process verifies with, each with its owner. */
export class Keyring {
  readonly #keys = new Map<string, { readonly key: KeyObject; readonly owner: KeyOwner }>();

  public constructor(entries: readonly { readonly key: KeyObject; readonly owner: KeyOwner }[] = []) {
    for (const e of entries) this.add(e.key, e.owner);
  }

  /** Add a public key (a private key's public half is taken); a key claimed by two owners is refused. */
  public add(key: KeyObject, owner: KeyOwner): this {
    const publicKey = key.type === "private" ? createPublicKey(key) : key;
    const id = keyIdOf(publicKey);
    const known = this.#keys.get(id);
    if (known !== undefined && !sameOwner(known.owner, owner)) {
      throw new UnstuckError(
        ErrorCode.Config,
        `The same public key is configured for ${ownerLabel(known.owner)} and for ${ownerLabel(owner)}: each signer needs its own key pair.`,
      );
    }
    this.#keys.set(id, { key: publicKey, owner });
    return this;
  }

  /** The owner of a key id, when this keyring holds it. */
  public ownerOf(keyId: string): KeyOwner | undefined {
    return this.#keys.get(keyId)?.owner;
  }

  /** The key ids held for an owner. */
  public keyIdsOf(owner: KeyOwner): string[] {
    return [...this.#keys].filter(([, e]) => sameOwner(e.owner, owner)).map(([id]) => id);
  }

  /**
   * Check `signature` over `domain` and `fields`, made by a key whose owner `accepts`: a malformed
   * signature, a key id this keyring does not hold, a signer not accepted here, or bytes that do not
   * verify all fail, each saying which.
   */
  public verify(
    domain: string,
    fields: readonly string[],
    signature: unknown,
    accepts: (owner: KeyOwner) => boolean,
  ): SignatureCheck {
    const keyId = keyIdOfSignature(signature);
    const sig = typeof signature === "string" ? signature.slice(signature.indexOf(".") + 1) : "";
    if (keyId === undefined || !SIGNATURE.test(sig)) return { ok: false, why: "no signature" };
    const entry = this.#keys.get(keyId);
    if (entry === undefined) return { ok: false, why: `signed by an unknown key (key id ${keyId})` };
    if (!accepts(entry.owner)) {
      return { ok: false, why: `signed by ${ownerLabel(entry.owner)}, who may not sign it` };
    }
    const good = verify(null, message(domain, fields), entry.key, Buffer.from(sig, "base64url"));
    return good
      ? { ok: true, owner: entry.owner, keyId }
      : { ok: false, why: "its signature does not verify" };
  }
}

export function sameOwner(a: KeyOwner, b: KeyOwner): boolean {
  return a.kind === "bot" ? b.kind === "bot" : b.kind === "cluster" && a.cluster === b.cluster;
}

/** Accepts only the bot. */
export const byBot = (owner: KeyOwner): boolean => owner.kind === "bot";

/** Accepts only the workers of `cluster`. */
export function byCluster(cluster: string): (owner: KeyOwner) => boolean {
  return (owner) => owner.kind === "cluster" && owner.cluster === cluster;
}

/** The keys of one process: what it signs with (by role) and what it verifies with. */
export interface ProcessKeys {
  /** The bot's key: present in a process that takes Slack requests (`bot`, `all`). */
  readonly bot?: SigningKey;
  /** This cluster's workers' key: present in a process that runs workers (`worker`, `all`). */
  readonly worker?: SigningKey;
  readonly keyring: Keyring;
  /**
   * The cluster a record that names none is for: a single-cluster install's (its workers' keys are
   * filed under it), or a fleet's first.
   */
  readonly localCluster: string;
}
