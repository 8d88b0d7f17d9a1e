/**
 * How the adapter (`./client-node-adapter.ts`) sends its requests: the transport and request policy
 * it was built with ({@link KubeRequests}), each read through the shared limiter with retries of
 * throttled and failing attempts ({@link callKube}), every page of a list ({@link listAll}), and
 * the single attempt a write gets ({@link patchOnce}). The reads and writes themselves live in
 * `./reads.ts`, `./cause-reads.ts`, `./discovery.ts` and `./patches.ts`.
 */
import { ErrorCode, UnstuckError } from "../errors.js";
import type { Logger } from "../log.js";
import { metricSink } from "../ops/metric-sink.js";
import { type Json, jsonArray, obj, str } from "./decode.js";
import { type CallContext, describeTarget, mapKubeError } from "./errors.js";
import type { RequestLimiter } from "./limiter.js";
import type { WriteContext } from "./port.js";
import type { ResourceApi } from "./transport.js";
import type { ResourceType } from "./types.js";

/** One adapter's transport and request policy, which every read and write of it is sent with. */
export interface KubeRequests {
  /** The API server's address, for error messages. */
  readonly server: string;
  /** Longest wait for one HTTP request. */
  readonly timeoutMs: number;
  /** Every read and JSON patch, by resource path. */
  readonly raw: ResourceApi;
  /** The in-flight bound shared by every request of the adapter (and perhaps others). */
  readonly limiter: RequestLimiter;
  /** Attempts for a throttled (429) or 5xx read; 1 = no retry. */
  readonly maxAttempts: number;
  /** Page size for list calls. */
  readonly pageSize: number;
  /** Longest honoured `Retry-After`, in seconds. */
  readonly maxRetryAfterSeconds: number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly log: Logger | undefined;
}

/** Paged attempts at one list before the unpaged fallback (see `listAll`). */
const PAGED_LIST_ATTEMPTS = 2;

/** One request for `/metrics` (a request that never left, refused by the limiter, is not one). */
function countRequest(ctx: CallContext, code: string, sent: number | undefined): void {
  if (sent !== undefined) metricSink()?.kubeCall(ctx.verb, code, (performance.now() - sent) / 1000);
}

/**
 * One request at a time through the shared limiter; retry 429 (honouring Retry-After, which
 * also holds back every new request) and transient 5xx; map everything else to UnstuckError.
 * A retry waits out its pause without a slot, then goes ahead of requests not yet started.
 */
export async function callKube<T>(k: KubeRequests, ctx: CallContext, op: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let sent: number | undefined;
    const timed = (): Promise<T> => {
      sent = performance.now();
      return op();
    };
    try {
      const result = await k.limiter.run(timed, { retry: attempt > 1 });
      countRequest(ctx, "OK", sent);
      return result;
    } catch (err) {
      const mapped = mapKubeError(err, ctx, k.server, k.timeoutMs);
      countRequest(
        ctx,
        mapped.details.status !== undefined ? String(mapped.details.status) : mapped.code,
        sent,
      );
      const retryable =
        mapped.code === ErrorCode.Throttled || mapped.details.status === 503 || mapped.details.status === 500;
      if (!retryable || attempt >= k.maxAttempts) throw mapped;
      const retryAfter = mapped.details.retryAfterSeconds;
      const waitMs =
        retryAfter !== undefined
          ? Math.min(retryAfter, k.maxRetryAfterSeconds) * 1000
          : 100 * 2 ** (attempt - 1);
      if (mapped.code === ErrorCode.Throttled) k.limiter.holdFor(waitMs);
      k.log?.debug({ ...logFields(ctx), attempt, waitMs, code: mapped.code }, "retrying kube request");
      await k.sleep(waitMs);
    }
  }
}

/**
 * A write's one attempt through the limiter, never `callKube`'s retries: after a 5xx or a reset
 * the write may have been applied, and only the caller, re-reading, may decide what comes next.
 */
export async function patchOnce(
  k: KubeRequests,
  ctx: CallContext,
  path: string,
  ops: readonly object[],
  write: WriteContext | undefined,
): Promise<Json> {
  try {
    return await k.limiter.run(() => k.raw.jsonPatch(path, ops, write));
  } catch (err) {
    throw mapKubeError(err, ctx, k.server);
  }
}

/** `null` for 404. */
export async function orNull<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof UnstuckError && err.code === ErrorCode.NotFound) return null;
    throw err;
  }
}

/** The API path of one namespace; its core collections hang below it (`…/pods`, `…/events`). */
export function namespacePath(name: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(name)}`;
}

/** The API path of a type's collection, or of one object of it when `name` is given. */
export function resourcePath(type: ResourceType, namespace?: string, name?: string): string {
  const base = type.group === "" ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
  const ns = type.namespaced && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  const item = name !== undefined ? `/${encodeURIComponent(name)}` : "";
  return `${base}${ns}/${type.resource}${item}`;
}

/** One page of a list: its items and the `continue` token of the next (none after the last). */
export type ListPage<T> = (
  cont: string | undefined,
  limit: number | undefined,
) => Promise<{ items: readonly T[]; cont: string | undefined }>;

/**
 * Every page of a list (`limit` = the page size, then each `continue` token until none).
 * A token that expires between pages (410 Expired: etcd compacted the list's revision) restarts
 * the list from the beginning, as the API server's message says — the 410 also offers a token
 * that continues at a newer revision, but that list would be inconsistent. A second expiry falls
 * back to one unpaged list, as client-go's pager does, so a busy cluster cannot keep us looping.
 */
export async function listAll<T>(
  k: KubeRequests,
  ctx: CallContext,
  page: ListPage<T>,
  pageSize = k.pageSize,
): Promise<T[]> {
  for (let attempt = 1; ; attempt++) {
    const limit = attempt <= PAGED_LIST_ATTEMPTS ? pageSize : undefined;
    const items: T[] = [];
    const tokens = new Set<string>();
    let cont: string | undefined;
    try {
      do {
        const res = await callKube(k, ctx, () => page(cont, limit));
        items.push(...res.items);
        cont = res.cont;
        if (cont !== undefined) {
          // A server that hands back a token twice would otherwise be followed forever.
          if (tokens.has(cont)) {
            throw new UnstuckError(
              ErrorCode.Upstream,
              `The Kubernetes API repeated a continue token while the bot tried to ${describeTarget(ctx)}; the list is incomplete.`,
              { verb: ctx.verb, resource: ctx.group ? `${ctx.resource}.${ctx.group}` : ctx.resource },
            );
          }
          tokens.add(cont);
        }
      } while (cont !== undefined);
      return items;
    } catch (err) {
      const expired = err instanceof UnstuckError && err.details.status === 410 && cont !== undefined;
      if (!expired || limit === undefined) throw err;
      k.log?.debug(
        { ...logFields(ctx), attempt, items: items.length },
        "list continue token expired; restarting",
      );
    }
  }
}

/** Every item of a list path read as raw JSON (every page; unpaged after repeated 410s). */
export async function listPath(
  k: KubeRequests,
  ctx: CallContext,
  path: string,
  query: Record<string, string | undefined> = {},
  pageSize = k.pageSize,
): Promise<Json[]> {
  return listAll(
    k,
    ctx,
    async (cont, limit) => {
      const list = await k.raw.getJson(path, {
        ...query,
        limit: limit !== undefined ? String(limit) : undefined,
        continue: cont,
      });
      return {
        items: jsonArray(list.items),
        cont: str(obj(list.metadata).continue) || undefined,
      };
    },
    pageSize,
  );
}

/**
 * A call's context as log fields: the object's name as `object`, since `name` is the logger's own
 * (a second `name` key in one JSON line would hide which process wrote it).
 */
function logFields(ctx: CallContext): Record<string, string> {
  const { name, ...rest } = ctx;
  return name !== undefined ? { ...rest, object: name } : rest;
}
