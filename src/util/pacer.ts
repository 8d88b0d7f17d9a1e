/**
 * Paces the start of work that follows an acknowledgement. At most `slots` pieces of work hold a
 * head start at once; a piece gives its slot back when it settles or after `holdMs`, whichever is
 * first, so work that waits on I/O never holds others back for long. What it buys: in a burst,
 * the event loop runs at most `slots` handlers' CPU between reading new requests, so the
 * acknowledgements of later requests are not queued behind the work of every earlier one.
 *
 * With a quiet window, work also waits while requests keep arriving: it starts once none has arrived
 * for `quietMs` (each arrival told with {@link Pacer.arrived}), or after `maxDeferMs` at the most, so
 * a burst is acknowledged whole before its work takes the CPU, and a steady stream never starves it.
 * A lone request's work starts at once when the pacer has run work before: no burst is arriving to
 * wait for, and its code is no longer cold. The first work after start-up always waits.
 */
export interface Pacer {
  run<T>(work: () => Promise<T>): Promise<T>;
  /** A request arrived (its work will follow): work not yet started waits for a quiet moment. */
  arrived(): void;
  /** Pieces of work waiting for a slot. */
  readonly waiting: number;
}

export interface QuietWindow {
  /** How long no request must have arrived before waiting work starts. */
  readonly quietMs: number;
  /** The longest a piece of work waits for quiet. */
  readonly maxDeferMs: number;
}

export function pacer(slots: number, holdMs: number, quiet?: QuietWindow): Pacer {
  let lastArrival = Number.NEGATIVE_INFINITY;
  let arrivalBefore = Number.NEGATIVE_INFINITY;
  /** Some work has settled: the code a request runs has run once. */
  let warm = false;
  /** Resolves once no request arrived for `quietMs`, or `maxDeferMs` after it was asked. */
  const quietMoment = async (): Promise<void> => {
    if (quiet === undefined) return;
    const lone = lastArrival - arrivalBefore >= quiet.quietMs && queue.length === 0;
    if (warm && lone) return;
    const until = Date.now() + quiet.maxDeferMs;
    for (;;) {
      const now = Date.now();
      const wait = Math.min(lastArrival + quiet.quietMs, until) - now;
      if (wait <= 0) return;
      await new Promise<void>((resolve) => setTimeout(resolve, wait).unref());
    }
  };
  let held = 0;
  const queue: (() => void)[] = [];
  const release = (): void => {
    const next = queue.shift();
    if (next !== undefined) next();
    else held--;
  };
  const acquire = (): Promise<void> => {
    if (held < slots) {
      held++;
      return Promise.resolve();
    }
    return new Promise((resolve) => queue.push(resolve));
  };
  return {
    arrived() {
      arrivalBefore = lastArrival;
      lastArrival = Date.now();
    },
    async run(work) {
      await quietMoment();
      await acquire();
      let released = false;
      const giveBack = (): void => {
        if (released) return;
        released = true;
        clearTimeout(timer);
        release();
      };
      const timer = setTimeout(giveBack, holdMs);
      timer.unref();
      try {
        return await work();
      } finally {
        warm = true;
        giveBack();
      }
    },
    get waiting() {
      return queue.length;
    },
  };
}
