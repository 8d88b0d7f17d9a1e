/**
 * What every operation of the approval store (`store.ts`) works with: its connection and options,
 * its transition scripts (loaded by `store.ts`), the keys of one request, the signer its writes need,
 * and the runner of those scripts, which logs the audit entries each script wrote.
 */
import type { RedisScript } from "../redis/scripts.js";
import type { RedisConnection } from "../redis-connection.js";
import { ErrorCode, UnstuckError } from "../errors.js";
import { isRequestId } from "../requests/model.js";
import { streamFields, type AuditEntry } from "../audit/entry.js";
import { logAuditEntry } from "../audit/log.js";
import type { ApprovalSigner } from "./integrity.js";
import { ApprovalKeys } from "../redis/keys.js";
import type { ApprovalStoreOptions, AuditTemplate } from "./store-types.js";

/** The transition scripts of the store, one per state change (loaded by `store.ts`). */
export interface TransitionScripts {
  readonly create: RedisScript;
  readonly vote: RedisScript;
  readonly cancel: RedisScript;
  readonly claim: RedisScript;
  readonly finish: RedisScript;
  readonly expire: RedisScript;
  readonly setMessage: RedisScript;
  readonly requeue: RedisScript;
  readonly endUnverified: RedisScript;
}

/** The store's connection, settings and scripts, handed to each of its reads and transitions. */
export interface StoreContext {
  readonly redis: RedisConnection;
  readonly options: ApprovalStoreOptions;
  readonly scripts: TransitionScripts;
  /** How long a terminal request stays readable (seconds). */
  readonly retention: number;
  /** How long the record of a request's end outlives it (seconds; never shorter than `retention`). */
  readonly finishedRetention: number;
}

/** The context of a store on `redis` with `options`, its retentions defaulted (30 days, 365 days). */
export function storeContext(
  redis: RedisConnection,
  options: ApprovalStoreOptions,
  scripts: TransitionScripts,
): StoreContext {
  const retention = options.retentionSeconds ?? 30 * 86_400;
  const finishedRetention = Math.max(retention, options.finishedRetentionSeconds ?? 365 * 86_400);
  return { redis, options, scripts, retention, finishedRetention };
}

/** Refuse anything not shaped like an id we issued, before it reaches a key name. */
export function assertRequestId(id: string): void {
  if (!isRequestId(id)) {
    throw new UnstuckError(
      ErrorCode.NotFound,
      "No such approval request (the id is not one this bot issued).",
      {
        requestId: id.slice(0, 64),
      },
    );
  }
}

/** A script's own reply, and the audit entries (JSON) it wrote to the stream. */
interface ScriptResult {
  readonly reply: unknown;
  readonly written: readonly string[];
}

/** Run a transition's script: its reply, and the audit entries it wrote. */
async function runTransition(
  script: RedisScript,
  redis: RedisConnection,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<ScriptResult> {
  const [reply, written] = tuple(await script.run(redis, keys, args));
  return { reply, written: Array.isArray(written) ? written.map(str) : [] };
}

/** A script's reply as the array it must be. */
export function tuple(reply: unknown): unknown[] {
  if (!Array.isArray(reply)) throw new Error("unexpected reply from approval script");
  return reply as unknown[];
}

/** A reply field as a string (`""` when it is neither string nor number). */
export function str(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  return "";
}

/** A reply field as a number. */
export function num(value: unknown): number {
  return typeof value === "number" ? value : Number(value ?? 0);
}

/** The request's hash, its voters set and its vote list. */
export function keysFor(ctx: StoreContext, id: string): [string, string, string] {
  const ap = ctx.options.prefix;
  return [ApprovalKeys.request(ap, id), ApprovalKeys.voters(ap, id), ApprovalKeys.votes(ap, id)];
}

/** The audit stream key scripts write to (a key of ours when no audit is configured: never written). */
export function auditStream(ctx: StoreContext): string {
  return ctx.options.auditKey ?? ApprovalKeys.noAudit(ctx.options.prefix);
}

/** A transition's audit template as its script's argument (`""`: write no entry). */
export function auditArg(ctx: StoreContext, template: AuditTemplate | undefined): string {
  return template !== undefined && ctx.options.auditKey !== undefined
    ? JSON.stringify(streamFields(template))
    : "";
}

/**
 * Run a script and log the audit entries it wrote, each with the change its template named (the
 * stream does not keep it; templates are matched by request id).
 */
export async function exec(
  ctx: StoreContext,
  script: RedisScript,
  keys: readonly string[],
  args: readonly (string | number)[],
  templates: readonly (AuditTemplate | undefined)[] = [],
): Promise<unknown> {
  const { reply, written } = await runTransition(script, ctx.redis, keys, args);
  for (const raw of written) {
    let entry: AuditEntry;
    try {
      entry = JSON.parse(raw) as AuditEntry;
    } catch {
      continue;
    }
    const change = templates.find((t) => t?.requestId === entry.requestId)?.change;
    logAuditEntry(ctx.options.log, change !== undefined ? { ...entry, change } : entry);
  }
  return reply;
}

/** The signer every write (and every verifying read) needs; a `Config` error when the process has none. */
export function signerOf(ctx: StoreContext): ApprovalSigner {
  const signer = ctx.options.signer;
  if (!signer) {
    throw new UnstuckError(
      ErrorCode.Config,
      "This process holds no signing key: it can read approvals, not write them.",
    );
  }
  return signer;
}

/** The stored request MAC (read before a write that must bind to it). */
export async function docMacOf(ctx: StoreContext, id: string): Promise<string> {
  return (await ctx.redis.hget(ApprovalKeys.request(ctx.options.prefix, id), "docMac")) ?? "";
}
