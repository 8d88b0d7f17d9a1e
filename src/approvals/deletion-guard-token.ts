/**
 * The value of `unstuck.dev/deletion-approved`: what a worker writes when a two-person approval opens
 * a namespace's deletion guard, and what every worker's reconcile loop reads back.
 *
 *     v2;req=<request id>;until=<YYYY-MM-DDTHH:MM:SSZ>;sig=<key id>.<Ed25519 signature>
 *
 * It carries the request that opened the guard and the end of its window, and the signature of the
 * cluster's workers (the key that signs their executions, `src/trust/keys.ts`) over both and the
 * namespace (name and uid). A value copied onto another namespace, edited by hand, or written by
 * anyone without that key — another cluster's workers, the bot, a Redis writer — does not verify; the
 * reconcile loop (`jobs/guard-reconcile.ts`) takes such a value off at once, and a verified one once
 * its `until` has passed or when its window is longer than any approval gives.
 *
 * The chart's ValidatingAdmissionPolicy cannot check the signature or the time (Kubernetes CEL has no
 * Ed25519 and no clock): it admits a namespace DELETE only while a value of this shape
 * (`GUARD_VALUE_PATTERN`, which the chart repeats and `test/deploy` keeps equal) is present.
 */
import { ErrorCode, UnstuckError } from "../errors.js";
import { byCluster, type Keyring, type SigningKey } from "../trust/keys.js";

/**
 * The shape of a value the bot writes, as an RE2/ECMAScript regular expression (the chart's CEL
 * `matches()` uses the same text).
 */
export const GUARD_VALUE_PATTERN =
  "^v2;req=[a-z2-7]{26};until=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z;sig=[A-Za-z0-9_-]{11}[.][A-Za-z0-9_-]{86}$";

const SHAPE = new RegExp(GUARD_VALUE_PATTERN);

/** A value taken apart (not verified). */
export interface GuardValue {
  readonly requestId: string;
  /** End of the window: from then on the reconcile loop takes the annotation off. */
  readonly until: Date;
  readonly sig: string;
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
  return { requestId, until, sig: fields.get("sig") ?? "" };
}

/** The request id a value names, whether or not it verifies (`undefined`: not of the bot's shape). */
export function guardRequestId(value: string | undefined): string | undefined {
  return parseGuardValue(value)?.requestId;
}

export interface DeletionGuardKeys {
  /** The cluster whose namespaces these guards are on: only its workers' keys verify a value. */
  readonly cluster: string;
  readonly keyring: Keyring;
  /** This cluster's workers' key: absent where nothing opens a guard (the bot). */
  readonly worker?: SigningKey;
}

export class DeletionGuardSigner {
  public constructor(private readonly keys: DeletionGuardKeys) {}

  /** Never print the key. */
  public toJSON(): string {
    return "[DeletionGuardSigner]";
  }

  private static fields(binding: GuardBinding, requestId: string, until: string): string[] {
    return [binding.namespace, binding.uid, requestId, until];
  }

  /** The annotation value opening `binding`'s guard for `requestId` until `until` (whole seconds). */
  public sign(binding: GuardBinding, requestId: string, until: Date): string {
    const worker = this.keys.worker;
    if (worker === undefined) {
      throw new UnstuckError(
        ErrorCode.Config,
        "UNSTUCK_WORKER_SIGNING_KEY is not set here: only the cluster's workers open a deletion guard.",
        { variable: "UNSTUCK_WORKER_SIGNING_KEY" },
      );
    }
    const text = untilText(until);
    const value = `v2;req=${requestId};until=${text};sig=${worker.sign("deletion-guard", DeletionGuardSigner.fields(binding, requestId, text))}`;
    if (!SHAPE.test(value)) {
      throw new UnstuckError(ErrorCode.BadInput, `Not a request id the bot issues: ${requestId}.`);
    }
    return value;
  }

  /** The value taken apart when this cluster's workers signed it for this namespace; `undefined` otherwise. */
  public verify(value: string | undefined, binding: GuardBinding): GuardValue | undefined {
    const parsed = parseGuardValue(value);
    if (parsed === undefined) return undefined;
    const check = this.keys.keyring.verify(
      "deletion-guard",
      DeletionGuardSigner.fields(binding, parsed.requestId, untilText(parsed.until)),
      parsed.sig,
      byCluster(this.keys.cluster),
    );
    return check.ok ? parsed : undefined;
  }
}
