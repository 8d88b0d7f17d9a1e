/**
 * A logger that drops everything, without loading pino: the terminal's logger unless a log level is
 * asked for (`UNSTUCK_LOG_LEVEL`), and the tests'. pino with its destination streams was ~16 ms of a
 * cold CLI's start-up for lines nobody reads. Every method of pino's silent logger is here, each a
 * no-op; a child is the same logger.
 */
import type { Logger } from "pino";

const drop = (): void => undefined;

export function silentLogger(): Logger {
  const logger = {
    level: "silent",
    levelVal: Infinity,
    fatal: drop,
    error: drop,
    warn: drop,
    info: drop,
    debug: drop,
    trace: drop,
    silent: drop,
    child: () => logger,
    isLevelEnabled: () => false,
    bindings: () => ({}),
    setBindings: drop,
    flush: (callback?: (err?: Error) => void) => callback?.(),
  };
  // The methods pino's Logger has that the product calls; its event-emitter side is never used.
  return logger as unknown as Logger;
}
