/**
 * The value of `unstuck.dev/deletion-approved`: what the bot writes when a two-person approval opens
 * a namespace's deletion guard, and what its reconcile loop reads back.
 *
 *     v1;req=<request id>;until=<YYYY-MM-DDTHH:MM:SSZ>;mac=<43 base64url characters>
 *
 * It carries the request that opened the guard and the end of its window, and an HMAC-SHA256 that
 * binds both to the namespace (name and uid) under a key derived from `UNSTUCK_APPROVAL_KEY` (the
 * approval key the bot already holds, read as `integrity.ts` reads it; a separate derived key, so a
 * guard MAC can never pass for an approval record's, nor the other way round). A value copied onto
 * another namespace, edited by hand, or written by anyone without the key does not verify; the
 * reconcile loop (`jobs/guard-reconcile.ts`) takes such a value off at once, and a verified one
 * once its `until` has passed.
 *
 * The chart's ValidatingAdmissionPolicy cannot check the MAC or the time (Kubernetes CEL has no HMAC
 * and no clock): it admits a namespace DELETE only while a value of this shape
 * (`GUARD_VALUE_PATTERN`, which the chart repeats and `test/deploy` keeps equal) is present.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { MIN_APPROVAL_KEY_BYTES } from "./integrity.js";
import { ErrorCode, UnstuckError } from "../errors.js";

/**
 * The shape of a value the bot writes, as an RE2/ECMAScript regular expression (the chart's CEL
 * `matches()` uses the same text).
 */
export const GUARD_VALUE_PATTERN =
  "^v1;req=[a-z2-7]{26};until=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z;mac=[A-Za-z0-9_-]{43}$";

const SHAPE = new RegExp(GUARD_VALUE_PATTERN);

/** A value taken apart (not verified). */
export interface GuardValue {
  readonly requestId: string;
  /** End of the window: from then on the reconcile loop takes the annotation off. */
  readonly until: Date;
  readonly mac: string;
}

/** The namespace a value is bound to. */
export interface GuardBinding {
  readonly namespace: string;
  readonly uid: string;
}

/** `until` as written: whole seconds, UTC. */
function untilText(until: Date): string {
  return `${until.toISOString().slice(0, 19)}Z`;
}

/** Take a value apart; `undefined` when it is not of the bot's shape (or names an impossible time). */
export function parseGuardValue(value: string | undefined): GuardValue | undefined {
  if (value === undefined || !SHAPE.test(value)) return undefined;
  const fields = new Map(
    value
      .split(";")
      .slice(1)
      .map((f) => [f.slice(0, f.indexOf("=")), f.slice(f.indexOf("=") + 1)] as const),
  );
  const requestId = fields.get("req") ?? "";
  const text = fields.get("until") ?? "";
  const until = new Date(text);
  // 2025-02-30T… parses to another day: not a time the bot wrote.
  if (Number.isNaN(until.getTime()) || untilText(until) !== text) return undefined;
  return { requestId, until, mac: fields.get("mac") ?? "" };
}

/** The request id a value names, whether or not it verifies (`undefined`: not of the bot's shape). */
export function guardRequestId(value: string | undefined): string | undefined {
  return parseGuardValue(value)?.requestId;
}

function derive(key: string | Buffer, variable: string): Buffer {
  const bytes = typeof key === "string" ? Buffer.from(key, "utf8") : Buffer.from(key);
  if (bytes.length < MIN_APPROVAL_KEY_BYTES) {
    throw new UnstuckError(
      ErrorCode.Config,
      `${variable} must be at least ${String(MIN_APPROVAL_KEY_BYTES)} bytes (e.g. \`openssl rand -base64 48\`).`,
      { variable },
    );
  }
  return createHmac("sha256", bytes).update("unstuck/deletion-guard/key/v1").digest();
}

export class DeletionGuardSigner {
  readonly #key: Buffer;
  readonly #previous: Buffer | undefined;

  /**
   * `key` is `UNSTUCK_APPROVAL_KEY`. `previous` (a key being rotated out) only verifies: a guard it
   * signed stays open until its own `until` instead of being closed by the rotation.
   */
  public constructor(key: string | Buffer, options: { readonly previous?: string | Buffer } = {}) {
    this.#key = derive(key, "UNSTUCK_APPROVAL_KEY");
    this.#previous =
      options.previous !== undefined ? derive(options.previous, "UNSTUCK_APPROVAL_KEY_PREVIOUS") : undefined;
  }

  /** Never print the key. */
  public toJSON(): string {
    return "[DeletionGuardSigner]";
  }

  private static mac(key: Buffer, binding: GuardBinding, requestId: string, until: string): string {
    return createHmac("sha256", key)
      .update(JSON.stringify(["unstuck/deletion-guard/v1", binding.namespace, binding.uid, requestId, until]))
      .digest("base64url");
  }

  /** The annotation value opening `binding`'s guard for `requestId` until `until` (whole seconds). */
  public sign(binding: GuardBinding, requestId: string, until: Date): string {
    const text = untilText(until);
    const value = `v1;req=${requestId};until=${text};mac=${DeletionGuardSigner.mac(this.#key, binding, requestId, text)}`;
    if (!SHAPE.test(value)) {
      throw new UnstuckError(ErrorCode.BadInput, `Not a request id the bot issues: ${requestId}.`);
    }
    return value;
  }

  /** The value taken apart when it is the bot's, for this namespace; `undefined` otherwise. */
  public verify(value: string | undefined, binding: GuardBinding): GuardValue | undefined {
    const parsed = parseGuardValue(value);
    if (parsed === undefined) return undefined;
    const text = untilText(parsed.until);
    const got = Buffer.from(parsed.mac);
    const keys = this.#previous !== undefined ? [this.#key, this.#previous] : [this.#key];
    const ok = keys.some((key) => {
      const expected = Buffer.from(DeletionGuardSigner.mac(key, binding, parsed.requestId, text));
      return expected.length === got.length && timingSafeEqual(expected, got);
    });
    return ok ? parsed : undefined;
  }
}
