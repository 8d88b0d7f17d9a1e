/**
 * The approval store's bookkeeping beside its transitions (`store.ts`): the Slack message that shows
 * a request (signed by the bot that posted it), and each cluster's outbox of follow-ups, recorded
 * with an outcome by `approval-finish.6.lua` and taken, run and cleared by that cluster's workers.
 */
import type { MessageRef } from "../requests/model.js";
import { isRequestId } from "../requests/model.js";
import { loadScript } from "../redis/scripts.js";
import { ApprovalKeys } from "../redis/keys.js";
import { assertRequestId, docMacOf, exec, num, signerOf, type StoreContext } from "./store-context.js";

/** Takes a follow-up from the outbox unless another runner holds it. */
const CLAIM_FOLLOW_UP = loadScript("follow-up-claim.1.lua");

/**
 * Remember the Slack message showing the request, signed by the bot that posted it (a repaint or a
 * reply touches no other message); false when the request is unknown.
 */
export async function setMessage(ctx: StoreContext, id: string, message: MessageRef): Promise<boolean> {
  assertRequestId(id);
  const signer = signerOf(ctx);
  const docMac = await docMacOf(ctx, id);
  const ref: MessageRef = { channel: message.channel, ts: message.ts };
  const stored = await exec(
    ctx,
    ctx.scripts.setMessage,
    [ApprovalKeys.request(ctx.options.prefix, id)],
    [JSON.stringify(ref), signer.messageSig(id, docMac, ref.channel, ref.ts)],
  );
  return num(stored) === 1;
}

/** The follow-up outbox of one cluster's workers (see `approval-finish.6.lua`): request id -> ms recorded. */
function followUpKey(ctx: StoreContext, cluster: string): string {
  return ApprovalKeys.followUps(ctx.options.prefix, cluster);
}

/** Whether what follows the request's outcome is still to run (recorded with its outcome). */
export async function followUpPending(ctx: StoreContext, cluster: string, id: string): Promise<boolean> {
  assertRequestId(id);
  return (await ctx.redis.zscore(followUpKey(ctx, cluster), id)) !== null;
}

/**
 * Take the request's follow-up to run it: true when it is in the outbox and no other runner holds it
 * (its score is not in the future); it is then held `leaseMs` (the sweep leaves it alone that long,
 * and takes it again after, should this runner die in it).
 */
export async function claimFollowUp(
  ctx: StoreContext,
  cluster: string,
  id: string,
  now: Date,
  leaseMs: number,
): Promise<boolean> {
  assertRequestId(id);
  const claimed = await CLAIM_FOLLOW_UP.run(
    ctx.redis,
    [followUpKey(ctx, cluster)],
    [id, now.getTime(), now.getTime() + leaseMs],
  );
  return claimed === 1;
}

/** The follow-ups recorded before `before` and not run yet (oldest first, at most `limit`). */
export async function followUpsDue(
  ctx: StoreContext,
  cluster: string,
  before: Date,
  limit: number,
): Promise<string[]> {
  const key = followUpKey(ctx, cluster);
  const ids = await ctx.redis.zrangebyscore(key, "-inf", before.getTime(), "LIMIT", 0, limit);
  // Only ids this store issues: anything else written there is dropped, never used in a key.
  const bad = ids.filter((id) => !isRequestId(id));
  if (bad.length > 0) await ctx.redis.zrem(key, ...bad);
  return ids.filter(isRequestId);
}

/** What follows the request's outcome has run (its waits started, its replies posted). */
export async function followUpRan(ctx: StoreContext, cluster: string, id: string): Promise<void> {
  assertRequestId(id);
  await ctx.redis.zrem(followUpKey(ctx, cluster), id);
}
