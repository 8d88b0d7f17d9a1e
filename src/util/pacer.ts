/**
 * Paces the start of work that follows an acknowledgement. At most `slots` pieces of work hold a
 * head start at once; a piece gives its slot back when it settles or after `holdMs`, whichever is
 * first, so work that waits on I/O never holds others back for long. What it buys: in a burst,
 * the event loop runs at most `slots` handlers' CPU between reading new requests, so the
 * acknowledgements of later requests are not queued behind the work of every earlier one.
 */
export interface Pacer {
  run<T>(work: () => Promise<T>): Promise<T>;
  /** Pieces of work waiting for a slot. */
  readonly waiting: number;
}

export function pacer(slots: number, holdMs: number): Pacer {
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
    async run(work) {
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
        giveBack();
      }
    },
    get waiting() {
      return queue.length;
    },
  };
}
