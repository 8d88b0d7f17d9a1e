/**
 * Records signed before approvals were signed with Ed25519. Every process then held one HMAC key
 * (`UNSTUCK_APPROVAL_KEY`), so any worker pod could have signed one: a record made that way can be
 * genuine or forged and nothing can tell which, so none is trusted any more. The bot, at start, ends
 * every live one before anything executes it — pending ones EXPIRED, approved ones FAILED — audited and
 * said in the result, never re-signed (that would bless a forgery made with the old key). With the old
 * key still configured on the bot, a record it signed is told apart from one nothing signed: the first
 * is "signed before the upgrade", the second tampering.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { AuditEntry } from "../audit/entry.js";
import type { Logger } from "../log.js";
import type { ApprovalSigner } from "./integrity.js";
import type { ApprovalStore, SignedRecord } from "./store.js";
import { type ExecutionResult } from "../requests/model.js";
import { auditChange, describeAction } from "../requests/action-kinds.js";

/** Whether `mac` is the old HMAC of request `id`'s document under `key` (with or without a key id). */
export function legacyRequestMac(key: string, id: string, doc: string, mac: string): boolean {
  const expected = createHmac("sha256", Buffer.from(key, "utf8"))
    .update(JSON.stringify(["unstuck/approval/v1", "request", id, doc]))
    .digest("base64url");
  const got = mac.includes(".") ? mac.slice(mac.indexOf(".") + 1) : mac;
  const a = Buffer.from(expected);
  const b = Buffer.from(got);
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface LegacyMigrationDeps {
  readonly store: ApprovalStore;
  readonly signer: ApprovalSigner;
  /** `UNSTUCK_APPROVAL_KEY`, when still configured on the bot. */
  readonly legacyKey?: string;
  readonly now: () => Date;
  readonly log?: Logger;
}

/** What the migration ended, by id, and how each ended. */
export interface LegacyMigration {
  readonly ended: readonly { readonly id: string; readonly state: string; readonly genuine: boolean }[];
}

/**
 * End every live request whose document is not the bot's under the keys it holds now. Records the
 * current keys signed are left alone; a record that moved meanwhile is left to whoever moved it.
 */
export async function endUnverifiableRequests(deps: LegacyMigrationDeps): Promise<LegacyMigration> {
  const { store, signer, now } = deps;
  const live = await store.liveIds();
  const ended: { id: string; state: string; genuine: boolean }[] = [];
  const found = [
    ...live.pending.map((id) => ({ id, state: "PENDING" as const })),
    ...live.approved.map((id) => ({ id, state: "APPROVED" as const })),
  ];
  for (const { id, state } of found) {
    const record: SignedRecord | null = await store.getSigned(id);
    if (record === null || record.state.state !== state) continue;
    if (signer.checkRequest(id, record.doc, record.docMac).ok) continue;
    const genuine =
      deps.legacyKey !== undefined && legacyRequestMac(deps.legacyKey, id, record.doc, record.docMac);
    const at = now();
    const message = genuine
      ? `Not executed: this request was signed with the shared approval key of before the upgrade, which no longer authorizes anything (any pod held it). Nothing was changed; ask for it again.`
      : `Refused: this request's record is signed by no key the bot holds, nor by the shared key of before the upgrade; someone may have written it to Redis. Nothing was changed.`;
    const result: ExecutionResult = { outcome: "failed", message, at: at.toISOString() };
    const request = record.request;
    const entry: AuditEntry = {
      at: at.toISOString(),
      actor: { kind: "system", component: "migration" },
      event: genuine ? "request.migrated" : "approval.tampered",
      requestId: id,
      action: request.action?.type ?? "unknown",
      target: request.action !== undefined ? describeAction(request.action) : "unknown",
      ...(request.requester !== undefined ? { requester: request.requester } : {}),
      ...(request.action !== undefined ? { change: auditChange(request.action) } : {}),
      before: state,
      result: message,
    };
    const done = await store.endUnverified(id, state, result, at, entry);
    if (done.status !== "OK") continue;
    ended.push({ id, state: done.state, genuine });
    deps.log?.warn(
      { requestId: id, before: state, after: done.state, genuine },
      "ended a request signed before the upgrade",
    );
  }
  return { ended };
}
