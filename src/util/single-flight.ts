/**
 * Concurrent identical reads answered by one run. A caller whose key has a run in flight that
 * started at most `joinWithinMs` ago gets that run's promise instead of starting another; a run
 * that started earlier than that is not joined (its reads may predate what the caller just did),
 * and nothing is kept once a run settles, so this is never a cache.
 */
export interface SingleFlight<K, V> {
  run(key: K, work: () => Promise<V>): Promise<V>;
  /** Runs in flight now (for tests and metrics). */
  readonly size: number;
}

export function singleFlight<K, V>(joinWithinMs: number, now: () => number = Date.now): SingleFlight<K, V> {
  const inFlight = new Map<K, { readonly startedAt: number; readonly promise: Promise<V> }>();
  return {
    run(key, work) {
      const current = inFlight.get(key);
      if (current !== undefined && now() - current.startedAt <= joinWithinMs) return current.promise;
      const entry = { startedAt: now(), promise: work() };
      inFlight.set(key, entry);
      const forget = (): void => {
        if (inFlight.get(key) === entry) inFlight.delete(key);
      };
      entry.promise.then(forget, forget);
      return entry.promise;
    },
    get size() {
      return inFlight.size;
    },
  };
}
