/**
 * Wait jobs. A wait checks once; if the condition is not met it moves itself back to the delayed
 * set (`job.moveToDelayed` + `DelayedError`) and frees the worker, so a thousand waits cost Redis
 * entries, not worker slots. Each wait owns one status message in the incident thread: posted on
 * the first check, edited on every later one, and ending with the result. What a wait posts is
 * recorded under its own key (`post-once.ts`): a check that runs again posts nothing twice.
 */
import { DelayedError } from "bullmq";
import { ErrorCode, isPermanent, toUserError, UnstuckError } from "../errors.js";
import type { KubePort } from "../kube/port.js";
import type { NamespaceSnapshot } from "../kube/types.js";
import type { Logger } from "../log.js";
import { ObservationKind, type Observe } from "../audit/observation.js";
import { postKey, unrecordedPosts, type PostLedger } from "./post-once.js";
import { JobName, jobId } from "./queues.js";
import type { WaitJob, WaitsQueue } from "./sealed-jobs.js";
import { clock } from "../util/format.js";
import { blockersLeftText, followUpsFailedText, renderNamespaceWaitStatus } from "../render/wait-status.js";

/** The one status message a wait owns. The Slack layer implements it with chat.postMessage/update. */
export interface ThreadReporter {
  post(channel: string, threadTs: string, text: string): Promise<{ ts: string }>;
  /**
   * `final`: the wait's result (never held back by {@link coalescedReporter}), not its progress. `at`:
   * when the text was written (epoch ms; default now), which orders edits across processes
   * (`status-writer.ts`).
   */
  update(
    channel: string,
    ts: string,
    text: string,
    options?: { readonly final?: boolean; readonly at?: number },
  ): Promise<void>;
  /** A reply with Block Kit (a card with buttons); its blocks escape their own text. */
  postCard?(channel: string, threadTs: string, card: ThreadCard): Promise<{ ts: string }>;
}

/** A rendered card for a thread: fallback text and Block Kit blocks. */
export interface ThreadCard {
  readonly text: string;
  readonly blocks: readonly unknown[];
  /** A file for the same thread, posted after the card (a command too long for the card, whole). */
  readonly file?: { readonly filename: string; readonly title: string; readonly content: string };
}

/** Lines naming what still blocks a namespace, e.g. `Ingress myapp/x (ingress.k8s.aws/resources)`. */
export type DescribeBlockers = (namespace: string) => Promise<readonly string[]>;

export interface NamespaceGoneData {
  readonly cluster: string;
  readonly namespace: string;
  readonly channel: string;
  readonly threadTs: string;
  /** Epoch ms after which the wait gives up and reports what still blocks. */
  readonly deadline: number;
  readonly intervalMs: number;
  /** The status message, once posted. */
  readonly statusTs?: string;
  readonly checks: number;
  /** What still blocks, as last described, and the namespace state it was described for. */
  readonly blockers?: { readonly text: string; readonly state: string; readonly at: number };
}

/**
 * A description of the blockers (a whole diagnosis: discovery plus one list per type) is reused
 * while the namespace's own status says nothing changed, for at most this long; a check is
 * otherwise one GET of the namespace, so a thousand waits stay a thousand light requests.
 */
export const BLOCKERS_REFRESH_MS = 5 * 60_000;

/**
 * What the namespace controller reports about the content left: its conditions (which name the
 * remaining resources and finalizers with counts) and phase. Transition times are left out, so
 * only a change in what remains counts.
 */
function contentState(snapshot: NamespaceSnapshot): string {
  return JSON.stringify([
    snapshot.phase,
    snapshot.conditions.map((c) => [c.type, c.status, c.reason ?? "", c.message ?? ""]),
  ]);
}

export interface NamespaceGoneResult {
  readonly outcome: "gone" | "timed-out";
  readonly checks: number;
  readonly text: string;
}

export interface WaitDeps {
  readonly kube: Pick<KubePort, "getNamespace">;
  readonly reporter: ThreadReporter;
  readonly describeBlockers: DescribeBlockers;
  readonly now: () => Date;
  readonly log?: Logger;
  /** Records the wait's start and end in the audit log for the incident timeline (never throws). */
  readonly record?: Observe;
  /**
   * What to check once the namespace is gone (orphans left in AWS, the traffic path): each text is
   * posted as its own reply in the same thread. Failures are reported there, never thrown.
   */
  readonly afterGone?: (
    namespace: string,
    thread: { readonly channel: string; readonly threadTs: string },
  ) => Promise<readonly (string | ThreadCard)[]>;
  /**
   * Called once when the wait ends (gone or timed out), before the follow-ups: the runtime queues
   * the repaint of every message posted about the namespace (diagnosis cards GONE, "Watching…"
   * done). Failures are logged, never thrown: the result is already in the thread.
   */
  readonly onFinished?: (data: NamespaceGoneData, result: NamespaceGoneResult) => Promise<void>;
  /**
   * Records each post under a key naming this wait and the message (its status, each follow-up), so
   * a check that runs again (a job handed over or re-delivered) posts nothing twice. Without it every
   * run posts.
   */
  readonly posted?: PostLedger;
}

/**
 * One wait per namespace: a second request — a manual `watch` while the approval's wait runs, or the
 * other way round — joins the running wait (and its caller links to that wait's thread) instead of
 * posting a second "gone" later.
 */
export function namespaceGoneJobId(cluster: string, namespace: string): string {
  return jobId(JobName.NamespaceGone, cluster, namespace);
}

/** The idempotency key of one post of one namespace wait (an episode: its deadline tells them apart). */
function waitPostKey(data: NamespaceGoneData, what: string): string {
  return postKey("ns-gone", data.cluster, data.namespace, data.channel, data.threadTs, data.deadline, what);
}

/** Where a namespace-gone request ended up: a new wait, or the one already running (and its thread). */
export interface NamespaceGoneStarted {
  readonly id: string;
  /** True when a wait for the namespace was already running: this request joined it. */
  readonly joined: boolean;
  /** The thread the running wait reports in (this request's thread when not joined). */
  readonly channel: string;
  readonly threadTs: string;
}

export interface NamespaceGoneRequest {
  readonly cluster: string;
  readonly namespace: string;
  readonly channel: string;
  readonly threadTs: string;
  /** How long to wait in total. */
  readonly timeoutMs: number;
  /** Pause between checks (default 15 s, the namespace controller's own requeue period). */
  readonly intervalMs?: number;
}

/**
 * Start a "namespace gone" wait; the first check runs at once. A second request for the same
 * cluster, namespace and thread while one is running joins it (same job id) instead of adding another.
 */
export async function enqueueNamespaceGone(
  waits: WaitsQueue,
  request: NamespaceGoneRequest,
  now: Date,
): Promise<string> {
  return (await startNamespaceGone(waits, request, now)).id;
}

/**
 * Start a "namespace gone" wait, or join the one running for the namespace. A finished or failed
 * wait of an earlier episode (kept a day for inspection) is removed first, so it cannot swallow
 * the new one; a wait still waiting, delayed or active is joined. The stored job says which thread
 * won when two requests race (the job id makes BullMQ keep only the first).
 */
export async function startNamespaceGone(
  waits: WaitsQueue,
  request: NamespaceGoneRequest,
  now: Date,
): Promise<NamespaceGoneStarted> {
  const id = namespaceGoneJobId(request.cluster, request.namespace);
  const old = await waits.getJob(id);
  if (old !== undefined) {
    const state = await old.getState();
    const said = old.data as NamespaceGoneData | undefined;
    if (state === "completed" && said?.channel === request.channel && said.threadTs === request.threadTs) {
      // This thread's wait ran to its end already (a follow-up started again after a worker died in
      // it): it said its result there, so it is not started a second time.
      return { id, joined: false, channel: request.channel, threadTs: request.threadTs };
    }
    if (state === "completed" || state === "failed") {
      await old.remove().catch(() => undefined); // gone already, or locked: the add below decides
    }
  }
  await addNamespaceGone(waits, id, request, now);
  // Its data as sealed (a wait whose seal does not verify is no thread to join).
  const running = (await waits.getJob(id))?.data as NamespaceGoneData | undefined;
  // Removed already (finished at its first check): it was ours.
  const channel = running?.channel ?? request.channel;
  const threadTs = running?.threadTs ?? request.threadTs;
  return {
    id,
    joined: channel !== request.channel || threadTs !== request.threadTs,
    channel,
    threadTs,
  };
}

async function addNamespaceGone(
  waits: WaitsQueue,
  id: string,
  request: NamespaceGoneRequest,
  now: Date,
): Promise<void> {
  const data: NamespaceGoneData = {
    cluster: request.cluster,
    namespace: request.namespace,
    channel: request.channel,
    threadTs: request.threadTs,
    deadline: now.getTime() + request.timeoutMs,
    intervalMs: request.intervalMs ?? 15_000,
    checks: 0,
  };
  await waits.add(JobName.NamespaceGone, data, {
    jobId: id,
    // A finished wait is removed, so the same namespace can be waited on again later.
    removeOnComplete: true,
    removeOnFail: { age: 86_400 },
    attempts: 3,
    backoff: { type: "exponential", delay: 5000 },
  });
}

/** The namespace is gone: post what follows (orphans, the path) in its thread, each once. */
async function postGoneFollowUps(
  data: NamespaceGoneData,
  afterGone: NonNullable<WaitDeps["afterGone"]>,
  deps: WaitDeps,
  posted: PostLedger,
): Promise<void> {
  const ns = data.namespace;
  // The namespace is gone, so what the forced removal may have left behind and whether the
  // traffic still reaches a live load balancer are the next questions (docs/incident.md, steps 9–11).
  let followUps: readonly (string | ThreadCard)[];
  try {
    followUps = await afterGone(ns, { channel: data.channel, threadTs: data.threadTs });
  } catch (err) {
    followUps = [followUpsFailedText(ns, toUserError(err).message)];
  }
  for (const [i, f] of followUps.entries()) {
    try {
      // A check that runs again recomputes them; what an earlier run posted is not posted again.
      await posted.once(waitPostKey(data, `follow-up:${String(i)}`), () => {
        if (typeof f === "string") return deps.reporter.post(data.channel, data.threadTs, f);
        if (deps.reporter.postCard) return deps.reporter.postCard(data.channel, data.threadTs, f);
        return deps.reporter.post(data.channel, data.threadTs, f.text);
      });
    } catch (err) {
      deps.log?.warn(
        { err: { message: toUserError(err).message } },
        "could not post a follow-up in the thread",
      );
    }
  }
}

/**
 * One check of a "namespace gone" wait. Completes with the result, or re-schedules itself and
 * throws `DelayedError` (which tells the BullMQ worker the job was moved, not failed).
 */
export async function checkNamespaceGone(
  job: WaitJob<NamespaceGoneData>,
  token: string | undefined,
  deps: WaitDeps,
): Promise<NamespaceGoneResult> {
  const data = job.data;
  const now = deps.now().getTime();
  const checks = data.checks + 1;
  const ns = data.namespace;

  let text: string;
  let result: NamespaceGoneResult | undefined;
  let described = data.blockers;
  try {
    const snapshot = await deps.kube.getNamespace(ns);
    if (snapshot === null) {
      text = renderNamespaceWaitStatus({ kind: "gone", namespace: ns, check: checks });
      result = { outcome: "gone", checks, text };
    } else {
      const phase = snapshot.phase;
      const state = contentState(snapshot);
      const atDeadline = now >= data.deadline;
      // Described afresh only when the report could differ: the first check, a change in what
      // the namespace says remains, an old description, and the final report at the deadline.
      if (
        described === undefined ||
        described.state !== state ||
        now - described.at >= BLOCKERS_REFRESH_MS ||
        atDeadline
      ) {
        described = { text: blockersLeftText(await deps.describeBlockers(ns)), state, at: now };
      }
      const blockers = described.text;
      if (atDeadline) {
        text = renderNamespaceWaitStatus({
          kind: "timed-out",
          namespace: ns,
          phase,
          deadline: clock(data.deadline),
          blockers,
        });
        result = { outcome: "timed-out", checks, text };
      } else {
        text = renderNamespaceWaitStatus({
          kind: "waiting",
          namespace: ns,
          phase,
          blockers,
          check: checks,
          nextAt: clock(now + data.intervalMs),
          givesUpAt: clock(data.deadline),
        });
      }
    }
  } catch (err) {
    if (isPermanent(err)) throw err;
    // A flaky read is not an answer: say so and keep waiting until the deadline.
    const { message } = toUserError(err);
    if (now >= data.deadline) {
      text = renderNamespaceWaitStatus({
        kind: "unconfirmed",
        namespace: ns,
        deadline: clock(data.deadline),
        message,
      });
      result = { outcome: "timed-out", checks, text };
    } else {
      text = renderNamespaceWaitStatus({
        kind: "check-failed",
        namespace: ns,
        check: checks,
        message,
        retryAt: clock(now + data.intervalMs),
      });
    }
  }

  const posted = deps.posted ?? unrecordedPosts;
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
    target: `namespace ${ns}`,
  };
  if (data.checks === 0) {
    await deps.record?.({
      ...where,
      kind: ObservationKind.WaitStarted,
      result: `waiting for namespace ${ns} to be gone (gives up at ${clock(data.deadline)})`,
    });
  }
  if (result) await deps.record?.({ ...where, kind: ObservationKind.WaitFinished, result: result.text });
  if (result && deps.onFinished) {
    try {
      await deps.onFinished(data, result);
    } catch (err) {
      deps.log?.warn(
        { err: { message: toUserError(err).message }, namespace: ns },
        "could not queue the repaint of the namespace's messages",
      );
    }
  }
  if (result?.outcome === "gone" && deps.afterGone)
    await postGoneFollowUps(data, deps.afterGone, deps, posted);
  if (result) return result;
  await job.updateData({ ...data, checks, statusTs, ...(described ? { blockers: described } : {}) });
  await job.moveToDelayed(now + data.intervalMs, token);
  throw new DelayedError();
}

/**
 * Post the wait's status message, or edit it. A first check that runs again finds the message its
 * earlier run posted (the record outlives a job whose `statusTs` was never saved) and edits it.
 */
async function report(
  reporter: ThreadReporter,
  posted: PostLedger,
  data: NamespaceGoneData,
  text: string,
  final: boolean,
): Promise<string> {
  return statusMessage(reporter, posted, waitPostKey(data, "status"), data, text, final);
}

/** How long past its deadline a wait keeps trying to post its result while Slack refuses it. */
export const RESULT_POST_GRACE_MS = 30 * 60_000;
/**
 * The pause before a wait tries again to post its result after Slack refused it (429, 5xx): short,
 * since the job holds no worker slot meanwhile and Slack's per-channel limit is about a post a second.
 */
const RESULT_POST_RETRY_MS = 5_000;

/**
 * A wait's status post or edit, tolerant of Slack being briefly unavailable (a 429 burst, a 5xx): the
 * reporter's client retries a few seconds only, so a refused progress line is left to the next
 * check (the wait never stalls on it), and a refused result re-delays the job to say it again in
 * 5 s, up to half an hour past the deadline. Returns the status message's `ts` as far as known.
 */
export async function statusOrLater(
  job: WaitJob<{ readonly deadline: number; readonly statusTs?: string }>,
  token: string | undefined,
  now: number,
  final: boolean,
  send: () => Promise<string>,
  log?: Logger,
): Promise<string | undefined> {
  try {
    return await send();
  } catch (err) {
    if (isPermanent(err)) throw err;
    const message = toUserError(err).message;
    if (!final) {
      log?.warn({ job: job.id, err: { message } }, "could not post a wait's progress; its next check does");
      return job.data.statusTs;
    }
    if (now >= job.data.deadline + RESULT_POST_GRACE_MS) throw err;
    log?.warn({ job: job.id, err: { message } }, "could not post a wait's result; trying again in 5 s");
    await job.moveToDelayed(now + RESULT_POST_RETRY_MS, token);
    throw new DelayedError();
  }
}

/**
 * The one status message of a wait: posted once under `key`, edited from then on. `final` marks
 * the wait's result, which a coalescing reporter sends at once (progress it may fold into a later edit).
 */
export async function statusMessage(
  reporter: ThreadReporter,
  posted: PostLedger,
  key: string,
  where: { readonly channel: string; readonly threadTs: string; readonly statusTs?: string },
  text: string,
  final = false,
): Promise<string> {
  const edit = (ts: string): Promise<void> =>
    final
      ? reporter.update(where.channel, ts, text, { final: true })
      : reporter.update(where.channel, ts, text);
  if (where.statusTs !== undefined) {
    await edit(where.statusTs);
    return where.statusTs;
  }
  const made = await posted.once(key, () => reporter.post(where.channel, where.threadTs, text));
  if (made.ts === undefined) {
    throw new UnstuckError(ErrorCode.Upstream, "The wait's status message was posted but its ts is unknown.");
  }
  if (!made.posted) await edit(made.ts);
  return made.ts;
}

export interface CoalesceOptions {
  /** Progress edits of one message closer together than this are folded into one (default 3 s). */
  readonly windowMs?: number;
  readonly log?: Logger;
  /** Clock (default `Date.now`). */
  readonly now?: () => number;
}

/** One message's edits: when it was last edited, and the progress held back for the window's end. */
interface EditState {
  lastAt: number;
  pending?: string;
  /** When the held-back text was written. */
  pendingAt?: number;
  timer?: ReturnType<typeof setTimeout>;
  sending?: Promise<void>;
}

/**
 * A reporter whose progress edits of one message, within `windowMs` of its last edit, collapse into
 * one edit carrying the latest text, sent when the window ends (the caller does not wait for it). A
 * final edit (a wait's result) cancels any held-back progress and is sent at once, after an edit in
 * flight, so the message always ends on its final state. Posts pass through.
 */
export function coalescedReporter(reporter: ThreadReporter, options: CoalesceOptions = {}): ThreadReporter {
  const windowMs = options.windowMs ?? 3_000;
  const now = options.now ?? Date.now;
  const states = new Map<string, EditState>();

  const send = (state: EditState, channel: string, ts: string, text: string, at: number): Promise<void> => {
    state.lastAt = now();
    const p = reporter.update(channel, ts, text, { at }).finally(() => {
      if (state.sending === p) delete state.sending;
    });
    state.sending = p;
    return p;
  };
  /** Forget messages whose window is long over (nothing held back), so the map stays small. */
  const prune = (): void => {
    if (states.size < 1_000) return;
    const cutoff = now() - windowMs;
    for (const [key, st] of states) {
      if (st.timer === undefined && st.sending === undefined && st.lastAt < cutoff) states.delete(key);
    }
  };

  return {
    post: (channel, threadTs, text) => reporter.post(channel, threadTs, text),
    ...(reporter.postCard !== undefined
      ? {
          postCard: (channel: string, threadTs: string, card: ThreadCard) => {
            if (reporter.postCard === undefined) return reporter.post(channel, threadTs, card.text);
            return reporter.postCard(channel, threadTs, card);
          },
        }
      : {}),
    async update(channel, ts, text, updateOptions) {
      const key = `${channel}\u0000${ts}`;
      const state = states.get(key);
      if (updateOptions?.final === true) {
        if (state?.timer !== undefined) clearTimeout(state.timer);
        states.delete(key);
        // After any progress edit still on its way, so it cannot land over the result.
        await state?.sending?.catch(() => undefined);
        await reporter.update(channel, ts, text, { final: true, at: updateOptions.at ?? now() });
        return;
      }
      const wait = state === undefined ? 0 : state.lastAt + windowMs - now();
      if (state === undefined || (wait <= 0 && state.sending === undefined && state.timer === undefined)) {
        prune();
        const fresh = state ?? { lastAt: 0 };
        states.set(key, fresh);
        await send(fresh, channel, ts, text, updateOptions?.at ?? now());
        return;
      }
      // Within the window (or behind an edit in flight): hold the latest text for the window's end.
      state.pending = text;
      state.pendingAt = updateOptions?.at ?? now();
      state.timer ??= setTimeout(
        () => {
          delete state.timer;
          const latest = state.pending;
          const latestAt = state.pendingAt ?? now();
          delete state.pending;
          delete state.pendingAt;
          if (latest === undefined || states.get(key) !== state) return;
          void (async () => {
            await state.sending?.catch(() => undefined);
            if (states.get(key) !== state) return;
            await send(state, channel, ts, latest, latestAt);
          })().catch((err: unknown) =>
            options.log?.warn(
              { channel, ts, err: { message: toUserError(err).message } },
              "could not edit a wait's status message; its next check edits it again",
            ),
          );
        },
        Math.max(0, wait),
      );
      state.timer.unref?.();
    },
  };
}
