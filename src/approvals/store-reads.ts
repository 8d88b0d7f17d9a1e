/**
 * The approval store's reads (`store.ts`): one request as stored or with the raw material its
 * signatures cover, and the pages of its indexes. Reads need no private key; a listing verifies
 * what it lists when the keyring is at hand.
 */
import type { ApprovalRequest, ExecutionResult, MessageRef, RequestState, Vote } from "../requests/model.js";
import { isRequestId } from "../requests/model.js";
import { ApprovalKeys } from "../redis/keys.js";
import { verifiedRequest, type SignedRecord } from "./verify.js";
import { keysFor, type StoreContext } from "./store-context.js";
import type { NewRequest } from "./store-types.js";

/** The request's hash and vote list, read in one transaction. */
async function readRaw(ctx: StoreContext, id: string): Promise<[unknown, unknown]> {
  const [key, , votesKey] = keysFor(ctx, id);
  const replies = await ctx.redis.multi().hgetall(key).lrange(votesKey, 0, -1).exec();
  return [replies?.[0]?.[1], replies?.[1]?.[1]];
}

/** The request, or `null` when unknown (or the id is malformed). */
export async function readRequest(ctx: StoreContext, id: string): Promise<ApprovalRequest | null> {
  if (!isRequestId(id)) return null;
  const [hash, votes] = await readRaw(ctx, id);
  return parseRequest(hash, votes);
}

/** The request with its MACs and the raw document they cover; `null` when unknown. */
export async function readSigned(ctx: StoreContext, id: string): Promise<SignedRecord | null> {
  if (!isRequestId(id)) return null;
  const [hash, votes] = await readRaw(ctx, id);
  return signedRecordOf(hash, votes);
}

/**
 * PENDING requests not yet expired, soonest expiry first, one page in two round trips
 * (ids, then every hash and vote list in one pipeline).
 */
export async function listPending(
  ctx: StoreContext,
  now: Date,
  page: { offset?: number; limit?: number },
): Promise<ApprovalRequest[]> {
  const ids = await ctx.redis.zrangebyscore(
    ApprovalKeys.pending(ctx.options.prefix),
    `(${now.getTime()}`,
    "+inf",
    "LIMIT",
    page.offset ?? 0,
    page.limit ?? 50,
  );
  if (ids.length === 0) return [];
  const pipeline = ctx.redis.pipeline();
  for (const id of ids) {
    const [key, , votesKey] = keysFor(ctx, id);
    pipeline.hgetall(key).lrange(votesKey, 0, -1);
  }
  const replies = (await pipeline.exec()) ?? [];
  const out: ApprovalRequest[] = [];
  for (let i = 0; i < ids.length; i++) {
    const record = signedRecordOf(replies[2 * i]?.[1], replies[2 * i + 1]?.[1]);
    if (record?.request.state !== "PENDING") continue;
    // With the keyring at hand, a record the signers never made is not listed as anyone's request.
    const signer = ctx.options.signer;
    if (signer === undefined) out.push(record.request);
    else {
      const view = verifiedRequest(record, signer);
      if (view.ok) out.push(view.request);
    }
  }
  return out;
}

/** Ids the store lists as live: pending (any expiry) and approved, not yet claimed. */
export async function liveIds(
  ctx: StoreContext,
  limit: number,
): Promise<{ pending: string[]; approved: string[] }> {
  const ap = ctx.options.prefix;
  const [pending, approved] = await Promise.all([
    ctx.redis.zrangebyscore(ApprovalKeys.pending(ap), "-inf", "+inf", "LIMIT", 0, limit),
    ctx.redis.zrangebyscore(ApprovalKeys.approved(ap), "-inf", "+inf", "LIMIT", 0, limit),
  ]);
  return { pending: pending.filter(isRequestId), approved: approved.filter(isRequestId) };
}

/** A stored hash and vote list as a record with the raw material its signatures cover; `null`: not ours. */
function signedRecordOf(rawHash: unknown, votes: unknown): SignedRecord | null {
  const hash = rawHash as Record<string, string | undefined> | undefined;
  let request: ApprovalRequest | null;
  try {
    request = parseRequest(hash, votes);
  } catch {
    request = null; // unparseable JSON: not a record this bot wrote
  }
  if (!request || !hash) return null;
  return {
    request,
    doc: hash.doc ?? "",
    docMac: hash.docMac ?? "",
    state: {
      state: hash.state ?? "",
      at: hash.updatedAt ?? "",
      mac: hash.stateMac ?? "",
      result: hash.result ?? "",
    },
    ...(request.message !== undefined
      ? { message: { channel: request.message.channel, ts: request.message.ts, mac: hash.messageMac ?? "" } }
      : {}),
  };
}

/** A stored hash and vote list as the request they hold; `null` when the hash is not a request's. */
function parseRequest(hash: unknown, votes: unknown): ApprovalRequest | null {
  if (typeof hash !== "object" || hash === null) return null;
  const h = hash as Record<string, string | undefined>;
  if (h.doc === undefined || h.state === undefined) return null;
  const doc = JSON.parse(h.doc) as NewRequest;
  const voteList = Array.isArray(votes) ? (votes as string[]).map((v) => JSON.parse(v) as Vote) : [];
  return {
    ...doc,
    state: h.state as RequestState,
    votes: voteList,
    executionAttempts: Number(h.execAttempts ?? 0),
    updatedAt: h.updatedAt ?? doc.createdAt,
    ...(h.message ? { message: JSON.parse(h.message) as MessageRef } : {}),
    ...(h.result ? { result: JSON.parse(h.result) as ExecutionResult } : {}),
  };
}
