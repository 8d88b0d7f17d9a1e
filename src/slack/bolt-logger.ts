/**
 * Bolt and its WebClient log through `@slack/logger`'s interface with free-form arguments. This adapter sends
 * them to our pino logger (JSON, one stream) and scrubs any secret that could appear inside a message string —
 * pino's path redaction only sees object keys, not text.
 */
import { LogLevel, type Logger as BoltLogger } from "@slack/bolt";
import type { Logger } from "../log.js";

const LEVELS: readonly LogLevel[] = [LogLevel.DEBUG, LogLevel.INFO, LogLevel.WARN, LogLevel.ERROR];

/** Replace every occurrence of each secret (and anything shaped like a Slack token) with `[redacted]`. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join("[redacted]");
  }
  // Tokens the bot was not told about (e.g. a user token echoed in an error) are still tokens.
  return out
    .replace(/\bxox[abposre]-[A-Za-z0-9-]+/g, "[redacted]")
    .replace(/\bxapp-[A-Za-z0-9-]+/g, "[redacted]");
}

/** Adapt pino to Bolt's logger; `secrets` are scrubbed from every message Bolt produces. */
export function boltLogger(log: Logger, secrets: readonly string[]): BoltLogger {
  let level: LogLevel = toBoltLevel(log.level);
  const format = (msg: unknown[]): string =>
    scrubSecrets(
      msg
        .map((m) => {
          if (typeof m === "string") return m;
          if (m instanceof Error) return `${m.name}: ${m.message}`;
          try {
            return JSON.stringify(m);
          } catch {
            return String(m);
          }
        })
        .join(" "),
      secrets,
    );
  const enabled = (at: LogLevel): boolean => LEVELS.indexOf(at) >= LEVELS.indexOf(level);
  return {
    debug: (...msg: unknown[]) => {
      if (enabled(LogLevel.DEBUG)) log.debug(format(msg));
    },
    info: (...msg: unknown[]) => {
      if (enabled(LogLevel.INFO)) log.info(format(msg));
    },
    warn: (...msg: unknown[]) => {
      if (enabled(LogLevel.WARN)) log.warn(format(msg));
    },
    error: (...msg: unknown[]) => {
      if (enabled(LogLevel.ERROR)) log.error(format(msg));
    },
    setLevel: (next: LogLevel) => {
      level = next;
    },
    getLevel: () => level,
    // pino carries the name in its bindings already.
    setName: () => undefined,
  };
}

function toBoltLevel(pinoLevel: string): LogLevel {
  switch (pinoLevel) {
    case "trace":
    case "debug":
      return LogLevel.DEBUG;
    case "info":
      return LogLevel.INFO;
    case "warn":
      return LogLevel.WARN;
    default:
      return LogLevel.ERROR;
  }
}
