/** Poll until a check answers: `eventually` for a value, `eventuallyTrue` for a condition. */

/** How `eventually` polls, beyond its deadline; every field is optional and off by default. */
export interface EventuallyOptions {
  /**
   * Bound each call of `check` by the time left, so a check that never settles (a command queued on a
   * connection that never reconnects) still fails at the deadline instead of waiting for ever.
   */
  boundEachCheck?: boolean;
  /** Retry a check that throws instead of failing at once; the last error goes in the message. */
  retryErrors?: boolean;
  /** What was last seen, put in the message when the wait times out. */
  state?: () => string;
  /** Milliseconds between two checks (default 25). */
  intervalMs?: number;
}

/** A call of `check` cut short by `boundEachCheck`. */
class CheckTimeout extends Error {}

/** `promise`, or a `CheckTimeout` after `ms`. */
async function bounded<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CheckTimeout()), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Poll `check` until it returns a value other than undefined, or fail after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
  what = "condition",
  options: EventuallyOptions = {},
): Promise<T> {
  const { boundEachCheck = false, retryErrors = false, state, intervalMs = 25 } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError = "";
  for (;;) {
    const left = deadline - Date.now();
    if (!boundEachCheck || left > 0) {
      try {
        const value = boundEachCheck ? await bounded(left, Promise.resolve(check())) : await check();
        if (value !== undefined) return value;
      } catch (err) {
        if (!(err instanceof CheckTimeout)) {
          if (!retryErrors) throw err;
          lastError = err instanceof Error ? err.message : String(err);
        }
      }
    }
    if (Date.now() > deadline) {
      const seen = [state?.() ?? "", lastError ? `last error: ${lastError}` : ""].filter(Boolean).join("; ");
      throw new Error(`timed out waiting for ${what}${seen ? ` (${seen})` : ""}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Poll `check` until it returns true, or fail after `timeoutMs` naming `what`. */
export async function eventuallyTrue(
  check: () => Promise<boolean> | boolean,
  timeoutMs = 10_000,
  what = "condition",
  options: EventuallyOptions = {},
): Promise<void> {
  await eventually(async () => ((await check()) ? true : undefined), timeoutMs, what, options);
}
