/** Poll until a check answers: `eventually` for a value, `eventuallyTrue` for a condition. */

/** Poll `check` until it returns a value other than undefined, or fail after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Poll `check` until it returns true, or fail after `timeoutMs` naming `what`. */
export async function eventuallyTrue(
  check: () => Promise<boolean> | boolean,
  timeoutMs = 10_000,
  what = "condition",
): Promise<void> {
  await eventually(async () => ((await check()) ? true : undefined), timeoutMs, what);
}
