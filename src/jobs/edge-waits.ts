/**
 * Waits on the edge after a repair: a CloudFront distribution `Deployed`, a Route 53 change
 * `INSYNC`, an old load balancer name gone from DNS (NXDOMAIN), a URL answering 2xx. Each is one
 * job on the `waits` queue that checks once and, when not done, moves itself back to the delayed
 * set (`job.moveToDelayed` + `DelayedError`), so no worker slot is held between checks. The pause
 * grows from a first interval to a ceiling (CloudFront 20 s → 60 s): the early checks catch a quick
 * finish, the later ones cost little over a 45-minute deadline.
 *
 * Each wait owns one status message in the incident thread, and only that one: posted when the wait
 * is started (in the order its caller starts them, see {@link enqueueEdgeWait}) or at its first
 * check, edited on every later one, and edited to the result at the end — never a second reply with
 * the same result, so a repair's thread reads one line per thing waited for. The post is recorded
 * under the wait's key (`post-once.ts`), so a check that runs again — its job handed over, or
 * re-delivered after a Redis restart — edits the message instead of posting another.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { DelayedError } from "bullmq";
import type { EdgeWaitAwsReads } from "../aws/port.js";
import type { EdgeProbe } from "../net/port.js";
import {
  changeIdOf,
  lookIsDone,
  type EdgeWaitKind,
  type EdgeWaitTarget,
  type Look,
} from "../edge/edge-wait.js";
import { edgeWaitSubject, renderEdgeWaitStatus } from "../render/edge-wait-text.js";
import { ErrorCode, isPermanent, isUnstuckError, toUserError, UnstuckError } from "../errors.js";
import type { Logger } from "../log.js";
import { ObservationKind, type Observe } from "../audit/observation.js";
import { postKey, unrecordedPosts, type PostLedger } from "./post-once.js";
import { JobName, jobId } from "./queues.js";
import type { WaitJob, WaitsQueue } from "./sealed-jobs.js";
import { seal, unseal, type SealKeys } from "../trust/sealed.js";
import { loadScript, type ScriptRedis } from "../redis/scripts.js";
import { statusMessage, statusOrLater, type ThreadReporter } from "./waits.js";
import { clock } from "../util/format.js";
import { RedisKeys } from "../redis/keys.js";

/** What an edge wait waits for. */
export type { EdgeWaitKind, EdgeWaitTarget, Look } from "../edge/edge-wait.js";

/** First pause, largest pause and total time of each kind, unless the request says otherwise. */
export const EDGE_WAIT_DEFAULTS: Readonly<
  Record<
    EdgeWaitKind,
    { readonly intervalMs: number; readonly maxIntervalMs: number; readonly timeoutMs: number }
  >
> = {
  // A CloudFront deployment takes minutes (AWS: typically under 15).
  "cloudfront-deployed": { intervalMs: 20_000, maxIntervalMs: 60_000, timeoutMs: 45 * 60_000 },
  // Route 53 propagates to its name servers within about 60 s.
  "route53-insync": { intervalMs: 5_000, maxIntervalMs: 30_000, timeoutMs: 10 * 60_000 },
  // Resolvers may keep a positive answer for its TTL (60 s for ELB names) after the deletion.
  "dns-nxdomain": { intervalMs: 10_000, maxIntervalMs: 60_000, timeoutMs: 15 * 60_000 },
  "http-ok": { intervalMs: 10_000, maxIntervalMs: 60_000, timeoutMs: 15 * 60_000 },
};

/** Each pause is this much longer than the one before, up to the ceiling. */
export const EDGE_BACKOFF_FACTOR = 1.5;

export interface EdgeWaitRequest {
  readonly target: EdgeWaitTarget;
  readonly cluster: string;
  readonly channel: string;
  readonly threadTs: string;
  /** How long to wait in total (default per kind, see {@link EDGE_WAIT_DEFAULTS}). */
  readonly timeoutMs?: number;
  /** First pause between checks (default per kind). */
  readonly intervalMs?: number;
  /** Largest pause between checks (default per kind; never below `intervalMs`). */
  readonly maxIntervalMs?: number;
  /**
   * How long before the first check (default none). Waits started together are staggered by it, so
   * their status messages, each posted by its wait's first check, come in the order they were started.
   */
  readonly firstCheckInMs?: number;
}

export interface EdgeWaitData {
  readonly target: EdgeWaitTarget;
  readonly cluster: string;
  readonly channel: string;
  readonly threadTs: string;
  /** Epoch ms the wait was requested: "InProgress for 3m12s" counts from here. */
  readonly startedAt: number;
  /** Epoch ms after which the wait gives up and says what to check. */
  readonly deadline: number;
  /** The next pause. */
  readonly intervalMs: number;
  /** The first pause: how fresh a look shared by another wait on the target must be (older jobs lack it). */
  readonly firstIntervalMs?: number;
  readonly maxIntervalMs: number;
  /** The status message, once posted. */
  readonly statusTs?: string;
  readonly checks: number;
}

export interface EdgeWaitResult {
  readonly outcome: "done" | "timed-out";
  readonly checks: number;
  readonly text: string;
}

export interface EdgeWaitDeps {
  readonly aws: EdgeWaitAwsReads;
  readonly reporter: ThreadReporter;
  readonly probe: EdgeProbe;
  readonly now: () => Date;
  readonly log?: Logger;
  /** Records the wait's start and end in the audit log for the incident timeline (never throws). */
  readonly record?: Observe;
  /** Records each post under this wait's key, so a check that runs again posts nothing twice. */
  readonly posted?: PostLedger;
  /**
   * The last look at each target, shared by every wait on it (whichever replica runs it): a wait
   * that finds a fresh one reads it instead of asking AWS again. Without it every check looks.
   */
  readonly shared?: SharedChecks;
  /** Random source of the pauses' jitter (default `Math.random`). */
  readonly random?: () => number;
}

/** Each pause is the nominal one plus up to this fraction, at random: never shorter. */
export const EDGE_JITTER = 0.2;

/**
 * A look taken by another wait on the same target is used while younger than this fraction of the
 * wait's first pause. A whole pause, counted from when the look was asked for: a target is looked
 * at no more than once per interval, however many waits share it and however their checks drift
 * apart. A wait's own last look is never an answer to it; when it is younger than a pause (that
 * check's call came a moment after the check began), the wait looks again once it is a pause old.
 */
export const SHARED_LOOK_FRESH = 1;

/** A check that must not look yet: its own last look is younger than a pause until `at`. */
interface LookLater {
  readonly later: number;
}

function jittered(ms: number, random: () => number): number {
  return Math.max(1, Math.round(ms * (1 + EDGE_JITTER * random())));
}

/**
 * The last look at each target, in Redis, shared by every wait on it: a wait reads a look younger
 * than its freshness bound; otherwise one wait at a time claims the target and looks, the others
 * wait briefly for its look. Any failure here only means a wait looks for itself.
 */
export interface SharedChecks {
  /** The latest look at `key` asked for after `since` (epoch ms, the waits' clock), if any. */
  read(key: string, since: number): Promise<SharedLook | undefined>;
  /** The right to look at `key` now (one wait at a time, for a short lease); a token, or undefined if held. */
  claim(key: string): Promise<string | undefined>;
  /** Record a look asked for at `at` by the wait `by`, and give up the claim `token`. */
  write(key: string, at: number, seen: Look, token: string | undefined, by?: string): Promise<void>;
  /** Give up a claim without a look (the look failed). */
  release(key: string, token: string): Promise<void>;
  /** How long a wait that found the target claimed waits for that look before looking itself. */
  readonly waitMs: number;
}

/** A look as shared: when it was asked for, by which wait (its job id), and what it saw. */
export interface SharedLook {
  readonly at: number;
  readonly by?: string;
  readonly look: Look;
}

/** The Redis call the shared looks need (a plain client or a cluster client alike). */
export type SharedChecksRedis = ScriptRedis;

const READ_LOOK = loadScript("look-read.1.lua");
const CLAIM_LOOK = loadScript("look-claim.1.lua");
const WRITE_LOOK = loadScript("look-write.2.lua");
const RELEASE_LOOK = loadScript("release-if-held.1.lua");

export interface SharedChecksOptions {
  /** How long a claim holds (default 15 s: longer than one AWS read with its retries). */
  readonly claimMs?: number;
  /** How long a look is kept in Redis at most (default 10 min); freshness is each wait's own bound. */
  readonly keepMs?: number;
  /** How long a wait waits for the claimant's look (default 5 s). */
  readonly waitMs?: number;
  /** Signs each look with this worker's key and checks the looks it reads: without it no look is shared. */
  readonly seal?: SealKeys;
}

export function redisSharedChecks(
  redis: SharedChecksRedis,
  prefix: string,
  options: SharedChecksOptions = {},
): SharedChecks {
  const claimMs = options.claimMs ?? 15_000;
  const keepMs = options.keepMs ?? 10 * 60_000;
  // On a Redis Cluster the prefix is hash-tagged, so a look and its claim share a slot.
  const keyOf = (key: string): string => RedisKeys.edgeLook(prefix, key);
  const claimOf = (key: string): string => RedisKeys.edgeLookClaim(prefix, key);
  return {
    waitMs: options.waitMs ?? 5_000,
    async read(key, since) {
      const raw = await READ_LOOK.run(redis, [keyOf(key)]);
      if (typeof raw !== "string") return undefined;
      const bar = raw.indexOf("|");
      const at = Number(raw.slice(0, bar));
      if (!(at > since)) return undefined;
      let stored: unknown;
      try {
        stored = JSON.parse(raw.slice(bar + 1));
      } catch {
        return undefined;
      }
      // A look is what a worker saw of AWS: only one signed by this install counts (a look written into
      // Redis, "Deployed" when it is not, is no answer; the wait looks for itself).
      const opened =
        options.seal !== undefined
          ? unseal<{ look: Look; by?: unknown; at: number; key: string }>(
              options.seal.keyring,
              "edge-look",
              stored,
              () => true,
            )
          : undefined;
      if (opened === undefined || !opened.ok || opened.data.at !== at || opened.data.key !== key)
        return undefined;
      const s = opened.data;
      return { at, look: s.look, ...(typeof s.by === "string" ? { by: s.by } : {}) };
    },
    async claim(key) {
      const token = randomUUID();
      return (await CLAIM_LOOK.run(redis, [claimOf(key)], [token, claimMs])) === 1 ? token : undefined;
    },
    async write(key, at, seen, token, by) {
      await WRITE_LOOK.run(
        redis,
        [keyOf(key), claimOf(key)],
        [
          JSON.stringify(
            options.seal?.key !== undefined
              ? seal(options.seal.key, "edge-look", {
                  look: seen,
                  at,
                  key,
                  ...(by !== undefined ? { by } : {}),
                })
              : {},
          ),
          at,
          keepMs,
          token ?? "",
        ],
      );
    },
    async release(key, token) {
      await RELEASE_LOOK.run(redis, [claimOf(key)], [token]);
    },
  };
}

/**
 * Look at the wait's target, or read the look another wait on it took within the freshness bound
 * (one look per target per interval, however many wait on it).
 */
async function sharedLook(
  data: EdgeWaitData,
  deps: EdgeWaitDeps,
  now: number,
  self: string | undefined,
): Promise<Look | LookLater> {
  const shared = deps.shared;
  if (shared === undefined) return look(data.target, deps);
  const key = postKey(data.target.kind, targetKey(data.target));
  const fresh = SHARED_LOOK_FRESH * (data.firstIntervalMs ?? data.intervalMs);
  const since = now - fresh;
  /** Another wait's look, fresh; this wait's own last look is never its answer. */
  const theirs = (s: SharedLook | undefined): Look | undefined =>
    s !== undefined && (self === undefined || s.by !== self) ? s.look : undefined;
  let token: string | undefined;
  try {
    const seen = await shared.read(key, since);
    const answer = theirs(seen);
    if (answer !== undefined) return answer;
    // This wait's own look, younger than a pause: its last call came a moment after that check
    // began. Looking now would look twice within a pause: this check runs again once it is a pause
    // old (its slot free meanwhile).
    if (seen !== undefined) return { later: seen.at + fresh + 1 };
    token = await shared.claim(key);
    if (token !== undefined) {
      // Another wait may have looked and given up its claim between the read above and this claim:
      // its look, then, not a second call within the same pause.
      const raced = theirs(await shared.read(key, since));
      if (raced !== undefined) {
        await shared.release(key, token);
        return raced;
      }
    } else {
      // Another wait is looking right now: its look, if it comes soon enough.
      const until = Date.now() + shared.waitMs;
      while (Date.now() < until) {
        await sleep(25);
        const looked = theirs(await shared.read(key, since));
        if (looked !== undefined) return looked;
      }
    }
  } catch (err) {
    deps.log?.debug({ err: { message: toUserError(err).message } }, "shared edge look unavailable; looking");
  }
  // Stamped with when it is asked for, so the next look at the target, by any wait, comes a whole
  // pause after this one reaches AWS (not a pause after this check began).
  const at = deps.now().getTime();
  let seen: Look;
  try {
    seen = await look(data.target, deps);
  } catch (err) {
    if (token !== undefined) await shared.release(key, token).catch(() => undefined);
    throw err;
  }
  await shared.write(key, at, seen, token, self).catch(() => undefined);
  return seen;
}

function targetKey(target: EdgeWaitTarget): string {
  switch (target.kind) {
    case "cloudfront-deployed":
      return target.distributionId;
    case "route53-insync":
      return changeIdOf(target.changeId);
    case "dns-nxdomain":
      return target.name.toLowerCase().replace(/\.$/, "");
    case "http-ok":
      return target.url;
  }
}

/**
 * One wait per target and Slack thread: a repeated request (a retried click, the same fix
 * reported twice) joins the running wait; the same target waited on from another thread gets its
 * own status message there.
 */
export function edgeWaitJobId(target: EdgeWaitTarget, channel: string, threadTs: string): string {
  return jobId(JobName.EdgeWait, target.kind, targetKey(target), channel, threadTs);
}

/** The idempotency key of one post of one edge wait (a wait started again later is another one). */
function edgePostKey(
  data: Pick<EdgeWaitData, "target" | "channel" | "threadTs" | "startedAt">,
  what: string,
): string {
  return postKey(
    "edge-wait",
    data.target.kind,
    targetKey(data.target),
    data.channel,
    data.threadTs,
    data.startedAt,
    what,
  );
}

/**
 * Start an edge wait; the first check runs at once (or after `firstCheckInMs`) and posts the wait's
 * status message itself. Returns the job id (the same for a duplicate, which joins the running wait).
 */
export async function enqueueEdgeWait(waits: WaitsQueue, req: EdgeWaitRequest, now: Date): Promise<string> {
  const defaults = EDGE_WAIT_DEFAULTS[req.target.kind];
  const intervalMs = Math.max(1, req.intervalMs ?? defaults.intervalMs);
  const id = edgeWaitJobId(req.target, req.channel, req.threadTs);
  const data: EdgeWaitData = {
    target: req.target,
    cluster: req.cluster,
    channel: req.channel,
    threadTs: req.threadTs,
    startedAt: now.getTime(),
    deadline: now.getTime() + (req.timeoutMs ?? defaults.timeoutMs),
    intervalMs,
    firstIntervalMs: intervalMs,
    maxIntervalMs: Math.max(intervalMs, req.maxIntervalMs ?? defaults.maxIntervalMs),
    checks: 0,
  };
  await waits.add(JobName.EdgeWait, data, {
    jobId: id,
    ...(req.firstCheckInMs !== undefined && req.firstCheckInMs > 0 ? { delay: req.firstCheckInMs } : {}),
    // A finished wait is removed, so the same target can be waited on again after a later change.
    removeOnComplete: true,
    removeOnFail: { age: 86_400 },
    attempts: 3,
    backoff: { type: "exponential", delay: 5000 },
  });
  return id;
}

/** `40s`, `3m12s`, `1h05m00s`; under a second (tests) in ms. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, "0");
  if (h > 0) return `${h}h${pad(m)}m${pad(s)}s`;
  if (m > 0) return `${m}m${pad(s)}s`;
  return `${s}s`;
}

function bounded(message: string, max = 300): string {
  return message.length > max ? `${message.slice(0, max - 1)}…` : message;
}

/** A probe that got no answer at all: retried like a failed AWS read, never taken as a result. */
class ProbeError extends Error {
  public override readonly name = "ProbeError";
}

/** Looks once. Throws only when the look itself failed (an AWS read, a DNS lookup with no answer). */
async function look(target: EdgeWaitTarget, deps: EdgeWaitDeps): Promise<Look> {
  switch (target.kind) {
    case "cloudfront-deployed":
      return { kind: target.kind, status: (await deps.aws.distributionStatus(target.distributionId)).status };
    case "route53-insync":
      return {
        kind: target.kind,
        status: await deps.aws.changeStatus(changeIdOf(target.changeId)),
      };
    case "dns-nxdomain": {
      const name = target.name.replace(/\.$/, "");
      const answer = await deps.probe.resolve(name);
      if (answer.kind === "error") throw new ProbeError(`could not resolve ${name}: ${answer.message}`);
      return { kind: target.kind, answer };
    }
    case "http-ok":
      return { kind: target.kind, answer: await deps.probe.http(target.url) };
  }
}

/**
 * AWS says the distribution or change does not exist: waiting longer cannot help. (The adapter
 * reports these 404s as upstream errors, which would otherwise be retried until the deadline.)
 */
function targetMissing(err: unknown): err is UnstuckError {
  if (!isUnstuckError(err)) return false;
  const name = err.details["awsError"];
  return name === "NoSuchDistribution" || name === "NoSuchChange";
}

/**
 * One check of an edge wait. Completes with the result, or re-schedules itself and throws
 * `DelayedError` (which tells the BullMQ worker the job was moved, not failed). A permanent error
 * (a distribution that does not exist, a missing permission) is reported in the status message
 * and thrown; the worker turns it into `UnrecoverableError`.
 */
export async function checkEdgeWait(
  job: WaitJob<EdgeWaitData>,
  token: string | undefined,
  deps: EdgeWaitDeps,
): Promise<EdgeWaitResult> {
  const data = job.data;
  const now = deps.now().getTime();
  const checks = data.checks + 1;
  const elapsed = duration(now - data.startedAt);
  const atDeadline = now >= data.deadline;
  const when = `(${clock(data.deadline)}, after ${elapsed})`;
  const next = data.intervalMs;

  const posted = deps.posted ?? unrecordedPosts;
  let text: string;
  let result: EdgeWaitResult | undefined;
  try {
    const looked = await sharedLook(data, deps, now, job.id);
    if ("later" in looked) {
      // Nothing seen, nothing to say: the same check, a moment later.
      await job.moveToDelayed(looked.later, token);
      throw new DelayedError();
    }
    if (looked.kind === "dns-nxdomain" && looked.answer.kind === "error")
      throw new ProbeError(`could not resolve ${edgeWaitSubject(data.target)}: ${looked.answer.message}`);
    const target = data.target;
    if (lookIsDone(looked)) {
      text = renderEdgeWaitStatus({ kind: "done", target, look: looked, after: elapsed });
      result = { outcome: "done", checks, text };
    } else if (atDeadline) {
      text = renderEdgeWaitStatus({ kind: "timed-out", target, look: looked, when });
      result = { outcome: "timed-out", checks, text };
    } else {
      text = renderEdgeWaitStatus({
        kind: "waiting",
        target,
        look: looked,
        elapsed,
        check: checks,
        nextIn: duration(next),
      });
    }
  } catch (err) {
    if (err instanceof DelayedError) throw err;
    const message = bounded(err instanceof ProbeError ? err.message : toUserError(err).message, 500);
    const missing = targetMissing(err);
    if (isPermanent(err) || missing) {
      await report(
        deps.reporter,
        posted,
        data,
        renderEdgeWaitStatus({ kind: "cannot-check", target: data.target, message }),
        true,
      );
      throw missing ? new UnstuckError(ErrorCode.NotFound, message, err.details, { cause: err }) : err;
    }
    // A flaky read is not an answer: say so and keep waiting until the deadline.
    if (atDeadline) {
      text = renderEdgeWaitStatus({ kind: "unconfirmed", target: data.target, when, message });
      result = { outcome: "timed-out", checks, text };
    } else {
      text = renderEdgeWaitStatus({
        kind: "check-failed",
        target: data.target,
        check: checks,
        message,
        retryIn: duration(next),
      });
    }
  }

  const statusTs = await statusOrLater(
    job,
    token,
    now,
    result !== undefined,
    () => report(deps.reporter, posted, data, text, result !== undefined),
    deps.log,
  );
  const where = {
    channel: data.channel,
    threadTs: data.threadTs,
    component: "waits",
    target: `${data.target.kind} ${edgeWaitSubject(data.target)}`,
  };
  if (data.checks === 0) {
    await deps.record?.({
      ...where,
      kind: ObservationKind.WaitStarted,
      result: `waiting for ${data.target.kind} of ${edgeWaitSubject(data.target)} (gives up at ${clock(data.deadline)})`,
    });
  }
  if (result) await deps.record?.({ ...where, kind: ObservationKind.WaitFinished, result: result.text });
  if (result) {
    // The status message now says the result: the one message of this wait, edited, not repeated.
    deps.log?.info({ jobId: job.id, outcome: result.outcome, checks }, "edge wait finished");
    return result;
  }
  await job.updateData({
    ...data,
    checks,
    statusTs,
    intervalMs: Math.min(data.maxIntervalMs, Math.round(next * EDGE_BACKOFF_FACTOR)),
  });
  // Jittered, so waits started together (a repair that touched a hundred distributions) drift apart.
  await job.moveToDelayed(now + jittered(next, deps.random ?? Math.random), token);
  throw new DelayedError();
}

async function report(
  reporter: ThreadReporter,
  posted: PostLedger,
  data: EdgeWaitData,
  text: string,
  final: boolean,
): Promise<string> {
  return statusMessage(reporter, posted, edgePostKey(data, "status"), data, text, final);
}
