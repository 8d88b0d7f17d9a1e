/**
 * One bound on the Kubernetes API requests a process has in flight, shared by every diagnosis,
 * wait check and execution that uses the same adapter: 20 concurrent `ns` commands wait in one
 * queue instead of putting 20 × their own concurrency on the API server. A 429's `Retry-After`
 * holds every new request back for that long (requests already sent carry on).
 *
 * Waiting requests are taken round-robin between callers (a diagnosis, named by
 * {@link withRequestCaller}; FIFO within one caller), so one diagnosis's thousand lists never
 * starve another's five. With a {@link SharedBudget} (the bot's replicas sharing one Redis) a
 * request also holds one lease of a budget per API server for the whole fleet: the local queue
 * decides who goes next, the budget decides when. A budget that cannot be reached is set aside
 * for a while (logged once) and the local bound alone applies: a Redis outage never stops a
 * diagnosis.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface RequestLimiter {
  /**
   * Run `op` (one HTTP request) once a slot is free, round-robin between callers and in arrival
   * order within one. `retry` puts a request that already waited its turn (a retry after a 429 or
   * a 5xx) ahead of those that have not.
   */
  run<T>(op: () => Promise<T>, options?: { readonly retry?: boolean }): Promise<T>;
  /** Start no new request for `ms` from now (a 429's `Retry-After`); a longer hold wins. */
  holdFor(ms: number): void;
  /** Requests running now. */
  readonly inFlight: number;
  /** Requests waiting for a slot (or for a hold to end). */
  readonly waiting: number;
  /** The most requests that were ever in flight at once. */
  readonly peak: number;
  /** Stop the budget's timers and give back what this process holds (nothing to do without one). */
  close?(): Promise<void>;
}

/**
 * A budget of requests in flight at one API server, shared by every process (see
 * `shared-budget.ts`): leases that expire unless renewed, so a process that dies gives its back.
 */
export interface SharedBudget {
  /**
   * Give back `release` and ask for up to `want` new leases, this process then holding `held`
   * (the leases it keeps). Resolves with the lease ids granted (none when the budget is spent);
   * rejects when the budget cannot be reached.
   */
  exchange(release: readonly string[], want: number, held: number): Promise<readonly string[]>;
  /** Keep the leases this process holds alive (every third of their lifetime). */
  renew(ids: readonly string[]): Promise<void>;
  /** How long a lease lives unrenewed, in ms. */
  readonly leaseMs: number;
  /** What the budget bounds (an API server), for the log. */
  readonly name: string;
}

/** What the limiter says about its budget (a logger's shape, so any logger fits). */
export interface BudgetLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface LimiterOptions {
  /** Most requests in flight at once (≥ 1). */
  readonly concurrency: number;
  /** Clock for holds (default `Date.now`). */
  readonly now?: () => number;
  /** The fleet's budget at this API server; without one the local bound alone applies. */
  readonly budget?: SharedBudget;
  /** Where the budget's outage and recovery are logged (once each). */
  readonly log?: BudgetLog;
  /** Longest wait for the budget's answer before it is set aside (default 1 s). */
  readonly budgetTimeoutMs?: number;
  /** How long an unreachable budget is set aside before it is tried again (default 10 s). */
  readonly budgetRetryMs?: number;
  /** Longest wait for a lease before a request runs without one (default 5 s). */
  readonly leaseWaitMs?: number;
}

/**
 * Default bound, shared by every diagnosis of one adapter, and a diagnosis' own list concurrency:
 * 64 metadata-only lists fill one round for a cluster of ~160 types in three waves. It sits well
 * inside what API Priority and Fairness gives a ServiceAccount's flow (the `workload-low` level
 * holds about 40 % of a default kube-apiserver's 600 seats); a server that wants fewer says so
 * with 429 and Retry-After, which holds every new request back.
 */
export const DEFAULT_KUBE_CONCURRENCY = 64;

const callerScope = new AsyncLocalStorage<string>();
const exemptScope = new AsyncLocalStorage<true>();

/**
 * Run `fn` with its Kubernetes requests exempt from the shared budget and the local queue: an
 * approved change being made and the deletion guard's reconcile loop never wait behind diagnoses,
 * nor on leases another process (or a forged lease) holds. They are few, and count as in flight.
 */
export function withoutSharedBudget<T>(fn: () => T): T {
  return exemptScope.run(true, fn);
}

/**
 * Run `fn` with every Kubernetes request it makes queued under `key` (e.g. one diagnosis): the
 * limiter takes callers round-robin. An outer key wins unless `replace` is set.
 */
export function withRequestCaller<T>(key: string, fn: () => T, replace = false): T {
  return !replace && callerScope.getStore() !== undefined ? fn() : callerScope.run(key, fn);
}

/** The caller key of the code running now ("" outside any). */
export function requestCaller(): string {
  return callerScope.getStore() ?? "";
}

/** Pauses between two asks of a spent budget: from the first to the last, doubling. */
const POLL_FIRST_MS = 5;
const POLL_LAST_MS = 100;

interface Entry {
  readonly start: (lease: string | undefined) => void;
  /** When it started waiting (the limiter's clock). */
  readonly since: number;
}

/** Longest a request waits for a lease of the shared budget before it runs under the local bound alone. */
const LEASE_WAIT_MS = 5_000;

export function createLimiter(options: LimiterOptions): RequestLimiter {
  const concurrency = Math.max(1, Math.floor(options.concurrency));
  const now = options.now ?? Date.now;
  const budget = options.budget;
  const budgetTimeoutMs = options.budgetTimeoutMs ?? 1_000;
  const budgetRetryMs = options.budgetRetryMs ?? 10_000;
  const leaseWaitMs = options.leaseWaitMs ?? LEASE_WAIT_MS;
  /** Retries first, then one request per caller in turn. */
  const retries: Entry[] = [];
  const callers = new Map<string, Entry[]>();
  let waiting = 0;
  let inFlight = 0;
  let peak = 0;
  let holdUntil = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  // The budget: leases granted and not yet given to a request, those in use, those to give back.
  const spare: string[] = [];
  const inUse = new Set<string>();
  let toRelease: string[] = [];
  let asking = false;
  let pollMs = POLL_FIRST_MS;
  let pollTimer: ReturnType<typeof setTimeout> | undefined;
  let renewTimer: ReturnType<typeof setInterval> | undefined;
  let setAsideUntil = 0;
  let outage = false;
  let closed = false;

  const take = (): Entry | undefined => {
    const retry = retries.shift();
    if (retry !== undefined) {
      waiting--;
      return retry;
    }
    // Map order is the round: the caller served goes to the back if it has more waiting.
    for (const [key, queue] of callers) {
      const entry = queue.shift();
      callers.delete(key);
      if (queue.length > 0) callers.set(key, queue);
      if (entry !== undefined) {
        waiting--;
        return entry;
      }
    }
    return undefined;
  };

  /** When the longest-waiting request started waiting (Infinity when none waits). */
  const oldestWaiting = (): number => {
    let oldest = retries[0]?.since ?? Infinity;
    for (const queue of callers.values()) oldest = Math.min(oldest, queue[0]?.since ?? Infinity);
    return oldest;
  };

  const budgetInUse = (): boolean => budget !== undefined && !closed && now() >= setAsideUntil;

  const setAside = (err: unknown): void => {
    setAsideUntil = now() + budgetRetryMs;
    // Leases not yet used are dropped: they expire on their own if the budget kept them.
    spare.length = 0;
    if (!outage) {
      outage = true;
      options.log?.warn(
        {
          budget: budget?.name,
          retryInMs: budgetRetryMs,
          err: { message: err instanceof Error ? err.message : String(err) },
        },
        "kube request budget unreachable; only the per-process bound applies until it answers again",
      );
    }
    pump();
  };

  const keepRenewing = (): void => {
    if (budget === undefined) return;
    if (inUse.size === 0) {
      if (renewTimer !== undefined) clearInterval(renewTimer);
      renewTimer = undefined;
      return;
    }
    renewTimer ??= setInterval(
      () => void budget.renew([...inUse]).catch(() => undefined),
      Math.max(10, Math.floor(budget.leaseMs / 3)),
    );
    renewTimer.unref?.();
  };

  /** One round trip to the budget: give back what finished, ask for what waits. */
  const ask = (): void => {
    if (budget === undefined || asking) return;
    const want = closed ? 0 : Math.max(0, Math.min(waiting, concurrency - inFlight) - spare.length);
    if (want === 0 && toRelease.length === 0) return;
    asking = true;
    const release = toRelease;
    toRelease = [];
    let timedOut = false;
    const answer = budget.exchange(release, want, inUse.size + spare.length);
    const timeout = setTimeout(() => {
      timedOut = true;
      asking = false;
      setAside(new Error(`no answer within ${budgetTimeoutMs} ms`));
    }, budgetTimeoutMs);
    answer.then(
      (granted) => {
        clearTimeout(timeout);
        if (timedOut) {
          // Granted after it was given up on: give them back at the next round trip.
          toRelease.push(...granted);
          return;
        }
        asking = false;
        if (outage) {
          outage = false;
          options.log?.info({ budget: budget.name }, "kube request budget answers again");
        }
        spare.push(...granted);
        pollMs = granted.length > 0 || want === 0 ? POLL_FIRST_MS : Math.min(POLL_LAST_MS, pollMs * 2);
        if (granted.length === 0 && want > 0 && pollTimer === undefined) {
          // Spent: ask again after a pause (jittered, so replicas do not ask in step).
          pollTimer = setTimeout(
            () => {
              pollTimer = undefined;
              pump();
            },
            pollMs * (0.5 + Math.random()),
          );
        }
        pump();
      },
      (err: unknown) => {
        clearTimeout(timeout);
        if (timedOut) return;
        asking = false;
        setAside(err);
      },
    );
  };

  /** Start as many waiting requests as slots (and leases) allow, unless a hold is in force. */
  const pump = (): void => {
    const wait = holdUntil - now();
    if (wait > 0) {
      if (timer === undefined && waiting > 0) {
        timer = setTimeout(() => {
          timer = undefined;
          pump();
        }, wait);
      }
      return;
    }
    const leased = budgetInUse();
    while (inFlight < concurrency && waiting > 0) {
      let lease: string | undefined;
      if (leased) {
        lease = spare.pop();
        // A spent budget holds a request back a bounded time only: then the local bound alone applies.
        if (lease === undefined && !(oldestWaiting() <= now() - leaseWaitMs)) break;
        if (lease !== undefined) inUse.add(lease);
      }
      const entry = take();
      inFlight++;
      peak = Math.max(peak, inFlight);
      entry?.start(lease);
    }
    if (budget !== undefined) {
      // Leases nobody waits for any more go back.
      if (waiting === 0 && spare.length > 0) toRelease.push(...spare.splice(0));
      if (leased) {
        // A lease given back frees room at once; otherwise a spent budget is asked after its pause.
        if (pollTimer === undefined || toRelease.length > 0) ask();
      } else if (!closed) {
        // Set aside: what this process held expires on its own.
        toRelease = [];
      }
      keepRenewing();
    }
  };

  return {
    run<T>(op: () => Promise<T>, runOptions: { readonly retry?: boolean } = {}): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const start = (lease: string | undefined): void => {
          let p: Promise<T>;
          try {
            p = op();
          } catch (err) {
            p = Promise.reject(err instanceof Error ? err : new Error(String(err)));
          }
          // The slot is free before the caller resumes, so its next request can take it at once.
          const release = (): void => {
            inFlight--;
            if (lease !== undefined && inUse.delete(lease)) toRelease.push(lease);
            pump();
          };
          p.then(
            (value) => {
              release();
              resolve(value);
            },
            (err: unknown) => {
              release();
              reject(err instanceof Error ? err : new Error(String(err)));
            },
          );
        };
        if (exemptScope.getStore() === true) {
          // Never queued behind others nor on the shared budget (see `withoutSharedBudget`).
          inFlight++;
          peak = Math.max(peak, inFlight);
          start(undefined);
          return;
        }
        const entry: Entry = { start, since: now() };
        waiting++;
        if (runOptions.retry === true) retries.unshift(entry);
        else {
          const key = requestCaller();
          const queue = callers.get(key);
          if (queue !== undefined) queue.push(entry);
          else callers.set(key, [entry]);
        }
        pump();
      });
    },
    holdFor(ms) {
      if (!(ms > 0)) return;
      const until = now() + ms;
      if (until <= holdUntil) return;
      holdUntil = until;
      // A timer set for an earlier end would start requests too soon.
      if (timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      }
      pump();
    },
    get inFlight() {
      return inFlight;
    },
    get waiting() {
      return waiting;
    },
    get peak() {
      return peak;
    },
    async close() {
      if (budget === undefined || closed) return;
      closed = true;
      if (pollTimer !== undefined) clearTimeout(pollTimer);
      if (renewTimer !== undefined) clearInterval(renewTimer);
      pollTimer = undefined;
      renewTimer = undefined;
      const release = [...toRelease, ...spare.splice(0), ...inUse];
      toRelease = [];
      inUse.clear();
      if (release.length > 0) await budget.exchange(release, 0, 0).catch(() => undefined);
    },
  };
}
