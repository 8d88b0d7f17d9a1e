/**
 * What one process hands another through Redis, signed by the one that made it: a job's data, a
 * record of where a message was posted. Redis can delete or repeat it, never write one that opens:
 * `unseal` accepts only a payload signed by a key the keyring holds for an owner the reader accepts.
 */
import { type KeyOwner, type Keyring, type SigningKey } from "./keys.js";

/** Signed JSON as it crosses Redis: the exact text and its signature. */
export interface Sealed {
  readonly payload: string;
  readonly sig: string;
}

export function isSealed(value: unknown): value is Sealed {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Sealed).payload === "string" &&
    typeof (value as Sealed).sig === "string"
  );
}

/** `data` as JSON, signed by `key` under `domain` (a domain per kind, so no seal passes for another). */
export function seal(key: SigningKey, domain: string, data: unknown): Sealed {
  const payload = JSON.stringify(data);
  return { payload, sig: key.sign(domain, [payload]) };
}

export type Unsealed<T> =
  | { readonly ok: true; readonly data: T; readonly owner: KeyOwner }
  | { readonly ok: false; readonly why: string };

/** The data of a seal made under `domain` by an owner `accepts` allows; why not otherwise. */
export function unseal<T>(
  keyring: Keyring,
  domain: string,
  value: unknown,
  accepts: (owner: KeyOwner) => boolean,
): Unsealed<T> {
  if (!isSealed(value)) return { ok: false, why: "it is not signed" };
  const check = keyring.verify(domain, [value.payload], value.sig, accepts);
  if (!check.ok) return { ok: false, why: check.why };
  try {
    return { ok: true, data: JSON.parse(value.payload) as T, owner: check.owner };
  } catch {
    return { ok: false, why: "its payload is not JSON" };
  }
}

/** What a process signs with and verifies with when it seals and unseals. */
export interface SealKeys {
  /** The key this process signs with (the bot's, or its cluster's workers'); absent: it only reads. */
  readonly key?: SigningKey;
  readonly keyring: Keyring;
}
