/**
 * The one way this code bounds a wait on a promise. Each helper clears its timer when the promise
 * settles first, so a bounded call never holds the process open; none cancels the work itself —
 * the caller's own timeouts (a socket's, an SDK's) end it.
 */

/** `p`, or a rejection with `onTimeout()` once `ms` pass first. */
export function withTimeout<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return orElse(p, ms, () => {
    throw onTimeout();
  });
}

/** `p`, or `fallback()`'s value once `ms` pass first (thrown errors from `fallback` reject). */
export function orElse<T, F>(p: Promise<T>, ms: number, fallback: () => F): Promise<T | F> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<F>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(fallback());
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    }, ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Whether `p` settles (either way) within `ms`. */
export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  const done = p.then(
    () => true as const,
    () => true as const,
  );
  return orElse(done, ms, () => false as const);
}
