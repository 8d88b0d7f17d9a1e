/**
 * One bound on the Kubernetes API requests a process has in flight, shared by every diagnosis,
 * wait check and execution that uses the same adapter: 20 concurrent `ns` commands wait in one
 * queue instead of putting 20 × their own concurrency on the API server. A 429's `Retry-After`
 * holds every new request back for that long (requests already sent carry on).
 *
 * Waiting requests are taken round-robin between callers (a diagnosis, named by
 * {@link withRequestCaller}; FIFO within one caller), so one diagnosis's thousand lists never
 * starve another's five. With a shared budget (the bot's replicas sharing one Redis) a request
 * also holds one lease of a budget per API server for the whole fleet: the local queue decides
 * who goes next, the budget decides when. A budget that cannot be reached is set aside for a
 * while (logged once) and the local bound alone applies: a Redis outage never stops a diagnosis.
 * The exchange with that budget is `./budget-leases.ts`'s.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { BudgetLeases, type BudgetLog, type SharedBudget } from "./budget-leases.js";

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
  close(): Promise<void>;
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

interface Entry {
  readonly start: (lease: string | undefined) => void;
  /** When it started waiting (the limiter's clock). */
  readonly since: number;
}

/** Longest a request waits for a lease of the shared budget before it runs under the local bound alone. */
const LEASE_WAIT_MS = 5_000;

/**
 * The requests waiting for a slot: retries first, then one request per caller in turn (FIFO
 * within one), so one caller's thousand requests never starve another's five.
 */
class WaitQueue {
  private readonly retries: Entry[] = [];
  /** Each caller's waiting requests; Map order is the round. */
  private readonly callers = new Map<string, Entry[]>();
  private count = 0;

  /** Requests waiting. */
  public get size(): number {
    return this.count;
  }

  /** Queue a retry, ahead of every request that has not waited its turn yet. */
  public addRetry(entry: Entry): void {
    this.count++;
    this.retries.unshift(entry);
  }

  /** Queue a request at the back of its caller's line. */
  public add(entry: Entry, caller: string): void {
    this.count++;
    const queue = this.callers.get(caller);
    if (queue !== undefined) queue.push(entry);
    else this.callers.set(caller, [entry]);
  }

  /** The request to start next (a retry, else the next caller's first). */
  public take(): Entry | undefined {
    const retry = this.retries.shift();
    if (retry !== undefined) {
      this.count--;
      return retry;
    }
    // Map order is the round: the caller served goes to the back if it has more waiting.
    for (const [key, queue] of this.callers) {
      const entry = queue.shift();
      this.callers.delete(key);
      if (queue.length > 0) this.callers.set(key, queue);
      if (entry !== undefined) {
        this.count--;
        return entry;
      }
    }
    return undefined;
  }

  /** When the longest-waiting request started waiting (Infinity when none waits). */
  public oldestSince(): number {
    let oldest = this.retries[0]?.since ?? Infinity;
    for (const queue of this.callers.values()) oldest = Math.min(oldest, queue[0]?.since ?? Infinity);
    return oldest;
  }
}

/**
 * The pacing a 429 asks for: no new request starts until the hold ends (requests already sent
 * carry on). `wake` is called when a hold that kept requests waiting is over.
 */
class Hold {
  private until = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  public constructor(
    private readonly now: () => number,
    private readonly wake: () => void,
  ) {}

  /** Whether a hold is in force now; while it is and requests wait, a timer wakes them at its end. */
  public holds(waiting: boolean): boolean {
    const wait = this.until - this.now();
    if (wait <= 0) return false;
    if (this.timer === undefined && waiting) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.wake();
      }, wait);
    }
    return true;
  }

  /** Hold for `ms` from now unless a longer hold is in force; whether the hold was extended. */
  public extend(ms: number): boolean {
    if (!(ms > 0)) return false;
    const until = this.now() + ms;
    if (until <= this.until) return false;
    this.until = until;
    // A timer set for an earlier end would start requests too soon.
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    return true;
  }
}

/**
 * Run `op` (one request whose slot is taken), settling the caller's promise with its outcome only
 * after `done` freed the slot, so the caller's next request can take it at once.
 */
function startRequest<T>(
  op: () => Promise<T>,
  done: () => void,
  resolve: (value: T) => void,
  reject: (err: Error) => void,
): void {
  let p: Promise<T>;
  try {
    p = op();
  } catch (err) {
    p = Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
  p.then(
    (value) => {
      done();
      resolve(value);
    },
    (err: unknown) => {
      done();
      reject(err instanceof Error ? err : new Error(String(err)));
    },
  );
}

/** A limiter with `options.concurrency` slots, and the fleet's budget when one is given. */
export function createLimiter(options: LimiterOptions): RequestLimiter {
  const concurrency = Math.max(1, Math.floor(options.concurrency));
  const now = options.now ?? Date.now;
  const leaseWaitMs = options.leaseWaitMs ?? LEASE_WAIT_MS;
  const queue = new WaitQueue();
  const hold = new Hold(now, () => pump());
  let inFlight = 0;
  let peak = 0;
  const leases =
    options.budget === undefined
      ? undefined
      : new BudgetLeases(options.budget, {
          now,
          log: options.log,
          timeoutMs: options.budgetTimeoutMs ?? 1_000,
          retryMs: options.budgetRetryMs ?? 10_000,
          demand: () => Math.min(queue.size, concurrency - inFlight),
          wake: () => pump(),
        });

  /** One more request in flight. */
  const started = (): void => {
    inFlight++;
    peak = Math.max(peak, inFlight);
  };

  /** Start as many waiting requests as slots (and leases) allow, unless a hold is in force. */
  const pump = (): void => {
    if (hold.holds(queue.size > 0)) return;
    const leased = leases?.usable() ?? false;
    while (inFlight < concurrency && queue.size > 0) {
      const lease = leased ? leases?.takeSpare() : undefined;
      // A spent budget holds a request back a bounded time only: then the local bound alone applies.
      if (leased && lease === undefined && !(queue.oldestSince() <= now() - leaseWaitMs)) break;
      const entry = queue.take();
      started();
      entry?.start(lease);
    }
    leases?.settle(queue.size, leased);
  };

  /** A request ended: its slot (and lease) is free for the next. */
  const finished = (lease: string | undefined): void => {
    inFlight--;
    if (lease !== undefined) leases?.release(lease);
    pump();
  };

  return {
    run<T>(op: () => Promise<T>, runOptions: { readonly retry?: boolean } = {}): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const start = (lease: string | undefined): void =>
          startRequest(op, () => finished(lease), resolve, reject);
        if (exemptScope.getStore() === true) {
          // Never queued behind others nor on the shared budget (see `withoutSharedBudget`).
          started();
          start(undefined);
          return;
        }
        const entry: Entry = { start, since: now() };
        if (runOptions.retry === true) queue.addRetry(entry);
        else queue.add(entry, requestCaller());
        pump();
      });
    },
    holdFor(ms) {
      if (hold.extend(ms)) pump();
    },
    get inFlight() {
      return inFlight;
    },
    get waiting() {
      return queue.size;
    },
    get peak() {
      return peak;
    },
    async close() {
      await leases?.close();
    },
  };
}
