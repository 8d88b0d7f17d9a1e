/**
 * One bound on the Kubernetes API requests a process has in flight, shared by every diagnosis,
 * wait check and execution that uses the same adapter: 20 concurrent `ns` commands wait in one
 * FIFO queue instead of putting 20 × their own concurrency on the API server. A 429's
 * `Retry-After` holds every new request back for that long (requests already sent carry on).
 */

export interface RequestLimiter {
  /**
   * Run `op` (one HTTP request) once a slot is free, in arrival order. `retry` puts a request that
   * already waited its turn (a retry after a 429 or a 5xx) ahead of those that have not.
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
}

export interface LimiterOptions {
  /** Most requests in flight at once (≥ 1). */
  readonly concurrency: number;
  /** Clock for holds (default `Date.now`). */
  readonly now?: () => number;
}

/**
 * Default bound, shared by every diagnosis of one adapter, and a diagnosis' own list concurrency:
 * 64 metadata-only lists fill one round for a cluster of ~160 types in three waves. It sits well
 * inside what API Priority and Fairness gives a ServiceAccount's flow (the `workload-low` level
 * holds about 40 % of a default kube-apiserver's 600 seats); a server that wants fewer says so
 * with 429 and Retry-After, which holds every new request back.
 */
export const DEFAULT_KUBE_CONCURRENCY = 64;

export function createLimiter(options: LimiterOptions): RequestLimiter {
  const concurrency = Math.max(1, Math.floor(options.concurrency));
  const now = options.now ?? Date.now;
  const queue: (() => void)[] = [];
  let inFlight = 0;
  let peak = 0;
  let holdUntil = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  /** Start as many waiting requests as slots allow, unless a hold is in force. */
  const pump = (): void => {
    const wait = holdUntil - now();
    if (wait > 0) {
      if (timer === undefined && queue.length > 0) {
        timer = setTimeout(() => {
          timer = undefined;
          pump();
        }, wait);
      }
      return;
    }
    while (inFlight < concurrency && queue.length > 0) {
      const start = queue.shift();
      inFlight++;
      peak = Math.max(peak, inFlight);
      start?.();
    }
  };

  return {
    run<T>(op: () => Promise<T>, runOptions: { readonly retry?: boolean } = {}): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const start = (): void => {
          let p: Promise<T>;
          try {
            p = op();
          } catch (err) {
            p = Promise.reject(err instanceof Error ? err : new Error(String(err)));
          }
          // The slot is free before the caller resumes, so its next request can take it at once.
          const release = (): void => {
            inFlight--;
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
        if (runOptions.retry === true) queue.unshift(start);
        else queue.push(start);
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
      return queue.length;
    },
    get peak() {
      return peak;
    },
  };
}
