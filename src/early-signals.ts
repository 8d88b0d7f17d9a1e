/**
 * SIGTERM and SIGINT, heard from the moment the entry point loads. Node run as PID 1 (a container
 * without an init) ignores a signal it has no handler for, so a SIGTERM that came during start-up was
 * lost and a rolling update later SIGKILLed a bot with jobs in hand. Imported first by `main.ts`:
 * start-up asks whether a stop was requested between its steps, and the running bot waits on it.
 */

export interface StopRequest {
  /** The signal that asked to stop, once one did. */
  readonly signal: NodeJS.Signals | undefined;
  /** Resolves with the first signal. */
  readonly requested: Promise<NodeJS.Signals>;
}

function listen(): StopRequest {
  let signal: NodeJS.Signals | undefined;
  let resolve!: (s: NodeJS.Signals) => void;
  const requested = new Promise<NodeJS.Signals>((r) => {
    resolve = r;
  });
  const on = (s: NodeJS.Signals) => (): void => {
    if (signal !== undefined) return;
    signal = s;
    resolve(s);
  };
  process.on("SIGTERM", on("SIGTERM"));
  process.on("SIGINT", on("SIGINT"));
  return {
    get signal() {
      return signal;
    },
    requested,
  };
}

export const stopRequest: StopRequest = listen();
