/**
 * The one polling helper of the tests. It lives beside the simulators (`test/sim/eventually.ts`)
 * because the sandbox, which the image ships, waits with it too; tests import it from here.
 */
export { eventually, eventuallyTrue, type EventuallyOptions } from "../sim/eventually.js";

/**
 * Let `ms` pass: only for a "nothing more happens within `ms`" check (a duplicate, a repaint, a
 * stray write would have shown by then). Never to wait for a condition: poll that with `eventually`.
 */
export function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
